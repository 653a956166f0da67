// PARTIAL_UPDATE_ROWS with a FULL before image: the JSON diffs are applied to the before
// document, so the line's "after" holds the whole new document (the fixture corpus only has a
// MINIMAL-image example, where the diffs themselves are written).

#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "binlog/events/rows_event.h"
#include "binlog/events/table_map_event.h"
#include "stream/change_writer.h"

namespace {

std::string read_all(int fd) {
  std::string text;
  ::lseek(fd, 0, SEEK_SET);
  char buffer[4096];
  for (ssize_t got; (got = ::read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(got));
  return text;
}

}  // namespace

TEST_CASE("partial JSON update rows: diffs applied to the FULL before image give the whole after document") {
  cdc::binlog::TableMap map;
  map.database = "db";
  map.table = "t";
  map.columns = {{cdc::ColumnType::long_int, 0, false, false, 0},
                 {cdc::ColumnType::json, 4, false, true, 63}};
  map.column_names = {"id", "doc"};
  map.primary_key = {0};

  const std::vector<std::uint8_t> rows = {
      // before image: null bitmap, id = 7, doc = {"a":1}
      0x00,                                            // no NULLs
      0x07, 0x00, 0x00, 0x00,                          // id (LONG) 7
      0x0d, 0x00, 0x00, 0x00,                          // doc length 13
      0x00,                                            // small object
      0x01, 0x00, 0x0c, 0x00,                          // 1 member, 12 bytes
      0x0b, 0x00, 0x01, 0x00,                          // key at 11, length 1
      0x05, 0x01, 0x00,                                // value: int16 1, inlined
      0x61,                                            // "a"
      // after image: value_options, partial-JSON bitmap, null bitmap, values
      0x01,                                            // PARTIAL_JSON_UPDATES
      0x01,                                            // the one JSON column holds diffs
      0x00,                                            // no NULLs
      0x07, 0x00, 0x00, 0x00,                          // id 7
      0x09, 0x00, 0x00, 0x00,                          // diff vector length 9
      0x00,                                            // REPLACE
      0x03, 0x24, 0x2e, 0x61,                          // path "$.a"
      0x03, 0x05, 0x02, 0x00,                          // value: int16 2
  };
  cdc::binlog::RowsEvent event;
  event.kind = cdc::binlog::RowsKind::partial_update;
  event.column_count = 2;
  static const std::uint8_t kAllColumns[1] = {0x03};
  event.columns_before = kAllColumns;
  event.columns_after = kAllColumns;
  event.rows = rows;
  event.rows_offset = 1000;

  const int fd = ::memfd_create("partial-json", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  cdc::stream::ChangeWriter writer(fd, "memfd");
  auto written = writer.write_rows(event, map, cdc::stream::ChangePosition{"binlog.000001", 900, "", 0, 1, std::nullopt},
                                   1700000000);
  REQUIRE_MESSAGE(written.has_value(), written.error().message);
  CHECK(*written == 1);
  REQUIRE(writer.flush().has_value());
  CHECK(read_all(fd) ==
        R"({"op":"table","v":1,"db":"db","table":"t","columns":[{"name":"id","type":"int","nullable":false},)"
        R"({"name":"doc","type":"json","nullable":true}],"key":["id"],)"
        R"("pos":{"file":"binlog.000001","offset":900,"gtid":null},"ts_ms":1700000000000})"
        "\n"
        R"({"op":"u","v":1,"db":"db","table":"t","key":{"id":7},"before":{"id":7,"doc":{"a":1}},)"
        R"("after":{"id":7,"doc":{"a":2}},"pos":{"file":"binlog.000001","offset":900,"index":0,"gtid":null},)"
        R"("server_id":1,"thread":null,"ts_ms":1700000000000})"
        "\n");
  ::close(fd);
}
