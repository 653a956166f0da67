#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "binlog/events/gtid_events.h"
#include "gtid/mariadb_gtid.h"
#include "gtid/mysql_gtid_set.h"
#include "gtid/position.h"
#include "util/result.h"

namespace cdc::stream {

struct TransactionEnd {
  std::string_view gtid;      // the transaction's own GTID; empty without GTIDs
  std::string position;       // where to resume after it: GTID set, MariaDB GTID position, or FILE:OFFSET
  std::uint64_t lines = 0;    // lines written for it (rows and DDL)
  std::uint64_t rows = 0;
};

// Follows transaction boundaries and the GTID state through a binlog, so that every line
// can name its transaction and every commit the position to resume after it.
//
// Resume semantics of `position`: with GTIDs it is the set of transactions executed up to
// and including this one (MySQL: PREVIOUS_GTIDS of the file plus every GTID since; MariaDB:
// the GTID_LIST state advanced by every GTID since), so resuming from it replays nothing of
// this transaction; without GTIDs it is FILE:OFFSET of the event after the commit.
class TransactionTracker {
 public:
  void start_file(std::string_view file) { file_ = std::string(file); }
  [[nodiscard]] const std::string& file() const noexcept { return file_; }

  // Starts from a known GTID state (a --from GTID set or position, or a saved state).
  void seed(const gtid::Position& start);

  void begin_mysql(const binlog::MysqlGtidEvent& event);
  void begin_mariadb(const binlog::MariadbGtidEvent& event, std::uint32_t server_id);
  void mariadb_gtid_list(const binlog::MariadbGtidListEvent& event);
  Result<void> previous_gtids(const binlog::PreviousGtidsEvent& event);
  void explicit_begin() { explicit_ = true; }

  [[nodiscard]] bool in_explicit_transaction() const noexcept { return explicit_; }
  [[nodiscard]] std::string_view gtid() const noexcept { return gtid_text_; }
  // The GTID of the transaction end() closed last.
  [[nodiscard]] std::string_view last_gtid() const noexcept { return ended_gtid_; }
  void count_lines(std::uint64_t lines) noexcept { lines_ += lines; }
  void count_rows(std::uint64_t rows) noexcept {
    lines_ += rows;
    rows_ += rows;
  }
  // Rows whose lines another thread counts (ChangeWriter::rows_pending): the transaction may
  // have lines, so end() says where to resume after it even with none counted here.
  void expect_lines() noexcept { lines_expected_ = true; }

  // Closes the transaction (XID, COMMIT, or an implicitly committing statement).
  TransactionEnd end(std::uint64_t end_offset);

  // Between transactions: where to resume to continue from here (what end() would say).
  [[nodiscard]] gtid::Position position_at(std::uint64_t offset) const;
  [[nodiscard]] std::string position_text(std::uint64_t offset) const;
  [[nodiscard]] const gtid::MysqlGtidSet& mysql_executed() const noexcept { return mysql_executed_; }
  [[nodiscard]] const gtid::MariadbGtidPos& mariadb_state() const noexcept { return mariadb_state_; }
  // Whether the GTID state is complete: seeded, or read from the file's PREVIOUS_GTIDS or
  // GTID list. Until then positions are FILE:OFFSET.
  [[nodiscard]] bool gtid_state_known() const noexcept { return state_known_; }
  [[nodiscard]] bool in_transaction() const noexcept { return have_mysql_gtid_ || have_mariadb_gtid_ || explicit_; }

 private:
  enum class Mode { unknown, mysql, mariadb };

  std::string file_;
  Mode mode_ = Mode::unknown;
  bool state_known_ = false;
  gtid::MysqlGtidSet mysql_executed_;
  gtid::MariadbGtidPos mariadb_state_;
  bool have_mysql_gtid_ = false;
  gtid::Gtid mysql_gtid_;
  bool have_mariadb_gtid_ = false;
  gtid::MariadbGtid mariadb_gtid_;
  std::string gtid_text_;
  std::string ended_gtid_;
  bool explicit_ = false;
  std::uint64_t lines_ = 0;
  std::uint64_t rows_ = 0;
  bool lines_expected_ = false;
};

}  // namespace cdc::stream
