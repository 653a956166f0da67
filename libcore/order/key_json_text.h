#pragma once

// The JSON text of key values (merge/key_order.cpp) read into what their sort keys are built
// from: a string's contents and a text's code points, each strict, so that a value no writer of
// ours can have written is refused rather than ordered.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cdc::order::detail {

// The contents of a JSON string literal, unescaped; nullopt when json is not one.
[[nodiscard]] std::optional<std::string> json_string(std::string_view json);

// Strict UTF-8 decoding of the whole text into code points; false on ill-formed input.
[[nodiscard]] bool decode_utf8(std::string_view text, std::vector<std::uint32_t>& out);

}  // namespace cdc::order::detail
