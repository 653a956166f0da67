#pragma once

// The reconnect schedule every cdc tool follows (cdc-stream's, man/cdc-stream.1 --retry-for):
// after the n-th failure in a row, wait 250 ms << n (0.5 s, 1 s, 2 s, ...), at most 30 s; give
// up once the failures have lasted longer than --retry-for seconds (0: never give up).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

namespace cdc {

class RetrySchedule {
 public:
  using Clock = std::chrono::steady_clock;

  explicit RetrySchedule(unsigned retry_for_seconds) : retry_for_seconds_(retry_for_seconds) {}

  // After a failure: how long to wait before the next try, or nullopt when the failures have
  // lasted longer than --retry-for.
  [[nodiscard]] std::optional<std::chrono::milliseconds> after_failure() {
    if (failures_in_a_row_++ == 0) failing_since_ = Clock::now();
    if (retry_for_seconds_ > 0 && Clock::now() - failing_since_ > std::chrono::seconds(retry_for_seconds_))
      return std::nullopt;
    return std::chrono::milliseconds(
        std::min<std::int64_t>(30000, std::int64_t{250} << std::min<unsigned>(failures_in_a_row_, 7)));
  }
  // The work went through: the next failure starts a new count.
  void succeeded() noexcept { failures_in_a_row_ = 0; }
  [[nodiscard]] unsigned retry_for_seconds() const noexcept { return retry_for_seconds_; }

 private:
  unsigned retry_for_seconds_;
  unsigned failures_in_a_row_ = 0;
  Clock::time_point failing_since_{};
};

}  // namespace cdc
