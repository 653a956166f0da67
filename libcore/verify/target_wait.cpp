#include "verify/target_wait.h"

#include <fmt/format.h>

#include <thread>

#include "apply/applied_state.h"
#include "apply/applier.h"

namespace cdc::verify {

namespace {

// Short: the target is read as soon as it has applied the source's position, so that few
// changes after that position are in it (each one a row compared again).
constexpr auto kPollEvery = std::chrono::milliseconds(20);

}  // namespace

Result<gtid::Position> held_position(const mysql::QueryResult& rows, std::string_view position_table) {
  auto state = apply::parse_position_rows(rows);
  if (!state) return fail(state.error());
  if (state->position.empty())
    return fail(Errc::config, fmt::format("the target's position table {} holds no position: cdc-apply has applied "
                                          "nothing there yet, so there is nothing to verify",
                                          position_table));
  return gtid::Position::parse(state->position);
}

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
