#pragma once

// cdc-sync: cdc-plan, cdc-snapshot (-j processes), cdc-merge and cdc-stream run in the order
// of man cdc-sync ("The flow"), each step's result kept in the state directory
// (sync/state_dir.h), the next step chosen by sync/resume.h from what the directory holds.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mysql/connection_options.h"
#include "output/format.h"
#include "sync/resume.h"
#include "util/result.h"

namespace cdc::sync {

enum class ProgressMode { automatic, always, never };

struct Options {
  // Connection options for every tool that connects, as --name=value; the password is not
  // among them: it goes to the tools in MYSQL_PWD.
  std::vector<std::string> connection;
  std::optional<std::string> password;
  std::string tables;
  std::string exclude;
  std::string dir;
  Mode mode = Mode::initial;
  std::uint64_t jobs = 2;
  std::optional<std::uint64_t> chunk_size;
  std::vector<std::string> chunk_keys;
  // --where and --columns, as given: to cdc-plan (into the chunk lines, so cdc-snapshot and
  // cdc-merge) and to every cdc-stream run; kept in the settings file.
  std::vector<std::string> wheres;
  std::vector<std::string> columns;
  // --snapshot-command: a shell command template that reads the chunks in place of the -j
  // local cdc-snapshot processes (sync/snapshot_command.h); "": those.
  std::string snapshot_command;
  std::string on_phase;
  ProgressMode progress = ProgressMode::automatic;
  std::string output;
  std::optional<std::string> until;
  // --metrics FILE: cdc-sync's phase and the snapshot's progress there; the cdc-stream runs
  // write theirs to stream_metrics_path(FILE).
  std::optional<std::string> metrics_path;
  // For every cdc-stream run (--server-id=..., --require-read-only, ...), --retry-for included.
  std::vector<std::string> stream_options;
  // The output stage (--format and its flags, cdc-formats(7)): cdc-sync converts the merged
  // snapshot as it copies it out; the final cdc-stream gets format_arguments. The state
  // directory's files stay canonical.
  output::OutputOptions format;
  std::vector<std::string> format_arguments;
  // --retry-for=N when given: for cdc-plan and cdc-snapshot too.
  std::vector<std::string> retry_options;
  // How long a tool that exits 69 is run again: --retry-for when given and not 0, else 60.
  std::uint64_t rerun_for_seconds = 60;
};

// Where cdc-sync --metrics FILE has its cdc-stream runs write their metrics, beside FILE for
// the same textfile collector: "sync.prom" -> "sync-stream.prom", else FILE ".stream".
[[nodiscard]] std::string stream_metrics_path(const std::string& metrics_path);

// The options cdc-sync checks itself, as the command line gave them.
struct CommandLine {
  std::string mode = "initial";
  std::string jobs = "2";
  bool jobs_given = false;
  bool snapshot_command_given = false;
  std::string chunk_size;                // "": not given
  std::optional<std::string> retry_for;  // nullopt: not given
  bool until_given = false;
  // What cdc-sync gives every cdc-stream run as it was given (nullopt, empty, false: not given).
  std::optional<std::string> server_id, heartbeat, stats, on_ddl, archive_source;
  std::vector<std::string> accept_ddl;
  bool require_read_only = false;
  bool watch_dns = false;
  // The connection options given, for the tools (the password aside, which goes in MYSQL_PWD).
  mysql::ConnectionOptions connection;
  bool defaults_group_given = false;
  bool connect_timeout_given = false;
};
// Checks them against each other and the rest of options (--dir, --tables, --until, the
// snapshot options), and sets options.mode, jobs, chunk_size, the --retry-for options, the
// connection arguments and password, and every cdc-stream run's options (stream_options:
// those above, --where and --columns).
// Errc::usage, with the one-line message, for the first that is wrong.
[[nodiscard]] Result<void> apply_command_line(const CommandLine& line, Options& options);

// Runs the flow; returns cdc-sync's exit status (a tool's, an --on-phase command's, or one of
// the exit-code table). Diagnostics go to stderr.
[[nodiscard]] int run(Options options);

}  // namespace cdc::sync
