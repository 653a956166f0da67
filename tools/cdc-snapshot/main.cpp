// cdc-snapshot: read key-range chunks, each bracketed by low/high binlog watermarks.

#include "cli/tool_cli.h"
#include "util/exit_code.h"

int main(int argc, char** argv) {
  cdc::cli::ToolCli cli("cdc-snapshot",
                        "cdc-snapshot - read table chunks planned by cdc-plan, each bracketed by "
                        "low/high binlog watermarks.\nPrints NDJSON on stdout.");
  cdc::mysql::ConnectionOptions connection;
  std::vector<std::string> inputs;
  cli.add_connection_options(connection);
  cli.app().add_option("CHUNKS", inputs, "Files of op:\"chunk\" lines; - or none reads stdin")->group("Input");
  cli.set_examples("Examples:\n  cdc-snapshot --version\n");
  if (const auto code = cli.parse(argc, argv)) return *code;
  return cli.report(cdc::Error{cdc::Errc::unsupported,
                               "reading chunks is not in this version yet; only --help and --version work"});
}
