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

void TransactionTracker::mariadb_gtid_list(const binlog::MariadbGtidListEvent& event) {
  mode_ = Mode::mariadb;
  gtid::MariadbGtidPos state;
  for (std::uint32_t i = 0; i < event.count; ++i) {
    const auto entry = event.entry(i);
    state.advance(gtid::MariadbGtid{entry.domain_id, entry.server_id, entry.seq_no});
  }
  mariadb_state_ = std::move(state);
}

Result<void> TransactionTracker::previous_gtids(const binlog::PreviousGtidsEvent& event) {
  ByteReader in(event.encoded_set, event.offset);
  auto set = gtid::MysqlGtidSet::decode(in);
  if (!set) return fail(Errc::corrupt_input, fmt::format("{}:{}: PREVIOUS_GTIDS_LOG_EVENT: {}", file_, event.offset,
                                                         set.error().message));
  mysql_executed_ = std::move(*set);
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
  if (end.lines > 0) {
    if (mode_ == Mode::mysql && !mysql_executed_.empty())
      end.position = mysql_executed_.to_string();
    else if (mode_ == Mode::mariadb && !mariadb_state_.empty())
      end.position = mariadb_state_.to_string();
    else
      end.position = fmt::format("{}:{}", file_, end_offset);
  }
  have_mysql_gtid_ = have_mariadb_gtid_ = false;
  gtid_text_.clear();
  explicit_ = false;
  lines_ = rows_ = 0;
  return end;
}

}  // namespace cdc::stream
