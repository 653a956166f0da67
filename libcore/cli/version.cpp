#include <fmt/format.h>
#include <simdjson.h>
#include <zstd.h>

#include <CLI/Version.hpp>

#include "cli/tool_cli.h"
#include "mysql/connection.h"

namespace cdc::cli {

std::string version_text(std::string_view tool_name) {
  return fmt::format(
      "{} {}\n"
      "built with: {}, simdjson {}.{}.{} (implementation: {}), zstd {}, fmt {}.{}.{}, CLI11 {}\n",
      tool_name, CDC_VERSION, mysql::client_library_version(), static_cast<int>(simdjson::SIMDJSON_VERSION_MAJOR),
      static_cast<int>(simdjson::SIMDJSON_VERSION_MINOR), static_cast<int>(simdjson::SIMDJSON_VERSION_REVISION),
      simdjson::get_active_implementation()->name(), ZSTD_versionString(), FMT_VERSION / 10000,
      FMT_VERSION / 100 % 100, FMT_VERSION % 100, CLI11_VERSION);
}

}  // namespace cdc::cli
