#pragma once

// cdc-sync's resume state machine (man cdc-sync, "The flow" and "Resuming"). Every decision
// here is a pure function of what the state directory holds (DirFacts, read by
// sync/state_dir.h) and of what this run has already done (RunProgress), so that each crash
// point can be tested without a server: a crash leaves some set of whole files (each is
// written under a temporary name, then renamed), and next_action() says what the next run
// does with that set.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cdc::sync {

enum class Mode { initial, initial_only, no_data };

// "initial", "initial_only", "no_data"; nullopt for anything else.
[[nodiscard]] std::optional<Mode> parse_mode(std::string_view text) noexcept;

// The tables a tool is given: --tables and --exclude.
struct TableSelection {
  std::string tables;
  std::string exclude;
};

// Which of the state directory's files are there (whole: temporary files do not count).
struct DirFacts {
  bool plan = false;              // plan.ndjson: step 1 done
  bool span = false;              // span: the chunks are read and their span known
  bool deltas = false;            // deltas.ndjson
  bool deltas_state = false;      // deltas.state: cdc-stream's resume point for the deltas
  bool deltas_done = false;       // deltas.done: cdc-stream reached UNTIL once
  bool snapshot = false;          // snapshot.ndjson: the merge is done
  bool snapshot_emitted = false;  // snapshot.emitted: the snapshot went out whole
  bool stream_state = false;      // stream.state: the final stream saved a position
};

// What this run has done so far; a new run starts with all of it false.
struct RunProgress {
  bool snapshot_start_announced = false;
  bool chunks_read = false;     // the cdc-snapshot processes ran to the end in this run
  bool emit_settled = false;    // the snapshot was written out, or did not have to be
  bool snapshot_end_announced = false;
  int deltas_rejected = 0;      // times cdc-merge's check refused deltas.ndjson in this run
};

enum class Action {
  pin_stream_start,        // no_data, first run: cdc-stream --from now --until now --state
  plan,                    // cdc-plan into plan.ndjson
  announce_snapshot_start, // the snapshot_start phase
  read_chunks,             // the -j cdc-snapshot processes into chunks/
  span,                    // cdc-merge --span into span
  read_deltas,             // cdc-stream FROM..UNTIL into deltas.ndjson
  merge,                   // cdc-merge into snapshot.ndjson
  emit_snapshot,           // the snapshot to stdout, or to --output in initial_only
  skip_emit,               // the snapshot went out before, or stays in DIR (--output, initial)
  announce_snapshot_end,   // the snapshot_end phase
  finish,                  // initial_only: exit 0
  stream,                  // the final cdc-stream (stream_start phase, then it runs)
};

[[nodiscard]] std::string_view action_name(Action action) noexcept;

// The next step of a run in `mode` (with_output: --output was given).
[[nodiscard]] Action next_action(Mode mode, bool with_output, const DirFacts& facts,
                                 const RunProgress& progress) noexcept;

// How the deltas are read: the first time, or when nothing of deltas.ndjson is known to be
// whole (no deltas.state, or the file itself is gone), cdc-stream starts at FROM on an empty
// file; else it resumes from deltas.state, which cuts deltas.ndjson back to its last whole
// transaction.
[[nodiscard]] bool deltas_start_over(const DirFacts& facts) noexcept;

// ---- settings ------------------------------------------------------------------------------

// The options that decide what the data is, as the settings file holds them (one name=value
// per line, the same text as the shell version wrote).
struct Settings {
  Mode mode = Mode::initial;
  std::string tables;
  std::string exclude;
  std::optional<std::uint64_t> chunk_size;
  std::vector<std::string> chunk_keys;
  // --where and --columns, as given: which rows and columns the copy holds. A rerun cannot
  // change them (the snapshot already read holds those rows and columns).
  std::vector<std::string> wheres;
  std::vector<std::string> columns;
};
[[nodiscard]] std::string settings_text(const Settings& settings);

enum class SettingsDecision { keep, write, refuse };
// existing: the settings file's text (nullopt when there is none); bound: the directory holds
// a plan or a started stream, which depend on the settings. Until then a run with other
// settings (a typo fixed) simply replaces them.
[[nodiscard]] SettingsDecision decide_settings(const std::optional<std::string>& existing, bool bound,
                                               std::string_view wanted) noexcept;
// The lines that differ, as "  was: LINE" and "  now: LINE", hunk by hunk in line order (what
// `diff old new` shows as < and >).
[[nodiscard]] std::vector<std::string> settings_difference(std::string_view was, std::string_view now);

// ---- the final stream's output file --------------------------------------------------------

// A stream that started once (stream.started names its output) but never saved a state may
// have left lines in its --output file; they all come again from the start position, so the
// file is emptied first. started: stream.started's text (without the newline), if any.
[[nodiscard]] bool must_empty_output(const std::optional<std::string>& started, std::string_view output,
                                     std::uint64_t output_size) noexcept;

// ---- rerunning a tool that exits 69 --------------------------------------------------------

// cdc-sync's own schedule for a tool that exits 69 (server unavailable): a pause of 1 s,
// doubled after each failure up to 30 s, for as long as the failures have lasted no more than
// retry_for seconds, the pause included.
class RerunSchedule {
 public:
  explicit RerunSchedule(std::uint64_t retry_for_seconds) : retry_for_(retry_for_seconds) {}
  // After an exit 69, `waited` seconds after the first one: the pause before the next run,
  // or nullopt to give up.
  [[nodiscard]] std::optional<std::uint64_t> after_failure(std::uint64_t waited) noexcept;
  [[nodiscard]] std::uint64_t retry_for() const noexcept { return retry_for_; }

 private:
  std::uint64_t retry_for_;
  std::uint64_t pause_ = 1;
};

}  // namespace cdc::sync
