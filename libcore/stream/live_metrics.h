#pragma once

// cdc-stream --metrics: what a live run has counted, in Prometheus' text format (cdc-stream(1),
// METRICS). The run keeps the counts; this is only their names, help texts and types.

#include <cstdint>
#include <ctime>
#include <map>
#include <string>

#include "gtid/position.h"
#include "metrics/text_format.h"
#include "stream/change_pipeline.h"

namespace cdc::stream {

struct LiveCounts {
  std::time_t start_time = 0;
  std::uint64_t events = 0;        // read from the server, again after a reconnect
  std::uint64_t binlog_bytes = 0;
  std::uint64_t transactions = 0;  // written whole to the output, each once
  // Keyed by database '\0' table, as StreamSummary::table_rows.
  const std::map<std::string, TableRows, std::less<>>* table_rows = nullptr;
  std::uint64_t output_bytes = 0;
  std::int64_t last_event_time = 0;  // seconds since the epoch; 0: none yet
  std::int64_t seconds_behind = 0;
  gtid::FilePosition position;       // where the last whole transaction read ends
  std::uint64_t reconnects = 0;
  std::int64_t last_error_time = 0;  // 0: never
};

// Replaces out's text with the counts.
void write_live_metrics(const LiveCounts& counts, metrics::TextWriter& out);

// The number of a binlog file's name (binlog.000042: 42); 0 when it has none.
[[nodiscard]] std::uint64_t binlog_file_number(std::string_view file) noexcept;

}  // namespace cdc::stream
