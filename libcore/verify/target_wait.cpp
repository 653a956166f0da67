#include "verify/target_wait.h"

#include <thread>

#include "apply/applier.h"

namespace cdc::verify {

namespace {

// Short: the target is read as soon as it has applied the source's position, so that few
// changes after that position are in it (each one a row compared again).
constexpr auto kPollEvery = std::chrono::milliseconds(20);

}  // namespace

Result<std::optional<gtid::Position>> TargetWait::wait_for(const gtid::Position& wanted,
                                                           const std::function<Result<gtid::Position>()>& position) {
  const auto deadline = std::chrono::steady_clock::now() + wait_;
  for (bool first = true;; first = false) {
    auto held = position();
    if (!held) return fail(held.error());
    auto applied = apply::already_applied(*held, wanted);
    if (!applied) return fail(applied.error());
    if (*applied) return std::optional<gtid::Position>(std::move(*held));
    if (first && stalled_wanted_ && held->to_string() == stalled_at_ &&
        gtid::includes(wanted, *stalled_wanted_).value_or(false))
      return std::optional<gtid::Position>();
    if (std::chrono::steady_clock::now() >= deadline) {
      stalled_wanted_ = wanted;
      stalled_at_ = held->to_string();
      return std::optional<gtid::Position>();
    }
    std::this_thread::sleep_for(kPollEvery);
  }
}

}  // namespace cdc::verify
