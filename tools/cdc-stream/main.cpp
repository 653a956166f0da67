// cdc-stream: tail the binlog over the replication protocol, or decode binlog files.

#include "cli/tool_cli.h"
#include "util/exit_code.h"

int main(int argc, char** argv) {
  cdc::cli::ToolCli cli("cdc-stream",
                        "cdc-stream - tail a MySQL/MariaDB binlog from a GTID set, a MariaDB GTID "
                        "position or FILE:OFFSET, or decode binlog files.\nPrints NDJSON on stdout.");
  cdc::mysql::ConnectionOptions connection;
  cli.add_connection_options(connection);
  cli.set_examples("Examples:\n  cdc-stream --version\n");
  if (const auto code = cli.parse(argc, argv)) return *code;
  return cli.report(cdc::Error{cdc::Errc::unsupported,
                               "streaming is not in this version yet; only --help and --version work"});
}
