// Row-image temporal values: YEAR, DATE, TIME, DATETIME and TIMESTAMP, old and new forms.
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
