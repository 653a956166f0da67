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

template <typename Write>
std::string written(Write write) {
  Writer writer;
  write(writer);
  return std::string(writer.buffered());
}

std::string base64(std::string_view bytes) {
  Writer writer;
  writer.string_base64(bytes);
  const std::string json(writer.buffered());
  return json.substr(1, json.size() - 2);
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
  struct Case { const char* name; std::string_view text; };
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
  struct Case { const char* name; std::string_view input; std::string expected; };
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
  struct Case { std::string_view input; std::string_view expected; };
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

TEST_CASE("writer integers at the limits, raw numbers verbatim") {
  CHECK(written([](Writer& w) { w.integer(std::numeric_limits<std::int64_t>::min()); }) == "-9223372036854775808");
  CHECK(written([](Writer& w) { w.integer(std::numeric_limits<std::int64_t>::max()); }) == "9223372036854775807");
  CHECK(written([](Writer& w) { w.integer(-1); }) == "-1");
  CHECK(written([](Writer& w) { w.unsigned_integer(std::numeric_limits<std::uint64_t>::max()); }) ==
        "18446744073709551615");
  CHECK(written([](Writer& w) { w.raw_number("-1234567890123456789.000100e-3"); }) == "-1234567890123456789.000100e-3");
}

TEST_CASE("writer doubles: shortest round-trip text, non-finite as null") {
  struct Case { const char* name; double value; std::string_view expected; };
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
    CHECK(written([&](Writer& w) { w.floating(c.value); }) == c.expected);
  }
}

TEST_CASE("writer floats print the float's own shortest form") {
  struct Case { const char* name; float value; std::string_view expected; };
  const Case cases[] = {
      {"0.1f", 0.1f, "0.1"},
      {"FLT_MAX", FLT_MAX, "3.4028235e+38"},
      {"1.5f", 1.5f, "1.5"},
      {"NaN", std::numeric_limits<float>::quiet_NaN(), "null"},
      {"-Inf", -std::numeric_limits<float>::infinity(), "null"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(written([&](Writer& w) { w.floating(c.value); }) == c.expected);
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

TEST_CASE("writer take_ended_records hands the lines over and keeps the record in progress") {
  Writer writer;
  Writer::Buffer taken;
  const auto text = [](const Writer::Buffer& buffer) { return std::string(buffer.data(), buffer.size()); };
  const auto line = [&writer](int value) {
    writer.begin_object();
    writer.field("n", value);
    writer.end_object();
    writer.end_record();
  };
  // Large enough to live outside fmt's inline storage, as the stream's batches do.
  for (int i = 0; i < 100; ++i) line(i);
  const std::string expected = std::string(writer.buffered());
  taken.append(std::string_view("stale"));
  writer.take_ended_records(taken);  // no record in progress: the buffers trade places
  CHECK(text(taken) == expected);
  CHECK(writer.bytes_buffered() == 0);
  line(100);
  CHECK(writer.buffered() == "{\"n\":100}\n");

  // A record in progress stays, its members go on after the hand-over.
  writer.begin_object();
  writer.field("half", 1);
  writer.take_ended_records(taken);
  CHECK(text(taken) == "{\"n\":100}\n");
  writer.field("rest", 2);
  writer.end_object();
  writer.end_record();
  CHECK(writer.buffered() == "{\"half\":1,\"rest\":2}\n");
  writer.take_ended_records(taken);
  CHECK(text(taken) == "{\"half\":1,\"rest\":2}\n");
  CHECK(writer.ended_records().empty());
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

TEST_CASE("string_if_plain takes only plain ASCII, at every length and position of the first other byte") {
  // Lengths across the 16- and 32-byte steps and their tails; a byte that must be escaped or
  // is not ASCII at each position makes it write nothing, else it writes what string() does.
  for (std::size_t length = 0; length <= 100; ++length) {
    std::string text(length, 'a');
    for (std::size_t i = 0; i < length; ++i) {
      const char c = static_cast<char>(' ' + (i * 7) % 95);  // printable ASCII, DEL included
      text[i] = c == '"' || c == '\\' ? 'x' : c;
    }
    if (length > 0) text[length - 1] = '\x7f';
    CAPTURE(length);
    for (const bool in_array : {false, true}) {
      CAPTURE(in_array);
      cdc::ndjson::Writer plain;
      cdc::ndjson::Writer expected;
      for (cdc::ndjson::Writer* w : {&plain, &expected}) {
        w->begin_array();
        if (in_array) w->integer(1);
      }
      CHECK(plain.string_if_plain(text));
      expected.string(text);
      plain.end_array();
      expected.end_array();
      CHECK(plain.buffered() == expected.buffered());
    }
    for (std::size_t at = 0; at < length; ++at)
      for (const char other : {'"', '\\', '\x00', '\x1f', '\x80', '\xff'}) {
        std::string changed = text;
        changed[at] = other;
        cdc::ndjson::Writer writer;
        writer.begin_array();
        writer.integer(1);
        const std::string before(writer.buffered());
        CAPTURE(at);
        CAPTURE(static_cast<int>(static_cast<unsigned char>(other)));
        CHECK_FALSE(writer.string_if_plain(changed));
        CHECK(writer.buffered() == before);
        writer.string("after");  // the writer's state is as it was: a comma, then the value
        writer.end_array();
        CHECK(writer.buffered() == before + ",\"after\"]");
      }
  }
}

TEST_CASE("integers are written as to_string writes them, at every digit count and sign") {
  std::vector<std::uint64_t> values = {0, 1, 9, std::numeric_limits<std::uint64_t>::max()};
  for (std::uint64_t power = 10; power != 0 && power <= 10'000'000'000'000'000'000ULL; power *= 10) {
    values.insert(values.end(), {power - 1, power, power + 1});
    if (power > std::numeric_limits<std::uint64_t>::max() / 10) break;
  }
  std::mt19937_64 random(42);
  for (int i = 0; i < 2000; ++i) values.push_back(random() >> (random() % 64));
  for (const std::uint64_t value : values) {
    CAPTURE(value);
    cdc::ndjson::Writer unsigned_text;
    unsigned_text.begin_array();
    unsigned_text.unsigned_integer(value);
    unsigned_text.unsigned_integer(value);
    unsigned_text.end_array();
    CHECK(unsigned_text.buffered() == "[" + std::to_string(value) + "," + std::to_string(value) + "]");
    for (const std::int64_t signed_value : {static_cast<std::int64_t>(value), -static_cast<std::int64_t>(value >> 1),
                                            static_cast<std::int64_t>(value >> 1)}) {
      cdc::ndjson::Writer signed_text;
      signed_text.begin_array();
      signed_text.integer(signed_value);
      signed_text.end_array();
      CHECK(signed_text.buffered() == "[" + std::to_string(signed_value) + "]");
    }
  }
  cdc::ndjson::Writer extremes;
  extremes.begin_array();
  extremes.integer(std::numeric_limits<std::int64_t>::min());
  extremes.integer(std::numeric_limits<std::int64_t>::max());
  extremes.end_array();
  CHECK(extremes.buffered() == "[-9223372036854775808,9223372036854775807]");
}
