#include "ndjson/json_check.h"

#include <simdjson.h>

#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace cdc::ndjson {

namespace {

bool take(std::string_view text, std::size_t& pos, char c) noexcept {
  if (pos >= text.size() || text[pos] != c) return false;
  ++pos;
  return true;
}

// At a backslash: past its escape; \u escapes of surrogates are left to a full parser.
bool check_escape(std::string_view text, std::size_t& pos) noexcept {
  if (pos + 1 >= text.size()) return false;
  switch (text[pos + 1]) {
    case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
      pos += 2;
      return true;
    case 'u': break;
    default: return false;
  }
  if (text.size() - pos < 6) return false;
  std::uint32_t unit = 0;
  for (std::size_t i = pos + 2; i < pos + 6; ++i) {
    const char h = text[i];
    std::uint32_t digit = 0;
    if (h >= '0' && h <= '9') {
      digit = static_cast<std::uint32_t>(h - '0');
    } else if (h >= 'a' && h <= 'f') {
      digit = static_cast<std::uint32_t>(h - 'a' + 10);
    } else if (h >= 'A' && h <= 'F') {
      digit = static_cast<std::uint32_t>(h - 'A' + 10);
    } else {
      return false;
    }
    unit = unit * 16 + digit;
  }
  if (unit >= 0xD800 && unit <= 0xDFFF) return false;
  pos += 6;
  return true;
}

// Up to 18 digits (at least one): how many, or 0 when there are none or too many.
std::size_t digits(std::string_view text, std::size_t& pos) noexcept {
  const std::size_t start = pos;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
  const std::size_t count = pos - start;
  return count <= 18 ? count : 0;
}

// -?(0|[1-9][0-9]*)(.[0-9]+)?, without an exponent, 18 digits at most on each side of the point.
bool check_number(std::string_view text, std::size_t& pos) noexcept {
  if (text[pos] == '-') ++pos;
  const std::size_t start = pos;
  const std::size_t whole = digits(text, pos);
  if (whole == 0 || (whole > 1 && text[start] == '0')) return false;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    if (digits(text, pos) == 0) return false;
  }
  return pos == text.size() || (text[pos] != 'e' && text[pos] != 'E' && !(text[pos] >= '0' && text[pos] <= '9'));
}

bool check_literal(std::string_view text, std::size_t& pos, std::string_view word) noexcept {
  if (text.substr(pos, word.size()) != word) return false;
  pos += word.size();
  return true;
}

bool check_container(std::string_view text, std::size_t& pos, unsigned depth, bool object) noexcept {
  const char close = object ? '}' : ']';
  ++pos;
  skip_json_space(text, pos);
  if (take(text, pos, close)) return true;
  for (;;) {
    if (object) {
      if (pos >= text.size() || text[pos] != '"' || !check_json_string(text, pos)) return false;
      skip_json_space(text, pos);
      if (!take(text, pos, ':')) return false;
      skip_json_space(text, pos);
    }
    if (!check_json_value(text, pos, depth + 1)) return false;
    skip_json_space(text, pos);
    if (take(text, pos, close)) return true;
    if (!take(text, pos, ',')) return false;
    skip_json_space(text, pos);
  }
}

}  // namespace

bool check_json_string(std::string_view text, std::size_t& pos) noexcept {
  // Quotes, backslashes and control characters looked for 16 bytes at a time.
  ++pos;
  const char* data = text.data();
  const std::size_t size = text.size();
  while (pos < size) {
#if defined(__SSE2__)
    if (pos + 16 <= size) {
      const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + pos));
      const __m128i control = _mm_cmpeq_epi8(_mm_min_epu8(chunk, _mm_set1_epi8(0x1F)), chunk);  // <= 0x1F
      const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(
          control, _mm_or_si128(_mm_cmpeq_epi8(chunk, _mm_set1_epi8('"')), _mm_cmpeq_epi8(chunk, _mm_set1_epi8('\\'))))));
      if (mask == 0) {
        pos += 16;
        continue;
      }
      pos += static_cast<std::size_t>(__builtin_ctz(mask));
    }
#endif
    const auto c = static_cast<unsigned char>(data[pos]);
    if (c == '"') {
      ++pos;
      return true;
    }
    if (c < 0x20) return false;
    if (c != '\\') {
      ++pos;
      continue;
    }
    if (!check_escape(text, pos)) return false;
  }
  return false;
}

bool check_json_value(std::string_view text, std::size_t& pos, unsigned depth) noexcept {
  if (pos >= text.size()) return false;
  switch (text[pos]) {
    case '"': return check_json_string(text, pos);
    case '{': return depth < kMaxCheckedDepth && check_container(text, pos, depth, true);
    case '[': return depth < kMaxCheckedDepth && check_container(text, pos, depth, false);
    case 't': return check_literal(text, pos, "true");
    case 'f': return check_literal(text, pos, "false");
    case 'n': return check_literal(text, pos, "null");
    default: return check_number(text, pos);
  }
}

bool is_valid_utf8(std::string_view text) noexcept { return simdjson::validate_utf8(text.data(), text.size()); }

}  // namespace cdc::ndjson
