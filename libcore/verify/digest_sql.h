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
// Each kind of target has its own text of a row (DigestSql); both sides of a comparison use
// the same one only when they are the same kind of server. MariaDB to MariaDB (or MySQL) is
// the one written so far.

#include <span>
#include <string>
#include <string_view>

#include "records/chunk.h"

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
  // SELECT the listed columns (the key, or every column of a table without one), then the row
  // hash as 32 hex digits, of the same rows; in no particular order.
  [[nodiscard]] virtual std::string rows_sql(std::string_view db, std::string_view table,
                                             std::span<const records::ChunkColumn> columns,
                                             std::span<const std::string> listed, std::string_view condition) const = 0;
};

// MariaDB and MySQL. The session must run with time_zone '+00:00' on both sides, so that
// TIMESTAMP values have one text. Text columns are converted to utf8mb4 first, so that a
// target column of another character set with the same characters hashes the same; other
// columns hash as the server prints them (numbers, dates) or as their bytes (binary strings,
// BIT, GEOMETRY).
class MariadbDigestSql final : public DigestSql {
 public:
  [[nodiscard]] std::string digest_sql(std::string_view db, std::string_view table,
                                       std::span<const records::ChunkColumn> columns,
                                       std::string_view condition) const override;
  [[nodiscard]] std::string rows_sql(std::string_view db, std::string_view table,
                                     std::span<const records::ChunkColumn> columns,
                                     std::span<const std::string> listed, std::string_view condition) const override;

  // MD5(CONCAT_WS(',', LENGTH(v1), v1, ..., CONCAT(ISNULL(c1), ...))): the row hash expression.
  [[nodiscard]] static std::string row_hash_sql(std::span<const records::ChunkColumn> columns);
};

}  // namespace cdc::verify
