#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "binlog/events/rows_event.h"
#include "binlog/events/table_map_event.h"
#include "stream/change_writer.h"

// Found by the binlog fuzzer: a rows event whose images name no column has rows that take no
// bytes, so reading them never ended. It is corrupt, and must say so.
TEST_CASE("change writer: rows with no present columns are a corrupt event, not an endless loop") {
  cdc::binlog::TableMap map;
  map.database = "db";
  map.table = "t";
  map.columns = {{cdc::ColumnType::long_int, 0, false, false, 0},
                 {cdc::ColumnType::long_int, 0, false, false, 0}};
  const std::vector<std::uint8_t> rows = {0x00, 0x01, 0x02};
  static const std::uint8_t kNoColumns[1] = {0xfc};  // bits only past the 2 columns
  cdc::binlog::RowsEvent event;
  event.kind = cdc::binlog::RowsKind::write;
  event.column_count = 2;
  event.columns_before = kNoColumns;
  event.columns_after = kNoColumns;
  event.rows = rows;
  event.rows_offset = 500;
  const int fd = ::memfd_create("rows", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  cdc::stream::ChangeWriter writer(fd, "memfd");
  auto written = writer.write_rows(event, map, cdc::stream::ChangePosition{"binlog.000009", 400, "", 0}, 1);
  REQUIRE_FALSE(written.has_value());
  CHECK(written.error().code == cdc::Errc::corrupt_input);
  CHECK(written.error().message ==
        "binlog.000009:400: rows event for db.t has 3 bytes of rows but no columns in its images");
  ::close(fd);
}

// The lines a live stream writes about itself, as cdc-stream(1) documents them.
TEST_CASE("change writer: span and discard lines") {
  const int fd = ::memfd_create("lines", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  cdc::stream::ChangeWriter writer(fd, "memfd");
  writer.write_span_start("0-1-10");
  writer.write_discard("0-1-11", cdc::gtid::FilePosition{"binlog.000002", 900}, "Lost connection", 1700000000);
  writer.write_discard("", cdc::gtid::FilePosition{"binlog.000002", 1300}, "gone", 1);
  writer.write_span_end("0-1-12", cdc::gtid::FilePosition{"binlog.000002", 1500}, "0-1-12");
  writer.write_span_end("0-1-12", std::nullopt, "0-1-12");
  REQUIRE(writer.flush().has_value());
  std::string text(static_cast<std::size_t>(writer.bytes_flushed()), '\0');
  REQUIRE(::pread(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()));
  CHECK(text ==
        "{\"op\":\"span_start\",\"v\":1,\"position\":\"0-1-10\"}\n"
        "{\"op\":\"discard\",\"v\":1,\"gtid\":\"0-1-11\",\"pos\":{\"file\":\"binlog.000002\",\"offset\":900},"
        "\"reason\":\"Lost connection\",\"ts_ms\":1700000000000}\n"
        "{\"op\":\"discard\",\"v\":1,\"gtid\":null,\"pos\":{\"file\":\"binlog.000002\",\"offset\":1300},"
        "\"reason\":\"gone\",\"ts_ms\":1000}\n"
        "{\"op\":\"span_end\",\"v\":1,\"position\":\"0-1-12\",\"pos\":{\"file\":\"binlog.000002\",\"offset\":1500},"
        "\"until\":\"0-1-12\"}\n"
        "{\"op\":\"span_end\",\"v\":1,\"position\":\"0-1-12\",\"pos\":null,\"until\":\"0-1-12\"}\n");
  ::close(fd);
}

namespace {

// A format for the output stage's mechanics: each line as "X" + line; counts drop_held().
class PrefixConverter final : public cdc::output::Converter {
 public:
  explicit PrefixConverter(int& drops) : drops_(drops) {}
  cdc::Result<void> convert(std::string_view line, cdc::ndjson::Writer& out) override {
    out.raw_value("X" + std::string(line));
    out.end_record();
    return {};
  }
  cdc::Result<void> finish(cdc::ndjson::Writer&) override { return {}; }
  void drop_held() noexcept override { ++drops_; }

 private:
  int& drops_;
};

std::uint64_t file_size(int fd) {
  const off_t end = ::lseek(fd, 0, SEEK_END);
  return end < 0 ? 0 : static_cast<std::uint64_t>(end);
}

}  // namespace

TEST_CASE("change writer: the output stage holds a transaction bigger than the buffer until flush()") {
  const int fd = ::memfd_create("held", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  int drops = 0;
  cdc::stream::ChangeWriter writer(fd, "memfd");
  writer.set_converter(std::make_unique<PrefixConverter>(drops), true);
  constexpr int kLines = 4000;  // past the 256 KiB buffer
  for (int i = 0; i < kLines; ++i) {
    writer.write_commit("0-1-1", "binlog.000001", static_cast<std::uint64_t>(i), "0-1-1", 1, 1);
    REQUIRE(writer.flush_if_large());
  }
  CHECK(file_size(fd) == 0);  // spilled, not written
  CHECK(writer.bytes_flushed() == 0);
  REQUIRE(writer.flush());
  const std::uint64_t size = file_size(fd);
  CHECK(writer.bytes_flushed() == size);
  std::string text(static_cast<std::size_t>(size), '\0');
  REQUIRE(::pread(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()));
  std::size_t lines = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    CHECK(text[at] == 'X');
    CHECK(text.compare(at, 16, "X{\"op\":\"commit\",") == 0);
    at = text.find('\n', at) + 1;
    ++lines;
  }
  CHECK(lines == kLines);
  // A transaction cut off: what was held, spilled or not, never reaches the output.
  for (int i = 0; i < kLines; ++i) {
    writer.write_commit("0-1-2", "binlog.000001", 1, "0-1-2", 1, 1);
    REQUIRE(writer.flush_if_large());
  }
  writer.discard();
  CHECK(drops == 1);
  REQUIRE(writer.flush());
  CHECK(file_size(fd) == size);
  CHECK(writer.bytes_flushed() == size);
  ::close(fd);
}

TEST_CASE("change writer: without holding, the output stage writes big transactions as they grow") {
  const int fd = ::memfd_create("streamed", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  int drops = 0;
  cdc::stream::ChangeWriter writer(fd, "memfd");
  writer.set_converter(std::make_unique<PrefixConverter>(drops), false);
  for (int i = 0; i < 4000; ++i) {
    writer.write_commit("0-1-1", "binlog.000001", 1, "0-1-1", 1, 1);
    REQUIRE(writer.flush_if_large());
  }
  CHECK(file_size(fd) > 0);
  CHECK(writer.bytes_flushed() == file_size(fd));
  ::close(fd);
}
