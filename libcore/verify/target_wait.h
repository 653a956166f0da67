#pragma once

// Waiting for a target of cdc-apply --verify to apply a source position, by reading its
// position table again and again (every kind of target the same way); and what that table holds.

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "gtid/position.h"
#include "mysql/connection.h"
#include "util/result.h"

namespace cdc::verify {

// The position a target's position table `position_table` holds, from its rows as
// apply::read_position_sql() selects them: Errc::config when it holds none (cdc-apply has
// applied nothing there yet).
[[nodiscard]] Result<gtid::Position> held_position(const mysql::QueryResult& rows, std::string_view position_table);

class TargetWait {
 public:
  // wait: how long wait_for waits (--verify-wait).
  explicit TargetWait(std::chrono::milliseconds wait) : wait_(wait) {}
  // The position the target holds once it includes wanted (read by `position`); nullopt when
  // it did not get there in time.
  [[nodiscard]] Result<std::optional<gtid::Position>> wait_for(const gtid::Position& wanted,
                                                               const std::function<Result<gtid::Position>()>& position);

 private:
  std::chrono::milliseconds wait_;
  // The last wait that timed out: what it waited for and where the target stood. A later wait
  // for as much or more, with the target still there, gives up at once: on a source whose
  // last transactions were not selected the target only moves with the next selected change,
  // and each differing chunk would otherwise wait --verify-wait again.
  std::optional<gtid::Position> stalled_wanted_;
  std::string stalled_at_;
};

}  // namespace cdc::verify
