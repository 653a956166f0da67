#include "verify/mariadb_sides.h"

#include <fmt/format.h>

#include "apply/applied_state.h"
#include "apply/applier.h"
#include "snapshot/chunk.h"

namespace cdc::verify {

namespace {

std::string first_value(const mysql::QueryResult& result) {
  if (result.rows.empty() || result.rows[0].empty() || !result.rows[0][0]) return {};
  return *result.rows[0][0];
}

// The server's position in the form kind, from what position_sql_for(kind) answered.
Result<gtid::Position> source_position(const mysql::QueryResult& result, gtid::Position::Kind kind) {
  std::string text;
  if (kind == gtid::Position::Kind::file) {
    if (result.rows.empty() || result.rows[0].size() < 2 || !result.rows[0][0] || !result.rows[0][1])
      return fail(Errc::config, "the source's binary log is off (SHOW MASTER STATUS is empty)");
    text = fmt::format("{}:{}", *result.rows[0][0], *result.rows[0][1]);
  } else {
    text = first_value(result);
  }
  // The server's GTID set may hold newlines (MySQL); parse() reads them.
  auto position = gtid::Position::parse(text);
  if (!position) return fail(Errc::corrupt_input, fmt::format("the source's position '{}': {}", text,
                                                              position.error().message));
  if (position->kind != kind)
    return fail(Errc::corrupt_input, fmt::format("the source's position {} is of another form than the target's "
                                                 "position table: the target was applied from another source",
                                                 text));
  return std::move(*position);
}

std::string position_sql_for(gtid::Position::Kind kind) {
  switch (kind) {
    case gtid::Position::Kind::mariadb_gtids: return "SELECT @@global.gtid_binlog_pos";
    case gtid::Position::Kind::mysql_gtids: return "SELECT @@global.gtid_executed";
    case gtid::Position::Kind::file: return "SHOW MASTER STATUS";
  }
  return "SHOW MASTER STATUS";
}

}  // namespace

Result<void> prepare_verify_session(mysql::Connection& connection) {
  for (const char* sql : {"SET SESSION time_zone = '+00:00'", "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ"})
    if (auto done = connection.query(sql); !done) return fail(done.error());
  return {};
}

Result<MariadbSide::Answers> MariadbSide::read(const records::Chunk& chunk, bool digest, bool position_first,
                                               const std::string& position_sql,
                                               std::span<const KeyDifference> only) {
  if (keys_ == nullptr) return fail(Errc::internal, "the table's key columns were not set before its chunks");
  auto condition = snapshot::condition_sql(chunk);
  if (!condition) return fail(condition.error());
  auto narrowed = keys_->only_sql(only);
  if (!narrowed) return fail(narrowed.error());
  if (!narrowed->empty()) *condition = condition->empty() ? *narrowed : *condition + " AND " + *narrowed;
  const std::string& db = database_ ? *database_ : chunk.db;
  std::string query = digest ? sql_.digest_sql(db, chunk.table, chunk.columns, *condition)
                             : sql_.rows_sql(db, chunk.table, chunk.columns, keys_->listed(), keys_->keyless(), *condition);
  std::vector<std::string> statements{"START TRANSACTION WITH CONSISTENT SNAPSHOT"};
  Answers answers;
  if (position_first) {
    answers.position = statements.size();
    statements.push_back(position_sql);
  }
  answers.query = statements.size();
  statements.push_back(std::move(query));
  if (!position_first) {
    answers.position = statements.size();
    statements.push_back(position_sql);
  }
  statements.emplace_back("COMMIT");
  auto results = connection_.query_batch(statements);
  if (!results) return fail(results.error());
  answers.results = std::move(*results);
  return answers;
}

Result<Digest> MariadbSide::digest_of(const mysql::QueryResult& result) {
  if (result.rows.size() != 1 || result.rows[0].size() != 3 || !result.rows[0][0] || !result.rows[0][1] ||
      !result.rows[0][2])
    return fail(Errc::internal, "the digest query did not answer one row of three values");
  Digest digest;
  digest.rows = std::stoull(*result.rows[0][0]);
  digest.high = *result.rows[0][1];
  digest.low = *result.rows[0][2];
  return digest;
}

Result<std::vector<RowHash>> MariadbSide::rows_of(const mysql::QueryResult& result) const {
  std::vector<RowHash> rows;
  rows.reserve(result.rows.size());
  for (const auto& values : result.rows) {
    auto row = keys_->row(values);
    if (!row) return fail(row.error());
    rows.push_back(std::move(*row));
  }
  return rows;
}

Result<DigestRead> MariadbSide::read_digest(const records::Chunk& chunk, bool position_first,
                                            const std::string& position_sql, const PositionOf& position_of) {
  auto answers = read(chunk, true, position_first, position_sql);
  if (!answers) return fail(answers.error());
  auto digest = digest_of(answers->results[answers->query]);
  if (!digest) return fail(digest.error());
  auto position = position_of(answers->results[answers->position]);
  if (!position) return fail(position.error());
  return DigestRead{std::move(*digest), std::move(*position)};
}

Result<RowsRead> MariadbSide::read_rows(const records::Chunk& chunk, bool position_first, const std::string& position_sql,
                                        std::span<const KeyDifference> only, const PositionOf& position_of) {
  auto answers = read(chunk, false, position_first, position_sql, only);
  if (!answers) return fail(answers.error());
  auto rows = rows_of(answers->results[answers->query]);
  if (!rows) return fail(rows.error());
  auto position = position_of(answers->results[answers->position]);
  if (!position) return fail(position.error());
  return RowsRead{std::move(*rows), std::move(*position)};
}

MariadbSource::MariadbSource(mysql::Connection connection, gtid::Position::Kind kind, Peer peer)
    : MariadbSide(std::move(connection), std::nullopt, peer), kind_(kind), position_sql_(position_sql_for(kind)) {}

Result<gtid::Position> MariadbSource::position_of(const mysql::QueryResult& result) const {
  return source_position(result, kind_);
}

Result<DigestRead> MariadbSource::digest(const records::Chunk& chunk) {
  return read_digest(chunk, false, position_sql_, [this](const mysql::QueryResult& r) { return position_of(r); });
}

Result<RowsRead> MariadbSource::rows(const records::Chunk& chunk, std::span<const KeyDifference> only) {
  return read_rows(chunk, false, position_sql_, only, [this](const mysql::QueryResult& r) { return position_of(r); });
}

MariadbTargetSide::MariadbTargetSide(mysql::Connection connection, std::optional<std::string> database,
                                     std::string position_table, std::chrono::milliseconds wait)
    : MariadbSide(std::move(connection), std::move(database)),
      position_table_(std::move(position_table)),
      position_sql_(apply::read_position_sql(position_table_)),
      wait_(wait) {}

Result<gtid::Position> MariadbTargetSide::position_of(const mysql::QueryResult& result) const {
  return held_position(result, position_table_);
}

Result<gtid::Position> MariadbTargetSide::position() {
  auto result = connection_.query(position_sql_);
  if (!result) return fail(result.error());
  return position_of(*result);
}

Result<DigestRead> MariadbTargetSide::digest(const records::Chunk& chunk) {
  return read_digest(chunk, true, position_sql_, [this](const mysql::QueryResult& r) { return position_of(r); });
}

Result<RowsRead> MariadbTargetSide::rows(const records::Chunk& chunk, std::span<const KeyDifference> only) {
  return read_rows(chunk, true, position_sql_, only, [this](const mysql::QueryResult& r) { return position_of(r); });
}

Result<std::optional<gtid::Position>> MariadbTargetSide::wait_for(const gtid::Position& wanted) {
  return wait_.wait_for(wanted, [this] { return position(); });
}

}  // namespace cdc::verify
