#pragma once

// Adding tables to a running sync, and dropping them (man cdc-sync, "Adding and dropping
// tables"): every decision as a pure function, testable without a server, as sync/resume.h's
// are for the flow.
//
// A rerun with other --tables or --exclude once the final stream has started is an addition, kept in DIR/add.N (the next free N; the earlier ones stay as a record):
//   settings           the settings after the addition (the run's), written first
//   previous-settings  DIR/settings as it was: the tables streamed so far
//   plan.ndjson        cdc-plan's chunks of the new tables only (empty: nothing to snapshot)
//   chunks/, span, deltas.*, snapshot.ndjson, snapshot.emitted   as in DIR, for the new tables
//   catchup.state      cdc-stream's state for the new tables' changes from their high H to
//                      where the stream stopped, P
//   catchup.done       "P": those changes are out (and, with --output, stream.state owns them)
//   done               the addition is over: DIR/settings holds add.N/settings
// While the new tables are read, the stream of the others goes on in the background from
// DIR/stream.state; then the switch-over: that stream stopped at P; run on to H when P is
// before H; the new tables' snapshot out; the new tables' changes from H to P when P is after
// H; DIR/settings replaced; the stream resumes from P with every table.

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sync/resume.h"
#include "util/result.h"
#include "util/table_filter.h"

namespace cdc::sync {

// ---- what a rerun does with its settings ---------------------------------------------------

// settings_text's text back; nullopt for a text it does not write.
[[nodiscard]] std::optional<Settings> parse_settings(std::string_view text);

// Whether was and now differ only in what a rerun may change once the stream runs: --tables,
// --exclude, and --chunk-key values added (a new table without a primary key needs one); the
// family (snapshot or stream), the chunk size and the chunk keys given before stay.
[[nodiscard]] bool only_tables_differ(const Settings& was, const Settings& now);

// True when every table now selects is one was selects, told from the patterns alone: each
// --tables pattern of now is a table name (no * or ?) that was selects, or a pattern of was's
// --tables while now excludes all that was excluded. False when that cannot be told without
// the server's tables (cdc-plan decides then, per table).
[[nodiscard]] bool surely_no_new_tables(const Settings& was, const Settings& now);

enum class Rerun {
  keep,                         // the settings are the directory's
  write,                        // the directory does not depend on its settings yet: replaced
  add_tables,                   // other tables, the stream running: a new addition (DIR/add.N)
  continue_addition,            // the addition in progress is this run's: it goes on
  switch_tables,                // no table to read (no_data, or surely_no_new_tables): the stream
                                // resumes from its state with the new filter
  refuse,                       // other settings (exit 2, as before)
  refuse_addition_in_progress,  // an addition to other settings is in progress (exit 2)
};

struct RerunFacts {
  std::optional<std::string> existing;  // DIR/settings
  bool bound = false;                   // DIR holds a plan or a started stream
  bool stream_started = false;          // DIR/stream.started or stream.state: the final stream ran
  std::optional<std::string> addition;  // the settings of the addition in progress, if any
};
[[nodiscard]] Rerun decide_rerun(const RerunFacts& facts, std::string_view wanted, Mode mode);

// ---- which tables are new ------------------------------------------------------------------

struct TableName {
  std::string db;
  std::string table;
  friend auto operator<=>(const TableName&, const TableName&) = default;
};

// The chunk lines of the tables the old filter does not select, and those tables in the
// order they come. Decided per table by the old globs, not by comparing pattern texts.
// Errc::corrupt_input naming the line for one that is not a chunk line.
struct NewTables {
  std::string plan;
  std::vector<TableName> tables;
};
[[nodiscard]] Result<NewTables> new_tables(std::string_view plan_text, const TableFilter& old_filter);

// The tables of a plan's chunk lines, in the order they come.
[[nodiscard]] Result<std::vector<TableName>> plan_tables(std::string_view plan_text);

// A --tables value that selects exactly these tables: DB.TABLE each, glob characters, dots
// and commas escaped with '\'.
[[nodiscard]] std::string exact_tables(const std::vector<TableName>& tables);

// The --chunk-key values (DB.TABLE=COL[,COL]) of the tables the filter selects: cdc-plan
// refuses a chunk key of a table it does not plan (one a narrower --tables drops).
[[nodiscard]] std::vector<std::string> chunk_keys_for(const std::vector<std::string>& keys, const TableFilter& filter);

// ---- the switch-over -----------------------------------------------------------------------

// Where the stream of the old tables stopped (P, DIR/stream.state) against the new tables'
// high watermark (H): at it, after it (P contains H), or before it (P does not contain H,
// including two MariaDB positions each ahead in another domain: the stream runs on to H
// first). Errc::corrupt_input when the two are not of one kind (a GTID position and
// FILE:OFFSET).
enum class PositionOrder { same, after, before };
[[nodiscard]] Result<PositionOrder> order_of(std::string_view stream_position, std::string_view high);

// Which of DIR/add.N's files are there, and where the stream stands.
struct AddFacts {
  DirFacts snapshot;       // plan.ndjson, chunks' span, deltas.*, snapshot.ndjson, snapshot.emitted
  bool no_new_tables = false;    // plan.ndjson is there and empty
  std::optional<PositionOrder> stream_vs_high;  // known once snapshot.ndjson is there
  bool catchup_done = false;     // catchup.done
  bool settings_replaced = false;  // DIR/settings is add.N/settings
};

struct AddProgress {
  bool stream_resumed = false;  // the old tables' stream was started in the background
  bool stream_running = false;  // ... and not stopped yet
  bool snapshot_start_announced = false;
  bool chunks_read = false;
  bool emit_settled = false;
  bool snapshot_end_announced = false;
  int deltas_rejected = 0;
};

enum class AddAction {
  resume_stream,                 // the old tables' stream, in the background, from stream.state
  plan,                          // cdc-plan (new filter) -> the new tables' chunks, plan.ndjson
  announce_add_snapshot_start,   // the add_snapshot_start phase
  read_chunks,
  span,
  read_deltas,
  merge,
  stop_stream,                   // SIGTERM to the background stream: it saves P and ends
  catch_up_stream,               // P before H: the old tables' stream from P --until H
  emit_snapshot,                 // the new tables' snapshot to stdout
  skip_emit,                     // it went out before, or stays in DIR/add.N (--output)
  announce_add_snapshot_end,     // the add_snapshot_end phase
  catch_up_new_tables,           // P after H: the new tables' changes from H --until P
  replace_settings,              // DIR/settings := add.N/settings
  finish,                        // add.N/done; the stream of every table follows
};

[[nodiscard]] std::string_view add_action_name(AddAction action) noexcept;

// The next step of an addition (with_output: --output was given).
[[nodiscard]] AddAction next_add_action(bool with_output, const AddFacts& facts, const AddProgress& progress) noexcept;

// DIR/add.N directory names: the in-progress addition is the one without its done file; a new
// one takes the number after the highest. Names that are not add.N are ignored.
[[nodiscard]] std::optional<std::uint64_t> add_dir_number(std::string_view name) noexcept;

}  // namespace cdc::sync
