#pragma once

// Raw JSON text scanning for hot paths that read NDJSON lines (cdc-merge's): find a member of
// an object and the exact bytes of its value, without parsing the line. cdc-merge copies
// values as bytes (the same row gives byte-identical values in cdc-snapshot and cdc-stream
// output, man/cdc-ndjson.5, VALUES), so it needs the text, not a decoded value. The scanner
// only follows the structure: strings (with their escapes), nesting, and whitespace between
// tokens. It does not validate numbers or literals; lines whose validity matters are checked
// with simdjson by the callers, or scanned in MemberScanner's checked mode (ndjson/json_check.h).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace cdc::ndjson {

// Moves pos past the JSON value that starts at text[pos] (after any whitespace), and returns
// false when the text ends first or the value is not well nested.
[[nodiscard]] bool skip_json_value(std::string_view text, std::size_t& pos) noexcept;

// Walks the members of the object that is exactly `object` (from '{' to '}'): on each call,
// the raw quoted key ("\"id\"", as written, escapes kept) and the raw value text.
class MemberScanner {
 public:
  // checked: keys and values are also checked as ndjson/json_check.h does (values a caller
  // scans itself, with value_done, are its to check); one that fails the check fails the scan.
  explicit MemberScanner(std::string_view object, bool checked = false) noexcept;
  // false at the end of the object, or when the text is malformed (then failed() is true).
  [[nodiscard]] bool next(std::string_view& quoted_key, std::string_view& value) noexcept;
  [[nodiscard]] bool failed() const noexcept { return failed_; }

  // next() in two steps, for callers that scan a value themselves (a nested object, in the
  // same pass): next_key() stops at the value; then either take_value(), or value_text() and
  // value_done(n) once the caller has scanned its n bytes.
  [[nodiscard]] bool next_key(std::string_view& quoted_key) noexcept;
  [[nodiscard]] bool take_value(std::string_view& value) noexcept;
  [[nodiscard]] std::string_view value_text() const noexcept { return text_.substr(pos_); }
  void value_done(std::size_t length) noexcept { pos_ += length; }
  // After next() returned false at the end: the object's length, '}' included.
  [[nodiscard]] std::size_t consumed() const noexcept { return pos_ + 1; }
  // Where the scan is: after a value, the offset of the ',' or '}' that follows it.
  [[nodiscard]] std::size_t offset() const noexcept { return pos_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  bool first_ = true;
  bool done_ = false;
  bool failed_ = false;
  bool checked_ = false;
};

// The raw value of the member whose raw quoted key is quoted_key ("\"after\""), or nullopt
// when the object has no such member or is malformed.
[[nodiscard]] std::optional<std::string_view> find_member(std::string_view object,
                                                          std::string_view quoted_key) noexcept;

// text starts with prefix: compared 8 bytes at a time inline (prefixes here are a few dozen
// bytes, checked once per row, where a call to memcmp costs more than the comparison).
[[nodiscard]] inline bool starts_with_bytes(std::string_view text, std::string_view prefix) noexcept {
  if (text.size() < prefix.size()) return false;
  const char* a = text.data();
  const char* b = prefix.data();
  std::size_t n = prefix.size();
  for (; n >= 8; a += 8, b += 8, n -= 8) {
    std::uint64_t x;
    std::uint64_t y;
    std::memcpy(&x, a, 8);
    std::memcpy(&y, b, 8);
    if (x != y) return false;
  }
  for (; n > 0; ++a, ++b, --n)
    if (*a != *b) return false;
  return true;
}

// a and b are the same bytes, compared as starts_with_bytes does (table keys, member names).
[[nodiscard]] inline bool equal_bytes(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && starts_with_bytes(a, b);
}

// Where the last occurrence of needle (not empty) starts in text, or npos: its first byte is
// looked for 16 bytes at a time from the end, for members near a line's end ("pos").
[[nodiscard]] std::size_t find_last(std::string_view text, std::string_view needle) noexcept;

// Appends the text of the JSON string literal `quoted` (quotes included, as a Writer wrote it)
// to out, escapes resolved (\uXXXX and surrogate pairs as UTF-8). false, with out partly
// appended, when the literal is malformed (no quotes, a bad escape, an unpaired surrogate).
[[nodiscard]] bool append_unescaped(std::string_view quoted, std::string& out);

// The byte length of the first `characters` characters of a JSON string literal's body (the
// text between its quotes, escapes kept): one escape (\n, \u00e9, a \uD83D\uDE00 pair) or
// one UTF-8 sequence is one character. The whole body when it is shorter.
[[nodiscard]] std::size_t escaped_prefix_length(std::string_view body, std::size_t characters) noexcept;

// Trims spaces, tabs and '\r' at both ends.
[[nodiscard]] std::string_view trim_json_space(std::string_view text) noexcept;

}  // namespace cdc::ndjson
