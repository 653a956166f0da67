#pragma once

// The two servers of cdc-apply --verify when both are MariaDB or MySQL: each read of a chunk is
// one round trip, a read view and what it reflects (chunk_verdict.h):
//
//   source  START TRANSACTION WITH CONSISTENT SNAPSHOT; the digest or the rows; then the
//           server's position (@@gtid_binlog_pos, @@gtid_executed, or SHOW MASTER STATUS, as
//           the target's position table has it), read after the view opened, so it holds
//           every transaction the view sees; COMMIT.
//   target  START TRANSACTION WITH CONSISTENT SNAPSHOT; the position table's row; the digest
//           or the rows; COMMIT. cdc-apply writes the rows and the position in one
//           transaction, so the view's position is that of exactly the rows it sees.
//
// A position read after the view may hold transactions the view does not see: the target is
// then asked to apply a little more than needed before it is compared, never less.

#include <chrono>
#include <memory>
#include <functional>
#include <optional>
#include <string>

#include "gtid/position.h"
#include "mysql/connection.h"
#include "mysql/connection_options.h"
#include "verify/chunk_verdict.h"
#include "verify/digest_sql.h"
#include "verify/row_keys.h"
#include "verify/target_wait.h"

namespace cdc::verify {

// Time zone UTC (one text of TIMESTAMP values on both sides) and REPEATABLE READ (the read
// views).
[[nodiscard]] Result<void> prepare_verify_session(mysql::Connection& connection);

// What both sides share: the chunk's table on this side, the SQL and the key's columns.
class MariadbSide {
 public:
  // target_database: where the chunk's table is on this side (cdc-apply's --database); nullopt:
  // the chunk's own database.
  // peer: the other side's kind of server, whose row text this side writes (digest_sql.h).
  MariadbSide(mysql::Connection connection, std::optional<std::string> target_database, Peer peer = Peer::mariadb)
      : connection_(std::move(connection)), database_(std::move(target_database)), sql_(peer) {}
  // The key columns of the table now verified (set before its chunks).
  void set_keys(const RowKeys* keys) noexcept { keys_ = keys; }
  [[nodiscard]] mysql::Connection& connection() noexcept { return connection_; }

 protected:
  // The view's statements around the chunk's query; index of the query's answer, of the
  // position's, and the answers.
  struct Answers {
    std::vector<mysql::QueryResult> results;
    std::size_t query = 0;
    std::size_t position = 0;
  };
  // only: the rows query narrowed to these keys (RowKeys::only_sql).
  [[nodiscard]] Result<Answers> read(const records::Chunk& chunk, bool digest, bool position_first,
                                     const std::string& position_sql, std::span<const KeyDifference> only = {});
  [[nodiscard]] static Result<Digest> digest_of(const mysql::QueryResult& result);
  [[nodiscard]] Result<std::vector<RowHash>> rows_of(const mysql::QueryResult& result) const;
  // The digest, or the rows, with the position the view holds: position_sql's answer, which
  // each side reads its own way (position_of).
  using PositionOf = std::function<Result<gtid::Position>(const mysql::QueryResult&)>;
  [[nodiscard]] Result<DigestRead> read_digest(const records::Chunk& chunk, bool position_first,
                                               const std::string& position_sql, const PositionOf& position_of);
  [[nodiscard]] Result<RowsRead> read_rows(const records::Chunk& chunk, bool position_first,
                                           const std::string& position_sql, std::span<const KeyDifference> only,
                                           const PositionOf& position_of);

  mysql::Connection connection_;
  std::optional<std::string> database_;
  const RowKeys* keys_ = nullptr;
  MariadbDigestSql sql_;
};

class MariadbSource final : public Side, public MariadbSide {
 public:
  // kind: the form of the target's position table, which the source's position must have;
  // peer: the target's kind of server.
  MariadbSource(mysql::Connection connection, gtid::Position::Kind kind, Peer peer);
  [[nodiscard]] Result<DigestRead> digest(const records::Chunk& chunk) override;
  [[nodiscard]] Result<RowsRead> rows(const records::Chunk& chunk, std::span<const KeyDifference> only) override;

 private:
  [[nodiscard]] Result<gtid::Position> position_of(const mysql::QueryResult& result) const;
  gtid::Position::Kind kind_;
  std::string position_sql_;
};

class MariadbTargetSide final : public TargetSide, public MariadbSide {
 public:
  // position_table: `db`.`name`, cdc-apply's. wait: how long wait_for waits.
  MariadbTargetSide(mysql::Connection connection, std::optional<std::string> database, std::string position_table,
                    std::chrono::milliseconds wait);
  // The position the target holds now; Errc::config when it holds none (nothing applied).
  [[nodiscard]] Result<gtid::Position> position();
  [[nodiscard]] Result<DigestRead> digest(const records::Chunk& chunk) override;
  [[nodiscard]] Result<RowsRead> rows(const records::Chunk& chunk, std::span<const KeyDifference> only) override;
  [[nodiscard]] Result<std::optional<gtid::Position>> wait_for(const gtid::Position& position) override;

 private:
  [[nodiscard]] Result<gtid::Position> position_of(const mysql::QueryResult& result) const;
  std::string position_table_;
  std::string position_sql_;
  TargetWait wait_;
};

}  // namespace cdc::verify
