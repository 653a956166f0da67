// cdc-stream: tail the binlog over the replication protocol, or decode binlog files.

#include <fmt/format.h>
#include <unistd.h>

#include <variant>

#include "cli/output_flags.h"
#include "cli/tool_cli.h"
#include "stream/command_line.h"

int main(int argc, char** argv) {
  cdc::cli::ToolCli cli("cdc-stream",
                        "cdc-stream - every row change of a MySQL/MariaDB server as NDJSON lines, tailing its binlog "
                        "over the replication protocol (resumable with --state), or decoding binlog files "
                        "(--file).\nPrints NDJSON on stdout (or --output).");
  cdc::stream::CommandLine line;
  cdc::stream::LiveOptions& live = line.live;
  cdc::stream::FileOptions& files = line.files;
  cli.add_connection_options(live.connection);
  auto& app = cli.app();
  app.add_option("--from", live.from,
                 "Start here when there is no state: now, earliest, a MySQL GTID set (start after it), a MariaDB "
                 "GTID position, FILE:OFFSET (a transaction boundary), or a time with its zone "
                 "(2026-11-30T10:00:00Z: the first transaction committed at or after it; also with --file)")
      ->group("Position");
  app.add_option("--until", live.until,
                 "Stop cleanly (exit 0) once everything up to here is written: now (the end at start-up), a GTID "
                 "set or position, FILE:OFFSET, or a time with its zone (before the first transaction committed at or "
                 "after it; also with --file)")
      ->group("Stop conditions");
  app.add_option("--state", live.state_path,
                 "Resume point: read at start (then --from is ignored), saved after every transaction (mode 0600)")
      ->group("Position");
  app.add_option("--output", live.output_path,
                 "Write the lines to this file instead of stdout; with --state, a restart cuts it back to the last "
                 "saved transaction, so every line is there exactly once")
      ->group("Output");
  app.add_option("--server-id", live.server_id,
                 "Replica server id to register with (default: derived from host, pid and time, in 2^30..2^31)")
      ->group("Replication")
      ->transform(cdc::cli::whole_number(1, 4294967295U));
  app.add_option("--heartbeat", live.heartbeat_seconds,
                 "Seconds between server heartbeats on an idle stream; a silent connection is dropped after three "
                 "(default 1)")
      ->group("Replication")
      ->transform(cdc::cli::whole_number(1, 3600));
  app.add_option("--retry-for", live.retry_seconds,
                 "Give up (exit 69) when reconnecting has failed for this many seconds (default 0: never)")
      ->group("Replication")
      ->transform(cdc::cli::whole_number(0, 4294967295U));
  app.add_option("--on-ddl", line.on_ddl,
                 "emit: a ddl line for each schema change of a captured table; stop: exit 3 just before it, state "
                 "saved, for review")
      ->group("Schema changes")
      ->check(CLI::IsMember({"emit", "stop"}));
  app.add_option("--accept-ddl", live.accepted_ddls,
                 "With --on-ddl stop: let this DDL through (its GTID, or FILE:OFFSET without GTIDs, as the stop "
                 "message names it)")
      ->group("Schema changes");
  app.add_flag("--require-read-only", live.require_read_only,
               "Exit 4 when @@global.read_only is or turns OFF: the job must run against a replica")
      ->group("Primary-switch guard");
  app.add_flag("--watch-dns", live.watch_dns, "Exit 4 when --host resolves to other addresses than at start")
      ->group("Primary-switch guard");
  app.add_option("--stats", live.stats_seconds,
                 "Every SECONDS, a line on stderr: events/s, rows/s, seconds behind the server, position")
      ->group("Output")
      ->transform(cdc::cli::whole_number(0, 4294967295U));
  app.add_option("--metrics", live.metrics_path,
                 "Write Prometheus metrics to this file every 5 s (replaced at once, for node_exporter's textfile "
                 "collector): rows by table and op, seconds behind, position, reconnects")
      ->group("Output");
  app.add_option("--file", files.files,
                 "Decode these binlog or relay-log files (in order; - reads stdin) instead of a server")
      ->group("Files")
      ->expected(1, -1);
  app.add_option("--start-position", files.start_position,
                 "With --file: start at the event at this offset of the first file (an event boundary, as "
                 "mysqlbinlog prints them); the events before it are read for the GTID state only")
      ->group("Files")
      ->transform(cdc::cli::whole_number(4, std::uint64_t{1} << 62));
  app.add_option("--stop-position", files.stop_position,
                 "With --file: stop before the first event at or after this offset of the last file, as mysqlbinlog")
      ->group("Files")
      ->transform(cdc::cli::whole_number(4, std::uint64_t{1} << 62));
  app.add_flag("--catalog", line.catalog,
               "With --file: complete the tables from the server's information_schema (connection options), as a "
               "live stream does: MariaDB INET4/INET6/UUID as text, COLUMN_TYPE texts, and names and keys where the "
               "binlog has none; the catalog describes the tables as they are now")
      ->group("Files");
  app.add_option("--archive", line.archive_dir,
                 "Mirror the server's binlog files byte for byte into DIR as they are written, resumably (DIR/* are "
                 "the complete files); alone it writes no changes, with --output both come from one connection")
      ->group("Binlog archive");
  app.add_option("--archive-source", live.archive_source,
                 "Read positions the server has purged from this binlog archive (kept by cdc-stream --archive DIR), "
                 "then go on from the server where it ends")
      ->group("Binlog archive");
  app.add_option("--archive-keep", line.archive_keep,
                 "With --archive: after each complete file, delete the oldest complete files older than AGE (36h, 7d) "
                 "or beyond SIZE in all (500M, 50G); give it twice for both (default: keep every file)")
      ->group("Binlog archive")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--tables", line.tables,
                 "Only these tables: comma-separated DB.TABLE globs (* and ?), e.g. 'shop.*,crm.users'")
      ->group("Filter");
  app.add_option("--exclude", line.exclude, "Leave out these tables (same globs); wins over --tables")->group("Filter");
  app.add_option("--where", line.wheres,
                 "Only the rows of DB.TABLE (globs as --tables) this SQL condition is true on, as the server's WHERE "
                 "would say: an update that moves a row out of it is written as a delete, into it as an insert; "
                 "repeatable, one per table (cdc-plan(1), FILTERS)")
      ->group("Filter")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--columns", line.columns,
                 "Only these columns of DB.TABLE (globs as --tables) in its lines, and its key columns always: "
                 "DB.TABLE:COL[,COL...]; an update of other columns still shows; repeatable, one per table")
      ->group("Filter")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_flag("--skip-unknown-events", line.skip_unknown_events,
               "Skip event types cdc does not know even when the server did not flag them ignorable")
      ->group("Filter");
  cdc::cli::OutputFlags output_flags;
  output_flags.add_to(app);
  output_flags.add_include_query_to(app);
  cli.set_examples(
      "Examples:\n"
      "  cdc-stream -h replica1 -u cdc --from now --state shop.state --output shop.ndjson --tables 'shop.*'\n"
      "  cdc-stream -h replica1 -u cdc --from earliest --until now | jq -c 'select(.op==\"u\")'\n"
      "  cdc-stream --file /var/lib/mysql/binlog.000042 --tables 'shop.*' > changes.ndjson\n"
      "  cdc-stream --file binlog.000042 --where \"shop.orders:customer_id = 42\" > customer42.ndjson\n"
      "  cdc-stream -h db1 -u cdc --archive /backup/db1-binlog --from earliest --archive-keep 14d\n");
  if (const auto code = cli.parse(argc, argv)) return *code;
  auto output = output_flags.options();
  if (!output) return cli.usage_error(output.error().message);
  line.output = *output;
  line.format_given = !output_flags.arguments().empty();
  for (const CLI::Option* option : app.get_options())
    if (option->count() > 0) line.given.push_back(option->get_name());
  auto run = cdc::stream::resolve_command_line(std::move(line));
  if (!run) return cli.usage_error(run.error().message);

  const auto warn = [&cli](std::string_view message) { cli.diagnostic("warning", message); };
  const auto notice = [&cli](std::string_view message) { cli.diagnostic("notice", message); };
  if (const auto* archive = std::get_if<cdc::stream::ArchiveOptions>(&*run))
    return cli.finish(cdc::stream::run_archive(*archive, {warn, notice}));
  if (const auto* decode = std::get_if<cdc::stream::FileOptions>(&*run))
    return cli.finish(cdc::stream::run_files(*decode, STDOUT_FILENO, warn, notice));
  const cdc::stream::LiveReporter reporter{warn, notice};
  const auto outcome = cdc::stream::run_live(std::get<cdc::stream::LiveOptions>(*run), reporter);
  // A stop before a DDL (3) or at a primary switch (4) ends like a finished run: stdout closed
  // and checked first.
  return cli.finish(outcome, outcome ? cdc::stream::exit_code_for(*outcome) : 0);
}
