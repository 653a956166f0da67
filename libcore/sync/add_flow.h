#pragma once

// An addition of tables run to its end (man cdc-sync, "Adding and dropping tables"; the files
// and the decisions are in sync/add_resume.h): the new tables' snapshot in DIR/add.N while the
// stream of the tables synced so far goes on in the background, then the switch-over, each
// step left in a file so that a rerun after any stop or crash goes on from there.

#include <optional>
#include <string>
#include <string_view>

#include "sync/runner.h"
#include "sync/state_dir.h"
#include "util/result.h"

namespace cdc::sync {

// DIR/add.N: the addition in progress (the one without its done file), and the name a new one
// takes.
struct AdditionDirs {
  std::optional<std::string> in_progress;
  std::string next;
};
[[nodiscard]] AdditionDirs find_additions(const SyncState& dir);

// Makes DIR/name whole (under name.tmp, then renamed): its previous-settings (the directory's
// settings so far) and settings (the run's).
[[nodiscard]] Result<void> begin_addition(const SyncState& dir, const std::string& name, std::string_view previous,
                                          std::string_view wanted);

// Runs the addition in DIR/name up to DIR/settings replaced and name/done: nullopt, and the
// stream of every table follows (from DIR/stream.state); or cdc-sync's exit status.
[[nodiscard]] Stop run_addition(Runner& runner, const SyncState& dir, const std::string& name);

}  // namespace cdc::sync
