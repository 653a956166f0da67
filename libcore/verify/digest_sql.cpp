#include "verify/digest_sql.h"

#include <fmt/format.h>

#include "mysql/sql_text.h"

namespace cdc::verify {

namespace {

// A text column's value in one character set, so its hash does not depend on the column's
// (collation_id: 0 not a string, 63 binary; records/chunk.h).
std::string value_sql(const records::ChunkColumn& column) {
  const std::string quoted = mysql::quote_identifier(column.name);
  if (column.collation_id != 0 && column.collation_id != 63) return fmt::format("CONVERT({} USING utf8mb4)", quoted);
  return quoted;
}

std::string from_where(std::string_view db, std::string_view table, std::string_view condition) {
  std::string sql = fmt::format(" FROM {}.{}", mysql::quote_identifier(db), mysql::quote_identifier(table));
  if (!condition.empty()) sql += fmt::format(" WHERE {}", condition);
  return sql;
}

}  // namespace

std::string MariadbDigestSql::row_hash_sql(std::span<const records::ChunkColumn> columns) {
  // CONCAT_WS skips NULL arguments: a NULL value adds neither its length nor its text, and its
  // ISNULL flag says it was there.
  std::string text = "CONCAT_WS(','";
  std::string flags = "CONCAT(";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const std::string value = value_sql(columns[i]);
    text += fmt::format(",LENGTH({0}),{0}", value);
    if (i != 0) flags += ',';
    flags += fmt::format("ISNULL({})", mysql::quote_identifier(columns[i].name));
  }
  flags += columns.empty() ? "'')" : ")";
  return fmt::format("MD5({},{}))", text, flags);
}

std::string MariadbDigestSql::digest_sql(std::string_view db, std::string_view table,
                                         std::span<const records::ChunkColumn> columns,
                                         std::string_view condition) const {
  // CONV gives text: cast to BIGINT UNSIGNED, or SUM would add DOUBLEs and lose bits.
  return fmt::format(
      "SELECT COUNT(*),COALESCE(SUM(CAST(CONV(LEFT(h,16),16,10) AS UNSIGNED)),0),"
      "COALESCE(SUM(CAST(CONV(RIGHT(h,16),16,10) AS UNSIGNED)),0) FROM (SELECT {} AS h{}) AS chunk_rows",
      row_hash_sql(columns), from_where(db, table, condition));
}

std::string MariadbDigestSql::rows_sql(std::string_view db, std::string_view table,
                                       std::span<const records::ChunkColumn> columns,
                                       std::span<const std::string> listed, std::string_view condition) const {
  std::string sql = "SELECT ";
  for (const std::string& name : listed) sql += mysql::quote_identifier(name) + ',';
  return sql + row_hash_sql(columns) + from_where(db, table, condition);
}

}  // namespace cdc::verify
