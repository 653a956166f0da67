#include "binlog/events/rows_event.h"

#include <fmt/format.h>

#include "util/bits.h"

namespace cdc::binlog {

namespace {

struct RowsShape {
  RowsKind kind;
  int version;  // 0 pre-GA, 1, 2
  bool compressed;
};

std::optional<RowsShape> shape_of(EventType type) noexcept {
  switch (type) {
    case EventType::pre_ga_write_rows: return RowsShape{RowsKind::write, 0, false};
    case EventType::pre_ga_update_rows: return RowsShape{RowsKind::update, 0, false};
    case EventType::pre_ga_delete_rows: return RowsShape{RowsKind::erase, 0, false};
    case EventType::write_rows_v1: return RowsShape{RowsKind::write, 1, false};
    case EventType::update_rows_v1: return RowsShape{RowsKind::update, 1, false};
    case EventType::delete_rows_v1: return RowsShape{RowsKind::erase, 1, false};
    case EventType::write_rows_v2: return RowsShape{RowsKind::write, 2, false};
    case EventType::update_rows_v2: return RowsShape{RowsKind::update, 2, false};
    case EventType::delete_rows_v2: return RowsShape{RowsKind::erase, 2, false};
    case EventType::partial_update_rows: return RowsShape{RowsKind::partial_update, 2, false};
    case EventType::mariadb_write_rows_compressed_v1: return RowsShape{RowsKind::write, 1, true};
    case EventType::mariadb_update_rows_compressed_v1: return RowsShape{RowsKind::update, 1, true};
    case EventType::mariadb_delete_rows_compressed_v1: return RowsShape{RowsKind::erase, 1, true};
    case EventType::mariadb_write_rows_compressed: return RowsShape{RowsKind::write, 2, true};
    case EventType::mariadb_update_rows_compressed: return RowsShape{RowsKind::update, 2, true};
    case EventType::mariadb_delete_rows_compressed: return RowsShape{RowsKind::erase, 2, true};
    default: return std::nullopt;
  }
}

}  // namespace

bool is_rows_event(EventType type) noexcept { return shape_of(type).has_value(); }

RowsEvent decode_rows(ByteReader& body, const FormatDescription& format, EventType type) {
  RowsEvent event;
  const auto shape = shape_of(type);
  if (!shape) {
    body.fail("not a rows event");
    return event;
  }
  event.kind = shape->kind;
  event.compressed = shape->compressed;
  event.table_id = body.uint_le(format.table_id_size(type), "table id");
  event.flags = body.u16();
  if (shape->version == 2) {
    // The extra-row-info length counts its own two bytes (rows_event.cpp, ROWS_V_EXTRAINFO).
    const std::uint16_t extra_length = body.u16();
    if (extra_length < 2) {
      body.fail(fmt::format("rows event extra data length {} is below 2", extra_length));
      return event;
    }
    body.skip(extra_length - 2U, "rows event extra data");
  }
  // A rows event that ends here carries no rows: 5.1 servers wrote such dummies (table id
  // 0xffffff) to mark the end of a statement.
  if (body.ok() && body.empty()) return event;
  event.column_count = body.packed_integer("column count");
  if (!body.ok()) return event;
  if (event.column_count == 0 || event.column_count > 4096) {
    body.fail(fmt::format("rows event column count {} is impossible", event.column_count));
    return event;
  }
  const std::size_t bitmap_size = (event.column_count + 7) / 8;
  event.columns_before = body.bytes(bitmap_size, "columns-present bitmap");
  if (event.kind == RowsKind::update || event.kind == RowsKind::partial_update)
    event.columns_after = body.bytes(bitmap_size, "after-image columns-present bitmap");
  else
    event.columns_after = event.columns_before;
  event.rows_offset = body.offset();
  event.rows = body.rest();
  return event;
}

bool all_columns_present(std::span<const std::uint8_t> bitmap, std::uint64_t column_count) noexcept {
  for (std::uint64_t i = 0; i < column_count; ++i)
    if (i / 8 >= bitmap.size() || !lsb_bit(bitmap, i)) return false;
  return true;
}

}  // namespace cdc::binlog
