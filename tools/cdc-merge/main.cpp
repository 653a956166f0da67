// cdc-merge: reconcile chunks read at different moments with the binlog deltas into one
// snapshot consistent at one position. It never connects to a server, so it takes no
// connection options.

#include "cli/tool_cli.h"
#include "util/exit_code.h"

int main(int argc, char** argv) {
  cdc::cli::ToolCli cli("cdc-merge",
                        "cdc-merge - merge chunk snapshots and binlog deltas into one snapshot "
                        "consistent at one position.\nPrints NDJSON on stdout.");
  std::vector<std::string> inputs;
  cli.app().add_option("CHUNK_OUTPUTS", inputs, "cdc-snapshot outputs; - reads stdin")->group("Input");
  cli.set_examples("Examples:\n  cdc-merge --version\n");
  if (const auto code = cli.parse(argc, argv)) return *code;
  return cli.report(cdc::Error{cdc::Errc::unsupported,
                               "merging is not in this version yet; only --help and --version work"});
}
