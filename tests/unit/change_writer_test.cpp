#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "binlog/events/rows_event.h"
#include "binlog/events/table_map_event.h"
#include "output/converter.h"
#include "output/format.h"
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
  auto written = writer.write_rows(event, map, cdc::stream::ChangePosition{"binlog.000009", 400, "", 0, 1, 42}, 1);
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

// Commit lines enough to pass the 256 KiB buffer, flush_if_large() after each.
constexpr int kManyLines = 4000;
void write_many_lines(cdc::stream::ChangeWriter& writer) {
  for (int i = 0; i < kManyLines; ++i) {
    writer.write_commit("0-1-1", "binlog.000001", static_cast<std::uint64_t>(i), "0-1-1", 1, 1, 1, std::nullopt);
    REQUIRE(writer.flush_if_large());
  }
}

std::uint64_t file_size(int fd) {
  const off_t end = ::lseek(fd, 0, SEEK_END);
  return end < 0 ? 0 : static_cast<std::uint64_t>(end);
}

std::string written_text(int fd, cdc::stream::ChangeWriter& writer) {
  REQUIRE(writer.flush().has_value());
  std::string text(static_cast<std::size_t>(writer.bytes_flushed()), '\0');
  REQUIRE(::pread(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()));
  return text;
}

std::size_t count_of(const std::string& text, std::string_view what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

}  // namespace

TEST_CASE("change writer: the output stage holds a transaction bigger than the buffer until flush()") {
  const int fd = ::memfd_create("held", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  int drops = 0;
  cdc::stream::ChangeWriter writer(fd, "memfd");
  writer.set_converter(std::make_unique<PrefixConverter>(drops), true);
  write_many_lines(writer);
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
  CHECK(lines == kManyLines);
  // A transaction cut off: what was held, spilled or not, never reaches the output.
  write_many_lines(writer);
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
  write_many_lines(writer);
  // Handed to the conversion thread as the buffer filled: written without a flush().
  for (int waited = 0; file_size(fd) == 0 && waited < 5000; ++waited) ::usleep(1000);
  CHECK(file_size(fd) > 0);
  REQUIRE(writer.flush());
  CHECK(writer.bytes_flushed() == file_size(fd));
  CHECK(count_of(written_text(fd, writer), "X{\"op\":\"commit\"") == kManyLines);
  ::close(fd);
}

namespace {

// Change lines of two tables through a format, in the thread of the caller (holding, as on
// standard output) or on the conversion thread: each event's rows, a commit after each
// transaction, flush_if_large after each event and flush() now and then.
std::string formatted(cdc::output::Format format, bool on_thread, bool with_discard) {
  const auto column = [](cdc::ColumnType type, std::uint16_t meta, std::uint16_t charset) {
    return cdc::Column{type, meta, false, type != cdc::ColumnType::long_int, charset};
  };
  cdc::binlog::TableMap items;
  items.database = "shop";
  items.table = "items";
  items.columns = {column(cdc::ColumnType::long_int, 0, 0), column(cdc::ColumnType::varchar, 40, 45)};
  items.column_names = {"id", "name"};
  items.primary_key = {0};
  items.generation = 1;
  cdc::binlog::TableMap notes = items;
  notes.table = "notes";
  notes.columns[1] = column(cdc::ColumnType::varchar, 40, 63);  // binary: base64 in the formats
  notes.generation = 2;
  static const std::uint8_t kAll[1] = {0x03};
  // One row image: null bitmap, id, the name's length and bytes.
  const auto image = [](std::vector<std::uint8_t>& out, std::uint32_t id, const std::string& name) {
    out.push_back(0x00);
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(id >> (8 * i)));
    out.push_back(static_cast<std::uint8_t>(name.size()));
    out.insert(out.end(), name.begin(), name.end());
  };
  cdc::output::OutputOptions options;
  options.format = format;
  options.kafka_key = true;
  auto converter = cdc::output::make_converter(options);
  REQUIRE(converter);
  const int fd = ::memfd_create("formatted", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  cdc::stream::ChangeWriter writer(fd, "memfd");
  writer.set_converter(std::move(*converter), !on_thread);
  std::uint64_t offset = 4;
  std::uint64_t checkpoint = 0;
  for (std::uint32_t transaction = 1; transaction <= 400; ++transaction) {
    const std::string gtid = "0-1-" + std::to_string(transaction);
    for (const cdc::binlog::TableMap* map : {&items, &notes}) {
      for (const auto kind : {cdc::binlog::RowsKind::write, cdc::binlog::RowsKind::update, cdc::binlog::RowsKind::erase}) {
        std::vector<std::uint8_t> rows;
        for (std::uint32_t row = 0; row < 5; ++row) {
          const std::uint32_t id = transaction * 10 + row;
          const std::string name = "n" + std::to_string(id) + std::string(row * 7, 'x');
          // An update moves every other row to a new key.
          if (kind == cdc::binlog::RowsKind::update) image(rows, id, name);
          image(rows, kind == cdc::binlog::RowsKind::update && row % 2 == 1 ? id + 100000 : id,
                kind == cdc::binlog::RowsKind::update ? name + "!" : name);
        }
        cdc::binlog::RowsEvent event;
        event.kind = kind;
        event.column_count = 2;
        event.columns_before = kAll;
        event.columns_after = kAll;
        event.rows = rows;
        offset += 100;
        auto done = writer.write_rows(event, *map, cdc::stream::ChangePosition{"binlog.000001", offset, gtid, 0, 1, 9},
                                      1700000000 + transaction);
        REQUIRE_MESSAGE(done.has_value(), done.error().message);
        REQUIRE(writer.flush_if_large());
      }
    }
    writer.write_commit(gtid, "binlog.000001", offset + 50, gtid, 1700000000 + transaction, 30, 30, transaction);
    if (with_discard && transaction == 201) {
      // A lost connection: what came after the last flush() goes, and the output is cut back
      // to it, as stream::Checkpoint::roll_back does.
      writer.discard();
      REQUIRE(::ftruncate(fd, static_cast<off_t>(checkpoint)) == 0);
      REQUIRE(::lseek(fd, static_cast<off_t>(checkpoint), SEEK_SET) >= 0);
      writer.set_bytes_flushed(checkpoint);
    }
    if (transaction % 100 == 0 || (with_discard && transaction == 200)) {
      REQUIRE(writer.flush());
      checkpoint = writer.bytes_flushed();
    }
  }
  std::string text = written_text(fd, writer);
  CHECK(writer.bytes_flushed() == file_size(fd));
  ::close(fd);
  return text;
}

}  // namespace

TEST_CASE("change writer: the conversion thread writes what the converter writes in the caller's thread") {
  for (const auto format : {cdc::output::Format::debezium, cdc::output::Format::canal, cdc::output::Format::maxwell}) {
    CAPTURE(cdc::output::format_name(format));
    const std::string here = formatted(format, false, false);
    CHECK(count_of(here, "\n") > 1000);
    CHECK(formatted(format, true, false) == here);
    // A discard on the thread's path drops what the caller's path drops: transaction 201.
    // (Canal's message ids count the messages converted, which the caller's path did convert.)
    const std::string with_discard = formatted(format, true, true);
    if (format != cdc::output::Format::canal) CHECK(with_discard == formatted(format, false, true));
    // (Each transaction's time, in every format's ts: 1700000000 + its number.)
    CHECK(count_of(with_discard, "1700000201") == 0);
    CHECK(count_of(with_discard, "1700000200") > 0);
    CHECK(count_of(with_discard, "1700000202") > 0);
  }
}

// The table line: before a table's first change, not again while its description holds, again
// after it changed (a new TABLE_MAP after a DDL) and after a discard (the line may be gone).
TEST_CASE("change writer: a table line before the first change of each description, server_id and thread") {
  cdc::binlog::TableMap map;
  map.database = "shop";
  map.table = "t";
  map.columns = {{cdc::ColumnType::long_int, 0, false, false, 0}};
  map.column_names = {"id"};
  map.primary_key = {0};
  map.generation = 101;
  const std::vector<std::uint8_t> rows = {0x00, 0x07, 0x00, 0x00, 0x00};  // null bitmap, id = 7
  static const std::uint8_t kAll[1] = {0x01};
  cdc::binlog::RowsEvent event;
  event.kind = cdc::binlog::RowsKind::write;
  event.column_count = 1;
  event.columns_before = kAll;
  event.columns_after = kAll;
  event.rows = rows;
  const int fd = ::memfd_create("described", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  cdc::stream::ChangeWriter writer(fd, "memfd");
  const auto write = [&](std::uint64_t offset, std::optional<std::uint32_t> thread) {
    auto done = writer.write_rows(event, map, cdc::stream::ChangePosition{"binlog.000003", offset, "0-1-9", 0, 7, thread},
                                  1700000000);
    REQUIRE_MESSAGE(done.has_value(), done.error().message);
  };
  write(400, 42);
  write(500, std::nullopt);
  std::string text = written_text(fd, writer);
  CHECK(text ==
        R"j({"op":"table","v":1,"db":"shop","table":"t","columns":[{"name":"id","type":"int","nullable":false}],)j"
        R"j("key":["id"],"pos":{"file":"binlog.000003","offset":400,"gtid":"0-1-9"},"ts_ms":1700000000000})j"
        "\n"
        R"j({"op":"c","v":1,"db":"shop","table":"t","key":{"id":7},"before":null,"after":{"id":7},)j"
        R"j("pos":{"file":"binlog.000003","offset":400,"index":0,"gtid":"0-1-9"},"server_id":7,"thread":42,)j"
        R"j("ts_ms":1700000000000})j"
        "\n"
        R"j({"op":"c","v":1,"db":"shop","table":"t","key":{"id":7},"before":null,"after":{"id":7},)j"
        R"j("pos":{"file":"binlog.000003","offset":500,"index":0,"gtid":"0-1-9"},"server_id":7,"thread":null,)j"
        R"j("ts_ms":1700000000000})j"
        "\n");

  // The same description from a new decode of the map (a new file): no new line.
  map.generation = 102;
  write(600, 42);
  CHECK(count_of(written_text(fd, writer), R"("op":"table")") == 1);

  // ALTER TABLE t MODIFY id BIGINT UNSIGNED: the next change is preceded by the new description.
  map.columns = {{cdc::ColumnType::longlong, 0, true, false, 0}};
  map.has_signedness = true;
  map.generation = 103;
  const std::vector<std::uint8_t> wide_rows = {0x00, 0x07, 0, 0, 0, 0, 0, 0, 0};
  event.rows = wide_rows;
  write(700, 42);
  text = written_text(fd, writer);
  CHECK(count_of(text, R"("op":"table")") == 2);
  CHECK(text.find(R"({"name":"id","type":"bigint unsigned","nullable":false}],"key":["id"],"pos":{"file":"binlog.000003","offset":700,)") !=
        std::string::npos);

  // A discard drops what is buffered, table lines included: the next change describes again.
  write(800, 42);
  writer.discard();
  write(900, 42);
  text = written_text(fd, writer);
  CHECK(count_of(text, R"("op":"table")") == 3);
  CHECK(text.find(R"("pos":{"file":"binlog.000003","offset":900,"gtid":"0-1-9"})") != std::string::npos);
  ::close(fd);
}
