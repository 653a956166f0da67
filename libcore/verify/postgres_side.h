#pragma once

// A PostgreSQL target of cdc-apply --verify (cdc-apply --postgres filled it). Each read of a
// chunk is one REPEATABLE READ transaction: the position table's row first (the transaction's
// snapshot is taken there), then the chunk's query through a cursor, FETCHed in batches, so
// the position is that of exactly the rows read (cdc-apply writes both in one transaction).
//
// Which rows are the chunk's: the chunk's key range comes from the MariaDB source, in the
// order of its key's type and collation.
//   - Integers, DECIMAL, dates and times, binary strings order alike on both servers: the range
//     goes into the WHERE, and PostgreSQL computes the digest itself (PostgresDigestSql).
//   - Text keys (and INET6, UUID) order otherwise under PostgreSQL's collations: every row's
//     key and hash are read, and each row is put in the chunk whose range holds its key under
//     the source's order (order/key_order.h, as cdc-merge does), the digest summed here. One
//     such pass gives every chunk's digest at one position: a chunk's first digest is taken
//     from the last pass, each later one (after waiting for the target) from a new pass, which
//     the chunks after it take theirs from in turn. Equal digests mean equal rows whenever the
//     target was read, so an older pass only costs a wait when the chunk changed since. A read
//     of rows reads the whole table too, keeping the chunk's. Memory: a FETCH batch, three
//     numbers per chunk, and the chunk's rows for a read of rows.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "gtid/position.h"
#include "order/key_order.h"
#include "plan/chunk.h"
#include "postgres/connection.h"
#include "verify/chunk_verdict.h"
#include "verify/digest_sql.h"
#include "verify/row_keys.h"
#include "verify/target_wait.h"

namespace cdc::verify {

class PostgresTargetSide final : public TargetSide {
 public:
  // Connects and sets the session up as PostgresDigestSql needs; Errc::config when the
  // database's encoding is not UTF8. schema: where the chunk's tables are (cdc-apply's
  // --database); nullopt: the source's database name. position_table: "schema"."name".
  [[nodiscard]] static Result<std::unique_ptr<PostgresTargetSide>> open(const std::string& conninfo,
                                                                        std::optional<std::string> schema,
                                                                        std::string position_table,
                                                                        std::chrono::milliseconds wait);

  // The position the target holds now; Errc::config when it holds none (nothing applied).
  [[nodiscard]] Result<gtid::Position> position();
  // The table verified next, before its chunks: Errc::unsupported for a column or a key order
  // that cannot be compared here (column_text.h).
  [[nodiscard]] Result<void> set_table(const plan::TableSplit& split, const RowKeys* keys);

  [[nodiscard]] Result<DigestRead> digest(const records::Chunk& chunk) override;
  // The whole chunk, whatever `only` asks for (the comparison keeps those).
  [[nodiscard]] Result<RowsRead> rows(const records::Chunk& chunk, std::span<const KeyDifference> only) override;
  [[nodiscard]] Result<std::optional<gtid::Position>> wait_for(const gtid::Position& position) override;

  // Which of the chunks (their ranges in key order, covering every key) holds the sort key.
  [[nodiscard]] static std::optional<std::size_t> chunk_holding(std::span<const order::KeyRange> ranges,
                                                                std::string_view sort_key);
  // The chunk's range in PostgreSQL's SQL, for keys that order alike: (k1,k2) >= (..) AND
  // (k1,k2) < (..); "" for an open range.
  [[nodiscard]] static Result<std::string> range_sql(const records::Chunk& chunk,
                                                     std::span<const plan::KeyColumn> key);

 private:
  PostgresTargetSide(postgres::Connection connection, std::optional<std::string> schema, std::string position_table,
                     std::chrono::milliseconds wait);
  using OnRows = std::function<Result<void>(postgres::Rows&)>;
  // One read: the position, then sql's rows, a batch at a time.
  [[nodiscard]] Result<gtid::Position> read(const std::string& sql, const OnRows& on_rows);
  [[nodiscard]] Result<gtid::Position> position_of(postgres::Rows rows) const;
  // A row of the rows query made as RowKeys reads it: hex keys decoded to their bytes.
  [[nodiscard]] Result<void> decode_keys(std::vector<std::optional<std::string>>& values) const;
  // The chunk's range over the key's sort keys (rows put in chunks here).
  [[nodiscard]] Result<order::KeyRange> sort_range(const records::Chunk& chunk) const;
  [[nodiscard]] std::string schema_of(const records::Chunk& chunk) const;

  postgres::Connection connection_;
  std::optional<std::string> schema_;
  std::string position_table_;
  std::string position_sql_;
  TargetWait wait_;
  PostgresDigestSql sql_;
  const RowKeys* keys_ = nullptr;
  // One pass over a text-keyed table: every chunk's digest (see the top).
  [[nodiscard]] Result<void> read_every_chunk(const records::Chunk& chunk);

  bool ranges_in_sql_ = true;  // the key orders alike on both servers
  std::vector<bool> hex_;      // per listed column: PostgreSQL sends it as hex
  // A text-keyed table's chunks: their ranges over the sort keys, in key order, and the last
  // pass's digests, each marked once a chunk took it.
  std::vector<order::KeyRange> ranges_;
  std::vector<Digest> pass_digests_;
  std::vector<bool> pass_taken_;
  std::optional<gtid::Position> pass_position_;
};

}  // namespace cdc::verify
