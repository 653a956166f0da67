#pragma once

// Small helpers shared by the GTID text parsers (internal to gtid/).

#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "util/error.h"
#include "util/result.h"
#include "util/text.h"

namespace cdc::gtid::detail {

// The characters MySQL's SKIP_WHITESPACE and MariaDB accept around separators are util/text.h's
// is_space() (C isspace in the "C" locale). SHOW MASTER STATUS / @@gtid_executed wrap sets with ",\n".

// MySQL tags: [a-zA-Z_][a-zA-Z0-9_]* (ASCII only; Tag::is_character_valid).
constexpr bool is_tag_start(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
constexpr bool is_tag_char(char c) noexcept { return is_tag_start(c) || is_digit(c); }

// "'x'" for a printable character, "byte 0x07" otherwise: for "found ..." in messages.
inline std::string describe_char(char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x20 && byte < 0x7f) return fmt::format("'{}'", c);
  if (c == '\n') return "a newline";
  return fmt::format("byte 0x{:02x}", byte);
}

// What sits at pos: a character, or the end of the text.
inline std::string describe_at(std::string_view text, std::size_t pos) {
  if (pos >= text.size()) return "end of text";
  return describe_char(text[pos]);
}

// A short excerpt for messages (user input can be long): at most max_chars, then "...".
inline std::string excerpt(std::string_view text, std::size_t max_chars = 24) {
  if (text.size() <= max_chars) return std::string(text);
  return std::string(text.substr(0, max_chars)) + "...";
}

// Where a parser of GTID text stands, and its errors: "invalid <subject> at offset N: ...".
class TextCursor {
 public:
  TextCursor(std::string_view text, std::string_view subject) : text_(text), subject_(subject) {}

  [[nodiscard]] bool at_end() const noexcept { return pos_ >= text_.size(); }
  [[nodiscard]] bool at(char c) const noexcept { return pos_ < text_.size() && text_[pos_] == c; }
  [[nodiscard]] std::size_t pos() const noexcept { return pos_; }
  void advance() noexcept { ++pos_; }
  void skip_space() noexcept {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
  }

  [[nodiscard]] Unexpected error_at(std::size_t offset, std::string_view what) const {
    return fail(Errc::usage, fmt::format("invalid {} at offset {}: {}", subject_, offset, what));
  }
  [[nodiscard]] Unexpected expected(std::string_view what) const {
    return error_at(pos_, fmt::format("expected {}, found {}", what, describe_at(text_, pos_)));
  }

 protected:
  std::string_view text_;
  std::string_view subject_;
  std::size_t pos_ = 0;
};

}  // namespace cdc::gtid::detail
