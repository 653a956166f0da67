// cdc-snapshot: read key-range chunks, each bracketed by low/high binlog watermarks.

#include <unistd.h>

#include "cli/tool_cli.h"
#include "snapshot/run_snapshot.h"

int main(int argc, char** argv) {
  cdc::cli::ToolCli cli("cdc-snapshot",
                        "cdc-snapshot - read table chunks planned by cdc-plan, each bracketed by "
                        "low/high binlog watermarks.\nPrints NDJSON on stdout (or one file per chunk with "
                        "--output-dir).");
  cdc::snapshot::Options options;
  cli.add_connection_options(options.connection);
  auto& app = cli.app();
  app.add_option("CHUNKS", options.inputs, "Files of op:\"chunk\" lines; - or none reads stdin")->group("Input");
  app.add_option("--output-dir", options.output_dir,
                 "Write each chunk to DIR/DB.TABLE.INDEX.ndjson (under a .partial name until its high line is "
                 "out); a rerun skips the chunks already there")
      ->type_name("DIR")
      ->group("Output");
  app.add_option("--retry-for", options.retry_for_seconds,
                 "When the connection is lost, reconnect (0.5 s doubling to 30 s) and read the chunk again with new "
                 "watermarks; give up (exit 69) when reconnecting has failed for this many seconds (default 0: never)")
      ->type_name("SECONDS")
      ->group("Connection");
  app.add_flag("--progress", options.progress,
               "Progress on stderr (chunks done/total, rows/s, ETA) even when stderr is not a terminal")
      ->group("Output");
  app.add_option("--metrics", options.metrics_path,
                 "Write Prometheus metrics to this file every 5 s and at the end (replaced at once, for "
                 "node_exporter's textfile collector): chunks done and total, rows, reconnects")
      ->type_name("FILE")
      ->group("Output");
  unsigned share_view_ms = static_cast<unsigned>(cdc::snapshot::Options::kDefaultShareView.count());
  app.add_option("--share-view", share_view_ms,
                 "Consecutive chunks of a table share one read view (one transaction, one low watermark) for up to "
                 "this many milliseconds, which spares the server a view's setup per chunk; the view is not kept "
                 "while waiting for input (default 250; 0: a view per chunk)")
      ->type_name("MS")
      ->check(CLI::Range(0U, 3600000U))
      ->group("Input");
  std::string scheduling = "batch";
  app.add_option("--scheduling", scheduling,
                 "batch (default): run as a Linux batch task, which rows arriving do not make preempt the CPU's "
                 "running task (on the server's host: the server's threads sending them); normal: as started")
      ->type_name("batch|normal")
      ->check(CLI::IsMember({"batch", "normal"}))
      ->group("Connection");
  std::string shard;
  app.add_option("--shard", shard,
                 "Read only every COUNT-th chunk line, from the INDEX-th (from 0): COUNT processes given the same "
                 "plan share it, e.g. a Kubernetes Indexed Job's pods with --shard $JOB_COMPLETION_INDEX/COUNT")
      ->type_name("INDEX/COUNT")
      ->group("Input");
  cli.set_examples(
      "Examples:\n"
      "  cdc-plan --tables 'shop.*' | cdc-snapshot > snapshot.ndjson\n"
      "  cdc-plan --tables shop.orders > chunks.ndjson\n"
      "  split -n l/4 chunks.ndjson part. && ls part.* | xargs -P 4 -n 1 cdc-snapshot --output-dir out\n"
      "  for i in 0 1 2 3; do cdc-snapshot --shard $i/4 --output-dir out chunks.ndjson & done; wait\n");
  if (const auto code = cli.parse(argc, argv)) return *code;
  if (!shard.empty()) {
    auto parsed = cdc::snapshot::parse_shard(shard);
    if (!parsed) return cli.usage_error(parsed.error().message);
    options.shard = *parsed;
  }
  options.share_view = std::chrono::milliseconds(share_view_ms);
  options.scheduling =
      scheduling == "normal" ? cdc::snapshot::Options::Scheduling::normal : cdc::snapshot::Options::Scheduling::batch;
  // A reader that went away (| head) ends it quietly; the chunk it cut has no high line.
  return cli.finish(cdc::snapshot::run(options, STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO));
}
