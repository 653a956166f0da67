// cdc-plan: check the server's settings, discover tables, split them into key-range chunks.

#include <unistd.h>

#include <fmt/format.h>

#include <optional>

#include "check/run_check.h"
#include "cli/tool_cli.h"
#include "plan/run_plan.h"
#include "util/exit_code.h"
#include "util/table_filter.h"

int main(int argc, char** argv) {
  cdc::cli::ToolCli cli("cdc-plan",
                        "cdc-plan - check a MySQL/MariaDB server for change data capture and plan "
                        "table snapshots.\nPrints NDJSON on stdout: op:\"chunk\" lines for cdc-snapshot, or the "
                        "--check report.");
  cdc::mysql::ConnectionOptions connection;
  cdc::plan::PlanOptions options;
  std::vector<std::string> chunk_keys;
  bool check = false;
  cli.add_connection_options(connection);
  CLI::App& app = cli.app();
  app.add_flag("--check", check,
               "Check the server's binlog settings and this account's grants: one op:\"check\" line "
               "each, then op:\"check_summary\". Exit 0 when usable, 78 when a setting must change")
      ->group("Mode");
  app.add_option("--tables", options.tables,
                 "Plan these tables: comma-separated DB.TABLE globs (* and ?; DB alone means DB.*). "
                 "Base tables only, never the system schemas. With --check: weigh their snapshot against the "
                 "binlog retention")
      ->group("Tables");
  app.add_option("--exclude", options.exclude, "Skip tables matching these DB.TABLE globs")->group("Tables");
  app.add_option("--chunk-key", chunk_keys,
                 "DB.TABLE=COL[,COL]: split that table by these columns, the leading columns of any index "
                 "(needed for tables without a primary key). Repeatable")
      ->group("Chunks");
  app.add_option("--chunk-size", options.policy.chunk_size, "Rows per chunk, at least 1. Default: 8096")
      ->group("Chunks")
      ->transform(cdc::cli::whole_number(1, UINT64_MAX));
  app.add_option("--distribution-factor-lower", options.policy.factor_lower,
                 "Split a single integer key arithmetically when (max-min+1)/rows is at least this. Default: 0.05")
      ->group("Chunks");
  app.add_option("--distribution-factor-upper", options.policy.factor_upper,
                 "... and at most this; otherwise walk the index. Default: 1000")
      ->group("Chunks");
  app.add_option("--retry-for", options.retry_for_seconds,
                 "When the connection is lost, reconnect (0.5 s doubling to 30 s) and run the query again; give up "
                 "(exit 69) when reconnecting has failed for this many seconds (default 0: never)")
      ->type_name("SECONDS")
      ->group("Connection");
  std::vector<std::string> wheres;
  app.add_option("--where", wheres,
                 "DB.TABLE:EXPR: read only the rows of those tables that EXPR is true on (a subset of SQL: "
                 "columns, literals, = <> < <= > >=, BETWEEN, IN, IS NULL, AND OR NOT; see cdc-plan(1)). "
                 "It goes into their chunk lines, which cdc-snapshot reads. Repeatable, one per table")
      ->group("Tables");
  std::vector<std::string> columns;
  app.add_option("--columns", columns,
                 "DB.TABLE:COL[,COL...]: read only these columns of those tables (their key columns always); "
                 "they go into the chunk lines, so every line of the table carries only them. Repeatable, one per "
                 "table")
      ->group("Tables");
  app.add_flag("--force", options.force, "Plan even when the server check fails (its problems still go to stderr)")
      ->group("Chunks");
  app.add_flag("--include-query", options.include_query,
               "The check warns when the server does not log the SQL statement behind row changes, which "
               "cdc-stream --include-query writes")
      ->group("Mode");
  cli.set_examples(
      "Examples:\n"
      "  cdc-plan --check -h db1 -u cdc -p\n"
      "  cdc-plan --defaults-file ~/.cdc.cnf --tables 'shop.*' --exclude 'shop.tmp_*' > chunks.ndjson\n"
      "  cdc-plan --tables shop.events --chunk-key shop.events=created_at,id --chunk-size 50000\n"
      "  cdc-plan --tables shop.orders --where \"shop.orders:created >= '2026-01-01' AND status <> 'test'\"\n");
  if (const auto code = cli.parse(argc, argv)) return *code;

  if (check) {
    // The check is of the server and the account, and with --tables of how long their
    // snapshot would take against the binlog retention; planning runs the same checks first,
    // so a chunking option with --check can only be a mistake.
    for (const char* planning : {"--chunk-key", "--chunk-size", "--distribution-factor-lower",
                                 "--distribution-factor-upper", "--force", "--where", "--columns"})
      if (app.count(planning) > 0)
        return cli.usage_error(fmt::format("--check checks the server and this account, not chunks: {} is for "
                                           "planning; drop it, or drop --check (planning runs the same checks first)",
                                           planning));
    std::optional<cdc::TableFilter> tables;
    if (!options.tables.empty()) {
      auto filter = cdc::TableFilter::parse(options.tables, options.exclude);
      if (!filter) return cli.usage_error(filter.error().message);
      tables = std::move(*filter);
    } else if (!options.exclude.empty()) {
      return cli.usage_error("--exclude with --check goes with --tables, whose snapshot it weighs");
    }
    const auto report = cdc::check::run(connection, tables ? &*tables : nullptr,
                                        cdc::check::CheckWants{options.include_query}, STDOUT_FILENO, STDERR_FILENO,
                                        cli.tool_name());
    return cli.finish(report, report && !report->usable() ? static_cast<int>(cdc::ExitCode::config)
                                                          : static_cast<int>(cdc::ExitCode::success));
  }
  if (options.tables.empty()) return cli.usage_error("nothing to do: give --tables PATTERN to plan, or --check");
  for (const std::string& text : chunk_keys) {
    auto key = cdc::plan::parse_chunk_key(text);
    if (!key) return cli.usage_error(key.error().message);
    options.chunk_keys.push_back(std::move(*key));
  }
  for (const std::string& text : wheres) {
    auto where = cdc::filter::parse_where_option(text);
    if (!where) return cli.usage_error(where.error().message);
    options.wheres.push_back(std::move(*where));
  }
  for (const std::string& text : columns) {
    auto kept = cdc::filter::parse_columns_option(text);
    if (!kept) return cli.usage_error(kept.error().message);
    options.columns.push_back(std::move(*kept));
  }
  if (auto valid = cdc::plan::validate(options); !valid) return cli.usage_error(valid.error().message);

  return cli.finish(cdc::plan::run(connection, options, STDOUT_FILENO, STDERR_FILENO, cli.tool_name()));
}
