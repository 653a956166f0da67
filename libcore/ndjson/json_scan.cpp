#include "ndjson/json_scan.h"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace cdc::ndjson {

namespace {

bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void skip_space(std::string_view text, std::size_t& pos) noexcept {
  while (pos < text.size() && is_space(text[pos])) ++pos;
}

// pos at the opening quote; moves past the closing quote. Looks for '"' and '\\' 16 bytes at
// a time (SSE2, part of every x86-64), so short keys and long values cost few steps.
bool skip_string(std::string_view text, std::size_t& pos) noexcept {
  ++pos;
  const char* data = text.data();
  const std::size_t size = text.size();
  while (pos < size) {
#if defined(__SSE2__)
    if (pos + 16 <= size) {
      const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + pos));
      const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(
          _mm_or_si128(_mm_cmpeq_epi8(chunk, _mm_set1_epi8('"')), _mm_cmpeq_epi8(chunk, _mm_set1_epi8('\\')))));
      if (mask == 0) {
        pos += 16;
        continue;
      }
      pos += static_cast<std::size_t>(__builtin_ctz(mask));
    }
#endif
    const char c = data[pos];
    if (c == '"') {
      ++pos;
      return true;
    }
    pos += c == '\\' ? 2 : 1;
  }
  return false;
}

}  // namespace

bool skip_json_value(std::string_view text, std::size_t& pos) noexcept {
  skip_space(text, pos);
  if (pos >= text.size()) return false;
  const char c = text[pos];
  if (c == '"') return skip_string(text, pos);
  if (c == '{' || c == '[') {
    // Nested containers: count depth, skipping strings whole.
    std::size_t depth = 0;
    while (pos < text.size()) {
      const char d = text[pos];
      if (d == '"') {
        if (!skip_string(text, pos)) return false;
        continue;
      }
      if (d == '{' || d == '[') {
        ++depth;
      } else if (d == '}' || d == ']') {
        if (depth == 0) return false;
        if (--depth == 0) {
          ++pos;
          return true;
        }
      }
      ++pos;
    }
    return false;
  }
  if (c == '}' || c == ']' || c == ',' || c == ':') return false;
  // A number or literal: up to the next structural character or space.
  const std::size_t start = pos;
  while (pos < text.size()) {
    const char d = text[pos];
    if (d == ',' || d == '}' || d == ']' || is_space(d)) break;
    if (d == '"' || d == '{' || d == '[' || d == ':') return false;
    ++pos;
  }
  return pos > start;
}

MemberScanner::MemberScanner(std::string_view object) noexcept : text_(object) {
  skip_space(text_, pos_);
  if (pos_ >= text_.size() || text_[pos_] != '{') {
    failed_ = true;
    done_ = true;
    return;
  }
  ++pos_;
}

bool MemberScanner::next_key(std::string_view& quoted_key) noexcept {
  if (done_) return false;
  skip_space(text_, pos_);
  if (pos_ < text_.size() && text_[pos_] == '}') {
    done_ = true;
    return false;
  }
  if (!first_) {
    if (pos_ >= text_.size() || text_[pos_] != ',') {
      failed_ = done_ = true;
      return false;
    }
    ++pos_;
    skip_space(text_, pos_);
  }
  first_ = false;
  if (pos_ >= text_.size() || text_[pos_] != '"') {
    failed_ = done_ = true;
    return false;
  }
  const std::size_t key_start = pos_;
  if (!skip_string(text_, pos_)) {
    failed_ = done_ = true;
    return false;
  }
  quoted_key = text_.substr(key_start, pos_ - key_start);
  skip_space(text_, pos_);
  if (pos_ >= text_.size() || text_[pos_] != ':') {
    failed_ = done_ = true;
    return false;
  }
  ++pos_;
  skip_space(text_, pos_);
  return true;
}

bool MemberScanner::take_value(std::string_view& value) noexcept {
  const std::size_t value_start = pos_;
  if (!skip_json_value(text_, pos_)) {
    failed_ = done_ = true;
    return false;
  }
  value = text_.substr(value_start, pos_ - value_start);
  return true;
}

bool MemberScanner::next(std::string_view& quoted_key, std::string_view& value) noexcept {
  return next_key(quoted_key) && take_value(value);
}

std::optional<std::string_view> find_member(std::string_view object, std::string_view quoted_key) noexcept {
  MemberScanner scanner(object);
  std::string_view key;
  std::string_view value;
  while (scanner.next(key, value))
    if (key == quoted_key) return value;
  return std::nullopt;
}

std::string_view trim_json_space(std::string_view text) noexcept {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace cdc::ndjson
