#pragma once

#include <chrono>

namespace cdc::stream {

// SIGINT and SIGTERM during a live run: finish the transaction in flight, save, stop. A
// signal between transactions shuts the replication socket down, which wakes the blocked
// read; inside a transaction it only sets the flag, and the run stops at the commit.
class StopSignals {
 public:
  // Installs the handlers for the object's lifetime; the previous ones come back after.
  StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  ~StopSignals();

  // Clears a stop asked for by an earlier run in this process.
  static void reset() noexcept;
  [[nodiscard]] static bool requested() noexcept;
  // The socket a signal shuts down while the run waits between transactions; -1: none.
  static void set_socket(int fd) noexcept;
  static void set_waiting_between_transactions(bool waiting) noexcept;
  // Sleeps for `total`, or less when a stop is asked for; false then.
  static bool sleep_unless_stopped(std::chrono::milliseconds total);
};

}  // namespace cdc::stream
