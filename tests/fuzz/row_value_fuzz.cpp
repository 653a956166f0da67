// Fuzz target: the row-value decoders. The first bytes pick a column (type, metadata,
// signedness, collation, MariaDB fixed-binary type), the rest is a row image of that one column (null bitmap + value),
// decoded exactly as a rows event would be.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "binlog/events/table_map_event.h"
#include "ndjson/writer.h"
#include "rowimage/row_image.h"
#include "util/byte_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  cdc::ByteReader in(data, size);
  cdc::binlog::TableMap map;
  map.database = "fuzz";
  map.table = "t";
  const std::uint8_t columns = static_cast<std::uint8_t>(in.u8() % 4 + 1);
  for (std::uint8_t i = 0; i < columns; ++i) {
    cdc::Column column;
    column.type = static_cast<cdc::ColumnType>(in.u8());
    column.meta = in.u16();
    const std::uint8_t flags = in.u8();
    column.is_unsigned = (flags & 1U) != 0;
    column.collation = (flags & 2U) != 0 ? 63 : in.u16();
    // Bits 4-5: MariaDB's INET4/INET6/UUID, which only the catalog names (any type and size,
    // so that a STRING of the wrong length reaches the converters too).
    column.fixed_binary = static_cast<cdc::FixedBinaryType>((flags >> 4) & 3U);
    map.columns.push_back(column);
    if ((flags & 4U) != 0) map.enum_values.resize(columns, {"a", "b", "c"});
    if ((flags & 8U) != 0) map.set_values.resize(columns, {"x", "y"});
  }
  map.primary_key = {0};
  if (!in.ok()) return 0;
  static cdc::ndjson::Writer out;
  static cdc::rowimage::RowScratch scratch;
  const std::uint8_t present[1] = {static_cast<std::uint8_t>((1U << columns) - 1U)};
  std::vector<cdc::rowimage::ColumnSlice> slices;
  while (!in.empty() && in.ok()) {
    cdc::rowimage::scan_row_image(in, map, present, slices, scratch);
    if (!in.ok()) break;
    cdc::ByteReader errors;
    cdc::rowimage::write_row_image(map, slices, out, scratch, errors);
    out.clear();
    if (!errors.ok()) break;
  }
  out.clear();
  return 0;
}
