#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

#include "util/byte_reader.h"

namespace cdc::rowimage {

// Records a semantic failure ("DATETIME2 month 13") at value_offset, the value's first byte,
// rather than where the reader stands after consuming the value. Formats into a stack buffer:
// only the failure path pays for it.
template <typename... Args>
void fail_at(ByteReader& in, std::uint64_t value_offset, fmt::format_string<Args...> format, Args&&... args) {
  std::array<char, 160> text{};
  const auto written = fmt::format_to_n(text.data(), text.size(), format, std::forward<Args>(args)...);
  ByteReader at(std::span<const std::uint8_t>{}, value_offset);
  at.fail(std::string_view(text.data(), std::min(written.size, text.size())));
  in.adopt_failure(at);
}

}  // namespace cdc::rowimage
