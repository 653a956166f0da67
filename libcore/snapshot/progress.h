#pragma once

// cdc-snapshot's progress: on stderr one line redrawn in place; and with --metrics the same
// numbers in Prometheus' text format (cdc-snapshot(1), METRICS), rewritten every 5 s and at
// the end.

#include <chrono>
#include <cstdint>
#include <ctime>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "metrics/text_format.h"

namespace cdc::snapshot {

class Progress {
 public:
  Progress(bool enabled, int fd, std::optional<std::uint64_t> total, std::optional<std::string> metrics_path,
           std::function<void(std::string_view)> warn);
  void chunk_done(std::uint64_t rows);
  // A chunk an earlier run finished: counted as done, but not in the time per chunk the ETA
  // extrapolates (it took no time now).
  void chunk_skipped();
  // Rows of the chunk being read so far.
  void rows(std::uint64_t in_chunk);
  // A lost connection: the chunk is read again.
  void reconnecting();
  // Ends the line on stderr (before any other message) and writes the metrics now.
  void finish();

 private:
  void write_metrics(bool now);
  void draw(bool force, std::uint64_t in_chunk = 0);
  bool enabled_;
  int fd_;
  std::optional<std::uint64_t> total_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_{};
  std::uint64_t done_ = 0;
  std::uint64_t skipped_ = 0;
  std::uint64_t rows_ = 0;
  bool drawn_ = false;
  metrics::MetricsFile metrics_file_;
  const std::time_t start_time_ = std::time(nullptr);
  std::uint64_t in_chunk_ = 0;  // rows of the chunk being read
  std::uint64_t reconnects_ = 0;
  std::int64_t last_error_time_ = 0;
};

}  // namespace cdc::snapshot
