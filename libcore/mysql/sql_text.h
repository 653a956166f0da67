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

// UTF-8 text as a SQL literal: "ab" -> _utf8mb4 X'6162'. The introducer makes the literal
// coercible, so a compared column's collation decides (and keys compare as the column does).
[[nodiscard]] std::string text_literal(std::string_view utf8);

// Bytes as a binary SQL literal: "ab" -> X'6162' ("" -> X'', the empty binary string).
[[nodiscard]] std::string bytes_literal(std::string_view bytes);

}  // namespace cdc::mysql
