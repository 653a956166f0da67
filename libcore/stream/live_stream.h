#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "archive/retention.h"
#include "filter/columns_option.h"
#include "filter/where_option.h"
#include "mysql/connection_options.h"
#include "output/format.h"
#include "util/exit_code.h"
#include "util/result.h"

namespace cdc::stream {

// cdc-stream tailing a server over the replication protocol (man/cdc-stream.1).
struct LiveOptions {
  mysql::ConnectionOptions connection;
  std::optional<std::string> from;    // a position, "now" or "earliest"
  std::optional<std::string> until;   // a position or "now"
  std::optional<std::string> state_path;
  std::optional<std::string> output_path;
  std::optional<std::uint32_t> server_id;
  unsigned heartbeat_seconds = 1;
  bool stop_on_ddl = false;
  std::vector<std::string> accepted_ddls;  // GTIDs or FILE:OFFSETs of DDLs to let through
  bool require_read_only = false;
  bool watch_dns = false;
  unsigned stats_seconds = 0;         // 0: no periodic stats lines
  std::optional<std::string> metrics_path;  // --metrics: Prometheus text, rewritten every few seconds
  unsigned retry_seconds = 0;         // give up reconnecting after this long; 0: never
  std::string tables;
  std::string exclude;
  std::vector<filter::WhereOption> wheres;  // --where: row filters (stream/row_filter.h)
  std::vector<filter::ColumnsOption> columns;  // --columns (filter/columns_option.h)
  bool skip_unknown_events = false;
  output::OutputOptions output;  // --format and its flags: the output stage (cdc-formats(7))
  // --archive DIR next to the change lines: the same events also go into the binlog archive
  // (archive::ArchiveDir), synced before every save of the state.
  std::optional<std::string> archive_dir;
  archive::Retention archive_keep;
  // --archive-source DIR: positions the server has purged are read from this archive (kept by
  // another cdc-stream --archive DIR) first; with --archive DIR, that archive is read so.
  std::optional<std::string> archive_source;
};

enum class LiveOutcome {
  finished,           // --until reached, a signal, or the reader went away
  stopped_before_ddl, // --on-ddl stop
  primary_switched,   // --require-read-only or --watch-dns
};

// The exit code of each clean end: 0, 3 (ddl_review) or 4 (primary_switch).
[[nodiscard]] constexpr int exit_code_for(LiveOutcome outcome) noexcept {
  switch (outcome) {
    case LiveOutcome::stopped_before_ddl: return static_cast<int>(ExitCode::ddl_review);
    case LiveOutcome::primary_switched: return static_cast<int>(ExitCode::primary_switch);
    case LiveOutcome::finished: break;
  }
  return static_cast<int>(ExitCode::success);
}

struct LiveReporter {
  std::function<void(std::string_view)> warn;    // "warning: ..."
  std::function<void(std::string_view)> notice;  // "notice: ..." (resume points, reconnects, stops)
};

// Stdout is fd 1 unless options.output_path is given. Installs SIGINT/SIGTERM handlers for
// the run (finish the transaction, save the state, return finished).
Result<LiveOutcome> run_live(const LiveOptions& options, const LiveReporter& reporter);

}  // namespace cdc::stream
