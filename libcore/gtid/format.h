#pragma once

// fmt support for the GTID value types: fmt::format("{}", set) prints set.to_string(), and
// string format specs apply to that text ("{:>40}").
//
// fmt 9.1 (Debian 12) only honours format_as() for enums, so each type gets a
// fmt::formatter specialization deriving from ToStringFormatter instead.

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace cdc::gtid::detail {

struct ToStringFormatter : fmt::formatter<std::string_view> {
  template <typename T, typename FormatContext>
  auto format(const T& value, FormatContext& ctx) const -> decltype(ctx.out()) {
    const std::string text = value.to_string();
    return fmt::formatter<std::string_view>::format(std::string_view(text), ctx);
  }
};

}  // namespace cdc::gtid::detail
