// cdc-stream: tail the binlog over the replication protocol, or decode binlog files.

#include <unistd.h>

#include "cli/tool_cli.h"
#include "stream/file_stream.h"
#include "util/exit_code.h"
#include "util/fd_io.h"

int main(int argc, char** argv) {
  cdc::cli::ToolCli cli("cdc-stream",
                        "cdc-stream - decode MySQL/MariaDB binlog files into NDJSON change lines (tailing a "
                        "live server comes in a later version).\nPrints NDJSON on stdout.");
  cdc::mysql::ConnectionOptions connection;
  cdc::stream::FileOptions files;
  cli.add_connection_options(connection);
  auto& app = cli.app();
  app.add_option("--file", files.files,
                 "Decode these binlog or relay-log files (in order; - reads stdin) instead of a server")
      ->group("Input")
      ->expected(1, -1);
  app.add_option("--start-position", files.start_position,
                 "Start at the event at this offset of the first file (an event boundary, as mysqlbinlog prints "
                 "them); the file's format description and GTID state are still read")
      ->group("Input")
      ->check(CLI::Range(std::uint64_t{4}, std::uint64_t{1} << 62));
  app.add_option("--stop-position", files.stop_position,
                 "Stop before the first event at or after this offset of the last file, as mysqlbinlog")
      ->group("Stop conditions")
      ->check(CLI::Range(std::uint64_t{4}, std::uint64_t{1} << 62));
  app.add_option("--tables", files.tables,
                 "Only these tables: comma-separated DB.TABLE globs (* and ?), e.g. 'shop.*,crm.users'")
      ->group("Input");
  app.add_option("--exclude", files.exclude, "Leave out these tables (same globs); wins over --tables")
      ->group("Input");
  app.add_flag("--skip-unknown-events", files.skip_unknown_events,
               "Skip event types cdc does not know even when the server did not flag them ignorable")
      ->group("Input");
  cli.set_examples(
      "Examples:\n"
      "  cdc-stream --file /var/lib/mysql/binlog.000042 --tables 'shop.*' | jq -c 'select(.op==\"u\")'\n"
      "  zcat binlog.000007.gz | cdc-stream --file - > changes.ndjson\n");
  if (const auto code = cli.parse(argc, argv)) return *code;
  if (files.files.empty())
    return cli.usage_error("give --file: streaming from a live server is not in this version yet");

  const auto warn = [&cli](std::string_view message) { cli.diagnostic("warning", message); };
  const auto summary = cdc::stream::run_files(files, STDOUT_FILENO, warn);
  if (!summary) {
    if (cdc::is_broken_pipe(summary.error())) return static_cast<int>(cdc::ExitCode::success);
    if (summary.error().code == cdc::Errc::usage) return cli.usage_error(summary.error().message);
    return cli.report(summary.error());
  }
  if (::close(STDOUT_FILENO) != 0) return cli.report(cdc::Error{cdc::Errc::io, "closing stdout failed"});
  return static_cast<int>(cdc::ExitCode::success);
}
