// cdc-plan: discover tables, check the server's settings, split tables into key-range chunks.

#include <unistd.h>

#include "check/run_check.h"
#include "cli/tool_cli.h"
#include "util/exit_code.h"

int main(int argc, char** argv) {
  cdc::cli::ToolCli cli("cdc-plan",
                        "cdc-plan - check a MySQL/MariaDB server for change data capture and plan "
                        "table snapshots.\nPrints NDJSON on stdout.");
  cdc::mysql::ConnectionOptions connection;
  bool check = false;
  cli.add_connection_options(connection);
  cli.app()
      .add_flag("--check", check,
                "Check the server's binlog settings and this account's grants: one op:\"check\" line "
                "each, then op:\"check_summary\". Exit 0 when usable, 78 when a setting must change")
      ->group("Mode");
  cli.set_examples(
      "Examples:\n"
      "  cdc-plan --check -h db1 -u cdc -p\n"
      "  cdc-plan --check --defaults-file ~/.cdc.cnf | jq -r 'select(.status==\"fail\").fix'\n");
  if (const auto code = cli.parse(argc, argv)) return *code;
  if (!check)
    return cli.usage_error("nothing to do: give --check (table discovery and chunk planning are not in this version yet)");

  const auto report = cdc::check::run(connection, STDOUT_FILENO, STDERR_FILENO, cli.tool_name());
  if (!report) return cli.report(report.error());
  if (::close(STDOUT_FILENO) != 0)
    return cli.report(cdc::Error{cdc::Errc::io, "closing stdout failed"});
  return report->usable() ? static_cast<int>(cdc::ExitCode::success) : static_cast<int>(cdc::ExitCode::config);
}
