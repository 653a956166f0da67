#include "apply/sql_dialect.h"

#include "mysql/sql_text.h"

namespace cdc::apply {

std::string quote_name(Dialect dialect, std::string_view name) {
  if (dialect == Dialect::mariadb) return mysql::quote_identifier(name);
  std::string quoted;
  quoted.reserve(name.size() + 2);
  quoted.push_back('"');
  for (const char c : name) {
    if (c == '"') quoted.push_back('"');
    quoted.push_back(c);
  }
  quoted.push_back('"');
  return quoted;
}

std::string create_namespace_sql(Dialect dialect, std::string_view name) {
  return (dialect == Dialect::mariadb ? "CREATE DATABASE IF NOT EXISTS " : "CREATE SCHEMA IF NOT EXISTS ") +
         quote_name(dialect, name);
}

}  // namespace cdc::apply
