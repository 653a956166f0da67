#include <doctest/doctest.h>

#include <atomic>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <simdjson.h>

#include "ndjson/reader.h"
#include "ndjson/utf8.h"
#include "ndjson/writer.h"
#include "util/fd_io.h"
#include "utf8_samples.h"

namespace {

using cdc::ndjson::Reader;
using cdc::ndjson::Writer;
using cdc::ndjson::is_valid_utf8;
using cdc::test::random_valid_utf8;


// An unlinked temp file holding content, positioned at its start.
class TempInput {
 public:
  explicit TempInput(std::string_view content) {
    char path[] = "/tmp/cdc_ndjson_test.XXXXXX";
    fd_ = ::mkstemp(path);
    REQUIRE(fd_ >= 0);
    ::unlink(path);
    REQUIRE(cdc::write_all(fd_, content, "temp file").has_value());
    REQUIRE(::lseek(fd_, 0, SEEK_SET) == 0);
  }
  TempInput(const TempInput&) = delete;
  TempInput& operator=(const TempInput&) = delete;
  ~TempInput() { ::close(fd_); }
  [[nodiscard]] int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

// Feeds content through a pipe chunk_bytes at a time and waits until the reader has drained
// each chunk before writing the next, so every read() sees at most one chunk: line breaks
// land at every possible offset of a block.
class PipeFeeder {
 public:
  PipeFeeder(std::string content, std::size_t chunk_bytes) : content_(std::move(content)) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    read_fd_ = fds[0];
    write_fd_ = fds[1];
    thread_ = std::thread([this, chunk_bytes] {
      for (std::size_t at = 0; at < content_.size() && !stop_; at += chunk_bytes) {
        if (!cdc::write_all(write_fd_, std::string_view(content_).substr(at, chunk_bytes), "pipe")) break;
        int queued = 0;
        while (!stop_ && ::ioctl(read_fd_, FIONREAD, &queued) == 0 && queued > 0) std::this_thread::yield();
      }
      ::close(write_fd_);
    });
  }
  PipeFeeder(const PipeFeeder&) = delete;
  PipeFeeder& operator=(const PipeFeeder&) = delete;
  ~PipeFeeder() {
    stop_ = true;
    thread_.join();
    ::close(read_fd_);
  }
  [[nodiscard]] int fd() const { return read_fd_; }

 private:
  std::string content_;
  int read_fd_ = -1;
  int write_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

struct Collected {
  std::vector<std::string> lines;
  std::vector<std::uint64_t> line_numbers;
  std::optional<cdc::Error> error;
};

Collected read_all(int fd, std::size_t max_line_bytes = Reader::kDefaultMaxLineBytes,
                   std::string name = "in.ndjson") {
  Reader reader(fd, std::move(name), max_line_bytes);
  Collected out;
  for (;;) {
    cdc::Result<bool> next = reader.next();
    if (!next) {
      out.error = next.error();
      break;
    }
    if (!*next) break;
    out.lines.emplace_back(reader.line());
    out.line_numbers.push_back(reader.line_number());
  }
  return out;
}

Collected read_text(std::string_view text, std::size_t max_line_bytes = Reader::kDefaultMaxLineBytes) {
  TempInput input(text);
  return read_all(input.fd(), max_line_bytes);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Reader

TEST_CASE("reader: empty input ends at once") {
  TempInput input("");
  Reader reader(input.fd(), "empty.ndjson");
  cdc::Result<bool> next = reader.next();
  REQUIRE(next.has_value());
  CHECK_FALSE(*next);
  CHECK(reader.line_number() == 0);
  CHECK(reader.input_name() == "empty.ndjson");
}

TEST_CASE("reader: several records with values and line numbers") {
  TempInput input("{\"a\":1}\n{\"b\":\"two\"}\n{\"c\":[true,null]}\n");
  Reader reader(input.fd(), "in.ndjson");
  REQUIRE(reader.next().value());
  CHECK(reader.line() == "{\"a\":1}");
  CHECK(reader.line_number() == 1);
  CHECK(reader.record()["a"].get_int64().value_unsafe() == 1);
  REQUIRE(reader.next().value());
  CHECK(reader.record()["b"].get_string().value_unsafe() == "two");
  CHECK(reader.line_number() == 2);
  REQUIRE(reader.next().value());
  CHECK(reader.record()["c"].get_array().size() == 2);
  CHECK(reader.line_number() == 3);
  CHECK_FALSE(reader.next().value());
  CHECK_FALSE(reader.next().value());
}

TEST_CASE("reader: blank and whitespace-only lines are skipped but counted") {
  const Collected got = read_text("\n{\"a\":1}\n   \n\t \r\n\n{\"b\":2}\n\n");
  CHECK_FALSE(got.error.has_value());
  CHECK(got.lines == std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"});
  CHECK(got.line_numbers == std::vector<std::uint64_t>{2, 6});
}

TEST_CASE("reader: CRLF line endings") {
  const Collected got = read_text("{\"a\":1}\r\n{\"b\":2}\r\n{\"c\":3}\r");
  CHECK_FALSE(got.error.has_value());
  CHECK(got.lines == std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "{\"c\":3}"});
}

TEST_CASE("reader: a 10 MiB line parses") {
  const std::string big(std::size_t{10} << 20, 'z');
  TempInput input("{\"small\":1}\n{\"big\":\"" + big + "\"}\n{\"after\":2}\n");
  Reader reader(input.fd(), "big.ndjson");
  REQUIRE(reader.next().value());
  REQUIRE(reader.next().value());
  CHECK(reader.line_number() == 2);
  CHECK(reader.record()["big"].get_string().value_unsafe() == big);
  REQUIRE(reader.next().value());
  CHECK(reader.record()["after"].get_int64().value_unsafe() == 2);
  CHECK_FALSE(reader.next().value());
}

TEST_CASE("reader: a line over the limit is rejected with its line number") {
  SUBCASE("the newline is already buffered") {
    const Collected got = read_text("{\"a\":1}\n{\"b\":\"0123456789\"}\n", 16);
    REQUIRE(got.error.has_value());
    CHECK(got.error->code == cdc::Errc::corrupt_input);
    CHECK(got.error->message == "in.ndjson:2: line longer than 16 bytes");
    CHECK(got.lines.size() == 1);
  }
  SUBCASE("no newline yet: stops reading instead of buffering the whole line") {
    const Collected got = read_text("{}\n\n{\"b\":\"" + std::string(300000, 'x') + "\"}\n", 100000);
    REQUIRE(got.error.has_value());
    CHECK(got.error->message == "in.ndjson:3: line longer than 100000 bytes");
  }
  SUBCASE("a line of exactly the limit is fine") {
    const Collected got = read_text("{\"b\":\"0123456789\"}\n", 18);
    CHECK_FALSE(got.error.has_value());
    CHECK(got.lines.size() == 1);
  }
}

TEST_CASE("reader: malformed JSON names input and line") {
  struct Case { const char* name; std::string text; std::string expected; };
  const Case cases[] = {
      {"bad atom", "{\"a\":1}\n{\"a\":tru}\n",
       "in.ndjson:2: malformed JSON: Problem while parsing an atom starting with the letter 't'"},
      {"missing value", "\n{\"a\":}\n{\"b\":1}\n",
       "in.ndjson:2: malformed JSON: The JSON document has an improper structure: missing or superfluous "
       "commas, braces, missing keys, etc."},
      {"two values on one line", "{\"a\":1} {\"b\":2}\n",
       "in.ndjson:1: malformed JSON: The JSON document has an improper structure: missing or superfluous "
       "commas, braces, missing keys, etc."},
      {"invalid UTF-8", "{\"a\":\"\xff\"}\n", "in.ndjson:1: malformed JSON: The input is not valid UTF-8"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const Collected got = read_text(c.text);
    REQUIRE(got.error.has_value());
    CHECK(got.error->code == cdc::Errc::corrupt_input);
    CHECK(got.error->message == c.expected);
  }
}

TEST_CASE("reader: every record must be an object") {
  struct Case { std::string_view line; std::string_view got; };
  const Case cases[] = {{"[1,2]", "array"}, {"\"s\"", "string"}, {"-1.5", "number"},
                        {"true", "boolean"}, {"null", "null"}};
  for (const Case& c : cases) {
    CAPTURE(c.line);
    const Collected got = read_text(std::string(c.line) + "\n");
    REQUIRE(got.error.has_value());
    CHECK(got.error->message == "in.ndjson:1: expected a JSON object, got " + std::string(c.got));
  }
}

TEST_CASE("reader: a torn last line is reported as torn") {
  SUBCASE("cut inside the object") {
    const Collected got = read_text("{\"a\":1}\n{\"b\":");
    REQUIRE(got.error.has_value());
    CHECK(got.lines.size() == 1);
    CHECK(got.error->code == cdc::Errc::corrupt_input);
    CHECK(got.error->message ==
          "in.ndjson:2: torn last line: input ends mid-record after 5 bytes (the writer was probably "
          "interrupted)");
  }
  SUBCASE("cut inside a multi-byte character") {
    const Collected got = read_text("{\"a\":\"\xe2\x82");
    REQUIRE(got.error.has_value());
    CHECK(got.error->message.starts_with("in.ndjson:1: torn last line: input ends mid-record after 8 bytes"));
  }
}

TEST_CASE("reader: a complete last line without newline is accepted") {
  const Collected got = read_text("{\"a\":1}\n{\"b\":2}");
  CHECK_FALSE(got.error.has_value());
  CHECK(got.lines == std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"});
  CHECK(read_text("{\"a\":1}\n  ").lines.size() == 1);  // trailing blanks are no record
}

TEST_CASE("reader: records spanning many small reads from a pipe") {
  std::mt19937 rng(3);
  Writer writer;
  std::vector<std::string> texts;
  for (int i = 0; i < 120; ++i) {
    texts.push_back(random_valid_utf8(rng, static_cast<std::size_t>(i % 17)));
    writer.begin_object();
    writer.field("i", i);
    writer.field("text", texts.back());
    writer.end_object();
    writer.end_record();
  }
  const std::string content(writer.buffered());
  // Byte-at-a-time costs a thread handoff per byte: feed only the first records.
  const std::string first_records = content.substr(0, content.find('\n', 2000) + 1);
  for (const std::size_t chunk : {std::size_t{1}, std::size_t{3}, std::size_t{7}, std::size_t{4096}}) {
    CAPTURE(chunk);
    PipeFeeder feeder(chunk == 1 ? first_records : content, chunk);
    Reader reader(feeder.fd(), "pipe");
    std::size_t count = 0;
    for (;;) {
      cdc::Result<bool> next = reader.next();
      REQUIRE(next.has_value());
      if (!*next) break;
      CHECK(reader.record()["i"].get_int64().value_unsafe() == static_cast<std::int64_t>(count));
      CHECK(reader.record()["text"].get_string().value_unsafe() == texts[count]);
      CHECK(reader.line_number() == count + 1);
      ++count;
    }
    if (chunk != 1) CHECK(count == texts.size());
  }
}

TEST_CASE("reader: read errors are Errc::io naming the input") {
  const int dir = ::open("/tmp", O_RDONLY | O_DIRECTORY);
  REQUIRE(dir >= 0);
  const Collected got = read_all(dir, Reader::kDefaultMaxLineBytes, "dir.ndjson");
  ::close(dir);
  REQUIRE(got.error.has_value());
  CHECK(got.error->code == cdc::Errc::io);
  CHECK(got.error->message == "dir.ndjson: read failed: Is a directory");
}

TEST_CASE("reader: errors are sticky and error_at_line uses the same format") {
  TempInput input("{\"a\":1}\n{\"a\":\"wrong type\"}\n[]\n{\"c\":3}\n");
  Reader reader(input.fd(), "s.ndjson");
  REQUIRE(reader.next().value());
  REQUIRE(reader.next().value());
  // A tool that finds a bad field in a well-formed record.
  const cdc::Error bad = reader.error_at_line("field a: expected an integer");
  CHECK(bad.code == cdc::Errc::corrupt_input);
  CHECK(bad.message == "s.ndjson:2: field a: expected an integer");
  const cdc::Result<bool> third = reader.next();
  REQUIRE_FALSE(third.has_value());
  CHECK(third.error().message == "s.ndjson:3: expected a JSON object, got array");
  CHECK(reader.line() == "[]");
  const cdc::Result<bool> again = reader.next();
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().message == third.error().message);
}

TEST_CASE("writer and reader round trip through a file") {
  Writer writer;
  for (int i = 0; i < 1000; ++i) {
    writer.begin_object();
    writer.field("v", 1);
    writer.field("seq", i);
    writer.field("name", fmt::format("row\t{}\n\"quoted\"", i));
    writer.field_base64("raw", fmt::format("{:c}{:c}", static_cast<char>(i), static_cast<char>(i * 7)));
    writer.end_object();
    writer.end_record();
  }
  TempInput input(writer.buffered());
  Reader reader(input.fd(), "rt.ndjson");
  int seen = 0;
  while (reader.next().value()) {
    CHECK(reader.record()["seq"].get_int64().value_unsafe() == seen);
    CHECK(reader.record()["name"].get_string().value_unsafe() == fmt::format("row\t{}\n\"quoted\"", seen));
    ++seen;
  }
  CHECK(seen == 1000);
}
