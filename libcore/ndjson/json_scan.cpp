#include "ndjson/json_scan.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "ndjson/json_check.h"
#include "ndjson/utf8.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace cdc::ndjson {

namespace {

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

namespace {

// How a byte ends a number or literal: 0 it is part of it, 1 it ends it (',', '}', ']', a
// space), 2 it cannot follow one ('"', '{', '[', ':').
constexpr auto kAfterScalar = [] {
  std::array<std::uint8_t, 256> table{};
  for (const char c : {',', '}', ']', ' ', '\t', '\n', '\r'}) table[static_cast<unsigned char>(c)] = 1;
  for (const char c : {'"', '{', '[', ':'}) table[static_cast<unsigned char>(c)] = 2;
  return table;
}();

}  // namespace

bool skip_json_value(std::string_view text, std::size_t& pos) noexcept {
  skip_json_space(text, pos);
  if (pos >= text.size()) return false;
  const char c = text[pos];
  if (c == '"') return skip_string(text, pos);
  if (c == '{' || c == '[') {
    // Nested containers: count depth, skipping strings whole. Only quotes and brackets matter,
    // looked for 16 bytes at a time (a row image's numbers and separators go by in one step).
    const char* data = text.data();
    const std::size_t size = text.size();
    std::size_t depth = 0;
    while (pos < size) {
#if defined(__SSE2__)
      if (pos + 16 <= size) {
        const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + pos));
        // '[' and ']' are '{' and '}' less 0x20, and no other byte is: OR 0x20 folds them.
        const __m128i folded = _mm_or_si128(chunk, _mm_set1_epi8(0x20));
        const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(
            _mm_cmpeq_epi8(chunk, _mm_set1_epi8('"')),
            _mm_or_si128(_mm_cmpeq_epi8(folded, _mm_set1_epi8('{')), _mm_cmpeq_epi8(folded, _mm_set1_epi8('}'))))));
        if (mask == 0) {
          pos += 16;
          continue;
        }
        pos += static_cast<std::size_t>(__builtin_ctz(mask));
      }
#endif
      const char d = data[pos];
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
  for (; pos < text.size(); ++pos) {
    const std::uint8_t after = kAfterScalar[static_cast<unsigned char>(text[pos])];
    if (after == 1) break;
    if (after == 2) return false;
  }
  return pos > start;
}

MemberScanner::MemberScanner(std::string_view object, bool checked) noexcept : text_(object), checked_(checked) {
  skip_json_space(text_, pos_);
  if (pos_ >= text_.size() || text_[pos_] != '{') {
    failed_ = true;
    done_ = true;
    return;
  }
  ++pos_;
}

bool MemberScanner::next_key(std::string_view& quoted_key) noexcept {
  if (done_) return false;
  skip_json_space(text_, pos_);
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
    skip_json_space(text_, pos_);
  }
  first_ = false;
  if (pos_ >= text_.size() || text_[pos_] != '"') {
    failed_ = done_ = true;
    return false;
  }
  const std::size_t key_start = pos_;
  if (!(checked_ ? check_json_string(text_, pos_) : skip_string(text_, pos_))) {
    failed_ = done_ = true;
    return false;
  }
  quoted_key = text_.substr(key_start, pos_ - key_start);
  skip_json_space(text_, pos_);
  if (pos_ >= text_.size() || text_[pos_] != ':') {
    failed_ = done_ = true;
    return false;
  }
  ++pos_;
  skip_json_space(text_, pos_);
  return true;
}

bool MemberScanner::take_value(std::string_view& value) noexcept {
  const std::size_t value_start = pos_;
  if (!(checked_ ? check_json_value(text_, pos_) : skip_json_value(text_, pos_))) {
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

std::size_t find_last(std::string_view text, std::string_view needle) noexcept {
  if (needle.empty() || text.size() < needle.size()) return std::string_view::npos;
  // Candidates start in [0, end); each block of 16 is searched from its last byte down, for
  // the needle's first two bytes at once (a quote alone is in every member).
  std::size_t end = text.size() - needle.size() + 1;
  const char first = needle.front();
  while (end > 0) {
    const std::size_t start = end >= 16 ? end - 16 : 0;
#if defined(__SSE2__)
    if (end - start == 16 && needle.size() >= 2) {  // then start + 17 <= text.size()
      const char* at = text.data() + start;
      const __m128i firsts = _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at)), _mm_set1_epi8(first));
      const __m128i seconds =
          _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at + 1)), _mm_set1_epi8(needle[1]));
      for (auto mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_and_si128(firsts, seconds))); mask != 0;) {
        const unsigned bit = 31U - static_cast<unsigned>(__builtin_clz(mask));
        if (starts_with_bytes(text.substr(start + bit), needle)) return start + bit;
        mask &= ~(1U << bit);
      }
      end = start;
      continue;
    }
#endif
    for (std::size_t at = end; at-- > start;)
      if (text[at] == first && starts_with_bytes(text.substr(at), needle)) return at;
    end = start;
  }
  return std::string_view::npos;
}

namespace {

// The four hex digits at text[at..at+4) as a number; false when they are not all hex digits.
bool hex4(std::string_view text, std::size_t at, std::uint32_t& value) noexcept {
  if (at + 4 > text.size()) return false;
  value = 0;
  for (std::size_t i = at; i < at + 4; ++i) {
    const char c = text[i];
    std::uint32_t digit = 0;
    if (c >= '0' && c <= '9') {
      digit = static_cast<std::uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<std::uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      digit = static_cast<std::uint32_t>(c - 'A' + 10);
    } else {
      return false;
    }
    value = value * 16 + digit;
  }
  return true;
}

bool is_high_surrogate(std::uint32_t unit) noexcept { return unit >= 0xD800 && unit <= 0xDBFF; }
bool is_low_surrogate(std::uint32_t unit) noexcept { return unit >= 0xDC00 && unit <= 0xDFFF; }

// At body[at] == '\\': the escape's length, 12 for a \uD83D\uDE00 pair.
std::size_t escape_length(std::string_view body, std::size_t at) noexcept {
  if (at + 1 >= body.size() || body[at + 1] != 'u') return 2;
  std::uint32_t unit = 0;
  std::uint32_t low = 0;
  if (hex4(body, at + 2, unit) && is_high_surrogate(unit) && at + 7 < body.size() && body[at + 6] == '\\' &&
      body[at + 7] == 'u' && hex4(body, at + 8, low) && is_low_surrogate(low))
    return 12;
  return 6;
}

}  // namespace

bool append_unescaped(std::string_view quoted, std::string& out) {
  if (quoted.size() < 2 || quoted.front() != '"' || quoted.back() != '"') return false;
  const std::string_view body = quoted.substr(1, quoted.size() - 2);
  std::size_t at = 0;
  while (at < body.size()) {
    const std::size_t plain_end = std::min(body.find('\\', at), body.size());
    out.append(body, at, plain_end - at);
    at = plain_end;
    if (at == body.size()) break;
    if (at + 1 == body.size()) return false;
    const char escape = body[at + 1];
    switch (escape) {
      case '"':
      case '\\':
      case '/': out.push_back(escape); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': {
        std::uint32_t cp = 0;
        if (!hex4(body, at + 2, cp) || is_low_surrogate(cp)) return false;
        if (is_high_surrogate(cp)) {
          if (escape_length(body, at) != 12) return false;
          std::uint32_t low = 0;
          (void)hex4(body, at + 8, low);
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        append_utf8(out, cp);
        at += escape_length(body, at);
        continue;
      }
      default: return false;
    }
    at += 2;
  }
  return true;
}

std::size_t escaped_prefix_length(std::string_view body, std::size_t characters) noexcept {
  std::size_t at = 0;
  for (std::size_t taken = 0; taken < characters && at < body.size(); ++taken) {
    if (body[at] == '\\') {
      at += escape_length(body, at);
    } else {
      // A UTF-8 lead byte says how many bytes follow; a Writer's output is valid UTF-8.
      const auto lead = static_cast<unsigned char>(body[at]);
      at += lead < 0x80 ? 1U : lead >= 0xF0 ? 4U : lead >= 0xE0 ? 3U : 2U;
    }
  }
  return std::min(at, body.size());
}

std::string_view trim_json_space(std::string_view text) noexcept {
  while (!text.empty() && is_json_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_json_space(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace cdc::ndjson
