#pragma once

// What the row-image scalar value tests share (rowimage_numeric_values_test.cpp,
// rowimage_temporal_values_test.cpp): decoding one value from an exact-size copy, the checks of
// a valid and a rejected value, and test-only encoders written from the server's writers
// (strings/decimal.c decimal2bin, my_time.cc my_*_packed_to_binary / my_timestamp_to_binary),
// each checked against hand-computed bytes in the tests.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "column/column_type.h"
#include "ndjson/writer.h"
#include "rowimage/scalar_values.h"
#include "unit_support.h"
#include "util/byte_reader.h"

namespace scalar_test {

using cdc::ByteReader;
using cdc::ColumnType;
using cdc::ndjson::Writer;
namespace rowimage = cdc::rowimage;
using unit_test::be;
using unit_test::concat;

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
inline Outcome run(const Bytes& bytes, const Decode& decode, std::size_t prefix = 0) {
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
inline void check_value(const Bytes& bytes, const Decode& decode, const std::string& json,
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
inline void check_rejected(const Bytes& bytes, const Decode& decode, const std::string& message_part) {
  const Outcome outcome = run(bytes, decode, 2);
  CAPTURE(outcome.failure);
  CHECK_FALSE(outcome.ok);
  CHECK(outcome.failure.find(message_part) != std::string::npos);
  CHECK(outcome.failure_offset == 2);
}

// A uniform-enough number below `bound` from a 32-bit engine (whose result_type is wider).
inline std::uint32_t pick(std::mt19937& random, std::uint32_t bound) {
  return static_cast<std::uint32_t>(random() % bound);
}

inline std::string json_quoted(std::string_view text) { return fmt::format("\"{}\"", text); }


// ---------------------------------------------------------------------------------------
// Test-only encoders, written from the server's writers.

// strings/decimal.c decimal2bin: digit groups of 9 in 4 bytes big-endian, partial groups in
// {0,1,1,2,2,3,3,4,4,4}[digits] bytes, all bytes inverted for negatives, then the first
// byte's top bit flipped. `text` is "[-]digits[.digits]" within (precision, scale).
inline Bytes encode_decimal(std::string_view text, unsigned precision, unsigned scale) {
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
inline Bytes encode_fraction(std::uint32_t micros, unsigned fsp) {
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
inline Bytes encode_datetime2(unsigned year, unsigned month, unsigned day, unsigned hour, unsigned minute,
                       unsigned second, std::uint32_t micros, unsigned fsp) {
  const std::uint64_t ymd = ((std::uint64_t{year} * 13 + month) << 5) | day;
  const std::uint64_t hms = (hour << 12) | (minute << 6) | second;
  return concat(be(((ymd << 17) | hms) + 0x80'0000'0000, 5), encode_fraction(micros, fsp));
}

// my_time_packed_to_binary over TIME_to_longlong_time_packed. The in-memory value is
// negated for negative times; its integer part is taken with an arithmetic shift (rounding
// down) and its fraction with C++'s remainder (sign of the dividend), as the server's
// my_packed_time_get_int_part / _frac_part do.
inline Bytes encode_time2(bool negative, unsigned hour, unsigned minute, unsigned second,
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

inline Decode integer(ColumnType type, bool is_unsigned) {
  return [=](ByteReader& in, Writer& out) { rowimage::decode_integer(in, type, is_unsigned, out); };
}
inline Decode decimal(std::uint8_t precision, std::uint8_t scale) {
  return [=](ByteReader& in, Writer& out) { rowimage::decode_newdecimal(in, precision, scale, out); };
}
inline Decode bit(std::uint16_t meta) {
  return [=](ByteReader& in, Writer& out) { rowimage::decode_bit(in, meta, out); };
}
inline Decode time2(std::uint8_t fsp) {
  return [=](ByteReader& in, Writer& out) { rowimage::decode_time2(in, fsp, out); };
}
inline Decode datetime2(std::uint8_t fsp) {
  return [=](ByteReader& in, Writer& out) { rowimage::decode_datetime2(in, fsp, out); };
}
inline Decode timestamp2(std::uint8_t fsp) {
  return [=](ByteReader& in, Writer& out) { rowimage::decode_timestamp2(in, fsp, out); };
}

inline std::string integer_type_name(ColumnType type) {
  switch (type) {
    case ColumnType::tiny: return "TINYINT";
    case ColumnType::short_int: return "SMALLINT";
    case ColumnType::int24: return "MEDIUMINT";
    case ColumnType::long_int: return "INT";
    default: return "BIGINT";
  }
}

}  // namespace scalar_test
