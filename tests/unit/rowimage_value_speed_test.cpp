// Row-image DECIMAL and temporal values: the cases the digit-table writers handle apart.
//
// numeric_values.cpp and temporal_values.cpp write digits two at a time from a table and
// special-case widths (a first integer group without its leading zeros, all six fraction
// digits written and fsp kept, two-digit date and clock parts). These cases pin each
// boundary with hand-computed bytes: every digit count of the first group, zero groups
// before and after it, every partial-group width, fraction truncation for each fsp and
// three-digit TIME hours. rowimage_scalar_values_test.cpp has the general coverage.

#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ndjson/writer.h"
#include "unit_support.h"
#include "rowimage/scalar_values.h"
#include "util/byte_reader.h"

namespace {

using cdc::ByteReader;
using cdc::ndjson::Writer;
namespace rowimage = cdc::rowimage;

using Bytes = std::vector<std::uint8_t>;

using unit_test::be;
using unit_test::concat;

// Decodes one value from exactly `bytes`; the JSON text, or "FAIL: <message>".
template <typename Decode>
std::string decode(const Bytes& bytes, Decode&& run) {
  ByteReader in{std::span<const std::uint8_t>(bytes)};
  Writer out;
  run(in, out);
  if (!in.ok()) return "FAIL: " + in.failure_text();
  CHECK(in.empty());
  return std::string(out.buffered());
}

std::string decimal(const Bytes& bytes, unsigned precision, unsigned scale) {
  return decode(bytes, [&](ByteReader& in, Writer& out) {
    rowimage::decode_newdecimal(in, static_cast<std::uint8_t>(precision), static_cast<std::uint8_t>(scale), out);
  });
}

// The stored form of a non-negative DECIMAL: groups as given, the first byte's top bit set.
Bytes positive(Bytes groups) {
  groups[0] ^= 0x80;
  return groups;
}
// A negative DECIMAL's bytes: the positive form with every bit inverted.
Bytes negated(Bytes stored) {
  for (auto& byte : stored) byte = static_cast<std::uint8_t>(~byte);
  return stored;
}

std::string q(const std::string& text) { return "\"" + text + "\""; }

}  // namespace

TEST_CASE("value speed: DECIMAL first integer group at every digit count") {
  // DECIMAL(9,0): one full group of 4 bytes.
  std::uint64_t power = 1;
  for (unsigned digits = 1; digits <= 9; ++digits, power *= 10) {
    for (const std::uint64_t value : {power, power * 10 - 1, power + 7}) {
      CAPTURE(value);
      CHECK(decimal(positive(be(value, 4)), 9, 0) == q(fmt::format("{}", value)));
      CHECK(decimal(negated(positive(be(value, 4))), 9, 0) == q(fmt::format("-{}", value)));
    }
  }
  CHECK(decimal(positive(be(0, 4)), 9, 0) == q("0"));
}

TEST_CASE("value speed: DECIMAL zero groups before and after the first nonzero group") {
  // DECIMAL(27,0): three full groups.
  CHECK(decimal(positive(concat(concat(be(0, 4), be(0, 4)), be(5, 4))), 27, 0) == q("5"));
  CHECK(decimal(positive(concat(concat(be(0, 4), be(1, 4)), be(0, 4))), 27, 0) == q("1000000000"));
  CHECK(decimal(positive(concat(concat(be(12, 4), be(0, 4)), be(7, 4))), 27, 0) ==
        q("12000000000000000007"));
  // DECIMAL(10,0): a one-digit partial group (1 byte), then a full group.
  CHECK(decimal(positive(concat(be(0, 1), be(123'456'789, 4))), 10, 0) == q("123456789"));
  CHECK(decimal(positive(concat(be(9, 1), be(5, 4))), 10, 0) == q("9000000005"));
  // DECIMAL(12,2): integer 10 digits (partial 1 + full), fraction partial 2 digits.
  CHECK(decimal(negated(positive(concat(concat(be(0, 1), be(0, 4)), be(5, 1)))), 12, 2) == q("-0.05"));
}

TEST_CASE("value speed: DECIMAL fraction groups keep every digit, partial groups of each width") {
  // DECIMAL(9,9): one full fraction group.
  CHECK(decimal(positive(be(1, 4)), 9, 9) == q("0.000000001"));
  CHECK(decimal(negated(positive(be(1, 4))), 9, 9) == q("-0.000000001"));
  CHECK(decimal(positive(be(999'999'999, 4)), 9, 9) == q("0.999999999"));
  // DECIMAL(w,w) for w = 1..8: a partial fraction group, 1..4 bytes, value 1 and the maximum.
  constexpr unsigned kGroupBytes[9] = {0, 1, 1, 2, 2, 3, 3, 4, 4};
  std::uint64_t power = 10;
  for (unsigned width = 1; width <= 8; ++width, power *= 10) {
    CAPTURE(width);
    CHECK(decimal(positive(be(1, kGroupBytes[width])), width, width) ==
          q("0." + std::string(width - 1, '0') + "1"));
    CHECK(decimal(positive(be(power - 1, kGroupBytes[width])), width, width) ==
          q("0." + std::string(width, '9')));
    CHECK(decimal(positive(be(power, kGroupBytes[width])), width, width).starts_with("FAIL: "));
  }
  // DECIMAL(20,6): integer 14 digits (partial 5 in 3 bytes + full), fraction partial 6 (3 bytes).
  CHECK(decimal(positive(concat(concat(be(12, 3), be(345'678'901, 4)), be(50, 3))), 20, 6) ==
        q("12345678901.000050"));
}

TEST_CASE("value speed: DECIMAL(65,30) extremes and negative zero") {
  // Integer: partial 8 digits (4 bytes) + 3 full; fraction: 3 full + partial 3 (2 bytes).
  Bytes nines = be(99'999'999, 4);
  for (int i = 0; i < 6; ++i) nines = concat(nines, be(999'999'999, 4));
  nines = concat(nines, be(999, 2));
  const std::string max_text = std::string(35, '9') + "." + std::string(30, '9');
  CHECK(decimal(positive(nines), 65, 30) == q(max_text));
  CHECK(decimal(negated(positive(nines)), 65, 30) == q("-" + max_text));
  const Bytes zero(30, 0x00);
  CHECK(decimal(positive(zero), 65, 30) == q("0." + std::string(30, '0')));
  CHECK(decimal(negated(positive(zero)), 65, 30) == q("0." + std::string(30, '0')));
  // The smallest fraction digit alone.
  Bytes tiny = zero;
  tiny[29] = 1;
  CHECK(decimal(negated(positive(tiny)), 65, 30) == q("-0." + std::string(29, '0') + "1"));
  // DECIMAL(65,0): the first integer group is 2 digits (1 byte).
  Bytes big = be(10, 1);
  for (int i = 0; i < 7; ++i) big = concat(big, be(0, 4));
  CHECK(decimal(positive(big), 65, 0) == q("10" + std::string(63, '0')));
}

namespace {

std::uint64_t datetime2_packed(std::uint64_t year, std::uint64_t month, std::uint64_t day, std::uint64_t hour,
                               std::uint64_t minute, std::uint64_t second) {
  const std::uint64_t ymd = ((year * 13 + month) << 5) | day;
  return 0x80'0000'0000 + ((ymd << 17) | (hour << 12) | (minute << 6) | second);
}

// The fraction bytes for fsp, from microseconds (cut to the fsp's unit).
Bytes fraction(std::uint32_t micros, unsigned fsp) {
  switch ((fsp + 1) / 2) {
    case 1: return be(micros / 10'000, 1);
    case 2: return be(micros / 100, 2);
    case 3: return be(micros, 3);
    default: return {};
  }
}

}  // namespace

TEST_CASE("value speed: DATETIME2 fraction cut to each fsp, digits of every part") {
  const std::uint64_t packed = datetime2_packed(2024, 2, 29, 3, 4, 5);
  const std::string fraction_digits = "012345";  // 12345 microseconds
  for (unsigned fsp = 0; fsp <= 6; ++fsp) {
    CAPTURE(fsp);
    const Bytes bytes = concat(be(packed, 5), fraction(12'345, fsp));
    const std::string expected = fsp == 0 ? std::string("2024-02-29 03:04:05")
                                          : fmt::format("2024-02-29 03:04:05.{}", fraction_digits.substr(0, fsp));
    CHECK(decode(bytes, [&](ByteReader& in, Writer& out) {
            rowimage::decode_datetime2(in, static_cast<std::uint8_t>(fsp), out);
          }) == q(expected));
  }
  const Bytes small_year = concat(be(datetime2_packed(7, 0, 0, 0, 0, 0), 5), be(999'999, 3));
  CHECK(decode(small_year, [](ByteReader& in, Writer& out) { rowimage::decode_datetime2(in, 6, out); }) ==
        q("0007-00-00 00:00:00.999999"));
  const Bytes last = concat(be(datetime2_packed(9999, 12, 31, 23, 59, 59), 5), be(99, 1));
  CHECK(decode(last, [](ByteReader& in, Writer& out) { rowimage::decode_datetime2(in, 2, out); }) ==
        q("9999-12-31 23:59:59.99"));
}

TEST_CASE("value speed: TIME2 hours of three digits, TIMESTAMP2 zero with a fraction") {
  const std::uint64_t hms = (838U << 12) | (59U << 6) | 59U;
  // fsp 0: 3 bytes, offset 0x800000.
  CHECK(decode(be(0x800000 + hms, 3), [](ByteReader& in, Writer& out) { rowimage::decode_time2(in, 0, out); }) ==
        q("838:59:59"));
  CHECK(decode(be(0x800000 - hms, 3), [](ByteReader& in, Writer& out) { rowimage::decode_time2(in, 0, out); }) ==
        q("-838:59:59"));
  // fsp 6: 6 bytes, (hms << 24) + micros, offset 0x800000000000.
  const std::uint64_t packed = (((std::uint64_t{100} << 12) | (2U << 6) | 3U) << 24) + 40;
  CHECK(decode(be(0x8000'0000'0000 + packed, 6), [](ByteReader& in, Writer& out) {
          rowimage::decode_time2(in, 6, out);
        }) == q("100:02:03.000040"));
  CHECK(decode(be(0x8000'0000'0000 - packed, 6), [](ByteReader& in, Writer& out) {
          rowimage::decode_time2(in, 5, out);
        }) == q("-100:02:03.00004"));
  // The zero timestamp writes a zero fraction whatever its bytes hold.
  CHECK(decode(concat(be(0, 4), be(0xFFFFFF, 3)), [](ByteReader& in, Writer& out) {
          rowimage::decode_timestamp2(in, 6, out);
        }) == q("0000-00-00 00:00:00.000000"));
  // 2038-01-19 03:14:07.5 UTC.
  CHECK(decode(concat(be(2'147'483'647, 4), be(50, 1)), [](ByteReader& in, Writer& out) {
          rowimage::decode_timestamp2(in, 1, out);
        }) == q("2038-01-19 03:14:07.5Z"));
}
