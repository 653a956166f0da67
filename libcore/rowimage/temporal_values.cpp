// Temporal row values: YEAR, DATE, TIME/TIME2, DATETIME/DATETIME2, TIMESTAMP/TIMESTAMP2.
// See scalar_values.h for the output forms.
//
// The binary forms follow the server's my_time.cc (sql-common/my_time.cc in 5.6/5.7,
// mysys/my_time.cc in 8.0): my_time_packed_from_binary, my_datetime_packed_from_binary,
// my_timestamp_from_binary and the TIME_from_longlong_*_packed unpackers. MariaDB writes
// the same TIME2/DATETIME2/TIMESTAMP2 forms (sql/compat56.cc).
//
// The fraction of the "2" types takes (fsp + 1) / 2 bytes, big-endian, whatever the fsp's
// parity: fsp 1-2 one byte of hundredths, fsp 3-4 two bytes of 1/10000 s, fsp 5-6 three
// bytes of microseconds. Digits below the column's fsp are zero as the server writes them;
// if not, they are cut, as the server's my_useconds_to_str cuts them.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "rowimage/digit_pairs.h"
#include "rowimage/scalar_values.h"
#include "rowimage/value_failure.h"

namespace cdc::rowimage {

namespace {

constexpr std::array<std::uint32_t, 7> kPowersOf10 = {1, 10, 100, 1'000, 10'000, 100'000, 1'000'000};
constexpr std::uint32_t kMicrosPerSecond = 1'000'000;

// Longest text: "YYYY-MM-DD HH:MM:SS.ffffffZ" (27 characters).
using TextBuffer = std::array<char, 32>;

// Two digits of value < 100.
char* put_two(char* p, std::uint32_t value) {
  std::memcpy(p, &kDigitPairs[2 * value], 2);
  return p + 2;
}

// Writes `value` with at least `min_width` digits, zero-padded; returns the end. The general
// case, for what put_two/put_four do not cover (e.g. TIME's hours above 99).
char* put_number(char* p, std::uint32_t value, unsigned min_width) {
  unsigned width = 1;
  for (std::uint32_t rest = value / 10; rest != 0; rest /= 10) ++width;
  width = std::max(width, min_width);
  char* const end = p + width;
  for (char* q = end; q != p; value /= 10) *--q = static_cast<char>('0' + value % 10);
  return end;
}

// At least two digits.
char* put_two_or_more(char* p, std::uint32_t value) {
  return value < 100 ? put_two(p, value) : put_number(p, value, 2);
}

char* put_char(char* p, char c) {
  *p = c;
  return p + 1;
}

// "YYYY-MM-DD"
[[gnu::always_inline]] inline char* put_date(char* p, std::uint32_t year, std::uint32_t month, std::uint32_t day) {
  if (year < 10'000) {
    p = put_two(p, year / 100);
    p = put_two(p, year % 100);
  } else {
    p = put_number(p, year, 4);
  }
  p = put_char(p, '-');
  p = put_two_or_more(p, month);
  p = put_char(p, '-');
  return put_two_or_more(p, day);
}

// "HH:MM:SS", hours with at least two digits (TIME goes up to 838).
[[gnu::always_inline]] inline char* put_clock(char* p, std::uint32_t hour, std::uint32_t minute, std::uint32_t second) {
  p = put_two_or_more(p, hour);
  p = put_char(p, ':');
  p = put_two_or_more(p, minute);
  p = put_char(p, ':');
  return put_two_or_more(p, second);
}

// ".fff" with exactly fsp digits of `micros`, or nothing for fsp 0. For micros below one
// second (all callers check that), the fsp digits are the first fsp of the six-digit
// microseconds: all six are written and the end is put after the fsp-th. The buffer must
// leave room for all six.
[[gnu::always_inline]] inline char* put_fraction(char* p, std::uint32_t micros, unsigned fsp) {
  if (fsp == 0) return p;
  p = put_char(p, '.');
  if (micros >= kMicrosPerSecond) return put_number(p, micros / kPowersOf10[6 - fsp], fsp);
  put_two(p, micros / 10'000);
  put_two(p + 2, micros / 100 % 100);
  put_two(p + 4, micros % 100);
  return p + fsp;
}

void write_text(ndjson::Writer& out, const TextBuffer& text, const char* end) {
  out.ascii_string(std::string_view(text.data(), static_cast<std::size_t>(end - text.data())));
}

constexpr std::size_t fraction_bytes(unsigned fsp) { return (fsp + 1) / 2; }

bool check_fsp(ByteReader& in, std::uint8_t fsp, std::string_view type) {
  if (fsp <= kMaxFsp) return true;
  fail_at(in, in.offset(), "{}({}): fractional-second precision above {}", type, fsp, kMaxFsp);
  return false;
}

// Big-endian fields of a value whose bytes the caller has already taken from the reader in
// one bounds-checked read: the fields need no check of their own.
class BigEndian {
 public:
  explicit BigEndian(std::span<const std::uint8_t> bytes) : p_(bytes.data()) {}
  std::uint64_t take(std::size_t width) {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < width; ++i) value = (value << 8) | p_[i];
    p_ += width;
    return value;
  }

 private:
  const std::uint8_t* p_;
};

// The fraction of DATETIME2 and TIMESTAMP2 in microseconds. The server reads the 2- and
// 3-byte forms as signed, but a valid fraction is below 1000000 either way, and the
// callers reject anything above 999999, which covers every would-be negative value too.
std::uint64_t read_fraction_micros(BigEndian& value, unsigned fsp) {
  switch (fraction_bytes(fsp)) {
    case 1: return value.take(1) * 10'000;
    case 2: return value.take(2) * 100;
    case 3: return value.take(3);
    default: return 0;
  }
}

struct CivilDate {
  std::uint32_t year;
  std::uint32_t month;
  std::uint32_t day;
};

// Proleptic Gregorian date of a day count from 1970-01-01 (day 0). Counts days from
// 0000-03-01 instead, so that each year ends with its leap day, and splits them into
// 400-year eras of 146097 days, inside which the calendar repeats.
constexpr CivilDate civil_from_days(std::uint32_t days_since_epoch) {
  constexpr std::uint32_t kDaysFrom0000_03_01To1970_01_01 = 719'468;
  constexpr std::uint32_t kDaysPerEra = 146'097;
  const std::uint32_t days = days_since_epoch + kDaysFrom0000_03_01To1970_01_01;
  const std::uint32_t era = days / kDaysPerEra;
  const std::uint32_t day_of_era = days - era * kDaysPerEra;  // [0, 146096]
  // Years into the era: 365 days each, plus a leap day every 4 years (1460 days), except
  // every 100 years (36524 days), except every 400 (the era's last day, 146096).
  const std::uint32_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;  // [0, 399]
  const std::uint32_t day_of_year =
      day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);  // [0, 365]
  // Months from March: 31,30,31,30,31 repeat, so month lengths follow 153 days per 5 months.
  const std::uint32_t month_from_march = (5 * day_of_year + 2) / 153;  // [0, 11]
  const std::uint32_t day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
  const std::uint32_t month = month_from_march < 10 ? month_from_march + 3 : month_from_march - 9;
  const std::uint32_t year = era * 400 + year_of_era + (month <= 2 ? 1U : 0U);
  return {year, month, day};
}

static_assert(civil_from_days(0).year == 1970 && civil_from_days(0).month == 1 &&
              civil_from_days(0).day == 1);
static_assert(civil_from_days(11'016).year == 2000 && civil_from_days(11'016).month == 2 &&
              civil_from_days(11'016).day == 29);

// TIMESTAMP and TIMESTAMP2 share this: seconds since the epoch, in UTC, with a Z; or the
// zero timestamp. The server reserves 0 seconds for '0000-00-00 00:00:00' (TIMESTAMP's
// range starts at 1970-01-01 00:00:01 UTC) and reads it as zero whatever the fraction
// bytes hold (sql/field.cc Field_timestampf::get_date_internal_at), so the fraction of a
// zero timestamp is written as zeros.
void write_timestamp(ndjson::Writer& out, std::uint32_t seconds, std::uint32_t micros, unsigned fsp) {
  TextBuffer text;
  char* p = text.data();
  if (seconds == 0) {
    p = put_date(p, 0, 0, 0);
    p = put_char(p, ' ');
    p = put_clock(p, 0, 0, 0);
    p = put_fraction(p, 0, fsp);
    write_text(out, text, p);
    return;
  }
  constexpr std::uint32_t kSecondsPerDay = 86'400;
  const CivilDate date = civil_from_days(seconds / kSecondsPerDay);
  const std::uint32_t second_of_day = seconds % kSecondsPerDay;
  p = put_date(p, date.year, date.month, date.day);
  p = put_char(p, ' ');
  p = put_clock(p, second_of_day / 3600, second_of_day / 60 % 60, second_of_day % 60);
  p = put_fraction(p, micros, fsp);
  p = put_char(p, 'Z');
  write_text(out, text, p);
}

}  // namespace

void decode_year(ByteReader& in, ndjson::Writer& out) {
  const std::uint64_t raw = in.uint_le(1, "YEAR");
  if (!in.ok()) return;
  // Field_year: 0 is the zero year '0000'; 1..255 are 1901..2155.
  out.unsigned_integer(raw == 0 ? 0 : 1900 + raw);
}

// Field_newdate (the DATE of every server since 5.0): day in bits 0-4, month in bits 5-8,
// year in bits 9-23 (my_date_to_binary: day + month * 32 + year * 512).
void decode_date(ByteReader& in, ndjson::Writer& out) {
  const std::uint64_t start = in.offset();
  const auto raw = static_cast<std::uint32_t>(in.uint_le(3, "DATE"));
  if (!in.ok()) return;
  const std::uint32_t day = raw & 0x1FU;
  const std::uint32_t month = (raw >> 5) & 0x0FU;
  const std::uint32_t year = raw >> 9;
  if (month > 12 || year > 9999) {
    fail_at(in, start, "DATE {}-{}-{} out of range", year, month, day);
    return;
  }
  TextBuffer text;
  write_text(out, text, put_date(text.data(), year, month, day));
}

// Old TIME (Field_time, before 5.6.4): a signed 3-byte integer [-]HHMMSS, read as the
// server's Field_time::get_time reads it (sint3korr). mysqlbinlog's log_event_print_value
// reads it unsigned, which garbles negative times; we do not copy that.
void decode_time(ByteReader& in, ndjson::Writer& out) {
  const std::uint64_t start = in.offset();
  const std::uint64_t raw = in.uint_le(3, "TIME");
  if (!in.ok()) return;
  const bool negative = (raw & 0x800000U) != 0;
  const auto magnitude = static_cast<std::uint32_t>(negative ? 0x1000000U - raw : raw);
  const std::uint32_t hour = magnitude / 10'000;
  const std::uint32_t minute = magnitude / 100 % 100;
  const std::uint32_t second = magnitude % 100;
  if (hour > 838 || minute > 59 || second > 59) {
    fail_at(in, start, "TIME {}{} is not [-]HHMMSS within 838:59:59", negative ? "-" : "", magnitude);
    return;
  }
  TextBuffer text;
  char* p = text.data();
  if (negative) p = put_char(p, '-');
  write_text(out, text, put_clock(p, hour, minute, second));
}

// TIME2 (my_time_packed_from_binary). In memory a time is packed as
// ((hour << 12 | minute << 6 | second) << 24) + microseconds, negated when negative
// (hour: 10 bits, minute and second: 6 bits). On disk that number goes offset-binary:
//   fsp 0:    3 bytes, (packed >> 24) + 0x800000
//   fsp 1-4:  3 bytes as for fsp 0 with packed >> 24 rounded down, then the fraction as
//             1 or 2 bytes; for a negative time with a fraction that is 0x100 (0x10000)
//             minus the fraction, and the integer part one lower. So -00:00:01.10 at
//             fsp 2 is 7F FF FE F6: integer -2, fraction 0x100 - 0xF6 = 10 hundredths
//             taken off -1 second.
//   fsp 5-6:  6 bytes, packed + 0x800000000000
void decode_time2(ByteReader& in, std::uint8_t fsp, ndjson::Writer& out) {
  const std::uint64_t start = in.offset();
  if (!check_fsp(in, fsp, "TIME2")) return;
  const std::span<const std::uint8_t> bytes = in.bytes(3 + fraction_bytes(fsp), "TIME2");
  if (!in.ok()) return;
  BigEndian value(bytes);

  constexpr std::int64_t kIntOffset = 0x800000;              // TIMEF_INT_OFS
  constexpr std::int64_t kFracUnits = std::int64_t{1} << 24;  // one second in packed form
  std::int64_t packed = 0;
  if (fsp >= 5) {
    packed = static_cast<std::int64_t>(value.take(6)) - kIntOffset * kFracUnits;  // TIMEF_OFS
  } else {
    std::int64_t int_part = static_cast<std::int64_t>(value.take(3)) - kIntOffset;
    std::int64_t fraction = 0;
    if (fsp > 0) {
      const std::size_t width = fraction_bytes(fsp);  // 1 or 2
      fraction = static_cast<std::int64_t>(value.take(width));
      if (int_part < 0 && fraction != 0) {
        ++int_part;
        fraction -= std::int64_t{1} << (8 * width);
      }
      fraction *= width == 1 ? 10'000 : 100;  // hundredths or 1/10000 s, to microseconds
    }
    packed = int_part * kFracUnits + fraction;
  }

  const bool negative = packed < 0;
  // |packed| < 2^47, so negating is safe.
  const auto magnitude = static_cast<std::uint64_t>(negative ? -packed : packed);
  const std::uint64_t hms = magnitude >> 24;
  const auto micros = static_cast<std::uint32_t>(magnitude & 0xFFFFFFU);
  const auto hour = static_cast<std::uint32_t>(hms >> 12);  // includes the reserved bit
  const auto minute = static_cast<std::uint32_t>((hms >> 6) & 0x3FU);
  const auto second = static_cast<std::uint32_t>(hms & 0x3FU);
  if (hour > 838 || minute > 59 || second > 59 || micros >= kMicrosPerSecond) {
    fail_at(in, start, "TIME2({}) {}{}:{}:{}.{} out of range", fsp, negative ? "-" : "", hour, minute,
            second, micros);
    return;
  }
  TextBuffer text;
  char* p = text.data();
  if (negative) p = put_char(p, '-');
  p = put_clock(p, hour, minute, second);
  write_text(out, text, put_fraction(p, micros, fsp));
}

// Old DATETIME (Field_datetime, before 5.6.4): the 8-byte integer YYYYMMDDhhmmss, as
// log_event_print_value prints it.
void decode_datetime(ByteReader& in, ndjson::Writer& out) {
  const std::uint64_t start = in.offset();
  const std::uint64_t raw = in.uint_le(8, "DATETIME");
  if (!in.ok()) return;
  // 9999-12-31 23:59:59 is the largest; checking that first keeps every part in 32 bits.
  if (raw > 99'991'231'235'959) {
    fail_at(in, start, "DATETIME {} is beyond 9999-12-31 23:59:59", raw);
    return;
  }
  const auto date = static_cast<std::uint32_t>(raw / 1'000'000);
  const auto time = static_cast<std::uint32_t>(raw % 1'000'000);
  const std::uint32_t year = date / 10'000;
  const std::uint32_t month = date / 100 % 100;
  const std::uint32_t day = date % 100;
  const std::uint32_t hour = time / 10'000;
  const std::uint32_t minute = time / 100 % 100;
  const std::uint32_t second = time % 100;
  if (month > 12 || day > 31 || hour > 23 || minute > 59 || second > 59) {
    fail_at(in, start, "DATETIME {} is not YYYYMMDDhhmmss", raw);
    return;
  }
  TextBuffer text;
  char* p = put_date(text.data(), year, month, day);
  p = put_char(p, ' ');
  write_text(out, text, put_clock(p, hour, minute, second));
}

// DATETIME2 (my_datetime_packed_from_binary): 40 bits big-endian, offset by 0x8000000000
// (DATETIMEF_INT_OFS), holding year * 13 + month (17 bits), day (5), hour (5), minute (6),
// second (6); then the fraction. DATETIME is never negative, so the offset's sign bit is
// always set.
void decode_datetime2(ByteReader& in, std::uint8_t fsp, ndjson::Writer& out) {
  const std::uint64_t start = in.offset();
  if (!check_fsp(in, fsp, "DATETIME2")) return;
  const std::span<const std::uint8_t> bytes = in.bytes(5 + fraction_bytes(fsp), "DATETIME2");
  if (!in.ok()) return;
  BigEndian value(bytes);
  constexpr std::uint64_t kIntOffset = 0x80'0000'0000;  // DATETIMEF_INT_OFS
  const std::uint64_t raw = value.take(5);
  const std::uint64_t micros = read_fraction_micros(value, fsp);
  if (raw < kIntOffset) {
    fail_at(in, start, "DATETIME2({}) is negative (sign bit clear)", fsp);
    return;
  }
  const std::uint64_t packed = raw - kIntOffset;
  const std::uint64_t ymd = packed >> 17;
  const auto hms = static_cast<std::uint32_t>(packed & 0x1FFFFU);
  const auto year_month = static_cast<std::uint32_t>(ymd >> 5);
  const std::uint32_t year = year_month / 13;
  const std::uint32_t month = year_month % 13;
  const auto day = static_cast<std::uint32_t>(ymd & 0x1FU);
  const std::uint32_t hour = hms >> 12;
  const std::uint32_t minute = (hms >> 6) & 0x3FU;
  const std::uint32_t second = hms & 0x3FU;
  if (year > 9999 || hour > 23 || minute > 59 || second > 59 || micros >= kMicrosPerSecond) {
    fail_at(in, start, "DATETIME2({}) {}-{}-{} {}:{}:{}.{} out of range", fsp, year, month, day, hour,
            minute, second, micros);
    return;
  }
  TextBuffer text;
  char* p = put_date(text.data(), year, month, day);
  p = put_char(p, ' ');
  p = put_clock(p, hour, minute, second);
  write_text(out, text, put_fraction(p, static_cast<std::uint32_t>(micros), fsp));
}

// Old TIMESTAMP (Field_timestamp, before 5.6.4): 4 bytes little-endian seconds.
void decode_timestamp(ByteReader& in, ndjson::Writer& out) {
  const auto seconds = static_cast<std::uint32_t>(in.uint_le(4, "TIMESTAMP"));
  if (!in.ok()) return;
  write_timestamp(out, seconds, 0, 0);
}

// TIMESTAMP2 (my_timestamp_from_binary): 4 bytes BIG-endian seconds, then the fraction.
void decode_timestamp2(ByteReader& in, std::uint8_t fsp, ndjson::Writer& out) {
  const std::uint64_t start = in.offset();
  if (!check_fsp(in, fsp, "TIMESTAMP2")) return;
  const std::span<const std::uint8_t> bytes = in.bytes(4 + fraction_bytes(fsp), "TIMESTAMP2");
  if (!in.ok()) return;
  BigEndian value(bytes);
  const auto seconds = static_cast<std::uint32_t>(value.take(4));
  const std::uint64_t micros = read_fraction_micros(value, fsp);
  if (seconds != 0 && micros >= kMicrosPerSecond) {
    fail_at(in, start, "TIMESTAMP2({}) fraction {} out of range", fsp, micros);
    return;
  }
  write_timestamp(out, seconds, static_cast<std::uint32_t>(micros), fsp);
}

}  // namespace cdc::rowimage
