// CHAR, VARCHAR and the TEXT types are written straight from their bytes when the value is plain
// ASCII in a charset where that is its own UTF-8 (TablePlan's Layout::ascii_text, taken by both
// writers of a row). That shortcut must write exactly what the full decoder (decode_value: the
// charset conversion, CHAR's pad, BINARY's base64) writes for the same bytes, for every type,
// collation and value, plain or not.

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "binlog/events/rows_event.h"
#include "binlog/events/table_map_event.h"
#include "ndjson/writer.h"
#include "rowimage/column_value.h"
#include "rowimage/row_change.h"
#include "rowimage/row_image.h"
#include "util/byte_reader.h"

namespace {

namespace rowimage = cdc::rowimage;
using cdc::ColumnType;

struct TextType {
  const char* name;
  ColumnType type;
  std::uint16_t meta;     // TABLE_MAP metadata: CHAR/VARCHAR byte length, TEXT length width
  std::size_t prefix;     // the value's length prefix in a row image
};

// The value as a row image of a one-column table: the null bitmap, the length, the bytes.
std::vector<std::uint8_t> row_of(const TextType& type, std::string_view value) {
  std::vector<std::uint8_t> row = {0x00};
  for (std::size_t b = 0; b < type.prefix; ++b) row.push_back(static_cast<std::uint8_t>(value.size() >> (8 * b)));
  row.insert(row.end(), value.begin(), value.end());
  return row;
}

}  // namespace

TEST_CASE("text fast path: every text type, collation and value is written as the full decoder writes it") {
  const std::vector<TextType> types = {
      {"CHAR(30)", ColumnType::string, 30, 1},          {"CHAR(100) utf8mb4", ColumnType::string, 400, 2},
      {"VARCHAR(64)", ColumnType::varchar, 64, 1},      {"VARCHAR(1000)", ColumnType::varchar, 1000, 2},
      {"TINYTEXT", ColumnType::blob, 1, 1},             {"TEXT", ColumnType::blob, 2, 2},
      {"MEDIUMTEXT", ColumnType::blob, 3, 3},           {"LONGTEXT", ColumnType::blob, 4, 4},
  };
  // latin1, utf8mb3, utf8mb4 (two), ascii, ucs2, utf16, utf32, binary, none (no metadata),
  // cp1250, gbk, sjis.
  const std::vector<std::uint16_t> collations = {8, 33, 45, 255, 11, 35, 54, 60, 63, 0, 26, 28, 13};
  const std::vector<std::string> values = {
      "",
      "plain",
      "label-123456 with trailing spaces   ",
      "   ",
      "a \"quoted\" \\ value",
      std::string("nul\0inside", 10),
      "tab\tnew\nline\x1f",
      "caf\xc3\xa9 na\xc3\xafve",                // UTF-8
      "\xe9t\xe9",                               // latin1
      "\x80\xff\xfe",                            // bytes no charset takes whole
      "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",  // past the AVX2 steps
  };
  std::size_t compared = 0;
  for (const TextType& type : types) {
    for (const std::uint16_t collation : collations) {
      cdc::binlog::TableMap map;
      map.database = "db";
      map.table = "t";
      map.column_names = {"c"};
      map.columns = {{type.type, type.meta, false, true, collation}};
      rowimage::TablePlan plan;
      plan.build(map);
      for (const std::string& value : values) {
        CAPTURE(type.name);
        CAPTURE(collation);
        CAPTURE(value);
        const std::vector<std::uint8_t> row = row_of(type, value);
        // The full decoder, on the value's bytes.
        cdc::ndjson::Writer decoded;
        rowimage::RowScratch decode_scratch;
        cdc::ByteReader value_bytes(std::span<const std::uint8_t>(row).subspan(1), 1);
        rowimage::decode_value(value_bytes, map, 0, decoded, decode_scratch);
        REQUIRE(value_bytes.ok());
        // The row writer, with its shortcut.
        const std::uint8_t present[1] = {0x01};
        cdc::binlog::RowsEvent event;
        event.kind = cdc::binlog::RowsKind::write;
        event.column_count = 1;
        event.columns_after = present;
        event.rows = row;
        const rowimage::RowsShape shape = rowimage::rows_shape(event, plan);
        cdc::ByteReader rows(row, 0);
        cdc::ndjson::Writer written;
        rowimage::RowScratch scratch;
        written.begin_object();
        (void)rowimage::write_row_change(rows, plan, shape, written, scratch);
        REQUIRE(rows.ok());
        written.end_object();
        CHECK(std::string(written.buffered()) ==
              R"({"key":null,"before":null,"after":{"c":)" + std::string(decoded.buffered()) + "}}");
        CHECK(scratch.lossy_text == decode_scratch.lossy_text);
        ++compared;
      }
    }
  }
  CHECK(compared == types.size() * collations.size() * values.size());
}
