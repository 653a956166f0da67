#pragma once

// Days between 1970-01-01 and a date of the proleptic Gregorian calendar (H. Hinnant's
// days_from_civil): cdc-snapshot's TIMESTAMP values (read in UTC), Debezium's DATE and
// DATETIME numbers (libcore/output).

#include <cstdint>

namespace cdc {

[[nodiscard]] constexpr std::int64_t days_from_civil(std::int64_t year, unsigned month, unsigned day) noexcept {
  year -= month <= 2 ? 1 : 0;
  const std::int64_t era = (year >= 0 ? year : year - 399) / 400;
  const auto year_of_era = static_cast<unsigned>(year - era * 400);
  const unsigned day_of_year = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  const unsigned day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + static_cast<std::int64_t>(day_of_era) - 719468;
}
static_assert(days_from_civil(1970, 1, 1) == 0 && days_from_civil(2024, 9, 4) == 19970 &&
              days_from_civil(1000, 1, 1) == -354285);

}  // namespace cdc
