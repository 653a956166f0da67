#include "util/time_text.h"

#include <fmt/format.h>

#include "util/civil_date.h"

namespace cdc {

namespace {

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// Reads exactly `count` digits at text[at...]; false when they are not all there.
bool read_digits(std::string_view text, std::size_t& at, std::size_t count, int& value) noexcept {
  if (at + count > text.size()) return false;
  value = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const char c = text[at + i];
    if (!is_digit(c)) return false;
    value = value * 10 + (c - '0');
  }
  at += count;
  return true;
}

constexpr bool leap_year(int year) noexcept { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

constexpr int days_in_month(int year, int month) noexcept {
  constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && leap_year(year) ? 29 : kDays[month - 1];
}

Error malformed(std::string_view text, std::string_view why) {
  return Error{Errc::usage,
               fmt::format("'{}' is not a time cdc reads ({}): give YYYY-MM-DDTHH:MM[:SS[.ffffff]] with its zone, "
                           "e.g. 2026-11-30T10:00:00Z (UTC) or 2026-11-30T11:00:00+01:00 (what date "
                           "--iso-8601=seconds prints)",
                           text, why)};
}

// civil_from_days's inverse of days_from_civil (H. Hinnant), for formatting.
struct Civil {
  std::int64_t year;
  unsigned month;
  unsigned day;
};
constexpr Civil civil_from_days(std::int64_t days) noexcept {
  days += 719468;
  const std::int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const auto day_of_era = static_cast<unsigned>(days - era * 146097);
  const unsigned year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const unsigned day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const unsigned shifted_month = (5 * day_of_year + 2) / 153;
  const unsigned day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
  const unsigned month = shifted_month < 10 ? shifted_month + 3 : shifted_month - 9;
  return {static_cast<std::int64_t>(year_of_era) + era * 400 + (month <= 2 ? 1 : 0), month, day};
}
static_assert(civil_from_days(0).year == 1970 && civil_from_days(20422).month == 11 &&
              civil_from_days(20422).day == 30);

}  // namespace

bool looks_like_time(std::string_view text) noexcept {
  if (text.size() < 11) return false;
  for (const std::size_t i : {0U, 1U, 2U, 3U, 5U, 6U, 8U, 9U})
    if (!is_digit(text[i])) return false;
  return text[4] == '-' && text[7] == '-' && (text[10] == 'T' || text[10] == 't' || text[10] == ' ');
}

Result<UtcTime> parse_time(std::string_view text) {
  if (!looks_like_time(text)) return fail(malformed(text, "it does not start with a date and 'T'"));
  std::size_t at = 0;
  int year = 0;
  int month = 0;
  int day = 0;
  int hour = 0;
  int minute = 0;
  int second = 0;
  (void)read_digits(text, at, 4, year);
  ++at;
  (void)read_digits(text, at, 2, month);
  ++at;
  (void)read_digits(text, at, 2, day);
  ++at;
  if (!read_digits(text, at, 2, hour) || at >= text.size() || text[at++] != ':' || !read_digits(text, at, 2, minute))
    return fail(malformed(text, "the time of day is not HH:MM"));
  if (at < text.size() && text[at] == ':') {
    ++at;
    if (!read_digits(text, at, 2, second)) return fail(malformed(text, "the seconds are not two digits"));
  }
  std::int64_t micros = 0;
  if (at < text.size() && text[at] == '.') {
    ++at;
    std::size_t digits = 0;
    while (at < text.size() && is_digit(text[at])) {
      if (++digits > 6) return fail(malformed(text, "more than six digits after the second (microseconds)"));
      micros = micros * 10 + (text[at++] - '0');
    }
    if (digits == 0) return fail(malformed(text, "no digits after the '.'"));
    for (std::size_t i = digits; i < 6; ++i) micros *= 10;
  }
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) || hour > 23 ||
      minute > 59 || second > 59)
    return fail(malformed(text, "no such date or time of day"));
  std::int64_t offset_seconds = 0;
  if (at == text.size())
    return fail(Error{Errc::usage,
                      fmt::format("'{}' has no zone: add Z for UTC or the offset from UTC, e.g. {}Z or {}+01:00 "
                                  "(what date --iso-8601=seconds prints); cdc does not guess the zone",
                                  text, text, text)});
  if (text[at] == 'Z' || text[at] == 'z') {
    ++at;
  } else if (text[at] == '+' || text[at] == '-') {
    const bool negative = text[at++] == '-';
    int offset_hours = 0;
    int offset_minutes = 0;
    if (!read_digits(text, at, 2, offset_hours)) return fail(malformed(text, "the zone offset is not +HH:MM"));
    if (at < text.size() && text[at] == ':') ++at;
    if (at < text.size() && !read_digits(text, at, 2, offset_minutes))
      return fail(malformed(text, "the zone offset is not +HH:MM"));
    if (offset_hours > 14 || offset_minutes > 59) return fail(malformed(text, "no zone is that far from UTC"));
    offset_seconds = (offset_hours * 3600 + offset_minutes * 60) * (negative ? -1 : 1);
  } else {
    return fail(malformed(text, fmt::format("'{}' is not a zone", text.substr(at))));
  }
  if (at != text.size()) return fail(malformed(text, fmt::format("'{}' after the zone", text.substr(at))));
  const std::int64_t seconds = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86'400 +
                               hour * 3600 + minute * 60 + second - offset_seconds;
  return UtcTime{seconds * 1'000'000 + micros};
}

std::string format_time(UtcTime time) {
  std::int64_t seconds = time.micros / 1'000'000;
  std::int64_t micros = time.micros % 1'000'000;
  if (micros < 0) {
    micros += 1'000'000;
    --seconds;
  }
  std::int64_t days = seconds / 86'400;
  std::int64_t in_day = seconds % 86'400;
  if (in_day < 0) {
    in_day += 86'400;
    --days;
  }
  const Civil date = civil_from_days(days);
  std::string text = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", date.year, date.month, date.day,
                                 in_day / 3600, in_day / 60 % 60, in_day % 60);
  if (micros != 0) text += fmt::format(".{:06}", micros);
  text += 'Z';
  return text;
}

}  // namespace cdc
