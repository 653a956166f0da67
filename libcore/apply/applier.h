#pragma once

// Reading cdc's lines and grouping them into the source's transactions (cdc-ndjson(5),
// ORDERING AND EXACTLY ONCE): a merged snapshot's "r" lines, then the stream's changes, each
// transaction complete at its commit line. Complete transactions are gathered into target
// transactions of up to --batch-rows rows, each written with the position after its last
// source transaction (applied_state.h); what the target already holds is skipped: the first
// snapshot_rows "r" lines, every "r" line once the snapshot is done, and the transactions
// whose commit position the stored one includes. A transaction without its commit line (the
// input ends inside it, or a discard line voids it) is not applied.

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "apply/applied_state.h"
#include "apply/sql_dialect.h"
#include "apply/statement_batch.h"
#include "apply/target_table.h"
#include "gtid/position.h"
#include "ndjson/reader.h"
#include "util/result.h"

namespace cdc::apply {

enum class OnDdl { stop, apply, ignore };

struct ApplyOptions {
  Dialect dialect = Dialect::mariadb;   // the target's SQL
  std::optional<std::string> database;  // every table into it (a schema for PostgreSQL); else each into its source db
  std::optional<gtid::Position> until;  // stop after the transaction whose position includes it
  bool create_tables = false;
  OnDdl on_ddl = OnDdl::stop;
  std::uint64_t batch_rows = 5000;
};

// Where the statements go. A target transaction is one commit(); between two, nothing is
// open, so create_table and run_ddl may run at any time.
class Target {
 public:
  Target() = default;
  Target(const Target&) = delete;
  Target& operator=(const Target&) = delete;
  virtual ~Target() = default;
  // The batch's statements, then state, in one target transaction; nothing of it on failure.
  [[nodiscard]] virtual Result<void> commit(const StatementBatch& batch, const AppliedState& state) = 0;
  [[nodiscard]] virtual Result<void> create_table(const std::string& sql) = 0;
  [[nodiscard]] virtual Result<void> run_ddl(const std::string& database, std::string_view sql) = 0;
};

// Server errors as cdc-apply's exit codes: the connection lost stays Errc::unavailable (69),
// a statement the target refuses (MariaDB or PostgreSQL: a constraint, a value its type cannot hold, a missing table)
// becomes Errc::corrupt_input (65), with what says which source rows it was.
[[nodiscard]] Error target_error(const Error& server_error, std::string_view what);

enum class Stop { end_of_input, until, ddl };

struct ApplyStats {
  std::uint64_t transactions = 0;          // source transactions applied in this run
  std::uint64_t transactions_skipped = 0;  // already in the target
  std::uint64_t transactions_dropped = 0;  // incomplete: discarded, or cut by the input's end
  std::uint64_t rows = 0;                  // r, c, u, d lines applied
  std::uint64_t snapshot_rows_skipped = 0;
  std::uint64_t target_commits = 0;
  std::uint64_t ddls = 0;                  // applied or ignored
};

class Applier {
 public:
  Applier(Target& target, ApplyOptions options, AppliedState state);

  // Reads one input to its end, or to a stop. Errors name the input's line.
  [[nodiscard]] Result<Stop> read(ndjson::Reader& reader);
  // After the last input: commits the complete transactions still gathered, drops an
  // incomplete one.
  [[nodiscard]] Result<void> finish();

  [[nodiscard]] const ApplyStats& stats() const noexcept { return stats_; }
  [[nodiscard]] const AppliedState& state() const noexcept { return state_; }
  // Stop::ddl: the DDL and where it is, for the message.
  [[nodiscard]] const std::string& stop_reason() const noexcept { return stop_reason_; }

 private:
  // reader: where the line comes from, to ask whether more lines are at hand; nullptr for a
  // line read again.
  Result<std::optional<Stop>> line(simdjson::dom::object record, std::string_view text, ndjson::Reader* reader);
  Result<std::optional<Stop>> dispatch(simdjson::dom::object record, ndjson::Reader* reader);
  // Commits the whole transactions gathered before the input waits; the transaction being
  // read stays out, its lines read again from pending_lines_.
  Result<void> flush_before_waiting();
  Result<void> table_line(simdjson::dom::object record);
  Result<const TargetTable*> table_of(simdjson::dom::object record);
  Result<void> snapshot_row(simdjson::dom::object record);
  Result<void> change(simdjson::dom::object record, std::string_view op);
  Result<std::optional<Stop>> commit(simdjson::dom::object record, bool more_ready);
  Result<void> merged_high(simdjson::dom::object record);
  void drop_transaction();
  Result<void> flush();

  Target& target_;
  ApplyOptions options_;
  AppliedState state_;
  // state_.position parsed: the last transaction applied or gathered. A commit it includes is
  // in the target already and is skipped: a rerun reads its input from the start, and a file
  // that cdc-stream cut back and wrote again (--follow), or a stream that repeats a
  // transaction after a restart, brings transactions again.
  std::optional<gtid::Position> applied_through_;
  std::uint64_t snapshot_rows_seen_ = 0;

  std::deque<TargetTable> tables_;  // never moved: the batch points at them
  std::unordered_map<std::string, const TargetTable*> by_name_;
  std::unordered_set<std::string> created_;            // --create-tables: the tables, qualified
  std::unordered_set<std::string> created_databases_;  // and their databases
  std::string lookup_;
  const TargetTable* last_table_ = nullptr;  // the table of the last row line, and its names
  std::string last_db_, last_name_;

  StatementBatch batch_;
  bool dirty_ = false;  // state_ moved since the last commit
  // The source transaction being read.
  bool in_transaction_ = false;
  StatementBatch::Mark transaction_start_;
  std::uint64_t transaction_rows_ = 0;
  std::optional<std::string> transaction_ddl_, transaction_ddl_db_;
  std::string pending_lines_;             // its lines as read, one after the other
  std::vector<std::size_t> pending_ends_;  // where each ends in pending_lines_
  std::string origin_;

  ApplyStats stats_;
  std::string stop_reason_;
  bool target_failed_ = false;  // the error is the target's, which names the source positions
};

// Whether a transaction that ends at commit_position is in the target, whose position table
// holds stored. Errc::corrupt_input when the two forms cannot be compared.
[[nodiscard]] Result<bool> already_applied(const gtid::Position& stored, const gtid::Position& commit_position);

}  // namespace cdc::apply
