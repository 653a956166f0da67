// cdc-sync: the whole change-data-capture flow in one command, over cdc-plan, cdc-snapshot,
// cdc-merge and cdc-stream, resumable from its state directory. This file only reads the
// options; the flow is libcore/sync/.

#include <fmt/format.h>

#include <string>

#include "cli/output_flags.h"
#include "cli/tool_cli.h"
#include "sync/run_sync.h"
#include "sync/tools.h"

int main(int argc, char** argv) {
  cdc::cli::ToolCli cli("cdc-sync",
                        "cdc-sync - a consistent snapshot of MySQL/MariaDB tables, then their changes, as NDJSON: "
                        "cdc-plan, cdc-snapshot, cdc-merge and cdc-stream in one command, resumable (state in --dir).\n"
                        "Prints NDJSON on stdout (or the stream to --output).");
  auto& app = cli.app();
  cdc::sync::CommandLine line;
  cli.add_connection_options(line.connection);
  cli.set_version_text([] {
    return cdc::sync::version_report(cdc::cli::version_text("cdc-sync"));
  });

  cdc::sync::Options options;
  std::string retry_for;
  bool progress = false;
  bool no_progress = false;
  const std::string where = "What and where";
  app.add_option("--tables", options.tables,
                 "Comma-separated DB.TABLE globs (* and ?), e.g. 'shop.*,crm.users'. Once the stream runs, a rerun "
                 "with others adds the new tables (snapshot while the stream goes on) or drops tables")
      ->type_name("TEXT (required)")
      ->group(where);
  app.add_option("--exclude", options.exclude, "Leave out these tables (same globs); wins over --tables")->group(where);
  app.add_option("--dir", options.dir,
                 "State directory (created): plan, chunks, deltas, merged snapshot, stream state. The same command "
                 "with the same --dir resumes")
      ->type_name("DIR (required)")
      ->group(where);
  app.add_option("--mode", line.mode,
                 "initial: snapshot, then stream for ever; initial_only: snapshot, then exit 0; no_data: stream from "
                 "now, no snapshot. Default: initial")
      ->type_name("TEXT:{initial,initial_only,no_data}")
      ->group(where);
  const std::string snapshot = "Snapshot";
  app.add_option("-j,--jobs", line.jobs, "cdc-snapshot processes reading chunks in parallel. Default: 2")
      ->type_name("UINT")
      ->group(snapshot);
  app.add_option("--chunk-size", line.chunk_size, "Rows per chunk (cdc-plan). Default: 8096")
      ->type_name("UINT")
      ->group(snapshot);
  app.add_option("--chunk-key", options.chunk_keys,
                 "DB.TABLE=COL[,COL]: split this table by these columns (cdc-plan); repeatable")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(snapshot);
  app.add_option("--where", options.wheres,
                 "DB.TABLE:EXPR: capture only the rows of those tables that EXPR is true on, in the snapshot and "
                 "the stream alike (cdc-plan(1), FILTERS); repeatable, one per table; kept in the state")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(snapshot);
  app.add_option("--columns", options.columns,
                 "DB.TABLE:COL[,COL...]: capture only these columns of those tables (and their key); repeatable, "
                 "one per table; kept in the state")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(snapshot);
  CLI::Option* snapshot_command =
      app.add_option("--snapshot-command", options.snapshot_command,
                     "Read the chunks with this sh command instead of local cdc-snapshot processes: once per -j "
                     "worker when it names {index} or {shard}, else once; {plan}, {dir} (DIR/chunks, shared with "
                     "the workers), {count}, {cdc-snapshot} and {args} (a local worker's arguments, no password) are filled "
                     "in as quoted words. E.g. 'ssh worker{index} \"cdc-snapshot {args}\"'")
          ->type_name("CMD")
          ->group(snapshot);
  const std::string output = "Output";
  app.add_option("--output", options.output,
                 "Stream to FILE, exactly once across restarts (cdc-stream --output); the snapshot stays in "
                 "DIR/snapshot.ndjson. initial_only: the snapshot is copied to FILE")
      ->group(output);
  app.add_flag("--progress", progress,
               "Progress line on stderr during the snapshot even when stderr is not a terminal")
      ->group(output);
  app.add_flag("--no-progress", no_progress, "No progress line, even on a terminal")->group(output);
  app.add_option("--metrics", options.metrics_path,
                 "Write Prometheus metrics to FILE (the phase, the snapshot's chunks) every 5 s and at each step; "
                 "the cdc-stream runs write theirs beside it (FILE.prom: FILE-stream.prom)")
      ->type_name("FILE")
      ->group(output);
  app.add_option("--on-phase", options.on_phase,
                 "Shell command run as CMD PHASE POSITION at snapshot_start, snapshot_end, add_snapshot_start, "
                 "add_snapshot_end and stream_start; a failure stops cdc-sync with its status")
      ->group(output);
  const std::string stream = "Stream (passed to cdc-stream)";
  CLI::Option* until = app.add_option("--until", options.until,
                                      "Stop the stream cleanly (exit 0) once everything up to here is written: now, a "
                                      "GTID set or position, or FILE:OFFSET")
                           ->group(stream);
  app.add_option("--server-id", line.server_id, "Replica server id to register with (default: cdc-stream's)")
      ->type_name("UINT")
      ->group(stream);
  app.add_option("--heartbeat", line.heartbeat, "Seconds between server heartbeats on an idle stream (default 1)")
      ->type_name("UINT")
      ->group(stream);
  app.add_option("--retry-for", retry_for,
                 "Give up (exit 69) when reconnecting has failed for this many seconds (default 0: never); cdc-plan, "
                 "cdc-snapshot and cdc-stream. Also bounds cdc-sync's reruns of a tool that exits 69 (default 60)")
      ->type_name("UINT")
      ->group(stream);
  app.add_option("--stats", line.stats, "Every SECONDS, a stats line on stderr")->type_name("UINT")->group(stream);
  app.add_option("--on-ddl", line.on_ddl, "emit: a ddl line for each schema change; stop: exit 3 just before it, state saved")
      ->type_name("TEXT:{emit,stop}")
      ->group(stream);
  app.add_option("--accept-ddl", line.accept_ddl,
                 "With --on-ddl stop: let this DDL through (its GTID or FILE:OFFSET); repeatable")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(stream);
  app.add_flag("--require-read-only", line.require_read_only, "Exit 4 when the server is or turns writable (a primary)")
      ->group(stream);
  app.add_flag("--watch-dns", line.watch_dns, "Exit 4 when --host resolves to other addresses than at start")->group(stream);
  app.add_option("--archive-source", line.archive_source,
                 "Read what the server has purged from this binlog archive (cdc-stream --archive DIR), for the deltas "
                 "and the stream: a snapshot that outlives the server's retention still merges")
      ->type_name("DIR")
      ->group(stream);
  cdc::cli::OutputFlags output_flags;
  output_flags.add_to(app);
  output_flags.add_include_query_to(app);
  app.get_option("--version")->description("Print the version and the tools it runs, then exit");
  app.allow_extras();
  cli.set_examples(
      "Examples:\n"
      "  MYSQL_PWD=secret cdc-sync -h replica1 -u cdc --tables 'shop.*' --dir /var/lib/cdc/shop | kcat -P -b broker "
      "-t shop\n"
      "  cdc-sync -h replica1 -u cdc --tables shop.orders --dir orders.sync --mode initial_only > orders.ndjson\n"
      "  cdc-sync -h replica1 -u cdc --tables 'shop.*' --dir shop.sync --mode no_data --output shop.ndjson\n");
  if (const auto code = cli.parse(argc, argv)) return *code;

  if (const auto extras = app.remaining(); !extras.empty()) {
    const std::string& first = extras.front();
    return cli.usage_error(first.starts_with("-") && first.size() > 1
                               ? fmt::format("unknown option '{}'", first)
                               : fmt::format("unexpected operand '{}': cdc-sync takes options only", first));
  }
  line.jobs_given = app.count("-j") > 0;
  line.defaults_group_given = app.count("--defaults-group") > 0;
  line.connect_timeout_given = app.count("--connect-timeout") > 0;
  line.snapshot_command_given = snapshot_command->count() > 0;
  line.until_given = until->count() > 0;
  if (app.count("--retry-for") > 0) line.retry_for = retry_for;
  if (auto checked = cdc::sync::apply_command_line(line, options); !checked)
    return cli.usage_error(checked.error().message);
  auto format = output_flags.options();
  if (!format) return cli.usage_error(format.error().message);
  options.format = *format;
  options.format_arguments = output_flags.arguments();
  // The last of --progress and --no-progress wins, as in the shell version.
  for (int i = argc - 1; i > 0 && (progress || no_progress); --i) {
    const std::string_view arg = argv[i];
    if (arg == "--progress" || arg == "--no-progress") {
      options.progress = arg == "--progress" ? cdc::sync::ProgressMode::always : cdc::sync::ProgressMode::never;
      break;
    }
  }
  return cli.finish_success(cdc::sync::run(std::move(options)));
}
