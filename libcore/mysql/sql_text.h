#pragma once

// Pieces of SQL text the tools build: identifiers and byte-exact literals. Hex literals need no
// escaping and keep every byte, whatever the connection's character set.

#include <string>
#include <string_view>

namespace cdc::mysql {

// `name` quoted for SQL: backticks, inner ones doubled.
[[nodiscard]] std::string quote_identifier(std::string_view name);

// The bytes as upper-case hex digits, for X'..' literals: "ab" -> "6162".
[[nodiscard]] std::string hex_digits(std::string_view bytes);

}  // namespace cdc::mysql
