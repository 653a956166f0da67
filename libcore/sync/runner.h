#pragma once

// What every step of cdc-sync shares: the options, the tools' directory, standard error, the
// child processes, the --on-phase hook and the --metrics file. The flow (sync/run_sync.cpp),
// the snapshot steps (sync/snapshot_steps.h) and the addition of tables (sync/add_flow.h)
// each hold a Runner&.

#include <chrono>
#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/text_format.h"
#include "sync/children.h"
#include "sync/resume.h"
#include "sync/run_sync.h"
#include "util/exit_code.h"

namespace cdc::sync {

inline constexpr int kUnavailable = static_cast<int>(ExitCode::unavailable);
inline constexpr int kUsage = static_cast<int>(ExitCode::usage);
inline constexpr int kDataError = static_cast<int>(ExitCode::data_error);
inline constexpr int kInternal = static_cast<int>(ExitCode::internal);
inline constexpr int kIoError = static_cast<int>(ExitCode::io_error);
inline constexpr int kFailure = static_cast<int>(ExitCode::failure);
inline constexpr int kInterrupted = static_cast<int>(ExitCode::temp_failure);

// cdc_sync_phase's phase label values (man cdc-sync, --metrics): the steps of the flow, those of
// an addition of tables (add_*, add_switch: the switch-over), the stream, done.
inline constexpr std::string_view kMetricsPhases[] = {"plan",      "snapshot",    "deltas",       "merge",
                                                      "emit",      "add_plan",    "add_snapshot", "add_deltas",
                                                      "add_merge", "add_emit",    "add_switch",   "stream",
                                                      "done"};

// A step's verdict: nullopt goes on, a value is cdc-sync's exit status.
using Stop = std::optional<int>;

// A child with its stdout and stderr in files ("": cdc-sync's).
[[nodiscard]] ChildSpec command(std::vector<std::string> argv, std::string stdout_file = "",
                                std::string stderr_file = "");

// "FROM UNTIL": the first word and the rest of the first line, as `read -r FROM UNTIL` splits.
[[nodiscard]] std::pair<std::string, std::string> split_span(std::string_view text);

// The chunks of the snapshot being read, for the progress line and --metrics.
struct SnapshotCounts {
  std::optional<std::uint64_t> chunks_total;
  std::uint64_t chunks_done = 0;
  std::uint64_t rows_done = 0;
  std::map<std::string, std::uint64_t> chunk_rows;  // per finished chunk file, read once
};

class SyncState;

// The reruns of a tool that exits 69 (the server unavailable, or the connection lost for
// longer than the tool retries): pauses that grow, for up to --retry-for seconds from its first
// such exit, and the notices. A run that moved the tool on (progress() reads otherwise after
// it than before it: a stream's state file) opens a new window: a stream that ran for days and
// then lost its server has the whole --retry-for again, rather than giving up at once.
class UnavailableReruns {
 public:
  UnavailableReruns(Console& console, std::uint64_t retry_for, std::string what,
                    std::function<std::string()> progress = {});
  // Before each run.
  void before_run();
  // After a run that exited 69: the pause before the next run, or nullopt when the window is
  // over (say_giving_up() then tells it).
  [[nodiscard]] std::optional<std::uint64_t> after_unavailable();
  void say_giving_up();
  // Whether the tool is being run again after an exit 69 (its errors are told once).
  [[nodiscard]] bool rerunning() const noexcept { return first_failure_.has_value(); }

 private:
  Console& console_;
  std::uint64_t retry_for_;
  std::string what_;
  std::function<std::string()> progress_;
  RerunSchedule schedule_;
  std::optional<std::chrono::steady_clock::time_point> first_failure_;
  std::string progress_before_;
  unsigned runs_ = 0;
  std::uint64_t waited_ = 0;
};

class Runner {
 public:
  Runner(Options options, std::string tools, std::string dir);
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  [[nodiscard]] const Options& options() const noexcept { return options_; }
  [[nodiscard]] Console& console() noexcept { return console_; }
  [[nodiscard]] Children& children() noexcept { return children_; }
  [[nodiscard]] SnapshotCounts& counts() noexcept { return counts_; }
  // The tables this run was given.
  [[nodiscard]] TableSelection selection() const { return {options_.tables, options_.exclude}; }

  // The message on stderr, then the status.
  Stop die(int status, std::string_view message);
  // A step that failed or was cut short by a signal stops cdc-sync: exit 75 after a signal
  // (rerunning resumes), unless the tool failed for a reason of its own.
  Stop after_step(int status);
  // Runs attempt(); while it returns 69 (the server unavailable, or the connection lost),
  // runs it again after a pause, with a notice, up to --retry-for (or 60) seconds from the
  // first failure (UnavailableReruns; progress: as there). The tools resume where they
  // stopped, so a rerun repeats no work.
  int retrying(std::string_view what, const std::function<int()>& attempt,
               std::function<std::string()> progress = {});
  // The same for the background child (Children::start_background): an exit 69 of it runs it
  // again after the pause, while the step beside it goes on.
  [[nodiscard]] Children::BackgroundRerun rerunning_background(std::string what,
                                                                std::function<std::string()> progress);

  [[nodiscard]] std::string tool(std::string_view name) const;
  // The tool's path, the connection options and, when given, the table filter.
  [[nodiscard]] std::vector<std::string> connecting(std::string_view name, const TableSelection* filter) const;
  // cdc-stream over these tables with --state: the connection and stream options, and
  // --metrics when asked. beside_stream: for a run while another stream of this cdc-sync
  // runs (the deltas of an addition): without --metrics (the other stream writes that file)
  // and without --server-id (two replicas of one id: the server drops one), so cdc-stream
  // draws an id of its own.
  [[nodiscard]] std::vector<std::string> streaming(const TableSelection& filter, const std::string& state_path,
                                                   bool beside_stream = false) const;

  // Before the final stream runs without a state (from H*): an --output file that a stream
  // which saved no state left lines in is emptied (its lines come again); then
  // DIR/stream.started names the output.
  Stop mark_stream_started(const SyncState& dir);

  // phase NAME POSITION: announced on stderr, and --on-phase CMD NAME POSITION run.
  Stop phase(std::string_view name, std::string_view position);

  // cdc-sync's --metrics file: the phase, one-hot, and the snapshot's chunks.
  void write_metrics(std::string_view phase);
  [[nodiscard]] bool metrics_due() const { return metrics_file_.due(); }
  [[nodiscard]] bool metrics_enabled() const { return metrics_file_.enabled(); }

 private:
  Options options_;
  std::string tools_;
  std::string dir_;
  Console console_;
  Children children_;
  SnapshotCounts counts_;
  const std::time_t start_time_ = std::time(nullptr);
  metrics::MetricsFile metrics_file_;
};

}  // namespace cdc::sync
