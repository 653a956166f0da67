#include "stream/live_metrics.h"

#include <algorithm>

namespace cdc::stream {

void write_live_metrics(const LiveCounts& counts, metrics::TextWriter& out) {
  out.clear();
  out.family("cdc_stream_start_time_seconds", "gauge", "When this cdc-stream started, seconds since the epoch");
  out.sample("cdc_stream_start_time_seconds", static_cast<std::uint64_t>(counts.start_time));
  out.family("cdc_stream_events_total", "counter", "Binlog events read from the server (again after a reconnect)");
  out.sample("cdc_stream_events_total", counts.events);
  out.family("cdc_stream_binlog_read_bytes_total", "counter", "Bytes of binlog events read from the server");
  out.sample("cdc_stream_binlog_read_bytes_total", counts.binlog_bytes);
  out.family("cdc_stream_transactions_total", "counter", "Transactions written whole to the output");
  out.sample("cdc_stream_transactions_total", counts.transactions);
  out.family("cdc_stream_rows_total", "counter",
             "Row changes written to the output, by table and kind (insert, update, delete)");
  if (counts.table_rows != nullptr) {
    for (const auto& [key, rows] : *counts.table_rows) {
      const std::size_t split = key.find('\0');
      const std::string_view database = std::string_view(key).substr(0, split);
      const std::string_view table = std::string_view(key).substr(split + 1);
      out.sample("cdc_stream_rows_total", rows.inserted, {{"database", database}, {"table", table}, {"op", "insert"}});
      out.sample("cdc_stream_rows_total", rows.updated, {{"database", database}, {"table", table}, {"op", "update"}});
      out.sample("cdc_stream_rows_total", rows.deleted, {{"database", database}, {"table", table}, {"op", "delete"}});
    }
  }
  out.family("cdc_stream_output_bytes_total", "counter", "Bytes written to the output (--output or stdout)");
  out.sample("cdc_stream_output_bytes_total", counts.output_bytes);
  out.family("cdc_stream_last_event_timestamp_seconds", "gauge",
             "The binlog timestamp of the last event read, seconds since the epoch (0: none yet)");
  out.sample("cdc_stream_last_event_timestamp_seconds",
             static_cast<std::uint64_t>(std::max<std::int64_t>(0, counts.last_event_time)));
  out.family("cdc_stream_seconds_behind_server", "gauge",
             "How far the last event read is behind the server's clock; 0 once caught up (a heartbeat came)");
  out.sample("cdc_stream_seconds_behind_server", static_cast<std::uint64_t>(counts.seconds_behind));
  out.family("cdc_stream_position_file_number", "gauge",
             "The number of the binlog file (binlog.000042: 42) where the last whole transaction read ends");
  out.sample("cdc_stream_position_file_number", binlog_file_number(counts.position.file));
  out.family("cdc_stream_position_offset_bytes", "gauge", "The offset in that file where it ends");
  out.sample("cdc_stream_position_offset_bytes", counts.position.offset);
  out.family("cdc_stream_reconnects_total", "counter", "Connections lost and made again");
  out.sample("cdc_stream_reconnects_total", counts.reconnects);
  out.family("cdc_stream_last_error_timestamp_seconds", "gauge",
             "When the last connection was lost, or the run ended on an error, seconds since the epoch (0: never)");
  out.sample("cdc_stream_last_error_timestamp_seconds", static_cast<std::uint64_t>(counts.last_error_time));
}

std::uint64_t binlog_file_number(std::string_view file) noexcept {
  const std::size_t dot = file.rfind('.');
  std::uint64_t number = 0;
  if (dot == std::string_view::npos) return 0;
  for (const char c : file.substr(dot + 1)) {
    if (c < '0' || c > '9') return 0;
    number = number * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return number;
}

}  // namespace cdc::stream
