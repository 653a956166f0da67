#include "apply/pg_schema.h"

#include <fmt/format.h>

#include "apply/sql_dialect.h"
#include "output/table_columns.h"

namespace cdc::apply {

namespace {

using output::ValueKind;

// The "(...)" after the type's name, "" without: "decimal(20,6) unsigned" -> "(20,6)".
std::string parameters_of(const std::string& type) {
  const std::size_t open = type.find('(');
  if (open == std::string::npos) return {};
  const std::size_t close = type.find(')', open);
  if (close == std::string::npos) return {};
  return type.substr(open, close + 1 - open);
}

std::string integer_type(int bits, bool is_unsigned) {
  switch (bits) {
    case 8: return "smallint";
    case 16: return is_unsigned ? "integer" : "smallint";
    case 24: return "integer";
    case 32: return is_unsigned ? "bigint" : "integer";
    default: return is_unsigned ? "numeric(20,0)" : "bigint";
  }
}

}  // namespace

std::string pg_column_type(const records::TableColumn& column) {
  output::ColumnInfo info;
  info.type = column.type;
  output::classify_column(info, column.charset);
  const std::string parameters = parameters_of(column.type);
  switch (info.kind) {
    case ValueKind::integer: return integer_type(info.integer_bits, info.is_unsigned);
    case ValueKind::float32: return "real";
    case ValueKind::float64: return "double precision";
    // MySQL's DECIMAL without (p,s) is DECIMAL(10,0).
    case ValueKind::decimal: return "numeric" + (parameters.empty() ? std::string("(10,0)") : parameters);
    case ValueKind::bit: return "bit varying" + (parameters.empty() ? std::string("(1)") : parameters);
    case ValueKind::year: return "smallint";
    case ValueKind::date: return "date";
    // MariaDB's TIME runs from -838:59:59 to 838:59:59: more than PostgreSQL's time of day.
    case ValueKind::time: return "interval" + parameters;
    case ValueKind::datetime: return "timestamp" + parameters + " without time zone";
    case ValueKind::timestamp: return "timestamp" + parameters + " with time zone";
    case ValueKind::text:
      // CHAR(n) too: its values come without their pad spaces, which bpchar would put back.
      if (info.base_type == "char" || info.base_type == "varchar")
        return parameters.empty() ? std::string("text") : "varchar" + parameters;
      return "text";
    case ValueKind::enumeration:
    case ValueKind::set: return "text";
    case ValueKind::binary:
    case ValueKind::geometry: return "bytea";
    case ValueKind::json: return "jsonb";
    case ValueKind::vector: return "real[]";
    case ValueKind::other: break;
  }
  if (info.base_type == "inet4" || info.base_type == "inet6") return "inet";
  if (info.base_type == "uuid") return "uuid";
  return "text";
}

std::string pg_create_table_sql(const records::TableLine& line, const std::string& schema) {
  std::string sql = fmt::format("CREATE TABLE IF NOT EXISTS {}.{} (", quote_name(Dialect::postgres, schema),
                                quote_name(Dialect::postgres, line.table));
  for (std::size_t i = 0; i < line.columns.size(); ++i) {
    const records::TableColumn& column = line.columns[i];
    if (i > 0) sql += ", ";
    sql += quote_name(Dialect::postgres, column.name) + ' ' + pg_column_type(column);
    if (!column.nullable) sql += " NOT NULL";
  }
  if (line.key && !line.key->empty()) {
    sql += ", PRIMARY KEY (";
    for (std::size_t i = 0; i < line.key->size(); ++i) {
      if (i > 0) sql += ',';
      sql += quote_name(Dialect::postgres, (*line.key)[i]);
    }
    sql += ')';
  }
  sql += ')';
  return sql;
}

}  // namespace cdc::apply
