#include "apply/target_table.h"

#include <algorithm>
#include <array>
#include <string_view>

#include <fmt/format.h>

#include "apply/pg_schema.h"
#include "mysql/sql_text.h"

namespace cdc::apply {

bool is_sequence(const records::TableLine& line) {
  static constexpr std::array<std::string_view, 8> kColumns = {
      "next_not_cached_value", "minimum_value", "maximum_value", "start_value",
      "increment",             "cache_size",    "cycle_option",  "cycle_count"};
  if ((line.key && !line.key->empty()) || line.columns.size() != kColumns.size()) return false;
  for (std::size_t i = 0; i < kColumns.size(); ++i)
    if (line.columns[i].name != kColumns[i]) return false;
  return true;
}

TargetTable target_table(const records::TableLine& line, const std::string& target_db, Dialect dialect) {
  TargetTable table;
  table.source_name = fmt::format("{}.{}", line.db, line.table);
  table.qualified = quote_name(dialect, target_db) + '.' + quote_name(dialect, line.table);
  table.one_row = is_sequence(line);
  table.columns.reserve(line.columns.size());
  for (const records::TableColumn& column : line.columns) {
    table.columns.push_back(column_sql(column, dialect));
    if (dialect == Dialect::mariadb && table.columns.back().kind == output::ValueKind::enumeration &&
        std::find(column.values.begin(), column.values.end(), "") == column.values.end())
      table.enum_error_columns.push_back(table.columns.size() - 1);
  }
  if (line.key) {
    for (const std::string& name : *line.key)
      for (std::size_t i = 0; i < line.columns.size(); ++i)
        if (line.columns[i].name == name) table.key_columns.push_back(i);
  }
  table.insert_prefix = "INSERT INTO " + table.qualified + " (";
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    if (i > 0) table.insert_prefix += ',';
    table.insert_prefix += table.columns[i].quoted;
  }
  table.insert_prefix += ") VALUES ";
  if (dialect == Dialect::postgres) {
    // A key column's value stays: the conflict was on it.
    table.key_equals = "=";  // key columns are NOT NULL, and = uses the primary key's index
    table.row_equals = " IS NOT DISTINCT FROM ";
    table.keyless_where = " WHERE ctid=(SELECT ctid FROM " + table.qualified + " WHERE ";
    table.keyless_end = " LIMIT 1)";
    if (!table.keyless()) {
      table.upsert_suffix = " ON CONFLICT (";
      for (std::size_t k = 0; k < table.key_columns.size(); ++k) {
        if (k > 0) table.upsert_suffix += ',';
        table.upsert_suffix += table.columns[table.key_columns[k]].quoted;
      }
      table.upsert_suffix += ") DO ";
      bool any = false;
      for (std::size_t i = 0; i < table.columns.size(); ++i) {
        bool key = false;
        for (const std::size_t k : table.key_columns) key = key || k == i;
        if (key) continue;
        table.upsert_suffix += any ? "," : "UPDATE SET ";
        any = true;
        table.upsert_suffix += fmt::format("{0}=EXCLUDED.{0}", table.columns[i].quoted);
      }
      if (!any) table.upsert_suffix += "NOTHING";
    }
    return table;
  }
  table.key_equals = "<=>";
  table.row_equals = "<=>";
  table.keyless_where = " WHERE ";
  table.keyless_end = " LIMIT 1";
  if (!table.keyless()) {
    table.updates_as_upserts = true;
    table.upsert_suffix = " ON DUPLICATE KEY UPDATE ";
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      if (i > 0) table.upsert_suffix += ',';
      table.upsert_suffix += fmt::format("{0}=VALUES({0})", table.columns[i].quoted);
    }
  }
  return table;
}

std::string create_table_sql(const records::TableLine& line, const std::string& target_db, Dialect dialect) {
  if (dialect == Dialect::postgres) return pg_create_table_sql(line, target_db);
  std::string sql = fmt::format("CREATE TABLE IF NOT EXISTS {}.{} (", mysql::quote_identifier(target_db),
                                mysql::quote_identifier(line.table));
  for (std::size_t i = 0; i < line.columns.size(); ++i) {
    const records::TableColumn& column = line.columns[i];
    if (i > 0) sql += ", ";
    sql += mysql::quote_identifier(column.name) + ' ' + column.type;
    if (column.charset) sql += " CHARACTER SET " + *column.charset;
    if (column.collation) sql += " COLLATE " + *column.collation;
    sql += column.nullable ? " NULL" : " NOT NULL";
  }
  if (line.key && !line.key->empty()) {
    sql += ", PRIMARY KEY (";
    for (std::size_t i = 0; i < line.key->size(); ++i) {
      if (i > 0) sql += ',';
      sql += mysql::quote_identifier((*line.key)[i]);
    }
    sql += ')';
  }
  sql += ") ENGINE=InnoDB";
  return sql;
}

}  // namespace cdc::apply
