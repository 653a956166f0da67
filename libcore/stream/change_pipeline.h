#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "binlog/ddl_target.h"
#include "binlog/decoder.h"
#include "stream/change_writer.h"
#include "stream/transaction_tracker.h"
#include "util/result.h"
#include "util/table_filter.h"
#include "util/time_text.h"

namespace cdc::stream {

// Row lines written for one table, by kind of change (--metrics).
struct TableRows {
  std::uint64_t inserted = 0;
  std::uint64_t updated = 0;
  std::uint64_t deleted = 0;
};

struct StreamSummary {
  std::uint64_t events = 0;
  std::uint64_t rows = 0;
  std::uint64_t transactions = 0;
  std::uint64_t skipped_events = 0;
  // Keyed by database '\0' table.
  std::map<std::string, TableRows, std::less<>> table_rows;
};

// A DDL on a captured table, as the DDL gate sees it before anything of it is written.
struct PendingDdl {
  std::string_view database;
  std::string_view sql;
  std::string_view gtid;  // empty without GTIDs
  std::string_view file;
  std::uint64_t offset = 0;
};

// A transaction whose start was read and whose end was not (yet).
struct OpenTransaction {
  std::string_view gtid;  // empty without GTIDs
  std::string_view file;  // where it began
  std::uint64_t offset = 0;
  std::uint64_t rows = 0;  // row lines written for it so far
};

// A transaction about to begin, as the transaction gate sees it before anything of it is
// written or counted.
struct TransactionStart {
  // When it committed: MySQL 8's immediate_commit_timestamp (microseconds) where the GTID
  // event has it, else the opening event's timestamp (whole seconds; on MariaDB the GTID
  // event's, the start of the statement that committed).
  UtcTime committed;
  std::string_view file;
  std::uint64_t offset = 0;  // its first event (GTID, or BEGIN without GTIDs)
};

// What one event did to the stream.
struct Step {
  bool transaction_ended = false;  // a commit (or an implicitly committing statement) closed one
  bool stopped_before_ddl = false; // the DDL gate refused the DDL: nothing of it was written
  // The transaction gate refused the transaction this event opens: nothing of it was read.
  bool stopped_before_transaction = false;
};

// Turns decoded events into NDJSON lines: follows transactions (TransactionTracker), filters
// tables, writes rows, DDL and commit lines through the ChangeWriter. The file reader and the
// replication client both feed it; it never reads bytes itself.
class ChangePipeline {
 public:
  using Warn = std::function<void(std::string_view)>;

  ChangePipeline(TableFilter filter, ChangeWriter& writer, binlog::Decoder& decoder, Warn warn,
                 bool skip_unknown_events);

  // Names the binlog file the following events come from (for positions).
  void start_file(std::string_view file);
  [[nodiscard]] const std::string& file() const noexcept { return file_; }

  Result<Step> handle(const binlog::Event& event, std::uint64_t end_offset);

  // While set, events move the transaction and GTID state along but write nothing: a run that
  // starts at FILE:OFFSET reads the file from its start to learn the GTID state there.
  void set_silent(bool silent) noexcept { silent_ = silent; }

  // Asked before a DDL on a captured table is written; false stops the stream before it.
  void set_ddl_gate(std::function<bool(const PendingDdl&)> gate) { ddl_gate_ = std::move(gate); }
  // Asked as each transaction begins (--from and --until TIME); false stops the stream
  // before it: the event is not handled, and the position is the boundary before it. The
  // gate may set_silent() for the transaction and those after it.
  void set_transaction_gate(std::function<bool(const TransactionStart&)> gate) { transaction_gate_ = std::move(gate); }
  // Called after each DDL on a captured table has been written (schema caches drop the table).
  void set_ddl_listener(std::function<void(std::string_view database, std::string_view sql)> listener) {
    ddl_listener_ = std::move(listener);
  }
  // Called for each newly decoded table map of a captured table, before its rows: a map
  // without optional metadata can be completed from the catalog, and any map gains the
  // catalog's COLUMN_TYPE texts for its table line.
  void set_table_map_hook(std::function<void(binlog::TableMap&)> hook) { table_map_hook_ = std::move(hook); }

  [[nodiscard]] TransactionTracker& tracker() noexcept { return tracker_; }
  [[nodiscard]] const TransactionTracker& tracker() const noexcept { return tracker_; }
  [[nodiscard]] const StreamSummary& summary() const noexcept { return summary_; }
  // Adds summary().table_rows into `into` and empties it: what was counted up to a checkpoint.
  void take_table_rows(std::map<std::string, TableRows, std::less<>>& into);
  [[nodiscard]] const TableFilter& filter() const noexcept { return filter_; }
  // The warnings a run prints once at its end (partial images, lossy text, skipped types).
  void warn_at_end() const;
  // The transaction the events read so far leave open: an input that ends here ends inside it.
  [[nodiscard]] std::optional<OpenTransaction> open_transaction() const;

 private:
  Result<Step> dispatch(const binlog::Event& event, std::uint64_t end_offset);
  Result<void> handle_unknown(const binlog::UnknownEvent& unknown, const binlog::Event& event);
  Result<void> handle_rows(const binlog::RowsEvent& rows, const binlog::Event& event);
  // summary_.table_rows for rows of map's table.
  void count_table_rows(const binlog::TableMap& map, binlog::RowsKind kind, std::uint64_t rows);
  Result<Step> handle_payload(const binlog::TransactionPayloadEvent& payload, std::uint64_t offset,
                              std::uint64_t end_offset);
  Result<Step> handle_query(const binlog::QueryEvent& query, const binlog::Event& event, std::uint64_t end_offset);
  bool ddl_selected(const binlog::DdlTarget& target) const;
  bool capture_ddl(const binlog::QueryEvent& query, const binlog::Event& event);
  Result<Step> end_transaction(std::uint64_t end_offset, std::uint32_t timestamp,
                               std::optional<std::uint64_t> xid = std::nullopt);

  TableFilter filter_;
  ChangeWriter& writer_;
  binlog::Decoder& decoder_;
  Warn warn_;
  bool skip_unknown_events_;
  bool silent_ = false;
  std::function<bool(const PendingDdl&)> ddl_gate_;
  std::function<bool(const TransactionStart&)> transaction_gate_;
  std::function<void(std::string_view, std::string_view)> ddl_listener_;
  std::function<void(binlog::TableMap&)> table_map_hook_;
  TransactionTracker tracker_;
  std::string file_;
  StreamSummary summary_;
  // The entry of summary_.table_rows the last rows event counted into, and its key.
  TableRows* counted_rows_ = nullptr;
  std::string counted_key_;
  std::string lookup_key_;
  // Where the open transaction began (its GTID event, or BEGIN without GTIDs) and the rows
  // written before it.
  std::string transaction_file_;
  std::uint64_t transaction_offset_ = 0;
  std::uint64_t rows_before_transaction_ = 0;
  // The thread id of the open transaction's BEGIN query event, for its change lines.
  std::optional<std::uint32_t> transaction_thread_;
  std::optional<std::uint64_t> payload_offset_;
  std::uint64_t payload_rows_ = 0;
  struct Skipped {
    std::uint64_t count = 0;
    std::string first_file;
    std::uint64_t first_offset = 0;
    bool ignorable = false;
  };
  std::map<unsigned, Skipped> skipped_types_;
  bool missing_map_warned_ = false;
  bool statement_warned_ = false;
};

}  // namespace cdc::stream
