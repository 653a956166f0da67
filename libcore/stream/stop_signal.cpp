#include "stream/stop_signal.h"

#include <sys/socket.h>

#include <atomic>
#include <csignal>
#include <thread>

#include "util/fault_plan.h"

namespace cdc::stream {

namespace {

// What the signal handler and the read loop share: lock-free atomics only.
std::atomic<bool> g_stop_requested{false};
std::atomic<bool> g_waiting_between_transactions{false};
std::atomic<int> g_socket{-1};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

struct sigaction g_old_int {};
struct sigaction g_old_term {};

extern "C" void on_stop_signal(int) {
  g_stop_requested.store(true);
  const int fd = g_socket.load();
  if (g_waiting_between_transactions.load() && fd >= 0) ::shutdown(fd, SHUT_RDWR);
}

}  // namespace

StopSignals::StopSignals() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &g_old_int);
  sigaction(SIGTERM, &action, &g_old_term);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  g_socket.store(-1);
}

void StopSignals::reset() noexcept { g_stop_requested.store(false); }
bool StopSignals::requested() noexcept { return g_stop_requested.load(); }
void StopSignals::set_socket(int fd) noexcept { g_socket.store(fd); }
void StopSignals::set_waiting_between_transactions(bool waiting) noexcept {
  g_waiting_between_transactions.store(waiting);
}

bool StopSignals::sleep_unless_stopped(std::chrono::milliseconds total) {
  const unsigned scale = fault::time_scale();
  const auto tick = std::chrono::microseconds(50000 / scale);
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(total) / scale;
  while (std::chrono::steady_clock::now() < until) {
    if (requested()) return false;
    (void)fault::at("stream.pause");
    if (requested()) return false;
    std::this_thread::sleep_for(tick);
  }
  return !requested();
}

}  // namespace cdc::stream
