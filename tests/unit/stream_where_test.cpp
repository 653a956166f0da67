// cdc-stream --where (stream/row_filter.h): which rows of an event are written, and as what.
// An update whose images both match stays "u"; before only, a "d" of the before image; after
// only, a "c" of the after image; neither, no line. The same lines from the one-thread writer
// and the rows thread; a debezium output sees the converted ops as inserts and deletes; an
// event whose rows are all dropped writes nothing, not even the table line.
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "binlog/events/rows_event.h"
#include "binlog/events/table_map_event.h"
#include "filter/where_option.h"
#include "output/format.h"
#include "stream/change_writer.h"
#include "stream/row_filter.h"

namespace {

using cdc::filter::Truth;
using cdc::stream::RowVerdict;

// db.t(id INT PRIMARY KEY, v INT NULL), named and keyed as binlog_row_metadata=FULL logs it.
cdc::binlog::TableMap int_table() {
  cdc::binlog::TableMap map;
  map.database = "db";
  map.table = "t";
  map.column_names = {"id", "v"};
  map.primary_key = {0};
  map.columns = {{cdc::ColumnType::long_int, 0, false, false, 0}, {cdc::ColumnType::long_int, 0, false, true, 0}};
  map.generation = 3;
  return map;
}

// One FULL row image: id, then v (NULL when not given).
void add_image(std::vector<std::uint8_t>& rows, std::int32_t id, std::optional<std::int32_t> v) {
  rows.push_back(v ? 0x00 : 0x02);  // null bitmap: bit 1 is v
  const auto put = [&rows](std::int32_t value) {
    for (int i = 0; i < 4; ++i) rows.push_back(static_cast<std::uint8_t>(static_cast<std::uint32_t>(value) >> (8 * i)));
  };
  put(id);
  if (v) put(*v);
}

constexpr std::uint8_t kBothColumnsPresent[1] = {0x03};

struct Row {
  std::int32_t id;
  std::optional<std::int32_t> before;
  std::optional<std::int32_t> after;
};

// The lines of one rows event of `kind` under --where `where` (none: every row).
std::string write_event(cdc::binlog::RowsKind kind, const std::vector<Row>& rows, std::optional<std::string> where,
                        std::optional<std::size_t> rows_thread_min_bytes,
                        cdc::output::Format format = cdc::output::Format::ndjson, std::uint64_t* written = nullptr) {
  const cdc::binlog::TableMap map = int_table();
  std::vector<std::uint8_t> bytes;
  for (const Row& row : rows) {
    if (kind != cdc::binlog::RowsKind::write) add_image(bytes, row.id, row.before);
    if (kind != cdc::binlog::RowsKind::erase) add_image(bytes, row.id, row.after);
  }
  const int fd = ::memfd_create("where", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  {
    cdc::stream::ChangeWriter writer(fd, "memfd");
    if (format != cdc::output::Format::ndjson) {
      cdc::output::OutputOptions options;
      options.format = format;
      auto converter = cdc::output::make_converter(options);
      REQUIRE(converter.has_value());
      writer.set_converter(std::move(*converter), false);
    }
    if (rows_thread_min_bytes) writer.use_rows_thread(*rows_thread_min_bytes);
    if (where) {
      auto option = cdc::filter::parse_where_option(*where);
      REQUIRE(option.has_value());
      std::vector<cdc::filter::WhereOption> options;
      options.push_back(std::move(*option));
      writer.set_row_filters(std::move(options));
    }
    cdc::binlog::RowsEvent event;
    event.kind = kind;
    event.column_count = 2;
    event.columns_before = kBothColumnsPresent;
    event.columns_after = kBothColumnsPresent;
    event.rows = bytes;
    event.rows_offset = 120;
    auto count = writer.write_rows(event, map, cdc::stream::ChangePosition{"binlog.000001", 100, "", 0, 1, 5}, 1);
    REQUIRE(count.has_value());
    if (written != nullptr) *written = *count;
    REQUIRE(writer.finish().has_value());
  }
  const off_t size = ::lseek(fd, 0, SEEK_END);
  std::string text(static_cast<std::size_t>(size), '\0');
  REQUIRE(::pread(fd, text.data(), text.size(), 0) == size);
  ::close(fd);
  return text;
}

// The change lines' "op", "key", "before" and "after", one per line, without the rest.
std::string changes(const std::string& text) {
  std::istringstream lines(text);
  std::string out;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("{\"op\":\"table\"", 0) == 0) continue;
    const auto op = line.substr(7, 1);
    const auto key = line.find(",\"key\":");
    const auto pos = line.find(",\"pos\":");
    out += op + line.substr(key, pos - key) + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("where: the verdict on a row by its images' truths") {
  using cdc::binlog::RowsKind;
  CHECK(cdc::stream::row_verdict(RowsKind::write, Truth::unknown, Truth::is_true) == RowVerdict::keep);
  CHECK(cdc::stream::row_verdict(RowsKind::write, Truth::unknown, Truth::unknown) == RowVerdict::drop);
  CHECK(cdc::stream::row_verdict(RowsKind::erase, Truth::is_true, Truth::unknown) == RowVerdict::keep);
  CHECK(cdc::stream::row_verdict(RowsKind::erase, Truth::is_false, Truth::unknown) == RowVerdict::drop);
  for (const RowsKind update : {RowsKind::update, RowsKind::partial_update}) {
    CHECK(cdc::stream::row_verdict(update, Truth::is_true, Truth::is_true) == RowVerdict::keep);
    CHECK(cdc::stream::row_verdict(update, Truth::is_true, Truth::is_false) == RowVerdict::as_delete);
    CHECK(cdc::stream::row_verdict(update, Truth::is_true, Truth::unknown) == RowVerdict::as_delete);
    CHECK(cdc::stream::row_verdict(update, Truth::is_false, Truth::is_true) == RowVerdict::as_insert);
    CHECK(cdc::stream::row_verdict(update, Truth::unknown, Truth::is_true) == RowVerdict::as_insert);
    CHECK(cdc::stream::row_verdict(update, Truth::is_false, Truth::unknown) == RowVerdict::drop);
    CHECK(cdc::stream::row_verdict(update, Truth::unknown, Truth::unknown) == RowVerdict::drop);
  }
}

TEST_CASE("where: an update's transitions, from both writers") {
  // v >= 10: 1 stays out, 2 enters, 3 leaves, 4 stays in, 5 enters from NULL, 6 leaves to NULL.
  const std::vector<Row> rows = {{1, 5, 6},  {2, 5, 15},  {3, 15, 5},
                                 {4, 15, 20}, {5, std::nullopt, 10}, {6, 11, std::nullopt}};
  const std::string want =
      "c,\"key\":{\"id\":2},\"before\":null,\"after\":{\"id\":2,\"v\":15}\n"
      "d,\"key\":{\"id\":3},\"before\":{\"id\":3,\"v\":15},\"after\":null\n"
      "u,\"key\":{\"id\":4},\"before\":{\"id\":4,\"v\":15},\"after\":{\"id\":4,\"v\":20}\n"
      "c,\"key\":{\"id\":5},\"before\":null,\"after\":{\"id\":5,\"v\":10}\n"
      "d,\"key\":{\"id\":6},\"before\":{\"id\":6,\"v\":11},\"after\":null\n";
  std::uint64_t written = 0;
  const std::string one = write_event(cdc::binlog::RowsKind::update, rows, "db.t:v >= 10", std::nullopt,
                                      cdc::output::Format::ndjson, &written);
  CHECK(changes(one) == want);
  CHECK(written == 5);
  // The rows keep their index in the event: row 0 was dropped.
  CHECK(one.find("\"index\":0") == std::string::npos);
  CHECK(one.find("{\"op\":\"c\",\"v\":1,\"db\":\"db\",\"table\":\"t\",\"key\":{\"id\":2}") != std::string::npos);
  CHECK(one.find("\"index\":1,") != std::string::npos);
  CHECK(one.rfind("{\"op\":\"table\"", 0) == 0);
  for (const std::size_t min_bytes : {std::size_t{0}, cdc::stream::ChangeWriter::kRowsThreadMinBytes}) {
    CAPTURE(min_bytes);
    CHECK(write_event(cdc::binlog::RowsKind::update, rows, "db.t:v >= 10", min_bytes) == one);
  }
  // Without --where: every row, as updates.
  const std::string all = write_event(cdc::binlog::RowsKind::update, rows, std::nullopt, std::nullopt);
  CHECK(changes(all).find("c,") == std::string::npos);
  CHECK(write_event(cdc::binlog::RowsKind::update, rows, "db.other:v >= 10", std::nullopt) == all);
}

TEST_CASE("where: inserts and deletes by their one image, and an event of dropped rows writes nothing") {
  const std::vector<Row> inserts = {{1, std::nullopt, 5}, {2, std::nullopt, 50}, {3, std::nullopt, std::nullopt}};
  CHECK(changes(write_event(cdc::binlog::RowsKind::write, inserts, "db.t:v > 10 OR v IS NULL", 0)) ==
        "c,\"key\":{\"id\":2},\"before\":null,\"after\":{\"id\":2,\"v\":50}\n"
        "c,\"key\":{\"id\":3},\"before\":null,\"after\":{\"id\":3,\"v\":null}\n");
  const std::vector<Row> deletes = {{1, 5, std::nullopt}, {2, 50, std::nullopt}};
  CHECK(changes(write_event(cdc::binlog::RowsKind::erase, deletes, "db.t:NOT (v > 10)", std::nullopt)) ==
        "d,\"key\":{\"id\":1},\"before\":{\"id\":1,\"v\":5},\"after\":null\n");
  std::uint64_t written = 1;
  for (const std::optional<std::size_t> min_bytes : {std::optional<std::size_t>{}, std::optional<std::size_t>{0}}) {
    CHECK(write_event(cdc::binlog::RowsKind::write, inserts, "db.t:v = 7", min_bytes, cdc::output::Format::ndjson,
                      &written)
              .empty());
    CHECK(written == 0);
  }
}

TEST_CASE("where: a converted update is an insert or a delete in debezium too") {
  const std::vector<Row> rows = {{2, 5, 15}, {3, 15, 5}, {4, 15, 20}};
  const std::string text = write_event(cdc::binlog::RowsKind::update, rows, "db.t:v >= 10", std::nullopt,
                                       cdc::output::Format::debezium);
  const auto c = text.find("\"op\":\"c\"");
  const auto d = text.find("\"op\":\"d\"");
  const auto u = text.find("\"op\":\"u\"");
  REQUIRE(c != std::string::npos);
  REQUIRE(d != std::string::npos);
  REQUIRE(u != std::string::npos);
  CHECK(c < d);
  CHECK(d < u);
}

TEST_CASE("where: a --where that does not fit the table is a usage error naming the character") {
  const cdc::binlog::TableMap map = int_table();
  const int fd = ::memfd_create("where", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  cdc::stream::ChangeWriter writer(fd, "memfd");
  auto option = cdc::filter::parse_where_option("db.t:v = 1 OR nope = 2");
  REQUIRE(option.has_value());
  std::vector<cdc::filter::WhereOption> options;
  options.push_back(std::move(*option));
  writer.set_row_filters(std::move(options));
  std::vector<std::uint8_t> bytes;
  add_image(bytes, 1, 1);
  cdc::binlog::RowsEvent event;
  event.kind = cdc::binlog::RowsKind::write;
  event.column_count = 2;
  event.columns_before = kBothColumnsPresent;
  event.columns_after = kBothColumnsPresent;
  event.rows = bytes;
  auto written = writer.write_rows(event, map, cdc::stream::ChangePosition{"binlog.000001", 100, "", 0, 1, 5}, 1);
  REQUIRE_FALSE(written.has_value());
  CHECK(written.error().code == cdc::Errc::usage);
  CHECK(written.error().message.find("--where 'db.t:v = 1 OR nope = 2' on db.t (as its rows at binlog.000001:100 "
                                     "describe it): at character 10: no column `nope`") == 0);
  ::close(fd);
}
