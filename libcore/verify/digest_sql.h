#pragma once

// The SQL with which a server computes a chunk's digest itself, and each row's hash, so that
// cdc-apply --verify compares source and target without reading their rows (as
// pt-table-checksum and TiDB's sync-diff-inspector do).
//
// A row's hash is MD5 of a canonical text of the chunk's columns, in the chunk line's column
// order: each non-NULL value as its length, then its text, then one ISNULL flag per column,
// joined by ','. The lengths make the text unambiguous (pt-table-checksum's '#'-joined text
// has 'a#','b' and 'a','#b' alike) and the flags tell NULL from ''. A chunk's digest is its row
// count and the SUMs of the two 64-bit halves of the row hashes: a sum, not pt-table-checksum's
// BIT_XOR, because two equal rows (a table without a key) cancel out in a XOR, and a sum of
// BIGINT UNSIGNED is exact (DECIMAL) on the server. Order does not matter, so the server reads
// the rows in any order and nothing is sorted.
//
// Each kind of server has its own SQL (DigestSql); both sides of a comparison write the same
// row text: MariaDB to MariaDB (or MySQL) the values as MariaDB prints them, MariaDB to
// PostgreSQL each column's text of column_text.h, which both servers can write.

#include <span>
#include <string>
#include <string_view>

#include "records/chunk.h"
#include "verify/column_text.h"

namespace cdc::verify {

class DigestSql {
 public:
  DigestSql() = default;
  DigestSql(const DigestSql&) = delete;
  DigestSql& operator=(const DigestSql&) = delete;
  virtual ~DigestSql() = default;

  // SELECT COUNT(*), SUM(high half), SUM(low half) of the rows of `db`.`table` where condition
  // holds ("" for every row): one row of three columns, the sums 0 for no row.
  [[nodiscard]] virtual std::string digest_sql(std::string_view db, std::string_view table,
                                               std::span<const records::ChunkColumn> columns,
                                               std::string_view condition) const = 0;
  // SELECT the listed columns (the key, or every column of a table without one: keyless), then
  // the row hash as 32 hex digits, of the same rows; in no particular order. Each listed column
  // as both sides write it the same: a key as MariaDB's client receives it, a keyless table's
  // columns as the row text has them.
  [[nodiscard]] virtual std::string rows_sql(std::string_view db, std::string_view table,
                                             std::span<const records::ChunkColumn> columns,
                                             std::span<const std::string> listed, bool keyless,
                                             std::string_view condition) const = 0;
};

// MariaDB and MySQL. The session must run with time_zone '+00:00' on both sides, so that
// TIMESTAMP values have one text. Text columns are converted to utf8mb4 first, so that a
// target column of another character set with the same characters hashes the same; other
// columns hash as the server prints them (numbers, dates) or as their bytes (binary strings,
// BIT, GEOMETRY).
// With a PostgreSQL peer, each value is written as column_text.h says.
class MariadbDigestSql final : public DigestSql {
 public:
  explicit MariadbDigestSql(Peer peer = Peer::mariadb) : peer_(peer) {}
  [[nodiscard]] std::string digest_sql(std::string_view db, std::string_view table,
                                       std::span<const records::ChunkColumn> columns,
                                       std::string_view condition) const override;
  [[nodiscard]] std::string rows_sql(std::string_view db, std::string_view table,
                                     std::span<const records::ChunkColumn> columns,
                                     std::span<const std::string> listed, bool keyless,
                                     std::string_view condition) const override;

  // MD5(CONCAT_WS(',', LENGTH(v1), v1, ..., CONCAT(ISNULL(c1), ...))): the row hash expression.
  [[nodiscard]] static std::string row_hash_sql(std::span<const records::ChunkColumn> columns,
                                                Peer peer = Peer::mariadb);

 private:
  Peer peer_;
};

// A PostgreSQL target filled by cdc-apply --postgres (its type mapping, apply/pg_schema.h), its
// session in UTF-8 with TimeZone UTC, DateStyle ISO and extra_float_digits 1 (the shortest
// digits of a float). The same row text as MariadbDigestSql(Peer::postgres) for the same row:
// md5(concat_ws(',', octet_length(v1), v1, ..., concat(flags))), concat_ws skipping NULLs as
// CONCAT_WS does. The halves are read as bigint (signed): 2^64 is added back to the negative
// ones, so the sums are those of the unsigned halves, as MariaDB's. db is the schema.
class PostgresDigestSql final : public DigestSql {
 public:
  [[nodiscard]] std::string digest_sql(std::string_view db, std::string_view table,
                                       std::span<const records::ChunkColumn> columns,
                                       std::string_view condition) const override;
  [[nodiscard]] std::string rows_sql(std::string_view db, std::string_view table,
                                     std::span<const records::ChunkColumn> columns,
                                     std::span<const std::string> listed, bool keyless,
                                     std::string_view condition) const override;

  [[nodiscard]] static std::string row_hash_sql(std::span<const records::ChunkColumn> columns);
};

}  // namespace cdc::verify
