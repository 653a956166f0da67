// cdc-apply: apply a merged snapshot and the stream's transactions to a MariaDB/MySQL target,
// or a PostgreSQL one (--postgres), exactly once: the position applied is kept in the target,
// in the same transactions.

#include <fmt/format.h>
#include <unistd.h>

#include <string>

#include "apply/run_apply.h"
#include "cli/tool_cli.h"
#include "util/exit_code.h"
#include "verify/run_verify.h"

int main(int argc, char** argv) {
  cdc::cli::ToolCli cli("cdc-apply",
                        "cdc-apply - apply cdc's lines (a merged snapshot, then the stream) to a MariaDB/MySQL "
                        "or PostgreSQL\ntarget, transaction by transaction, exactly once: the applied position is kept in the target.");
  cli.set_version_text([]() -> cdc::Result<std::string> {
    return cdc::apply::version_report(cdc::cli::version_text("cdc-apply"));
  });
  cdc::apply::RunOptions options;
  cli.add_connection_options(options.connection);
  CLI::App& app = cli.app();
  auto* inputs = app.add_option("INPUTS", options.inputs,
                 "cdc-merge's snapshot, then cdc-stream's lines, in order; none or - reads stdin")
      ->group("Input");
  auto* follow = app.add_flag("--follow", options.follow,
               "Read the last file on as cdc-stream or cdc-sync --output appends to it (and cuts it back at a "
               "restart), until --until, SIGTERM or SIGINT (exit 0)")
      ->group("Input");
  auto* until = app.add_option("--until", options.until,
                 "Stop after the source transaction whose commit position includes POSITION (exit 0)")
      ->type_name("POSITION")
      ->group("Input");
  CLI::Option* postgres =
      app.add_option("--postgres", options.postgres,
                     "Apply to PostgreSQL: a libpq connection string or URI ('host=/run/postgresql dbname=copy "
                     "user=cdc'); the password from PGPASSWORD or ~/.pgpass. Not with the MariaDB connection options")
          ->type_name("CONNINFO")
          ->group("Target");
  for (const char* name : {"--host", "--port", "--user", "--password", "--socket", "--defaults-file",
                           "--defaults-group", "--ssl-mode", "--ssl-ca", "--ssl-cert", "--ssl-key", "--connect-timeout"})
    postgres->excludes(app.get_option(name));
  app.add_option("--database", options.database,
                 "Apply every table into this target database, or PostgreSQL schema (default: each into its source "
                 "database's name); the position table goes there too")
      ->type_name("DB")
      ->group("Target");
  app.add_option("--position-table", options.position_table,
                 "Keep the applied position in this table (created when missing). Default: cdc_apply_position in "
                 "--database")
      ->type_name("[DB.]NAME")
      ->group("Target");
  auto* create_tables = app.add_flag("--create-tables", options.create_tables,
               "Create the tables the target lacks from the lines' table descriptions")
      ->group("Target");
  app.add_option("--on-ddl", options.on_ddl,
                 "At a DDL line: stop before it (exit 3, the default), apply it, or ignore it")
      ->type_name("stop|apply|ignore")
      ->group("Target");
  unsigned retry_for = 0;
  app.add_option("--retry-for", retry_for,
                 "When the target's connection is lost, reconnect (0.5 s doubling to 30 s) and commit the target "
                 "transaction again; give up (exit 69) when reconnecting has failed for this many seconds (0: never). "
                 "Default: a lost connection is exit 69 at once")
      ->type_name("SECONDS")
      ->group("Target");
  app.add_option("--batch-rows", options.batch_rows,
                 "Gather whole source transactions into one target transaction up to this many rows. Default: 5000")
      ->type_name("N")
      ->transform(cdc::cli::whole_number(1, UINT64_MAX))
      ->group("Target");
  // --verify: the copy compared with its source (cdc-apply(1), VERIFY).
  bool verify = false;
  cdc::verify::VerifyOptions check;
  std::string source_file;
  auto* verify_flag = app.add_flag("--verify", verify,
                                   "Compare the target's tables with the source's, chunk by chunk, while changes "
                                   "flow; one verify line per chunk (exit 0 equal, 1 differs, 75 unsettled)")
                          ->group("Verify");
  verify_flag->excludes(inputs)->excludes(follow)->excludes(until)->excludes(create_tables);
  app.add_option("--source-defaults-file", source_file,
                 "The source's connection options: an option file ([client] and --source-defaults-group)")
      ->check(cdc::cli::readable_file())
      ->needs(verify_flag)
      ->group("Verify");
  app.add_option("--source-defaults-group", check.source.defaults_group,
                 "Option-file group of the source's file read besides [client]")
      ->capture_default_str()
      ->needs(verify_flag)
      ->group("Verify");
  app.add_option("--tables", check.tables, "The source's tables to compare, as cdc-plan takes them ('shop.*')")
      ->type_name("PATTERNS")
      ->needs(verify_flag)
      ->group("Verify");
  app.add_option("--exclude", check.exclude, "Tables left out, as cdc-plan takes them")
      ->type_name("PATTERNS")
      ->needs(verify_flag)
      ->group("Verify");
  app.add_option("--chunk-size", check.chunk_size, "Rows per chunk, as cdc-plan splits them")
      ->capture_default_str()
      ->transform(cdc::cli::whole_number(1, UINT64_MAX))
      ->needs(verify_flag)
      ->group("Verify");
  app.add_option("--verify-wait", check.wait_seconds,
                 "Seconds to wait for the target to apply the position a source chunk was read at")
      ->type_name("SECONDS")
      ->capture_default_str()
      ->transform(cdc::cli::whole_number(0, 86400))
      ->needs(verify_flag)
      ->group("Verify");
  app.add_option("--verify-rounds", check.rounds,
                 "Row comparisons of a differing chunk before one that keeps changing is unsettled")
      ->type_name("N")
      ->capture_default_str()
      ->transform(cdc::cli::whole_number(2, 1000))
      ->needs(verify_flag)
      ->group("Verify");
  app.add_option("--verify-max-keys", check.max_keys, "Differing keys listed per chunk (all are counted)")
      ->type_name("N")
      ->capture_default_str()
      ->transform(cdc::cli::whole_number(0, UINT64_MAX))
      ->needs(verify_flag)
      ->group("Verify");
  cli.set_examples(
      "Examples:\n"
      "  cdc-apply -h replica2 -u apply --database shop_copy shop.sync/snapshot.ndjson shop.ndjson\n"
      "  cdc-stream --from \"$POS\" | cdc-apply -h replica2 -u apply --database shop_copy\n"
      "  cdc-apply --postgres 'host=pg1 dbname=copy user=cdc' --database shop --create-tables shop.sync/snapshot.ndjson "
      "shop.ndjson\n"
      "  cdc-apply -h replica2 -u apply --database shop_copy --verify --source-defaults-file ~/source.cnf "
      "--tables 'shop.*'\n");
  if (const auto code = cli.parse(argc, argv)) return *code;
  if (app.count("--retry-for") > 0) options.retry_for = retry_for;
  options.notice = [&cli](std::string_view text) { cli.diagnostic("notice", text); };
  if (verify) {
    check.target = options.connection;
    check.postgres = options.postgres;
    check.source.defaults_file = source_file.empty() ? std::nullopt : std::optional<std::string>(source_file);
    check.source.connect_timeout_seconds = options.connection.connect_timeout_seconds;
    check.database = options.database;
    check.position_table = options.position_table;
    if (auto checked = cdc::verify::check_options(check); !checked) return cli.usage_error(checked.error().message);
    if (auto table = cdc::apply::position_table_name(options); !table) return cli.usage_error(table.error().message);
    const auto compared = cdc::verify::run(check, STDOUT_FILENO);
    if (!compared) return cli.finish(compared);
    cli.diagnostic("notice", fmt::format("compared {} chunks of {} tables in {:.2f} s: {} equal, {} differ ({} keys), "
                                         "{} unsettled",
                                         compared->chunks, compared->tables, compared->seconds, compared->equal,
                                         compared->differs, compared->keys_total, compared->unsettled));
    return cli.finish(compared, cdc::verify::exit_code(*compared));
  }
  if (auto checked = cdc::apply::apply_options(options); !checked) return cli.usage_error(checked.error().message);
  if (auto table = cdc::apply::position_table_name(options); !table) return cli.usage_error(table.error().message);

  const auto outcome = cdc::apply::run(options);
  if (!outcome) return cli.finish(outcome);
  const cdc::apply::ApplyStats& stats = outcome->stats;
  cli.diagnostic("notice",
                 fmt::format("applied {} transactions ({} rows) in {} target transactions in {:.2f} s; skipped {} "
                             "transactions and {} snapshot rows already applied; dropped {} incomplete; at {}",
                             stats.transactions, stats.rows, stats.target_commits, outcome->seconds,
                             stats.transactions_skipped, stats.snapshot_rows_skipped, stats.transactions_dropped,
                             outcome->state.position.empty() ? "(nothing)" : outcome->state.position));
  if (outcome->stop == cdc::apply::Stop::ddl) {
    cli.diagnostic("stopped", outcome->stop_reason);
    return cli.finish(outcome, static_cast<int>(cdc::ExitCode::ddl_review));
  }
  return cli.finish(outcome);
}
