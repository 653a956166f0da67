#pragma once

#include <cstdint>
#include <span>

#include "binlog/format_description.h"
#include "util/byte_reader.h"

namespace cdc::binlog {

enum class RowsKind : std::uint8_t { write, update, erase, partial_update };

// WRITE/UPDATE/DELETE_ROWS (v0 pre-GA, v1, v2), MySQL PARTIAL_UPDATE_ROWS and MariaDB's
// compressed variants, up to the row data. The rows themselves are read by rowimage, which
// needs the TABLE_MAP this event's table id names.
struct RowsEvent {
  RowsKind kind = RowsKind::write;
  std::uint64_t table_id = 0;
  std::uint16_t flags = 0;
  std::uint64_t column_count = 0;
  std::span<const std::uint8_t> columns_before;  // columns present in before images (LSB-first)
  std::span<const std::uint8_t> columns_after;   // same for after images (updates only)
  std::span<const std::uint8_t> rows;            // the row images, back to back
  std::uint64_t rows_offset = 0;                 // absolute offset of `rows`, for messages
  bool compressed = false;                       // MariaDB: `rows` still needs inflating

  static constexpr std::uint16_t kStatementEnd = 0x0001;  // STMT_END_F: last event of the statement

  [[nodiscard]] bool has_before() const noexcept { return kind != RowsKind::write; }
  [[nodiscard]] bool has_after() const noexcept { return kind != RowsKind::erase; }
};

[[nodiscard]] bool is_rows_event(EventType type) noexcept;
RowsEvent decode_rows(ByteReader& body, const FormatDescription& format, EventType type);

// True when every one of `column_count` bits is set: a FULL row image.
[[nodiscard]] bool all_columns_present(std::span<const std::uint8_t> bitmap, std::uint64_t column_count) noexcept;

}  // namespace cdc::binlog
