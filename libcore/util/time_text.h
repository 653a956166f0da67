#pragma once

// A moment as --from and --until take it: "2026-11-30T10:00:00Z", or the local time with its
// offset from UTC ("2026-11-30T11:00:00+01:00", what `date --iso-8601=seconds` prints). The
// zone is never guessed from the machine's: a pipeline's cron host and its database are often
// in different zones.

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/result.h"

namespace cdc {

// Microseconds since 1970-01-01T00:00:00Z: MySQL 8 writes commit times in microseconds,
// binlog event headers in whole seconds.
struct UtcTime {
  std::int64_t micros = 0;

  [[nodiscard]] static constexpr UtcTime from_seconds(std::int64_t seconds) noexcept { return {seconds * 1'000'000}; }
  friend constexpr auto operator<=>(UtcTime, UtcTime) noexcept = default;
};

// Whether text has the shape of a date and time (four digits, '-', two digits, '-', two
// digits, then 'T' or a space): no position has it (a MariaDB GTID position has no 'T' or
// space), so --from and --until tell the forms apart before parsing either.
[[nodiscard]] bool looks_like_time(std::string_view text) noexcept;

// YYYY-MM-DD, 'T' or a space, HH:MM[:SS[.ffffff]], then Z or +HH:MM / -HH:MM (also +HHMM,
// +HH). Errc::usage naming the accepted form otherwise.
[[nodiscard]] Result<UtcTime> parse_time(std::string_view text);

// "2026-11-30T10:00:00Z", with ".ffffff" when the time is not a whole second.
[[nodiscard]] std::string format_time(UtcTime time);

}  // namespace cdc
