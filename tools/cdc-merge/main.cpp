// cdc-merge: reconcile chunks read at different moments with the binlog deltas into one
// snapshot consistent at one position. It never connects to a server, so it takes no
// connection options.

#include <unistd.h>

#include <fmt/format.h>

#include <string>

#include "cli/output_flags.h"
#include "cli/tool_cli.h"
#include "merge/run_merge.h"

int main(int argc, char** argv) {
  cdc::cli::ToolCli cli("cdc-merge",
                        "cdc-merge - merge chunk snapshots and binlog deltas into one snapshot "
                        "consistent at one position.\nPrints NDJSON on stdout: op:\"r\" lines, then one op:\"high\".");
  cdc::merge::Options options;
  std::string memory_limit = "6M";
  auto& app = cli.app();
  app.add_option("CHUNK_OUTPUTS", options.inputs, "cdc-snapshot outputs (many chunks per file is fine); - reads stdin")
      ->group("Input");
  app.add_option("--deltas", options.deltas,
                 "cdc-stream output covering the chunks, from the lowest low to the highest high; - reads stdin")
      ->type_name("FILE")
      ->group("Input");
  app.add_flag("--span", options.span,
               "Print the lowest low and the highest high as 'FROM UNTIL' (for cdc-stream --from/--until) and exit")
      ->group("Input");
  app.add_flag("--check-deltas", options.check_deltas,
               "Check that --deltas cover the chunks (span lines, order, whole lines), write nothing, exit 0 or 65")
      ->group("Input");
  app.add_option("--until", options.until,
                 "H*: the position the merged snapshot is consistent at. Default: the highest high of the chunks")
      ->type_name("POS")
      ->group("Input");
  app.add_flag("--subset", options.subset,
               "Merge only the given chunks of a table (split one table's merge over processes)")
      ->group("Input");
  app.add_option("--memory-limit", memory_limit,
                 "Memory for the changes' effects; past it they spill to --spill-dir. K, M, G suffixes. Default: 6M")
      ->type_name("SIZE")
      ->group("Resources");
  app.add_option("--threads", options.threads,
                 "Threads for reading the deltas and writing the output (1: none beside the main one). Default: 2")
      ->type_name("N")
      ->check(CLI::Range(1U, 64U))
      ->group("Resources");
  app.add_option("--spill-dir", options.spill_dir,
                 "Directory for spill files (removed at exit). Default: $TMPDIR, else /tmp")
      ->type_name("DIR")
      ->group("Resources");
  app.add_option("--output", options.output,
                 "Write the merged snapshot to FILE (as FILE.partial, renamed when complete) instead of stdout; "
                 "not with --span")
      ->type_name("FILE")
      ->group("Output");
  cdc::cli::OutputFlags output_flags;
  output_flags.add_to(app);
  cli.set_examples(
      "Examples:\n"
      "  read FROM UNTIL < <(cdc-merge --span chunks/*)\n"
      "  cdc-stream --from \"$FROM\" --until \"$UNTIL\" > deltas.ndjson\n"
      "  cdc-merge chunks/* --deltas deltas.ndjson > snapshot.ndjson\n");
  if (const auto code = cli.parse(argc, argv)) return *code;
  auto format = output_flags.options();
  if (!format) return cli.usage_error(format.error().message);
  options.format = *format;
  auto limit = cdc::merge::parse_size(memory_limit);
  if (!limit) return cli.usage_error(fmt::format("--memory-limit: {}", limit.error().message));
  options.memory_limit = *limit;
  return cli.finish(cdc::merge::run(options, STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO));
}
