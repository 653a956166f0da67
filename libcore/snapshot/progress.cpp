#include "snapshot/progress.h"

#include <string>
#include <utility>

#include "util/fd_io.h"
#include "util/progress.h"

namespace cdc::snapshot {

Progress::Progress(bool enabled, int fd, std::optional<std::uint64_t> total,
                   std::optional<std::string> metrics_path, std::function<void(std::string_view)> warn)
    : enabled_(enabled),
      fd_(fd),
      total_(total),
      start_(std::chrono::steady_clock::now()),
      metrics_file_(std::move(metrics_path), std::move(warn), "the snapshot goes on") {}

void Progress::chunk_done(std::uint64_t rows) {
  ++done_;
  rows_ += rows;
  draw(true);
  write_metrics(false);
}

void Progress::chunk_skipped() {
  ++done_;
  ++skipped_;
  draw(true);
  write_metrics(false);
}

void Progress::rows(std::uint64_t in_chunk) {
  draw(false, in_chunk);
  in_chunk_ = in_chunk;
  write_metrics(false);
}

void Progress::reconnecting() {
  ++reconnects_;
  last_error_time_ = std::time(nullptr);
  in_chunk_ = 0;
  write_metrics(true);
}

void Progress::finish() {
  if (enabled_ && drawn_) (void)write_all(fd_, "\n", "stderr");
  drawn_ = false;
  in_chunk_ = 0;
  write_metrics(true);
}

void Progress::write_metrics(bool now) {
  if (!metrics_file_.enabled() || (!now && !metrics_file_.due())) return;
  metrics::TextWriter out;
  out.family("cdc_snapshot_start_time_seconds", "gauge", "When this cdc-snapshot started, seconds since the epoch");
  out.sample("cdc_snapshot_start_time_seconds", static_cast<std::uint64_t>(start_time_));
  out.family("cdc_snapshot_chunks_done", "gauge", "Chunks finished, by this run or an earlier one (--output-dir)");
  out.sample("cdc_snapshot_chunks_done", done_);
  if (total_) {
    out.family("cdc_snapshot_chunks", "gauge", "Chunks in the input");
    out.sample("cdc_snapshot_chunks", *total_);
  }
  // A gauge: the chunk being read when a connection is lost is read again from its start.
  out.family("cdc_snapshot_rows", "gauge",
             "Rows written by this run: of the chunks it finished and of the one being read");
  out.sample("cdc_snapshot_rows", rows_ + in_chunk_);
  out.family("cdc_snapshot_reconnects_total", "counter", "Connections lost during a chunk, which is read again");
  out.sample("cdc_snapshot_reconnects_total", reconnects_);
  out.family("cdc_snapshot_last_error_timestamp_seconds", "gauge",
             "When the last connection was lost, seconds since the epoch (0: never)");
  out.sample("cdc_snapshot_last_error_timestamp_seconds", static_cast<std::uint64_t>(last_error_time_));
  metrics_file_.publish(out.text());
}

void Progress::draw(bool force, std::uint64_t in_chunk) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_ < std::chrono::milliseconds(500)) return;
  last_ = now;
  const auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(now - start_);
  const std::uint64_t rows = rows_ + in_chunk;
  std::string line = "\r" + progress_text("cdc-snapshot:", {done_, total_, rows, done_ - skipped_, rows,
                                                            static_cast<std::uint64_t>(elapsed.count())});
  line += "\x1b[K";
  (void)write_all(fd_, line, "stderr");
  drawn_ = true;
}

}  // namespace cdc::snapshot
