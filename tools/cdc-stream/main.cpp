// cdc-stream: tail the binlog over the replication protocol, or decode binlog files.

#include <fmt/format.h>
#include <unistd.h>

#include "archive/retention.h"
#include "cli/output_flags.h"
#include "cli/tool_cli.h"
#include "filter/where_option.h"
#include "stream/archive_run.h"
#include "stream/file_stream.h"
#include "stream/live_stream.h"
#include "util/time_text.h"

int main(int argc, char** argv) {
  cdc::cli::ToolCli cli("cdc-stream",
                        "cdc-stream - every row change of a MySQL/MariaDB server as NDJSON lines, tailing its binlog "
                        "over the replication protocol (resumable with --state), or decoding binlog files "
                        "(--file).\nPrints NDJSON on stdout (or --output).");
  cdc::stream::LiveOptions live;
  cdc::stream::FileOptions files;
  cli.add_connection_options(live.connection);
  auto& app = cli.app();
  std::string on_ddl = "emit";
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
  app.add_option("--on-ddl", on_ddl,
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
  bool catalog = false;
  app.add_flag("--catalog", catalog,
               "With --file: complete the tables from the server's information_schema (connection options), as a "
               "live stream does: MariaDB INET4/INET6/UUID as text, COLUMN_TYPE texts, and names and keys where the "
               "binlog has none; the catalog describes the tables as they are now")
      ->group("Files");
  std::optional<std::string> archive_dir;
  std::vector<std::string> archive_keep;
  app.add_option("--archive", archive_dir,
                 "Mirror the server's binlog files byte for byte into DIR as they are written, resumably (DIR/* are "
                 "the complete files); alone it writes no changes, with --output both come from one connection")
      ->group("Binlog archive");
  app.add_option("--archive-source", live.archive_source,
                 "Read positions the server has purged from this binlog archive (kept by cdc-stream --archive DIR), "
                 "then go on from the server where it ends")
      ->group("Binlog archive");
  app.add_option("--archive-keep", archive_keep,
                 "With --archive: after each complete file, delete the oldest complete files older than AGE (36h, 7d) "
                 "or beyond SIZE in all (500M, 50G); give it twice for both (default: keep every file)")
      ->group("Binlog archive")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  std::string tables;
  std::string exclude;
  bool skip_unknown_events = false;
  app.add_option("--tables", tables,
                 "Only these tables: comma-separated DB.TABLE globs (* and ?), e.g. 'shop.*,crm.users'")
      ->group("Filter");
  app.add_option("--exclude", exclude, "Leave out these tables (same globs); wins over --tables")->group("Filter");
  std::vector<std::string> wheres;
  app.add_option("--where", wheres,
                 "Only the rows of DB.TABLE (globs as --tables) this SQL condition is true on, as the server's WHERE "
                 "would say: an update that moves a row out of it is written as a delete, into it as an insert; "
                 "repeatable, one per table (cdc-plan(1), FILTERS)")
      ->group("Filter")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  std::vector<std::string> columns;
  app.add_option("--columns", columns,
                 "Only these columns of DB.TABLE (globs as --tables) in its lines, and its key columns always: "
                 "DB.TABLE:COL[,COL...]; an update of other columns still shows; repeatable, one per table")
      ->group("Filter")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_flag("--skip-unknown-events", skip_unknown_events,
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
  live.output = *output;
  files.output = *output;
  if (live.output_path == "-") live.output_path.reset();  // stdout
  const auto warn = [&cli](std::string_view message) { cli.diagnostic("warning", message); };
  const auto notice = [&cli](std::string_view message) { cli.diagnostic("notice", message); };

  std::vector<cdc::filter::WhereOption> where_options;
  for (const std::string& text : wheres) {
    auto where = cdc::filter::parse_where_option(text);
    if (!where) return cli.usage_error(where.error().message);
    where_options.push_back(std::move(*where));
  }
  std::vector<cdc::filter::ColumnsOption> column_options;
  for (const std::string& text : columns) {
    auto chosen = cdc::filter::parse_columns_option(text);
    if (!chosen) return cli.usage_error(chosen.error().message);
    column_options.push_back(std::move(*chosen));
  }

  auto keep = cdc::archive::parse_retention(archive_keep);
  if (!keep) return cli.usage_error(keep.error().message);
  if (!archive_keep.empty() && !archive_dir) return cli.usage_error("--archive-keep goes with --archive DIR");
  if ((archive_dir || live.archive_source) && !files.files.empty())
    return cli.usage_error("--archive and --archive-source go with a server; --file reads files");
  if (archive_dir && live.archive_source)
    return cli.usage_error("--archive DIR is read already where the server purged a position; --archive-source is "
                           "for an archive that another cdc-stream --archive writes");
  if (archive_dir && !app.count("--output")) {
    // The archive alone: no changes, so none of the options about them.
    for (const char* name : {"--state", "--until", "--tables", "--exclude", "--where", "--on-ddl", "--accept-ddl", "--stats",
                             "--require-read-only", "--watch-dns", "--metrics", "--skip-unknown-events",
                             "--archive-source", "--catalog"})
      if (app.count(name) > 0)
        return cli.usage_error(std::string(name) + " is about changes, and --archive DIR alone writes none; add "
                               "--output FILE (or --output - for stdout) to write changes too");
    if (!output_flags.arguments().empty())
      return cli.usage_error("--format, its options and --include-query are about changes, and --archive DIR alone "
                             "writes none; add --output FILE (or --output - for stdout) to write changes too");
    const cdc::stream::ArchiveOptions archive{live.connection, *archive_dir,         *keep,
                                              live.from,       live.server_id,       live.heartbeat_seconds,
                                              live.retry_seconds};
    return cli.finish(cdc::stream::run_archive(archive, {warn, notice}));
  }

  if (!files.files.empty()) {
    if (live.state_path || live.output_path || live.metrics_path)
      return cli.usage_error("--file decodes files: --state, --output and --metrics are for a server");
    // With --file, --from and --until are times; offsets are --start-position and --stop-position.
    const auto file_time = [&cli](const std::optional<std::string>& text, std::string_view name,
                                  std::string_view offset_option, std::optional<cdc::UtcTime>& time) -> int {
      if (!text) return 0;
      if (!cdc::looks_like_time(*text))
        return cli.usage_error(fmt::format("with --file, {} takes a time (2026-11-30T10:00:00Z); for an offset use {}",
                                           name, offset_option));
      auto parsed = cdc::parse_time(*text);
      if (!parsed) return cli.usage_error(parsed.error().message);
      time = *parsed;
      return 0;
    };
    if (const int code = file_time(live.from, "--from", "--start-position", files.from_time)) return code;
    if (const int code = file_time(live.until, "--until", "--stop-position", files.until_time)) return code;
    if (files.from_time && files.start_position)
      return cli.usage_error("--from TIME and --start-position both say where to start: give one");
    if (files.until_time && files.stop_position)
      return cli.usage_error("--until TIME and --stop-position both say where to stop: give one");
    files.tables = tables;
    files.exclude = exclude;
    files.wheres = std::move(where_options);
    files.columns = std::move(column_options);
    files.skip_unknown_events = skip_unknown_events;
    if (catalog) files.catalog = live.connection;
    return cli.finish(cdc::stream::run_files(files, STDOUT_FILENO, warn, notice));
  }

  if (files.start_position || files.stop_position)
    return cli.usage_error("--start-position and --stop-position go with --file; against a server use --from and "
                           "--until FILE:OFFSET");
  if (catalog) return cli.usage_error("--catalog goes with --file; a live stream reads the catalog already");
  if (!live.accepted_ddls.empty() && on_ddl != "stop")
    return cli.usage_error("--accept-ddl goes with --on-ddl stop");
  live.stop_on_ddl = on_ddl == "stop";
  live.archive_dir = archive_dir;
  live.archive_keep = *keep;
  live.tables = tables;
  live.exclude = exclude;
  live.wheres = std::move(where_options);
  live.columns = std::move(column_options);
  live.skip_unknown_events = skip_unknown_events;
  const cdc::stream::LiveReporter reporter{warn, notice};
  const auto outcome = cdc::stream::run_live(live, reporter);
  // A stop before a DDL (3) or at a primary switch (4) ends like a finished run: stdout closed
  // and checked first.
  return cli.finish(outcome, outcome ? cdc::stream::exit_code_for(*outcome) : 0);
}
