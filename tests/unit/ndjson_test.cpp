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

namespace {

using cdc::ndjson::Reader;
using cdc::ndjson::Writer;
using cdc::ndjson::is_valid_utf8;

constexpr std::string_view kFffd = "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER

// The JSON text of one string value, quotes included.
std::string json_string(std::string_view text) {
  Writer writer;
  writer.string(text);
  return std::string(writer.buffered());
}

// A string value as written, without its quotes: what the escaping tables compare.
std::string escaped(std::string_view text) {
  const std::string json = json_string(text);
  REQUIRE(json.size() >= 2);
  return json.substr(1, json.size() - 2);
}

std::string base64(std::string_view bytes) {
  Writer writer;
  writer.string_base64(bytes);
  const std::string json(writer.buffered());
  return json.substr(1, json.size() - 2);
}

// Text that uses every code point class: ASCII (controls too), 2-, 3- and 4-byte forms.
std::string random_valid_utf8(std::mt19937& rng, std::size_t code_points) {
  std::string out;
  std::uniform_int_distribution<int> kind(0, 3);
  for (std::size_t i = 0; i < code_points; ++i) {
    std::uint32_t cp = 0;
    switch (kind(rng)) {
      case 0: cp = std::uniform_int_distribution<std::uint32_t>(0, 0x7F)(rng); break;
      case 1: cp = std::uniform_int_distribution<std::uint32_t>(0x80, 0x7FF)(rng); break;
      case 2:
        do cp = std::uniform_int_distribution<std::uint32_t>(0x800, 0xFFFF)(rng);
        while (cp >= 0xD800 && cp <= 0xDFFF);
        break;
      default: cp = std::uniform_int_distribution<std::uint32_t>(0x10000, 0x10FFFF)(rng); break;
    }
    const auto byte = [](std::uint32_t v) { return static_cast<char>(static_cast<unsigned char>(v)); };
    if (cp < 0x80) {
      out += byte(cp);
    } else if (cp < 0x800) {
      out += byte(0xC0 | (cp >> 6));
      out += byte(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += byte(0xE0 | (cp >> 12));
      out += byte(0x80 | ((cp >> 6) & 0x3F));
      out += byte(0x80 | (cp & 0x3F));
    } else {
      out += byte(0xF0 | (cp >> 18));
      out += byte(0x80 | ((cp >> 12) & 0x3F));
      out += byte(0x80 | ((cp >> 6) & 0x3F));
      out += byte(0x80 | (cp & 0x3F));
    }
  }
  return out;
}

// Mostly-broken byte soup built from pieces that hit each branch of the validator.
std::string random_utf8_soup(std::mt19937& rng) {
  static const std::vector<std::string_view> pieces = {
      "a", "\x7f", "\"", "\x01", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\x80", "\xbf", "\xc0", "\xc1",
      "\xc3", "\xe2\x82", "\xe0\x80", "\xed\xa0\x80", "\xed\x9f\xbf", "\xf4\x90", "\xf4\x8f\xbf\xbf", "\xf5",
      "\xff", "\xf0", "\xf0\x9f", "0123456789abcdef"};
  std::string out;
  const std::size_t count = std::uniform_int_distribution<std::size_t>(0, 12)(rng);
  for (std::size_t i = 0; i < count; ++i) {
    out += pieces[std::uniform_int_distribution<std::size_t>(0, pieces.size() - 1)(rng)];
  }
  return out;
}

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
// Writer: escaping and the invalid UTF-8 policy

TEST_CASE("writer escapes quote and backslash but not slash") {
  CHECK(json_string(R"(say "hi" \ a/b)") == R"("say \"hi\" \\ a/b")");
}

TEST_CASE("writer escapes every control character U+0000..U+001F") {
  for (unsigned c = 0; c < 0x20; ++c) {
    CAPTURE(c);
    std::string expected;
    switch (c) {
      case 0x08: expected = "\\b"; break;
      case 0x09: expected = "\\t"; break;
      case 0x0A: expected = "\\n"; break;
      case 0x0C: expected = "\\f"; break;
      case 0x0D: expected = "\\r"; break;
      default: expected = fmt::format("\\u{:04x}", c);
    }
    const std::string one(1, static_cast<char>(c));
    CHECK(escaped(one) == expected);
    // Inside a run, and inside the 8-byte fast path.
    CHECK(escaped("ab" + one + "cd") == "ab" + expected + "cd");
    CHECK(escaped("0123456789" + one + "0123456789") == "0123456789" + expected + "0123456789");
  }
}

TEST_CASE("writer passes DEL and valid multi-byte UTF-8 through") {
  struct Case {
    const char* name;
    std::string_view text;
  };
  const Case cases[] = {
      {"DEL", "\x7f"},
      {"U+0080 first 2-byte", "\xc2\x80"},
      {"U+00E9 e acute", "\xc3\xa9"},
      {"U+07FF last 2-byte", "\xdf\xbf"},
      {"U+0800 first 3-byte", "\xe0\xa0\x80"},
      {"U+20AC euro", "\xe2\x82\xac"},
      {"U+D7FF below surrogates", "\xed\x9f\xbf"},
      {"U+E000 above surrogates", "\xee\x80\x80"},
      {"U+FFFF last 3-byte", "\xef\xbf\xbf"},
      {"U+10000 first 4-byte", "\xf0\x90\x80\x80"},
      {"U+1F600 emoji", "\xf0\x9f\x98\x80"},
      {"U+10FFFF last code point", "\xf4\x8f\xbf\xbf"},
      {"mixed text", "na\xc3\xafve caf\xc3\xa9 \xe2\x82\xac 5 \xf0\x9f\x98\x80!"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(is_valid_utf8(c.text));
    CHECK(escaped(c.text) == c.text);
  }
}

TEST_CASE("writer replaces each maximal ill-formed subsequence with one U+FFFD") {
  const std::string r(kFffd);
  struct Case {
    const char* name;
    std::string_view input;
    std::string expected;
  };
  const Case cases[] = {
      {"overlong 2-byte C0 80", "\xc0\x80", r + r},
      {"overlong 2-byte C1 BF", "\xc1\xbf", r + r},
      {"overlong 3-byte E0 80 80", "\xe0\x80\x80", r + r + r},
      {"overlong 3-byte E0 9F BF", "\xe0\x9f\xbf", r + r + r},
      {"overlong 4-byte F0 80 80 80", "\xf0\x80\x80\x80", r + r + r + r},
      {"overlong 4-byte F0 8F BF BF", "\xf0\x8f\xbf\xbf", r + r + r + r},
      {"surrogate ED A0 80 (U+D800)", "\xed\xa0\x80", r + r + r},
      {"surrogate ED BF BF (U+DFFF)", "\xed\xbf\xbf", r + r + r},
      {"above U+10FFFF F4 90 80 80", "\xf4\x90\x80\x80", r + r + r + r},
      {"F5 lead", "\xf5\x80\x80\x80", r + r + r + r},
      {"F8..FF bytes", "\xf8\xfb\xfc\xfe\xff", r + r + r + r + r},
      {"stray continuation 80", "\x80", r},
      {"stray continuations between ASCII", "a\x80\xbf" "b", "a" + r + r + "b"},
      {"truncated E2 82 at end", "x\xe2\x82", "x" + r},
      {"truncated E2 82 in the middle", "\xe2\x82" "A", r + "A"},
      {"truncated E2 82 before a full euro", "\xe2\x82\xe2\x82\xac", r + "\xe2\x82\xac"},
      {"truncated 4-byte F0 9F 98 at end", "\xf0\x9f\x98", r},
      {"truncated 4-byte F0 9F before ASCII", "\xf0\x9f" "ab", r + "ab"},
      {"lone lead C3 at end", "\xc3", r},
      {"lone lead C3 before e acute", "\xc3\xc3\xa9", r + "\xc3\xa9"},
      {"invalid byte before an escape", "\xff\"", r + "\\\""},
      {"invalid byte inside a long ASCII run", "0123456789\xff" "0123456789", "0123456789" + r + "0123456789"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK_FALSE(is_valid_utf8(c.input));
    const std::string out = escaped(c.input);
    CHECK(out == c.expected);
    CHECK(is_valid_utf8(out));
  }
}

TEST_CASE("is_valid_utf8 agrees with simdjson's validator") {
  std::mt19937 rng(20240501);
  for (int i = 0; i < 20000; ++i) {
    std::string text = random_utf8_soup(rng);
    CAPTURE(text);
    CHECK(is_valid_utf8(text) == simdjson::validate_utf8(text.data(), text.size()));
  }
  CHECK(is_valid_utf8(""));
  CHECK(is_valid_utf8(random_valid_utf8(rng, 5000)));
}

TEST_CASE("writer output of any bytes is valid UTF-8 that simdjson accepts") {
  std::mt19937 rng(7);
  simdjson::dom::parser parser;
  for (int i = 0; i < 5000; ++i) {
    const std::string text = random_utf8_soup(rng);
    CAPTURE(text);
    const std::string json = json_string(text);
    CHECK(is_valid_utf8(json));
    std::string_view parsed;
    REQUIRE(parser.parse(json).get_string().get(parsed) == simdjson::SUCCESS);
    if (is_valid_utf8(text)) CHECK(parsed == text);
  }
}

TEST_CASE("writer escapes keys like values") {
  Writer writer;
  writer.begin_object();
  writer.field("a\"b\n\xff", 1);
  writer.end_object();
  CHECK(writer.buffered() == "{\"a\\\"b\\n\xEF\xBF\xBD\":1}");
}

// ---------------------------------------------------------------------------------------------
// Writer: other value kinds

TEST_CASE("writer base64: RFC 4648 vectors, padding for 0..4 bytes") {
  struct Case {
    std::string_view input;
    std::string_view expected;
  };
  const Case cases[] = {
      {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.input);
    CHECK(base64(c.input) == c.expected);
  }
}

TEST_CASE("writer base64 of all 256 byte values") {
  std::vector<std::byte> bytes(256);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>(i);
  // python3 -c "import base64;print(base64.b64encode(bytes(range(256))).decode())"
  constexpr std::string_view expected =
      "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZH"
      "SElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6P"
      "kJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX"
      "2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/w==";
  Writer writer;
  writer.string_base64(bytes);
  CHECK(writer.buffered() == "\"" + std::string(expected) + "\"");
}

TEST_CASE("writer integers at the limits") {
  const auto text = [](auto write) {
    Writer writer;
    write(writer);
    return std::string(writer.buffered());
  };
  CHECK(text([](Writer& w) { w.integer(std::numeric_limits<std::int64_t>::min()); }) == "-9223372036854775808");
  CHECK(text([](Writer& w) { w.integer(std::numeric_limits<std::int64_t>::max()); }) == "9223372036854775807");
  CHECK(text([](Writer& w) { w.integer(0); }) == "0");
  CHECK(text([](Writer& w) { w.integer(-1); }) == "-1");
  CHECK(text([](Writer& w) { w.unsigned_integer(std::numeric_limits<std::uint64_t>::max()); }) ==
        "18446744073709551615");
  CHECK(text([](Writer& w) { w.raw_number("-12345678901234567890.000100e-3"); }) ==
        "-12345678901234567890.000100e-3");
}

TEST_CASE("writer doubles: shortest round-trip text, non-finite as null") {
  struct Case {
    const char* name;
    double value;
    std::string_view expected;
  };
  const Case cases[] = {
      {"0.1", 0.1, "0.1"},
      {"1e300", 1e300, "1e+300"},
      {"negative zero keeps its sign", -0.0, "-0"},
      {"integral value", 1.0, "1"},
      {"smallest subnormal", 5e-324, "5e-324"},
      {"largest", DBL_MAX, "1.7976931348623157e+308"},
      {"NaN", std::nan(""), "null"},
      {"+Inf", std::numeric_limits<double>::infinity(), "null"},
      {"-Inf", -std::numeric_limits<double>::infinity(), "null"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    Writer writer;
    writer.floating(c.value);
    CHECK(writer.buffered() == c.expected);
  }
}

TEST_CASE("writer floats print the float's own shortest form") {
  struct Case {
    const char* name;
    float value;
    std::string_view expected;
  };
  const Case cases[] = {
      {"0.1f", 0.1f, "0.1"},
      {"FLT_MAX", FLT_MAX, "3.4028235e+38"},
      {"1.5f", 1.5f, "1.5"},
      {"NaN", std::numeric_limits<float>::quiet_NaN(), "null"},
      {"-Inf", -std::numeric_limits<float>::infinity(), "null"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    Writer writer;
    writer.floating(c.value);
    CHECK(writer.buffered() == c.expected);
  }
}

TEST_CASE("writer doubles and floats parse back to the same bits") {
  std::mt19937_64 rng(99);
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    float f;
    const auto bits32 = static_cast<std::uint32_t>(bits >> 32);
    std::memcpy(&f, &bits32, sizeof f);
    if (std::isfinite(d)) {
      Writer writer;
      writer.floating(d);
      double back = 0;
      const std::string_view text = writer.buffered();
      CAPTURE(text);
      REQUIRE(std::from_chars(text.data(), text.data() + text.size(), back).ec == std::errc{});
      CHECK(std::memcmp(&back, &d, sizeof d) == 0);
    }
    if (std::isfinite(f)) {
      Writer writer;
      writer.floating(f);
      float back = 0;
      const std::string_view text = writer.buffered();
      CAPTURE(text);
      REQUIRE(std::from_chars(text.data(), text.data() + text.size(), back).ec == std::errc{});
      CHECK(std::memcmp(&back, &f, sizeof f) == 0);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Writer: structure and buffer handling

TEST_CASE("writer inserts commas and tracks nesting") {
  Writer writer;
  writer.begin_object();
  writer.field("a", 1);
  writer.key("b");
  writer.begin_array();
  writer.integer(1);
  writer.string("two");
  writer.begin_object();
  writer.field_null("c");
  writer.end_object();
  writer.begin_array();
  writer.end_array();
  writer.end_array();
  writer.key("d");
  writer.begin_object();
  writer.end_object();
  writer.field("e", true);
  writer.end_object();
  writer.end_record();
  CHECK(writer.buffered() == "{\"a\":1,\"b\":[1,\"two\",{\"c\":null},[]],\"d\":{},\"e\":true}\n");
}

TEST_CASE("writer nests to kMaxDepth") {
  Writer writer;
  for (std::size_t i = 0; i < Writer::kMaxDepth; ++i) writer.begin_array();
  for (std::size_t i = 0; i < Writer::kMaxDepth; ++i) writer.end_array();
  writer.end_record();
  CHECK(writer.buffered() == std::string(Writer::kMaxDepth, '[') + std::string(Writer::kMaxDepth, ']') + "\n");
}

TEST_CASE("writer field overloads pick the right JSON type") {
  Writer writer;
  const std::string owned = "owned";
  const std::byte blob[] = {std::byte{0xff}, std::byte{0x00}};
  writer.begin_object();
  writer.field("lit", "text");
  writer.field("str", owned);
  writer.field("int", -5);
  writer.field("u8", std::uint8_t{200});
  writer.field("u64", std::numeric_limits<std::uint64_t>::max());
  writer.field("bool", false);
  writer.field("null", nullptr);
  writer.field("dbl", 2.5);
  writer.field("flt", 0.1f);
  writer.field_base64("blob", blob);
  writer.field_raw_number("dec", "12.50");
  writer.end_object();
  writer.end_record();
  CHECK(writer.buffered() ==
        "{\"lit\":\"text\",\"str\":\"owned\",\"int\":-5,\"u8\":200,\"u64\":18446744073709551615,"
        "\"bool\":false,\"null\":null,\"dbl\":2.5,\"flt\":0.1,\"blob\":\"/wA=\",\"dec\":12.50}\n");
}

TEST_CASE("writer ends each record with exactly one newline") {
  Writer writer;
  for (int i = 0; i < 3; ++i) {
    writer.begin_object();
    writer.field("i", i);
    writer.end_object();
    writer.end_record();
  }
  CHECK(writer.buffered() == "{\"i\":0}\n{\"i\":1}\n{\"i\":2}\n");
}

TEST_CASE("writer abandon_record drops only the record in progress") {
  Writer writer;
  writer.begin_object();
  writer.field("kept", 1);
  writer.end_object();
  writer.end_record();
  writer.begin_object();
  writer.key("half");
  writer.begin_array();
  writer.integer(2);
  writer.abandon_record();
  writer.begin_object();
  writer.field("next", 3);
  writer.end_object();
  writer.end_record();
  CHECK(writer.buffered() == "{\"kept\":1}\n{\"next\":3}\n");
}

TEST_CASE("writer output parsed by simdjson equals the input") {
  std::mt19937 rng(12345);
  simdjson::dom::parser parser;
  std::string all_bytes_below_0x80;
  for (int c = 0; c < 0x80; ++c) all_bytes_below_0x80 += static_cast<char>(c);
  for (int i = 0; i < 500; ++i) {
    const std::string text = i == 0 ? all_bytes_below_0x80 : random_valid_utf8(rng, static_cast<std::size_t>(i));
    const std::string key = random_valid_utf8(rng, 5);
    const auto int_value = static_cast<std::int64_t>(rng()) * (i % 2 == 0 ? 1 : -1);
    Writer writer;
    writer.begin_object();
    writer.field(key, text);
    writer.field("i", int_value);
    writer.field("u", std::numeric_limits<std::uint64_t>::max());
    writer.field("d", 0.1 * i);
    writer.end_object();
    writer.end_record();
    const std::string json(writer.buffered());
    CAPTURE(json);
    simdjson::dom::object object;
    REQUIRE(parser.parse(json).get_object().get(object) == simdjson::SUCCESS);
    std::string_view parsed_text;
    REQUIRE(object[key].get_string().get(parsed_text) == simdjson::SUCCESS);
    CHECK(parsed_text == text);
    CHECK(object["i"].get_int64().value_unsafe() == int_value);
    CHECK(object["u"].get_uint64().value_unsafe() == std::numeric_limits<std::uint64_t>::max());
    CHECK(object["d"].get_double().value_unsafe() == 0.1 * i);
  }
}

TEST_CASE("writer reuses its buffer: capacity stops growing") {
  Writer writer;
  const std::string value(3000, 'x');
  const auto one_record = [&] {
    writer.begin_object();
    writer.field("v", 1);
    writer.field("payload", value);
    writer.end_object();
    writer.end_record();
  };
  one_record();
  writer.clear();
  const std::size_t warmed = writer.capacity();
  for (int i = 0; i < 100; ++i) {
    one_record();
    CHECK(writer.bytes_buffered() == value.size() + 21);
    writer.clear();
    CHECK(writer.bytes_buffered() == 0);
  }
  CHECK(writer.capacity() == warmed);
}

TEST_CASE("writer flush_to writes ended records and keeps the one in progress") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  Writer writer;
  writer.begin_object();
  writer.field("a", 1);
  writer.end_object();
  writer.end_record();
  writer.begin_object();
  writer.field("b", 2);
  REQUIRE(writer.flush_to(fds[1], "stdout").has_value());
  CHECK(writer.buffered() == "{\"b\":2");
  writer.end_object();
  writer.end_record();
  REQUIRE(writer.flush_to(fds[1], "stdout").has_value());
  CHECK(writer.bytes_buffered() == 0);
  ::close(fds[1]);
  char got[64] = {};
  std::size_t total = 0;
  for (;;) {
    cdc::Result<std::size_t> n = cdc::read_some(fds[0], got + total, sizeof got - total, "pipe");
    REQUIRE(n.has_value());
    if (*n == 0) break;
    total += *n;
  }
  ::close(fds[0]);
  CHECK(std::string_view(got, total) == "{\"a\":1}\n{\"b\":2}\n");
}

TEST_CASE("writer flush_to reports a closed reader as broken pipe") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  ::close(fds[0]);
  // A tool ignores SIGPIPE so that EPIPE arrives as an error value; do the same here.
  const auto previous = std::signal(SIGPIPE, SIG_IGN);
  Writer writer;
  writer.null();
  writer.end_record();
  const cdc::Result<void> flushed = writer.flush_to(fds[1], "stdout");
  std::signal(SIGPIPE, previous);
  ::close(fds[1]);
  REQUIRE_FALSE(flushed.has_value());
  CHECK(flushed.error().code == cdc::Errc::io);
  CHECK(flushed.error().message == "stdout: broken pipe");
  CHECK(cdc::is_broken_pipe(flushed.error()));
  CHECK(writer.bytes_buffered() == 0);
}

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
  struct Case {
    const char* name;
    std::string text;
    std::string expected;
  };
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
  struct Case {
    std::string_view line;
    std::string_view got;
  };
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
