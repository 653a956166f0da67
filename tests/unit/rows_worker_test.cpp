// ChangeWriter's rows thread (use_rows_thread, stream/rows_worker): the lines it writes are the
// one-thread writer's, byte for byte and in order; a row that does not decode fails the same
// way, after the same lines; bytes_flushed() counts what went out.
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "binlog/events/rows_event.h"
#include "binlog/events/table_map_event.h"
#include "stream/change_writer.h"

namespace {

// t(id INT, doc JSON): MySQL's binary JSON is sized by a 4-byte length and only decoded when a
// line is written, so a bad document scans and fails later, on the rows thread.
cdc::binlog::TableMap json_table() {
  cdc::binlog::TableMap map;
  map.database = "db";
  map.table = "t";
  map.column_names = {"id", "doc"};
  map.primary_key = {0};
  map.columns = {{cdc::ColumnType::long_int, 0, false, false, 0}, {cdc::ColumnType::json, 4, false, true, 0}};
  map.generation = 7;
  return map;
}

// A row image: no NULLs, id, then the JSON document {"a": id} or a bad one (type 0x7f).
void add_row(std::vector<std::uint8_t>& rows, std::uint32_t id, bool bad_json) {
  rows.push_back(0x00);  // null bitmap
  for (int i = 0; i < 4; ++i) rows.push_back(static_cast<std::uint8_t>(id >> (8 * i)));
  // A small object of one key "a" and one inlined int16 value.
  std::vector<std::uint8_t> doc = {0x00, 0x01, 0x00, 0x0c, 0x00, 0x0b, 0x00, 0x01, 0x00,
                                   0x05, static_cast<std::uint8_t>(id & 0xff), static_cast<std::uint8_t>(id >> 8 & 0xff),
                                   'a'};
  if (bad_json) doc[0] = 0x7f;
  const auto size = static_cast<std::uint32_t>(doc.size());
  for (int i = 0; i < 4; ++i) rows.push_back(static_cast<std::uint8_t>(size >> (8 * i)));
  rows.insert(rows.end(), doc.begin(), doc.end());
}

struct Written {
  std::string text;
  std::optional<std::string> error;  // the first failure, of write_rows or flush
  std::uint64_t rows = 0;
};

constexpr std::uint8_t kAllColumns[1] = {0x03};

// `events` rows events of `rows_each` rows, a commit line after every third; the row numbered
// `bad_row` (counting from 0 over all events) holds a bad document.
Written write_events(std::optional<std::size_t> rows_thread_min_bytes, int events, int rows_each,
                     std::optional<int> bad_row = std::nullopt) {
  const cdc::binlog::TableMap map = json_table();
  const int fd = ::memfd_create("rows", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  Written result;
  {
    cdc::stream::ChangeWriter writer(fd, "memfd");
    if (rows_thread_min_bytes) writer.use_rows_thread(*rows_thread_min_bytes);
    std::vector<std::uint8_t> rows;
    int row = 0;
    for (int e = 0; e < events && !result.error; ++e) {
      rows.clear();
      for (int r = 0; r < rows_each; ++r, ++row)
        add_row(rows, static_cast<std::uint32_t>(row), bad_row && row == *bad_row);
      cdc::binlog::RowsEvent event;
      event.kind = cdc::binlog::RowsKind::write;
      event.column_count = 2;
      event.columns_before = kAllColumns;
      event.columns_after = kAllColumns;
      event.rows = rows;
      event.rows_offset = 1000 + static_cast<std::uint64_t>(e) * 10000;
      const cdc::stream::ChangePosition position{"binlog.000003", 900 + static_cast<std::uint64_t>(e) * 10000,
                                                 "0-1-5", 0, 1, std::nullopt};
      auto written = writer.write_rows(event, map, position, 1700000000);
      if (!written) {
        result.error = written.error().message;
        break;
      }
      result.rows += *written;
      if (e % 3 == 2) {
        writer.write_commit("0-1-5", "binlog.000003", position.offset + 500, "0-1-5", 1700000000, result.rows,
                            result.rows, std::nullopt);
        if (auto flushed = writer.flush_if_large(); !flushed) result.error = flushed.error().message;
      }
    }
    if (auto flushed = writer.flush(); !flushed && !result.error) result.error = flushed.error().message;
    if (!result.error) CHECK(writer.bytes_flushed() == static_cast<std::uint64_t>(::lseek(fd, 0, SEEK_END)));
  }
  const off_t size = ::lseek(fd, 0, SEEK_END);
  result.text.resize(static_cast<std::size_t>(size));
  REQUIRE(::pread(fd, result.text.data(), result.text.size(), 0) == size);
  ::close(fd);
  return result;
}

}  // namespace

TEST_CASE("rows thread: the lines are the one-thread writer's, byte for byte, in order") {
  // Small events and big ones; many of them, past the pieces in flight and the 256 KiB buffer.
  // Events of 4,000 rows (88 KB) are past a piece of work, whose rows' sizes are not handed over.
  for (const std::pair<int, int>& shape :
       {std::pair{300, 1}, std::pair{300, 40}, std::pair{300, 400}, std::pair{20, 4000}}) {
    const int events = shape.first;
    const int rows_each = shape.second;
    CAPTURE(rows_each);
    const Written one = write_events(std::nullopt, events, rows_each);
    REQUIRE_FALSE(one.error);
    for (const std::size_t min_bytes : {std::size_t{0}, cdc::stream::ChangeWriter::kRowsThreadMinBytes}) {
      CAPTURE(min_bytes);
      const Written two = write_events(min_bytes, events, rows_each);
      CHECK_FALSE(two.error);
      CHECK(two.rows == one.rows);
      CHECK(two.text.size() == one.text.size());
      CHECK(two.text == one.text);
    }
  }
}

TEST_CASE("rows thread: a row that does not decode fails as in one thread, after the same lines") {
  for (const int bad_row : {0, 57, 2999}) {
    CAPTURE(bad_row);
    const Written one = write_events(std::nullopt, 100, 30, bad_row);
    REQUIRE(one.error);
    CHECK(one.error->find("binlog.000003:") == 0);
    CHECK(one.error->find("WRITE_ROWS row ") != std::string::npos);
    CHECK(one.error->find(" of db.t: ") != std::string::npos);
    const Written two = write_events(0, 100, 30, bad_row);
    REQUIRE(two.error);
    CHECK(*two.error == *one.error);
    // What went out before the failure: the same lines, the bad row's own line not among them.
    CHECK(two.text.size() == one.text.size());
    CHECK(two.text == one.text);
    CHECK(two.text.find("\"id\":" + std::to_string(bad_row) + ",") == std::string::npos);
  }
}

TEST_CASE("rows thread: after discard(), bytes_flushed() counts every byte that went out") {
  const cdc::binlog::TableMap map = json_table();
  const int fd = ::memfd_create("rows", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  cdc::stream::ChangeWriter writer(fd, "memfd");
  writer.use_rows_thread(0);
  std::vector<std::uint8_t> rows;
  for (int r = 0; r < 400; ++r) add_row(rows, static_cast<std::uint32_t>(r), false);
  cdc::binlog::RowsEvent event;
  event.kind = cdc::binlog::RowsKind::write;
  event.column_count = 2;
  event.columns_before = kAllColumns;
  event.columns_after = kAllColumns;
  event.rows = rows;
  for (int e = 0; e < 40; ++e) {
    REQUIRE(writer.write_rows(event, map, cdc::stream::ChangePosition{"binlog.000003", 4, "", 0, 1, std::nullopt}, 1));
    REQUIRE(writer.flush_if_large());
  }
  writer.discard();
  // Handed-over pieces were written (a live stream on stdout then writes a discard line);
  // the rest was dropped.
  const auto size = static_cast<std::uint64_t>(::lseek(fd, 0, SEEK_END));
  CHECK(size > 0);
  CHECK(writer.bytes_flushed() == size);
  REQUIRE(writer.write_rows(event, map, cdc::stream::ChangePosition{"binlog.000003", 4, "", 0, 1, std::nullopt}, 1));
  REQUIRE(writer.flush());
  CHECK(writer.bytes_flushed() == static_cast<std::uint64_t>(::lseek(fd, 0, SEEK_END)));
  ::close(fd);
}
