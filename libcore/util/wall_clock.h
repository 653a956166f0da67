#pragma once

// The machine's clock in milliseconds since 1970-01-01T00:00:00Z: the "ts_ms" of lines a tool
// writes of its own (snapshot watermarks, merged rows, discard lines), which are times of day,
// not intervals (those use steady_clock).

#include <chrono>
#include <cstdint>

namespace cdc {

[[nodiscard]] inline std::int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace cdc
