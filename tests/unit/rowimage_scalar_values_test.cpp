// Row-image scalar values: integers, FLOAT/DOUBLE, DECIMAL, BIT, YEAR and the temporal types.
//
// Expected bytes come from three independent places: hand-computed literals (commented
// field by field), small test-only encoders that follow the server's writers
// (strings/decimal.c decimal2bin, my_time.cc my_*_packed_to_binary / my_timestamp_to_binary)
// and are checked against those literals, and std::chrono's calendar for the UTC dates.
// Every value is also decoded with each of its bytes cut off, from an exact-size heap copy,
// so ASan catches any read past the value.

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "column/column_type.h"
#include "ndjson/writer.h"
#include "unit_support.h"
#include "rowimage/scalar_values.h"
#include "util/byte_reader.h"

namespace {

using cdc::ByteReader;
using cdc::ndjson::Writer;
using cdc::ColumnType;
namespace rowimage = cdc::rowimage;

using Bytes = std::vector<std::uint8_t>;
using Decode = std::function<void(ByteReader&, Writer&)>;

struct Outcome {
  bool ok = false;
  std::string json;
  std::string failure;
  std::uint64_t failure_offset = 0;
  std::size_t consumed = 0;
};

// Decodes one value from an exact-size copy of `bytes` (after `prefix` bytes that are read
// first, to check that failures point at the value and not at the buffer's start).
Outcome run(const Bytes& bytes, const Decode& decode, std::size_t prefix = 0) {
  Bytes copy(prefix, 0xEE);
  copy.insert(copy.end(), bytes.begin(), bytes.end());
  ByteReader in{std::span<const std::uint8_t>(copy)};
  if (prefix > 0) in.skip(prefix);
  Writer out;
  decode(in, out);
  Outcome outcome;
  outcome.ok = in.ok();
  outcome.json = std::string(out.buffered());
  outcome.failure = in.failure_text();
  if (in.failure()) outcome.failure_offset = in.failure()->offset;
  outcome.consumed = in.position() - prefix;
  return outcome;
}

// One valid value: decodes to `json`, consumes exactly its bytes even when more follow, and
// every shorter prefix of it fails with a message that starts with the type's name.
void check_value(const Bytes& bytes, const Decode& decode, const std::string& json,
                 const std::string& type_name) {
  const Outcome exact = run(bytes, decode);
  CAPTURE(exact.failure);
  REQUIRE(exact.ok);
  CHECK(exact.json == json);
  CHECK(exact.consumed == bytes.size());

  Bytes longer = bytes;
  longer.push_back(0xA5);  // the next column's first byte
  const Outcome followed = run(longer, decode);
  CHECK(followed.ok);
  CHECK(followed.json == json);
  CHECK(followed.consumed == bytes.size());

  for (std::size_t size = 0; size < bytes.size(); ++size) {
    CAPTURE(size);
    const Bytes cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(size));
    const Outcome truncated = run(cut, decode, 3);
    CAPTURE(truncated.failure);
    CHECK_FALSE(truncated.ok);
    CHECK(truncated.failure.starts_with(type_name + ": need "));
    CHECK(truncated.failure_offset == 3);  // the value's first byte
  }
}

// A value the server cannot have written: fails, names the problem, points at the value.
void check_rejected(const Bytes& bytes, const Decode& decode, const std::string& message_part) {
  const Outcome outcome = run(bytes, decode, 2);
  CAPTURE(outcome.failure);
  CHECK_FALSE(outcome.ok);
  CHECK(outcome.failure.find(message_part) != std::string::npos);
  CHECK(outcome.failure_offset == 2);
}

// A uniform-enough number below `bound` from a 32-bit engine (whose result_type is wider).
std::uint32_t pick(std::mt19937& random, std::uint32_t bound) {
  return static_cast<std::uint32_t>(random() % bound);
}

std::string json_quoted(std::string_view text) { return fmt::format("\"{}\"", text); }

using unit_test::be;
using unit_test::concat;

// ---------------------------------------------------------------------------------------
// Test-only encoders, written from the server's writers.

// strings/decimal.c decimal2bin: digit groups of 9 in 4 bytes big-endian, partial groups in
// {0,1,1,2,2,3,3,4,4,4}[digits] bytes, all bytes inverted for negatives, then the first
// byte's top bit flipped. `text` is "[-]digits[.digits]" within (precision, scale).
Bytes encode_decimal(std::string_view text, unsigned precision, unsigned scale) {
  static constexpr unsigned kGroupBytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
  const bool negative = text.starts_with('-');
  if (negative) text.remove_prefix(1);
  const std::size_t point = text.find('.');
  std::string int_digits(text.substr(0, point));
  std::string frac_digits(point == std::string_view::npos ? std::string_view{} : text.substr(point + 1));
  const unsigned int_count = precision - scale;
  int_digits.erase(0, int_digits.find_first_not_of('0'));  // "0.5" has no integer digits
  REQUIRE(int_digits.size() <= int_count);
  REQUIRE(frac_digits.size() <= scale);
  int_digits.insert(0, int_count - int_digits.size(), '0');
  frac_digits.append(scale - frac_digits.size(), '0');

  Bytes out;
  const auto put_group = [&](std::string_view digits) {
    const std::uint64_t value = digits.empty() ? 0 : std::stoull(std::string(digits));
    for (std::uint8_t byte : be(value, kGroupBytes[digits.size()])) {
      out.push_back(negative ? static_cast<std::uint8_t>(~byte) : byte);
    }
  };
  const std::size_t lead = int_count % 9;
  put_group(std::string_view(int_digits).substr(0, lead));
  for (std::size_t i = lead; i < int_count; i += 9) put_group(std::string_view(int_digits).substr(i, 9));
  const std::size_t full_frac = scale / 9 * 9;
  for (std::size_t i = 0; i < full_frac; i += 9) put_group(std::string_view(frac_digits).substr(i, 9));
  put_group(std::string_view(frac_digits).substr(full_frac));
  out[0] ^= 0x80;
  return out;
}

// The fraction of DATETIME2/TIMESTAMP2 as my_datetime_packed_to_binary and
// my_timestamp_to_binary store it: hundredths, 1/10000 s or microseconds.
Bytes encode_fraction(std::uint32_t micros, unsigned fsp) {
  // The server stores values already cut to fsp digits (my_*_to_binary assert it).
  constexpr std::uint32_t kUnit[7] = {1'000'000, 100'000, 10'000, 1'000, 100, 10, 1};
  REQUIRE(fsp <= 6);
  REQUIRE(micros % kUnit[fsp] == 0);
  switch ((fsp + 1) / 2) {
    case 1: return be(micros / 10'000, 1);
    case 2: return be(micros / 100, 2);
    case 3: return be(micros, 3);
    default: return {};
  }
}

// my_datetime_packed_to_binary over TIME_to_longlong_datetime_packed.
Bytes encode_datetime2(unsigned year, unsigned month, unsigned day, unsigned hour, unsigned minute,
                       unsigned second, std::uint32_t micros, unsigned fsp) {
  const std::uint64_t ymd = ((std::uint64_t{year} * 13 + month) << 5) | day;
  const std::uint64_t hms = (hour << 12) | (minute << 6) | second;
  return concat(be(((ymd << 17) | hms) + 0x80'0000'0000, 5), encode_fraction(micros, fsp));
}

// my_time_packed_to_binary over TIME_to_longlong_time_packed. The in-memory value is
// negated for negative times; its integer part is taken with an arithmetic shift (rounding
// down) and its fraction with C++'s remainder (sign of the dividend), as the server's
// my_packed_time_get_int_part / _frac_part do.
Bytes encode_time2(bool negative, unsigned hour, unsigned minute, unsigned second,
                   std::uint32_t micros, unsigned fsp) {
  (void)encode_fraction(micros, fsp);  // checks that micros fits the fsp
  std::int64_t packed =
      static_cast<std::int64_t>((std::uint64_t{hour} << 12 | minute << 6 | second) << 24) + micros;
  if (negative) packed = -packed;
  const std::int64_t int_part = packed >> 24;
  const std::int64_t frac_part = packed % (std::int64_t{1} << 24);
  const Bytes int_bytes = be(static_cast<std::uint64_t>(int_part + 0x800000), 3);
  switch (fsp) {
    case 0: return int_bytes;
    case 1:
    case 2: return concat(int_bytes, be(static_cast<std::uint64_t>(frac_part / 10'000) & 0xFF, 1));
    case 3:
    case 4: return concat(int_bytes, be(static_cast<std::uint64_t>(frac_part / 100) & 0xFFFF, 2));
    default: return be(static_cast<std::uint64_t>(packed + 0x8000'0000'0000), 6);
  }
}

Decode integer(ColumnType type, bool is_unsigned) {
  return [=](ByteReader& in, Writer& out) { rowimage::decode_integer(in, type, is_unsigned, out); };
}
Decode decimal(std::uint8_t precision, std::uint8_t scale) {
  return [=](ByteReader& in, Writer& out) { rowimage::decode_newdecimal(in, precision, scale, out); };
}
Decode bit(std::uint16_t meta) {
  return [=](ByteReader& in, Writer& out) { rowimage::decode_bit(in, meta, out); };
}
Decode time2(std::uint8_t fsp) {
  return [=](ByteReader& in, Writer& out) { rowimage::decode_time2(in, fsp, out); };
}
Decode datetime2(std::uint8_t fsp) {
  return [=](ByteReader& in, Writer& out) { rowimage::decode_datetime2(in, fsp, out); };
}
Decode timestamp2(std::uint8_t fsp) {
  return [=](ByteReader& in, Writer& out) { rowimage::decode_timestamp2(in, fsp, out); };
}

std::string integer_type_name(ColumnType type) {
  switch (type) {
    case ColumnType::tiny: return "TINYINT";
    case ColumnType::short_int: return "SMALLINT";
    case ColumnType::int24: return "MEDIUMINT";
    case ColumnType::long_int: return "INT";
    default: return "BIGINT";
  }
}

}  // namespace

TEST_CASE("scalar: integers at their limits, little-endian, sign-extended when signed") {
  struct Case {
    std::string name;
    ColumnType type;
    bool is_unsigned;
    Bytes bytes;
    std::string json;
  };
  const Case cases[] = {
      {"TINYINT -128", ColumnType::tiny, false, {0x80}, "-128"},
      {"TINYINT 127", ColumnType::tiny, false, {0x7F}, "127"},
      {"TINYINT -1", ColumnType::tiny, false, {0xFF}, "-1"},
      {"TINYINT UNSIGNED 255", ColumnType::tiny, true, {0xFF}, "255"},
      {"TINYINT 0", ColumnType::tiny, false, {0x00}, "0"},
      {"SMALLINT -32768", ColumnType::short_int, false, {0x00, 0x80}, "-32768"},
      {"SMALLINT 32767", ColumnType::short_int, false, {0xFF, 0x7F}, "32767"},
      {"SMALLINT 258", ColumnType::short_int, false, {0x02, 0x01}, "258"},  // low byte first
      {"SMALLINT UNSIGNED 65535", ColumnType::short_int, true, {0xFF, 0xFF}, "65535"},
      {"MEDIUMINT -8388608", ColumnType::int24, false, {0x00, 0x00, 0x80}, "-8388608"},
      {"MEDIUMINT 8388607", ColumnType::int24, false, {0xFF, 0xFF, 0x7F}, "8388607"},
      {"MEDIUMINT -1", ColumnType::int24, false, {0xFF, 0xFF, 0xFF}, "-1"},
      {"MEDIUMINT UNSIGNED 16777215", ColumnType::int24, true, {0xFF, 0xFF, 0xFF}, "16777215"},
      {"MEDIUMINT 197121", ColumnType::int24, false, {0x01, 0x02, 0x03}, "197121"},
      {"INT -2147483648", ColumnType::long_int, false, {0x00, 0x00, 0x00, 0x80}, "-2147483648"},
      {"INT 2147483647", ColumnType::long_int, false, {0xFF, 0xFF, 0xFF, 0x7F}, "2147483647"},
      {"INT UNSIGNED 4294967295", ColumnType::long_int, true, {0xFF, 0xFF, 0xFF, 0xFF}, "4294967295"},
      {"BIGINT min", ColumnType::longlong, false, {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80},
       "-9223372036854775808"},
      {"BIGINT max", ColumnType::longlong, false, {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F},
       "9223372036854775807"},
      {"BIGINT -2", ColumnType::longlong, false, {0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, "-2"},
      {"BIGINT UNSIGNED max", ColumnType::longlong, true,
       {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, "18446744073709551615"},
      {"BIGINT UNSIGNED 2^63", ColumnType::longlong, true,
       {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80}, "9223372036854775808"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    check_value(c.bytes, integer(c.type, c.is_unsigned), c.json, integer_type_name(c.type));
  }
}

TEST_CASE("scalar: decode_integer rejects a type that is not an integer") {
  const Outcome outcome = run({0x01, 0x02, 0x03, 0x04}, integer(ColumnType::float_type, false));
  CAPTURE(outcome.failure);
  CHECK_FALSE(outcome.ok);
  CHECK(outcome.failure.find("is not an integer type") != std::string::npos);
}

TEST_CASE("scalar: FLOAT and DOUBLE print the shortest round-tripping text") {
  struct Case {
    std::string name;
    bool is_double;
    Bytes bytes;
    std::string json;
  };
  const Case cases[] = {
      {"FLOAT 0.1", false, {0xCD, 0xCC, 0xCC, 0x3D}, "0.1"},  // 0x3DCCCCCD, little-endian
      {"FLOAT -1.5", false, {0x00, 0x00, 0xC0, 0xBF}, "-1.5"},
      {"FLOAT 0", false, {0x00, 0x00, 0x00, 0x00}, "0"},
      {"FLOAT max", false, {0xFF, 0xFF, 0x7F, 0x7F}, "3.4028235e+38"},
      {"FLOAT smallest subnormal", false, {0x01, 0x00, 0x00, 0x00}, "1e-45"},
      {"DOUBLE 0.1", true, {0x9A, 0x99, 0x99, 0x99, 0x99, 0x99, 0xB9, 0x3F}, "0.1"},
      {"DOUBLE 1", true, {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF0, 0x3F}, "1"},
      {"DOUBLE -2.5e-300", true, {0x2F, 0x30, 0xB7, 0xB3, 0xA7, 0xC9, 0xBA, 0x81}, "-2.5e-300"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    if (c.is_double) {
      check_value(c.bytes, rowimage::decode_double, c.json, "DOUBLE");
    } else {
      check_value(c.bytes, rowimage::decode_float, c.json, "FLOAT");
    }
  }
}

TEST_CASE("scalar: DECIMAL test encoder reproduces hand-computed bytes") {
  struct Case {
    std::string text;
    unsigned precision;
    unsigned scale;
    Bytes bytes;
  };
  const Case cases[] = {
      // DECIMAL(10,2): 8 integer digits in 4 bytes, 2 fraction digits in 1 byte.
      {"12.50", 10, 2, {0x80, 0x00, 0x00, 0x0C,  // 12 with the sign bit set (non-negative)
                        0x32}},                  // 50 hundredths
      {"-12.50", 10, 2, {0x7F, 0xFF, 0xFF, 0xF3,  // ~12, then the sign bit flipped (clear)
                         0xCD}},                  // ~50
      // DECIMAL(5,0): one partial group of 5 digits in 3 bytes.
      {"12345", 5, 0, {0x80, 0x30, 0x39}},   // 0x003039 | sign bit
      // DECIMAL(4,4): no integer part, 4 fraction digits in 2 bytes.
      {"0.1234", 4, 4, {0x84, 0xD2}},        // 1234 = 0x04D2 | sign bit
      // DECIMAL(14,4): 10 integer digits = 1-digit partial group + one full group.
      {"-1234567890.1234", 14, 4, {0x7E,                    // ~1 (1 byte), sign bit flipped
                                   0xF2, 0x04, 0xC7, 0x2D,  // ~234567890 (0x0DFB38D2)
                                   0xFB, 0x2D}},            // ~1234 (0x04D2)
      // DECIMAL(65,30) max: 35 integer digits (8 + 3 x 9), 30 fraction digits (3 x 9 + 3).
      {"99999999999999999999999999999999999.999999999999999999999999999999", 65, 30,
       {0x85, 0xF5, 0xE0, 0xFF,  // 99999999 | sign bit
        0x3B, 0x9A, 0xC9, 0xFF, 0x3B, 0x9A, 0xC9, 0xFF, 0x3B, 0x9A, 0xC9, 0xFF,  // 3 x 999999999
        0x3B, 0x9A, 0xC9, 0xFF, 0x3B, 0x9A, 0xC9, 0xFF, 0x3B, 0x9A, 0xC9, 0xFF,  // 3 x 999999999
        0x03, 0xE7}},  // 999 in 2 bytes
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    CHECK(encode_decimal(c.text, c.precision, c.scale) == c.bytes);
  }
}

TEST_CASE("scalar: DECIMAL as a string with exactly scale fraction digits") {
  struct Case {
    std::string text;  // what the column holds, as encode_decimal takes it
    std::uint8_t precision;
    std::uint8_t scale;
    std::string json;
  };
  const Case cases[] = {
      // CREATE TABLE t (d DECIMAL(10,2)); INSERT INTO t VALUES (12.5), (-12.5), (0), (-0.01)
      {"12.50", 10, 2, "\"12.50\""},
      {"-12.50", 10, 2, "\"-12.50\""},
      {"0.00", 10, 2, "\"0.00\""},
      {"0.5", 10, 2, "\"0.50\""},
      {"-0.01", 10, 2, "\"-0.01\""},
      {"99999999.99", 10, 2, "\"99999999.99\""},
      {"-99999999.99", 10, 2, "\"-99999999.99\""},
      // DECIMAL(5,0): no point at all.
      {"12", 5, 0, "\"12\""},
      {"0", 5, 0, "\"0\""},
      {"-12345", 5, 0, "\"-12345\""},
      {"99999", 5, 0, "\"99999\""},
      // DECIMAL(4,4): only a fraction; the integer part is written as "0".
      {"0.1234", 4, 4, "\"0.1234\""},
      {"-0.0001", 4, 4, "\"-0.0001\""},
      // Negative, with a leading partial group.
      {"-1234567890.1234", 14, 4, "\"-1234567890.1234\""},
      {"-1.0000", 14, 4, "\"-1.0000\""},
      // Full 9-digit groups on both sides of the point: DECIMAL(18,9).
      {"123456789.000000001", 18, 9, "\"123456789.000000001\""},
      {"-0.100000000", 18, 9, "\"-0.100000000\""},
      // DECIMAL(65,30) at both ends, and zero.
      {"99999999999999999999999999999999999.999999999999999999999999999999", 65, 30,
       "\"99999999999999999999999999999999999.999999999999999999999999999999\""},
      {"-99999999999999999999999999999999999.999999999999999999999999999999", 65, 30,
       "\"-99999999999999999999999999999999999.999999999999999999999999999999\""},
      {"0", 65, 30, "\"0.000000000000000000000000000000\""},
      {"10000000000000000000000000000000000", 65, 30,
       "\"10000000000000000000000000000000000.000000000000000000000000000000\""},
      // DECIMAL(65,0) and DECIMAL(30,30).
      {"-12345678901234567890123456789012345678901234567890123456789012345", 65, 0,
       "\"-12345678901234567890123456789012345678901234567890123456789012345\""},
      {"0.000000000000000000000000000001", 30, 30, "\"0.000000000000000000000000000001\""},
      // DECIMAL(1,0) and DECIMAL(1,1): one byte.
      {"-9", 1, 0, "\"-9\""},
      {"0.7", 1, 1, "\"0.7\""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    check_value(encode_decimal(c.text, c.precision, c.scale), decimal(c.precision, c.scale), c.json,
                "DECIMAL");
  }
}

TEST_CASE("scalar: DECIMAL round trip over random precisions, scales and digits") {
  std::mt19937_64 random(20240904);
  for (int i = 0; i < 3000; ++i) {
    const auto precision = static_cast<std::uint8_t>(1 + random() % 65);
    const auto scale = static_cast<std::uint8_t>(random() % (std::min<unsigned>(precision, 38) + 1));
    const unsigned int_count = precision - scale;
    // Random digits, often with leading zeros (short integer parts) and sometimes all zero.
    const unsigned int_used = int_count == 0 ? 0 : static_cast<unsigned>(random() % (int_count + 1));
    std::string int_digits;
    for (unsigned d = 0; d < int_used; ++d) int_digits.push_back(static_cast<char>('0' + random() % 10));
    std::string frac_digits;
    for (unsigned d = 0; d < scale; ++d) {
      frac_digits.push_back(i % 7 == 0 ? '0' : static_cast<char>('0' + random() % 10));
    }
    const bool negative = random() % 2 == 0;
    const std::string text = std::string(negative ? "-" : "") + (int_digits.empty() ? "0" : int_digits) +
                             (scale > 0 ? "." + frac_digits : "");

    // The expected text: no leading zeros but one "0", no sign on zero.
    std::string canonical_int = int_digits;
    canonical_int.erase(0, canonical_int.find_first_not_of('0'));
    if (canonical_int.empty()) canonical_int = "0";
    const bool is_zero = canonical_int == "0" && frac_digits.find_first_not_of('0') == std::string::npos;
    const std::string expected = json_quoted((negative && !is_zero ? "-" : "") + canonical_int +
                                        (scale > 0 ? "." + frac_digits : ""));
    CAPTURE(text);
    CAPTURE(precision);
    CAPTURE(scale);
    const Outcome outcome = run(encode_decimal(text, precision, scale), decimal(precision, scale));
    CAPTURE(outcome.failure);
    REQUIRE(outcome.ok);
    CHECK(outcome.json == expected);
  }
}

TEST_CASE("scalar: DECIMAL rejects bad precision, scale and digit groups") {
  struct Case {
    std::string name;
    std::uint8_t precision;
    std::uint8_t scale;
    Bytes bytes;
    std::string message;
  };
  const Case cases[] = {
      {"precision 0", 0, 0, {0x80}, "DECIMAL(0,0) is not a valid precision and scale"},
      {"precision 66", 66, 0, Bytes(30, 0x80), "DECIMAL(66,0)"},
      {"scale 39 (MariaDB allows 38, MySQL 30)", 65, 39, Bytes(30, 0x80), "DECIMAL(65,39)"},
      {"scale above precision", 5, 6, Bytes(3, 0x80), "DECIMAL(5,6)"},
      // DECIMAL(10,2) whose 8-digit group holds 0x0FFFFFFF = 268435455 (9 digits).
      {"integer group too wide", 10, 2, {0x8F, 0xFF, 0xFF, 0xFF, 0x00},
       "digit group 268435455 has more than 8 digits"},
      // DECIMAL(10,2) whose 2-digit fraction byte holds 100.
      {"fraction group too wide", 10, 2, {0x80, 0x00, 0x00, 0x00, 0x64},
       "digit group 100 has more than 2 digits"},
      // DECIMAL(18,9) whose full group holds 1000000000 (0x3B9ACA00).
      {"full group above 999999999", 18, 9, {0xBB, 0x9A, 0xCA, 0x00, 0x00, 0x00, 0x00, 0x00},
       "digit group 1000000000 has more than 9 digits"},
      // The same, negative: the inverted bytes of 1000000000.
      {"negative full group above 999999999", 18, 9, {0x44, 0x65, 0x35, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF},
       "digit group 1000000000 has more than 9 digits"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    check_rejected(c.bytes, decimal(c.precision, c.scale), c.message);
  }
}

TEST_CASE("scalar: DECIMAL negative zero is written without a sign") {
  // DECIMAL(10,2) 0.00 with every bit inverted: 7F FF FF FF FF.
  const Outcome outcome = run({0x7F, 0xFF, 0xFF, 0xFF, 0xFF}, decimal(10, 2));
  CHECK(outcome.ok);
  CHECK(outcome.json == "\"0.00\"");
}

TEST_CASE("scalar: old DECIMAL (type 0) fails with a clear message") {
  const Outcome outcome = run({0x31, 0x32}, [](ByteReader& in, Writer& out) {
    rowimage::decode_old_decimal(in, 0, out);
  });
  CAPTURE(outcome.failure);
  CHECK_FALSE(outcome.ok);
  CHECK(outcome.failure.starts_with("old DECIMAL (type 0) is not supported in row events"));
  CHECK(outcome.json.empty());
}

TEST_CASE("scalar: BIT(n) as an unsigned number, big-endian") {
  struct Case {
    std::string name;
    std::uint16_t meta;  // (n / 8) << 8 | n % 8, from Field_bit's two metadata bytes
    Bytes bytes;
    std::string json;
  };
  const Case cases[] = {
      {"BIT(1) 1", 0x0001, {0x01}, "1"},
      {"BIT(1) 0", 0x0001, {0x00}, "0"},
      {"BIT(8) 255", 0x0100, {0xFF}, "255"},
      {"BIT(9) all ones", 0x0101, {0x01, 0xFF}, "511"},            // b'111111111'
      {"BIT(9) 256", 0x0101, {0x01, 0x00}, "256"},                 // high byte first
      {"BIT(12) 0xABC", 0x0104, {0x0A, 0xBC}, "2748"},
      {"BIT(17) 0x10001", 0x0201, {0x01, 0x00, 0x01}, "65537"},
      {"BIT(63) all ones", 0x0707, {0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, "9223372036854775807"},
      {"BIT(64) all ones", 0x0800, {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF},
       "18446744073709551615"},
      {"BIT(64) 1", 0x0800, {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01}, "1"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    check_value(c.bytes, bit(c.meta), c.json, "BIT");
  }
}

TEST_CASE("scalar: BIT rejects metadata that is not BIT(1..64)") {
  struct Case {
    std::string name;
    std::uint16_t meta;
  };
  const Case cases[] = {
      {"BIT(0)", 0x0000},
      {"8 leftover bits", 0x0008},
      {"BIT(65)", 0x0801},
      {"BIT(72)", 0x0900},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    check_rejected(Bytes(10, 0xFF), bit(c.meta), "is not BIT(1..64)");
  }
}

TEST_CASE("scalar: YEAR as a number") {
  struct Case {
    std::string name;
    Bytes bytes;
    std::string json;
  };
  const Case cases[] = {
      {"zero year", {0x00}, "0"},
      {"1901", {0x01}, "1901"},
      {"2024", {0x7C}, "2024"},  // 124 + 1900
      {"2155", {0xFF}, "2155"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    check_value(c.bytes, rowimage::decode_year, c.json, "YEAR");
  }
}

TEST_CASE("scalar: DATE as YYYY-MM-DD, zero parts kept") {
  struct Case {
    std::string name;
    Bytes bytes;  // day | month << 5 | year << 9, 3 bytes little-endian
    std::string json;
  };
  const Case cases[] = {
      {"2024-09-04", {0x24, 0xD1, 0x0F}, "\"2024-09-04\""},  // 4 + 9*32 + 2024*512 = 0x0FD124
      {"zero date", {0x00, 0x00, 0x00}, "\"0000-00-00\""},
      {"9999-12-31", {0x9F, 0x1F, 0x4E}, "\"9999-12-31\""},  // 0x4E1F9F
      {"1000-01-01", {0x21, 0xD0, 0x07}, "\"1000-01-01\""},  // 1 + 32 + 1000*512 = 0x07D021
      {"2024-00-00", {0x00, 0xD0, 0x0F}, "\"2024-00-00\""},
      {"0000-02-30 (ALLOW_INVALID_DATES)", {0x5E, 0x00, 0x00}, "\"0000-02-30\""},  // 30 + 2*32
      {"year 5", {0x21, 0x0A, 0x00}, "\"0005-01-01\""},  // 1 + 32 + 5*512
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    check_value(c.bytes, rowimage::decode_date, c.json, "DATE");
  }
  // Month 13 (2024-13-01) and year 10000 cannot be stored.
  check_rejected({0xA1, 0xD1, 0x0F}, rowimage::decode_date, "DATE 2024-13-1 out of range");
  check_rejected({0x21, 0x20, 0x4E}, rowimage::decode_date, "DATE 10000-1-1 out of range");
}

TEST_CASE("scalar: old TIME (type 11) as [-]HH:MM:SS") {
  struct Case {
    std::string name;
    Bytes bytes;  // signed HHMMSS, 3 bytes little-endian
    std::string json;
  };
  const Case cases[] = {
      {"12:34:56", {0x40, 0xE2, 0x01}, "\"12:34:56\""},      // 123456 = 0x01E240
      {"838:59:59", {0xA7, 0xF5, 0x7F}, "\"838:59:59\""},    // 8385959 = 0x7FF5A7
      {"-838:59:59", {0x59, 0x0A, 0x80}, "\"-838:59:59\""},  // -8385959 in 24-bit two's complement
      {"00:00:00", {0x00, 0x00, 0x00}, "\"00:00:00\""},
      {"-00:00:01", {0xFF, 0xFF, 0xFF}, "\"-00:00:01\""},
      {"100:00:00", {0x40, 0x42, 0x0F}, "\"100:00:00\""},    // 1000000 = 0x0F4240
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    check_value(c.bytes, rowimage::decode_time, c.json, "TIME");
  }
  check_rejected({0x3C, 0x00, 0x00}, rowimage::decode_time, "TIME 60 is not");            // 00:00:60
  check_rejected({0x70, 0x17, 0x00}, rowimage::decode_time, "TIME 6000 is not");  // 00:60:00
  // 0x7FFFFF = 8388607, the largest 24-bit value: 838:83:07.
  check_rejected({0xFF, 0xFF, 0x7F}, rowimage::decode_time, "TIME 8388607 is not [-]HHMMSS");
}

TEST_CASE("scalar: TIME2 test encoder reproduces the server's own table") {
  // sql-common/my_time.cc my_time_packed_from_binary, comment on FSP 1-2 (here fsp 2).
  struct Case {
    std::string time;
    bool negative;
    unsigned second;
    std::uint32_t micros;
    Bytes bytes;
  };
  const Case cases[] = {
      {"00:00:00.00", false, 0, 0, {0x80, 0x00, 0x00, 0x00}},
      {"-00:00:00.01", true, 0, 10'000, {0x7F, 0xFF, 0xFF, 0xFF}},
      {"-00:00:00.99", true, 0, 990'000, {0x7F, 0xFF, 0xFF, 0x9D}},
      {"-00:00:01.00", true, 1, 0, {0x7F, 0xFF, 0xFF, 0x00}},
      {"-00:00:01.01", true, 1, 10'000, {0x7F, 0xFF, 0xFE, 0xFF}},
      {"-00:00:01.10", true, 1, 100'000, {0x7F, 0xFF, 0xFE, 0xF6}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.time);
    CHECK(encode_time2(c.negative, 0, 0, c.second, c.micros, 2) == c.bytes);
    check_value(c.bytes, time2(2), json_quoted(c.time), "TIME2");
  }
}

TEST_CASE("scalar: TIME2 for fsp 0 to 6, negatives with fractions") {
  struct Case {
    std::string name;
    std::uint8_t fsp;
    Bytes bytes;
    std::string json;
  };
  const Case cases[] = {
      // CREATE TABLE t (c TIME); INSERT ... ('838:59:59'), ('-838:59:59'), ('00:00:00')
      {"fsp 0 max", 0, {0xB4, 0x6E, 0xFB}, "\"838:59:59\""},    // 0x800000 + (838<<12 | 59<<6 | 59)
      {"fsp 0 min", 0, {0x4B, 0x91, 0x05}, "\"-838:59:59\""},   // 0x800000 - 0x346EFB
      {"fsp 0 zero", 0, {0x80, 0x00, 0x00}, "\"00:00:00\""},
      // TIME(1) '-00:00:00.5': integer part -1, fraction byte (char)-50 = 0xCE.
      {"fsp 1 -0.5", 1, {0x7F, 0xFF, 0xFF, 0xCE}, "\"-00:00:00.5\""},
      {"fsp 1 zero", 1, encode_time2(false, 0, 0, 0, 0, 1), "\"00:00:00.0\""},
      {"fsp 1 max", 1, encode_time2(false, 838, 59, 59, 0, 1), "\"838:59:59.0\""},
      {"fsp 2 -12:34:56.78", 2, encode_time2(true, 12, 34, 56, 780'000, 2), "\"-12:34:56.78\""},
      // TIME(3) '12:34:56.789' and its negative (hand-checked against the encoder).
      {"fsp 3", 3, {0x80, 0xC8, 0xB8, 0x1E, 0xD2}, "\"12:34:56.789\""},  // 1E D2 = 7890 (1/10000 s)
      {"fsp 3 negative", 3, {0x7F, 0x37, 0x47, 0xE1, 0x2E}, "\"-12:34:56.789\""},
      {"fsp 3 zero", 3, encode_time2(false, 0, 0, 0, 0, 3), "\"00:00:00.000\""},
      {"fsp 4 -0.0001", 4, {0x7F, 0xFF, 0xFF, 0xFF, 0xFF}, "\"-00:00:00.0001\""},
      {"fsp 4 -838:59:59", 4, encode_time2(true, 838, 59, 59, 0, 4), "\"-838:59:59.0000\""},
      {"fsp 5", 5, encode_time2(false, 838, 59, 58, 999'990, 5), "\"838:59:58.99999\""},
      {"fsp 5 negative", 5, encode_time2(true, 0, 0, 0, 10, 5), "\"-00:00:00.00001\""},
      // TIME(6) '-00:00:00.000001': packed -1, plus 0x800000000000.
      {"fsp 6 -1 us", 6, {0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, "\"-00:00:00.000001\""},
      {"fsp 6 +1 us", 6, {0x80, 0x00, 0x00, 0x00, 0x00, 0x01}, "\"00:00:00.000001\""},
      {"fsp 6 -838:59:59", 6, {0x4B, 0x91, 0x05, 0x00, 0x00, 0x00}, "\"-838:59:59.000000\""},
      {"fsp 6 zero", 6, {0x80, 0x00, 0x00, 0x00, 0x00, 0x00}, "\"00:00:00.000000\""},
      {"fsp 6 100 hours", 6, encode_time2(false, 100, 0, 0, 123'456, 6), "\"100:00:00.123456\""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    check_value(c.bytes, time2(c.fsp), c.json, "TIME2");
  }
}

TEST_CASE("scalar: TIME2 round trip over random times and every fsp") {
  std::mt19937 random(838);
  constexpr std::uint32_t kUnit[7] = {1'000'000, 100'000, 10'000, 1'000, 100, 10, 1};
  for (int i = 0; i < 5000; ++i) {
    const auto fsp = static_cast<std::uint8_t>(pick(random, 7));
    const bool negative = pick(random, 2) == 0;
    const unsigned hour = pick(random, 839);
    const unsigned minute = pick(random, 60);
    const unsigned second = pick(random, 60);
    const std::uint32_t micros = fsp == 0 ? 0 : pick(random, 1'000'000) / kUnit[fsp] * kUnit[fsp];
    const bool is_zero = hour == 0 && minute == 0 && second == 0 && micros == 0;
    std::string expected = fmt::format("{}{:02}:{:02}:{:02}", negative && !is_zero ? "-" : "",
                                       hour, minute, second);
    if (fsp > 0) expected += fmt::format(".{:0{}}", micros / kUnit[fsp], fsp);
    CAPTURE(expected);
    const Outcome outcome = run(encode_time2(negative, hour, minute, second, micros, fsp), time2(fsp));
    CAPTURE(outcome.failure);
    REQUIRE(outcome.ok);
    CHECK(outcome.json == json_quoted(expected));
  }
}

TEST_CASE("scalar: TIME2 rejects fsp 7 and parts out of range") {
  check_rejected(Bytes(8, 0x80), time2(7), "TIME2(7): fractional-second precision above 6");
  // 00:60:00, 00:00:60 and hour 839 fit the bit fields but are not times.
  check_rejected(be(0x800000 + (60 << 6), 3), time2(0), "out of range");
  check_rejected(be(0x800000 + 60, 3), time2(0), "out of range");
  check_rejected(be(0x800000 + (839 << 12), 3), time2(0), "out of range");
  // A fraction of 100 hundredths (fsp 2) or 10000 units of 1/10000 s (fsp 4).
  check_rejected({0x80, 0x00, 0x00, 0x64}, time2(2), "out of range");
  check_rejected({0x80, 0x00, 0x00, 0x27, 0x10}, time2(4), "out of range");
  // fsp 6 with a microsecond field of 1000000.
  check_rejected({0x80, 0x00, 0x00, 0x0F, 0x42, 0x40}, time2(6), "out of range");
}

TEST_CASE("scalar: DATETIME2 for fsp 0 to 6, zero dates kept") {
  struct Case {
    std::string name;
    std::uint8_t fsp;
    Bytes bytes;
    std::string json;
  };
  const Case cases[] = {
      // DATETIME(3) '2024-09-04 10:52:12.189' (hand-computed):
      //   ((2024*13+9) << 5 | 4) << 17 | (10 << 12 | 52 << 6 | 12), plus 0x8000000000
      {"fsp 3 example", 3, {0x99, 0xB4, 0x48, 0xAD, 0x0C,  // date and time, 40 bits
                            0x07, 0x62},                   // 1890 x 1/10000 s
       "\"2024-09-04 10:52:12.189\""},
      {"fsp 0 zero", 0, {0x80, 0x00, 0x00, 0x00, 0x00}, "\"0000-00-00 00:00:00\""},
      {"fsp 3 zero", 3, {0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, "\"0000-00-00 00:00:00.000\""},
      {"fsp 0 1000-01-01", 0, {0x8C, 0xB2, 0x42, 0x00, 0x00}, "\"1000-01-01 00:00:00\""},
      // DATETIME(6) '9999-12-31 23:59:59.999999'
      {"fsp 6 max", 6, {0xFE, 0xF3, 0xFF, 0x7E, 0xFB,  // date and time
                        0x0F, 0x42, 0x3F},             // 999999 us
       "\"9999-12-31 23:59:59.999999\""},
      {"fsp 0 max", 0, encode_datetime2(9999, 12, 31, 23, 59, 59, 0, 0), "\"9999-12-31 23:59:59\""},
      {"fsp 1", 1, encode_datetime2(2024, 2, 29, 1, 2, 3, 500'000, 1), "\"2024-02-29 01:02:03.5\""},
      {"fsp 2", 2, encode_datetime2(2024, 2, 29, 1, 2, 3, 70'000, 2), "\"2024-02-29 01:02:03.07\""},
      {"fsp 4", 4, encode_datetime2(1970, 1, 1, 0, 0, 0, 100, 4), "\"1970-01-01 00:00:00.0001\""},
      {"fsp 5", 5, encode_datetime2(2001, 10, 20, 12, 0, 0, 999'990, 5), "\"2001-10-20 12:00:00.99999\""},
      {"fsp 6 zero", 6, encode_datetime2(0, 0, 0, 0, 0, 0, 0, 6), "\"0000-00-00 00:00:00.000000\""},
      {"fsp 0 zero parts", 0, encode_datetime2(2024, 0, 0, 0, 0, 0, 0, 0), "\"2024-00-00 00:00:00\""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    check_value(c.bytes, datetime2(c.fsp), c.json, "DATETIME2");
  }
  // The hand-computed bytes above and the encoder agree.
  CHECK(encode_datetime2(2024, 9, 4, 10, 52, 12, 189'000, 3) == cases[0].bytes);
  CHECK(encode_datetime2(9999, 12, 31, 23, 59, 59, 999'999, 6) == cases[4].bytes);
}

TEST_CASE("scalar: DATETIME2 round trip over random datetimes and every fsp") {
  std::mt19937 random(9999);
  constexpr std::uint32_t kUnit[7] = {1'000'000, 100'000, 10'000, 1'000, 100, 10, 1};
  for (int i = 0; i < 5000; ++i) {
    const auto fsp = static_cast<std::uint8_t>(pick(random, 7));
    const unsigned year = pick(random, 10'000);
    const unsigned month = pick(random, 13);
    const unsigned day = pick(random, 32);
    const unsigned hour = pick(random, 24);
    const unsigned minute = pick(random, 60);
    const unsigned second = pick(random, 60);
    const std::uint32_t micros = fsp == 0 ? 0 : pick(random, 1'000'000) / kUnit[fsp] * kUnit[fsp];
    std::string expected =
        fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", year, month, day, hour, minute, second);
    if (fsp > 0) expected += fmt::format(".{:0{}}", micros / kUnit[fsp], fsp);
    CAPTURE(expected);
    const Outcome outcome =
        run(encode_datetime2(year, month, day, hour, minute, second, micros, fsp), datetime2(fsp));
    CAPTURE(outcome.failure);
    REQUIRE(outcome.ok);
    CHECK(outcome.json == json_quoted(expected));
  }
}

TEST_CASE("scalar: DATETIME2 rejects what the server cannot store") {
  check_rejected(Bytes(8, 0x80), datetime2(7), "DATETIME2(7): fractional-second precision above 6");
  check_rejected({0x7F, 0xFF, 0xFF, 0xFF, 0xFF}, datetime2(0), "is negative");
  check_rejected(encode_datetime2(2024, 1, 1, 24, 0, 0, 0, 0), datetime2(0), "out of range");
  check_rejected(encode_datetime2(2024, 1, 1, 0, 60, 0, 0, 0), datetime2(0), "out of range");
  check_rejected(encode_datetime2(2024, 1, 1, 0, 0, 60, 0, 0), datetime2(0), "out of range");
  check_rejected(encode_datetime2(10'000, 1, 1, 0, 0, 0, 0, 0), datetime2(0), "out of range");
  // fsp 6 fraction 1000000 (0x0F4240); fsp 2 fraction byte 0x80 (negative for the server).
  check_rejected(concat(encode_datetime2(2024, 1, 1, 0, 0, 0, 0, 0), {0x0F, 0x42, 0x40}), datetime2(6),
                 "out of range");
  check_rejected(concat(encode_datetime2(2024, 1, 1, 0, 0, 0, 0, 0), {0x80}), datetime2(2), "out of range");
}

TEST_CASE("scalar: old DATETIME (type 12) from YYYYMMDDhhmmss") {
  struct Case {
    std::string name;
    Bytes bytes;  // 8 bytes little-endian
    std::string json;
  };
  const Case cases[] = {
      {"2024-09-04 10:52:12", {0xFC, 0x2C, 0xE6, 0xB3, 0x68, 0x12, 0x00, 0x00}, "\"2024-09-04 10:52:12\""},
      {"max", {0x77, 0x87, 0xD1, 0x05, 0xF1, 0x5A, 0x00, 0x00}, "\"9999-12-31 23:59:59\""},
      {"zero", {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, "\"0000-00-00 00:00:00\""},
      {"2024-00-00", {0x00, 0xA0, 0x02, 0x7E, 0x68, 0x12, 0x00, 0x00}, "\"2024-00-00 00:00:00\""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    check_value(c.bytes, rowimage::decode_datetime, c.json, "DATETIME");
  }
  // 20241301000000 (month 13) and one past the maximum.
  check_rejected({0x40, 0x4F, 0x8E, 0xCB, 0x68, 0x12, 0x00, 0x00}, rowimage::decode_datetime,
                 "DATETIME 20241301000000 is not YYYYMMDDhhmmss");
  check_rejected({0x78, 0x87, 0xD1, 0x05, 0xF1, 0x5A, 0x00, 0x00}, rowimage::decode_datetime,
                 "beyond 9999-12-31 23:59:59");
}

TEST_CASE("scalar: TIMESTAMP2 in UTC with Z, the zero timestamp without") {
  struct Case {
    std::string name;
    std::uint8_t fsp;
    Bytes bytes;  // seconds, 4 bytes big-endian, then the fraction
    std::string json;
  };
  const Case cases[] = {
      {"zero fsp 0", 0, {0x00, 0x00, 0x00, 0x00}, "\"0000-00-00 00:00:00\""},
      {"zero fsp 3", 3, {0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, "\"0000-00-00 00:00:00.000\""},
      {"zero fsp 6", 6, {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, "\"0000-00-00 00:00:00.000000\""},
      // The server reads 0 seconds as zero whatever the fraction holds.
      {"zero seconds, stray fraction", 2, {0x00, 0x00, 0x00, 0x00, 0x32}, "\"0000-00-00 00:00:00.00\""},
      {"first second", 0, {0x00, 0x00, 0x00, 0x01}, "\"1970-01-01 00:00:01Z\""},
      // TIMESTAMP(6) '2038-01-19 03:14:07.999999' UTC: 2147483647 seconds, 999999 us.
      {"2038 max", 6, {0x7F, 0xFF, 0xFF, 0xFF,  // seconds
                       0x0F, 0x42, 0x3F},       // 999999 us
       "\"2038-01-19 03:14:07.999999Z\""},
      // TIMESTAMP(3) '2024-09-04 10:52:12.189' UTC: 1725447132 = 0x66D83BDC, 1890 x 1/10000 s.
      {"fsp 3", 3, {0x66, 0xD8, 0x3B, 0xDC, 0x07, 0x62}, "\"2024-09-04 10:52:12.189Z\""},
      {"fsp 1", 1, {0x66, 0xD8, 0x3B, 0xDC, 0x32}, "\"2024-09-04 10:52:12.5Z\""},  // 50 hundredths
      {"fsp 2", 2, {0x66, 0xD8, 0x3B, 0xDC, 0x07}, "\"2024-09-04 10:52:12.07Z\""},
      {"fsp 4", 4, {0x66, 0xD8, 0x3B, 0xDC, 0x00, 0x01}, "\"2024-09-04 10:52:12.0001Z\""},
      {"fsp 5", 5, {0x66, 0xD8, 0x3B, 0xDC, 0x00, 0x00, 0x0A}, "\"2024-09-04 10:52:12.00001Z\""},
      {"leap day", 0, be(951'782'400, 4), "\"2000-02-29 00:00:00Z\""},
      {"end of 1999", 0, be(946'684'799, 4), "\"1999-12-31 23:59:59Z\""},
      // 2100 is not a leap year: February 28 is followed by March 1.
      {"2100-02-28", 0, {0xF4, 0xD4, 0x1F, 0x7F}, "\"2100-02-28 23:59:59Z\""},  // 4107542399
      {"2100-03-01", 0, {0xF4, 0xD4, 0x1F, 0x80}, "\"2100-03-01 00:00:00Z\""},  // 4107542400
      {"2096-02-29", 0, be(3'981'355'200, 4), "\"2096-02-29 12:00:00Z\""},
      {"largest 32-bit", 0, {0xFF, 0xFF, 0xFF, 0xFF}, "\"2106-02-07 06:28:15Z\""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    check_value(c.bytes, timestamp2(c.fsp), c.json, "TIMESTAMP2");
  }
  check_rejected(Bytes(8, 0x01), timestamp2(7), "TIMESTAMP2(7): fractional-second precision above 6");
  check_rejected({0x00, 0x00, 0x00, 0x01, 0x0F, 0x42, 0x40}, timestamp2(6),
                 "fraction 1000000 out of range");
  check_rejected({0x00, 0x00, 0x00, 0x01, 0x64}, timestamp2(1), "fraction 1000000 out of range");
}

TEST_CASE("scalar: TIMESTAMP2 dates agree with std::chrono's calendar") {
  std::mt19937 random(2038);
  std::vector<std::uint32_t> seconds = {1, 59, 60, 86'399, 86'400, 951'868'799, 951'868'800,
                                        4'102'444'800, 4'294'967'295};
  // Every day of 1999-2001 and 2099-2101, around the century rules.
  for (std::uint32_t s = 915'148'800; s < 1'009'843'200; s += 86'400) seconds.push_back(s + 86'399);
  for (std::uint32_t s = 4'070'908'800; s < 4'165'516'800; s += 86'400) seconds.push_back(s);
  for (int i = 0; i < 20'000; ++i) seconds.push_back(static_cast<std::uint32_t>(random()) | 1U);
  for (const std::uint32_t s : seconds) {
    const std::chrono::sys_days day{std::chrono::days{s / 86'400}};
    const std::chrono::year_month_day date{day};
    const std::uint32_t in_day = s % 86'400;
    const std::string expected = fmt::format(
        "\"{:04}-{:02}-{:02} {:02}:{:02}:{:02}Z\"", static_cast<int>(date.year()),
        static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()), in_day / 3600,
        in_day / 60 % 60, in_day % 60);
    CAPTURE(s);
    const Outcome outcome = run(be(s, 4), timestamp2(0));
    REQUIRE(outcome.ok);
    CHECK(outcome.json == expected);
  }
}

TEST_CASE("scalar: old TIMESTAMP (type 7), little-endian seconds") {
  struct Case {
    std::string name;
    Bytes bytes;
    std::string json;
  };
  const Case cases[] = {
      {"zero", {0x00, 0x00, 0x00, 0x00}, "\"0000-00-00 00:00:00\""},
      {"first second", {0x01, 0x00, 0x00, 0x00}, "\"1970-01-01 00:00:01Z\""},
      {"2038 max", {0xFF, 0xFF, 0xFF, 0x7F}, "\"2038-01-19 03:14:07Z\""},
      {"2024-09-04 10:52:12", {0xDC, 0x3B, 0xD8, 0x66}, "\"2024-09-04 10:52:12Z\""},  // 0x66D83BDC
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    check_value(c.bytes, rowimage::decode_timestamp, c.json, "TIMESTAMP");
  }
}

TEST_CASE("scalar: a value after other fields keeps writing into the same record") {
  // The caller writes keys; the decoders write one value each.
  const Bytes row = {0x7C,                    // YEAR 2024
                     0x24, 0xD1, 0x0F,        // DATE 2024-09-04
                     0x80, 0x00, 0x00, 0x0C,  // DECIMAL(10,2) 12.
                     0x32};                   //               .50
  ByteReader in{std::span<const std::uint8_t>(row)};
  Writer out;
  out.begin_object();
  out.key("y");
  rowimage::decode_year(in, out);
  out.key("d");
  rowimage::decode_date(in, out);
  out.key("n");
  rowimage::decode_newdecimal(in, 10, 2, out);
  out.end_object();
  out.end_record();
  CHECK(in.ok());
  CHECK(in.empty());
  CHECK(out.buffered() == "{\"y\":2024,\"d\":\"2024-09-04\",\"n\":\"12.50\"}\n");
}
