#include "verify/digest_sql.h"

#include <fmt/format.h>

#include "apply/sql_dialect.h"
#include "mysql/sql_text.h"

namespace cdc::verify {

namespace {

// MariaDB's LIMIT for "every row".
constexpr std::string_view kNoLimit = "18446744073709551615";

std::string from_where(std::string_view db, std::string_view table, std::string_view condition) {
  std::string sql = fmt::format(" FROM {}.{}", mysql::quote_identifier(db), mysql::quote_identifier(table));
  if (!condition.empty()) sql += fmt::format(" WHERE {}", condition);
  return sql;
}

std::string postgres_from_where(std::string_view db, std::string_view table, std::string_view condition) {
  std::string sql = fmt::format(" FROM {}.{}", apply::quote_name(apply::Dialect::postgres, db),
                                apply::quote_name(apply::Dialect::postgres, table));
  if (!condition.empty()) sql += fmt::format(" WHERE {}", condition);
  return sql;
}

const records::ChunkColumn* column_named(std::span<const records::ChunkColumn> columns, const std::string& name) {
  for (const records::ChunkColumn& column : columns)
    if (column.name == name) return &column;
  return nullptr;
}

}  // namespace

std::string MariadbDigestSql::row_hash_sql(std::span<const records::ChunkColumn> columns, Peer peer) {
  // CONCAT_WS skips NULL arguments: a NULL value adds neither its length nor its text, and its
  // ISNULL flag says it was there.
  std::string text = "CONCAT_WS(','";
  std::string flags = "CONCAT(";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const std::string value = mariadb_value_sql(columns[i], peer);
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
  // CONV gives text: cast to BIGINT UNSIGNED, or SUM would add DOUBLEs and lose bits. The
  // LIMIT keeps MariaDB from merging the derived table into the query, which would compute
  // each row's MD5 once per use of h (twice).
  return fmt::format(
      "SELECT COUNT(*),COALESCE(SUM(CAST(CONV(LEFT(h,16),16,10) AS UNSIGNED)),0),"
      "COALESCE(SUM(CAST(CONV(RIGHT(h,16),16,10) AS UNSIGNED)),0) FROM (SELECT {} AS h{} LIMIT {}) AS chunk_rows",
      row_hash_sql(columns, peer_), from_where(db, table, condition), kNoLimit);
}

std::string MariadbDigestSql::rows_sql(std::string_view db, std::string_view table,
                                       std::span<const records::ChunkColumn> columns,
                                       std::span<const std::string> listed, bool keyless,
                                       std::string_view condition) const {
  std::string sql = "SELECT ";
  for (const std::string& name : listed) {
    // A keyless table's rows are named by their row text when the peer writes values otherwise.
    const records::ChunkColumn* column = keyless && peer_ == Peer::postgres ? column_named(columns, name) : nullptr;
    sql += (column != nullptr ? mariadb_value_sql(*column, peer_) : mysql::quote_identifier(name)) + ',';
  }
  return sql + row_hash_sql(columns, peer_) + from_where(db, table, condition);
}

std::string PostgresDigestSql::row_hash_sql(std::span<const records::ChunkColumn> columns) {
  std::string text = "concat_ws(','";
  std::string flags = "concat(";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const std::string value = postgres_value_sql(columns[i]);
    text += fmt::format(",octet_length({0}),{0}", value);
    if (i != 0) flags += ',';
    flags += fmt::format("({} IS NULL)::int", apply::quote_name(apply::Dialect::postgres, columns[i].name));
  }
  flags += columns.empty() ? "'')" : ")";
  return fmt::format("md5({},{}))", text, flags);
}

std::string PostgresDigestSql::digest_sql(std::string_view db, std::string_view table,
                                          std::span<const records::ChunkColumn> columns,
                                          std::string_view condition) const {
  // 'x' || 16 hex digits reads as bit(64), then as bigint; a negative one is its unsigned
  // value less 2^64. OFFSET 0 keeps PostgreSQL from pulling the subqueries up into the query,
  // which would compute each row's md5 once per use of h, hi and lo (four times).
  return fmt::format(
      "SELECT count(*),COALESCE(sum(hi::numeric+CASE WHEN hi<0 THEN 18446744073709551616 ELSE 0 END),0),"
      "COALESCE(sum(lo::numeric+CASE WHEN lo<0 THEN 18446744073709551616 ELSE 0 END),0) FROM "
      "(SELECT ('x'||left(h,16))::bit(64)::bigint AS hi,('x'||right(h,16))::bit(64)::bigint AS lo FROM "
      "(SELECT {} AS h{} OFFSET 0) AS hashes OFFSET 0) AS chunk_rows",
      row_hash_sql(columns), postgres_from_where(db, table, condition));
}

std::string PostgresDigestSql::rows_sql(std::string_view db, std::string_view table,
                                        std::span<const records::ChunkColumn> columns,
                                        std::span<const std::string> listed, bool keyless,
                                        std::string_view condition) const {
  std::string sql = "SELECT ";
  for (const std::string& name : listed) {
    const records::ChunkColumn* column = column_named(columns, name);
    if (column == nullptr) {
      sql += apply::quote_name(apply::Dialect::postgres, name) + "::text,";
      continue;
    }
    sql += (keyless ? postgres_value_sql(*column) : postgres_key_sql(*column)) + ',';
  }
  return sql + row_hash_sql(columns) + postgres_from_where(db, table, condition);
}

}  // namespace cdc::verify
