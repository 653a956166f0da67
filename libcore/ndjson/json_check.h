#pragma once

// Strict checks of JSON values (RFC 8259) in the plain forms cdc-stream writes, for raw scans
// that must also prove a line well formed (ndjson::MemberScanner in checked mode): cdc-merge
// reads a change line's members as raw text, and parsing the line with simdjson only to prove
// it well formed cost a quarter of reading the deltas. The checks are conservative: they accept
// only text that simdjson's DOM parser accepts too, and leave some valid forms to it (they
// return false for those as for malformed text): numbers with an exponent or with more than 18
// digits before or after the point, \u escapes of surrogates, nesting deeper than
// kMaxCheckedDepth. UTF-8 is not checked here: check the whole line once (is_valid_utf8).

#include <cstddef>
#include <string_view>

namespace cdc::ndjson {

inline constexpr unsigned kMaxCheckedDepth = 32;

// JSON's whitespace (RFC 8259): space, tab, line feed, carriage return.
[[nodiscard]] constexpr bool is_json_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
// Moves pos past the whitespace at it.
constexpr void skip_json_space(std::string_view text, std::size_t& pos) noexcept {
  while (pos < text.size() && is_json_space(text[pos])) ++pos;
}

// pos at the opening quote: moves past the closing quote of a string without control
// characters whose escapes are JSON's.
[[nodiscard]] bool check_json_string(std::string_view text, std::size_t& pos) noexcept;

// pos at a value's first byte (no whitespace before it): moves past the value, checked
// (containers to depth levels below kMaxCheckedDepth). What follows it is the caller's to check.
[[nodiscard]] bool check_json_value(std::string_view text, std::size_t& pos, unsigned depth = 1) noexcept;

// text is valid UTF-8.
[[nodiscard]] bool is_valid_utf8(std::string_view text) noexcept;

}  // namespace cdc::ndjson
