#include "stream/transaction_tracker.h"

#include <fmt/format.h>

namespace cdc::stream {

void TransactionTracker::begin_mysql(const binlog::MysqlGtidEvent& event) {
  explicit_ = false;
  lines_ = rows_ = 0;
  have_mariadb_gtid_ = false;
  if (event.anonymous) {
    have_mysql_gtid_ = false;
    gtid_text_.clear();
    return;
  }
  mode_ = Mode::mysql;
  have_mysql_gtid_ = true;
  mysql_gtid_.uuid.bytes = event.uuid;
  mysql_gtid_.tag.assign(event.tag);
  mysql_gtid_.number = static_cast<std::uint64_t>(event.gno);
  gtid_text_ = mysql_gtid_.to_string();
}

void TransactionTracker::begin_mariadb(const binlog::MariadbGtidEvent& event, std::uint32_t server_id) {
  mode_ = Mode::mariadb;
  lines_ = rows_ = 0;
  have_mysql_gtid_ = false;
  have_mariadb_gtid_ = true;
  mariadb_gtid_ = gtid::MariadbGtid{event.domain_id, server_id, event.seq_no};
  gtid_text_ = mariadb_gtid_.to_string();
  // MariaDB writes no BEGIN: a GTID without FL_STANDALONE opens a transaction that ends at
  // XID or COMMIT; a standalone one covers the single statement that follows (DDL).
  explicit_ = (event.flags & binlog::MariadbGtidEvent::kStandalone) == 0;
}

void TransactionTracker::seed(const gtid::Position& start) {
  switch (start.kind) {
    case gtid::Position::Kind::mysql_gtids:
      mode_ = Mode::mysql;
      mysql_executed_ = start.mysql_gtids;
      state_known_ = true;
      break;
    case gtid::Position::Kind::mariadb_gtids:
      mode_ = Mode::mariadb;
      mariadb_state_ = start.mariadb_gtids;
      state_known_ = true;
      break;
    case gtid::Position::Kind::file:
      break;
  }
}

// The list at a file's start is the binlog state when the file was opened. Merged rather
// than assigned: a run that started from a later position (or read an earlier file) knows
// at least as much, and a domain must never move backwards.
void TransactionTracker::mariadb_gtid_list(const binlog::MariadbGtidListEvent& event) {
  mode_ = Mode::mariadb;
  state_known_ = true;
  mariadb_state_ = mariadb_state_.union_with(event.state());
}

Result<void> TransactionTracker::previous_gtids(const binlog::PreviousGtidsEvent& event) {
  ByteReader in(event.encoded_set, event.offset);
  auto set = gtid::MysqlGtidSet::decode(in);
  if (!set) return fail(Errc::corrupt_input, fmt::format("{}:{}: PREVIOUS_GTIDS_LOG_EVENT: {}", file_, event.offset,
                                                         set.error().message));
  // PREVIOUS_GTIDS is everything executed before the file; the union keeps what a seeded
  // state or an earlier file added.
  mysql_executed_ = mysql_executed_.union_with(*set);
  state_known_ = true;
  if (!mysql_executed_.empty()) mode_ = Mode::mysql;
  return {};
}

TransactionEnd TransactionTracker::end(std::uint64_t end_offset) {
  TransactionEnd end;
  end.lines = lines_;
  end.rows = rows_;
  ended_gtid_ = gtid_text_;
  end.gtid = ended_gtid_;
  if (have_mysql_gtid_) (void)mysql_executed_.add(mysql_gtid_);
  if (have_mariadb_gtid_) mariadb_state_.advance(mariadb_gtid_);
  have_mysql_gtid_ = have_mariadb_gtid_ = false;
  if (end.lines > 0 || lines_expected_) end.position = position_text(end_offset);
  gtid_text_.clear();
  explicit_ = false;
  lines_expected_ = false;
  lines_ = rows_ = 0;
  return end;
}

std::string TransactionTracker::position_text(std::uint64_t offset) const {
  if (state_known_ && mode_ == Mode::mysql && !mysql_executed_.empty()) return mysql_executed_.to_string();
  if (state_known_ && mode_ == Mode::mariadb && !mariadb_state_.empty()) return mariadb_state_.to_string();
  return fmt::format("{}:{}", file_, offset);
}

gtid::Position TransactionTracker::position_at(std::uint64_t offset) const {
  gtid::Position position;
  if (state_known_ && mode_ == Mode::mysql && !mysql_executed_.empty()) {
    position.kind = gtid::Position::Kind::mysql_gtids;
    position.mysql_gtids = mysql_executed_;
  } else if (state_known_ && mode_ == Mode::mariadb && !mariadb_state_.empty()) {
    position.kind = gtid::Position::Kind::mariadb_gtids;
    position.mariadb_gtids = mariadb_state_;
  } else {
    position.kind = gtid::Position::Kind::file;
    position.file = gtid::FilePosition{file_, offset};
  }
  return position;
}

}  // namespace cdc::stream
