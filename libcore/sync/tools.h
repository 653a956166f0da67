#pragma once
// Where cdc-sync finds the four tools it runs, and what --version says of them.
#include <string>
#include <string_view>

#include "util/result.h"

namespace cdc::sync {

// The directory of cdc-plan, cdc-snapshot, cdc-merge and cdc-stream: $CDC_TOOLS_DIR, else the
// directory of this executable. Errc::failure-like (exit 1) when neither has them.
[[nodiscard]] Result<std::string> find_tools();

// cdc-sync's own --version text (its version, the libraries), then the tools' directory and each
// tool's version line.
[[nodiscard]] Result<std::string> version_report(std::string_view own_version);

// The file is there and this user may run it.
[[nodiscard]] bool is_executable(const std::string& path);

}  // namespace cdc::sync
