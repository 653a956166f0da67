// Row-image numeric values: integers, FLOAT/DOUBLE, DECIMAL and BIT.
//
// Expected bytes come from independent places: hand-computed literals (commented field by
// field), the test-only encoders of rowimage_scalar_support.h (checked against those literals)
// and std::chrono's calendar for the UTC dates. Every value is also decoded with each of its
// bytes cut off, from an exact-size heap copy, so ASan catches any read past the value.

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "rowimage_scalar_support.h"

using namespace scalar_test;  // NOLINT(google-build-using-namespace): the tests' own helpers

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
