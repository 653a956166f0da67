#pragma once

// ASCII text helpers for identifiers, SQL keywords and server answers: the "C" locale's
// classes, whatever the process locale is (cdc never calls setlocale, and server names are
// ASCII-case-insensitive only in their ASCII letters).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace cdc {

// C isspace in the "C" locale: space, \t, \n, \v, \f, \r.
constexpr bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}
constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

constexpr char to_lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
constexpr char to_upper(char c) noexcept { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

// A copy with the ASCII letters lowered (raised); other bytes as they are.
[[nodiscard]] inline std::string to_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = to_lower(c);
  return out;
}
[[nodiscard]] inline std::string to_upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = to_upper(c);
  return out;
}

// Equal but for the case of ASCII letters (SQL names and keywords), without a copy.
[[nodiscard]] constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (to_lower(a[i]) != to_lower(b[i])) return false;
  return true;
}

// Without the is_space() characters at either end.
[[nodiscard]] constexpr std::string_view trim(std::string_view text) noexcept {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// True when every byte is below 0x80. Eight bytes per step: most text in single-byte charsets
// is plain ASCII and passes through (rowimage/charset.cpp's hot path).
[[nodiscard]] inline bool is_ascii(std::string_view text) noexcept {
  const char* p = text.data();
  const char* const end = p + text.size();
  std::uint64_t any = 0;
  for (; end - p >= 8; p += 8) {
    std::uint64_t word;
    std::memcpy(&word, p, sizeof word);  // an unaligned load, without UB
    any |= word;
  }
  for (; p < end; ++p) any |= static_cast<unsigned char>(*p);
  return (any & 0x8080808080808080ULL) == 0;
}

}  // namespace cdc
