#include "ndjson/writer.h"

#include <array>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fmt/compile.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define CDC_NDJSON_AVX2 1
#endif

#include "ndjson/utf8.h"
#include "util/fd_io.h"

namespace cdc::ndjson {

namespace {

enum ByteClass : std::uint8_t {
  kPlain = 0,     // copied as is
  kEscape = 1,    // '"', '\\' or a control character
  kNonAscii = 2,  // starts (or wrongly continues) a multi-byte sequence: validate it
};

constexpr std::array<std::uint8_t, 256> kByteClass = [] {
  std::array<std::uint8_t, 256> table{};
  for (std::size_t c = 0; c < 0x20; ++c) table[c] = kEscape;
  table['"'] = kEscape;
  table['\\'] = kEscape;
  for (std::size_t c = 0x80; c < 0x100; ++c) table[c] = kNonAscii;
  return table;
}();

constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kHighBits = 0x8080808080808080ULL;

constexpr std::uint64_t has_zero_byte(std::uint64_t word) { return (word - kOnes) & ~word & kHighBits; }

// True when any of the 8 bytes is not kPlain. It may also flag a plain byte sitting above a
// flagged one (borrow propagation); the byte loop then sorts that out, so only "nothing
// flagged" has to be exact, and it is.
constexpr bool word_needs_attention(std::uint64_t word) {
  const std::uint64_t control = (word - kOnes * 0x20) & ~word;
  const std::uint64_t quote = has_zero_byte(word ^ (kOnes * '"'));
  const std::uint64_t backslash = has_zero_byte(word ^ (kOnes * '\\'));
  return ((control | quote | backslash | word) & kHighBits) != 0;
}

// The first byte in [p, end) that is not kPlain (end when there is none). SSE2 (every x86-64)
// looks at 16 bytes per step: one signed compare flags both control characters and bytes
// >= 0x80, two more find '"' and '\\'. Elsewhere 8 bytes per step with word_needs_attention().
const char* skip_plain(const char* p, const char* const end) {
#if defined(__SSE2__)
  const __m128i below_space = _mm_set1_epi8(0x20);
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const auto flagged_in = [&](const char* at) {
    __m128i chunk;
    std::memcpy(&chunk, at, sizeof chunk);  // an unaligned load, without UB
    const __m128i flagged = _mm_or_si128(_mm_cmplt_epi8(chunk, below_space),
                                         _mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)));
    return static_cast<unsigned>(_mm_movemask_epi8(flagged));
  };
  if (end - p >= 16) {
    for (; end - p >= 16; p += 16)
      if (const unsigned mask = flagged_in(p); mask != 0) return p + std::countr_zero(mask);
    if (p == end) return end;
    // The last 1..15 bytes: one more 16-byte load ending at `end`. Its first bytes were
    // already found plain, so the first flagged byte in it is at or after p.
    const char* const last = end - 16;
    const unsigned mask = flagged_in(last);
    return mask != 0 ? last + std::countr_zero(mask) : end;
  }
#endif
  while (end - p >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, sizeof word);
    if (word_needs_attention(word)) break;
    p += 8;
  }
  while (p < end && kByteClass[static_cast<unsigned char>(*p)] == kPlain) ++p;
  return p;
}

#if defined(CDC_NDJSON_AVX2)
// copy_if_plain() 32 bytes per step, for n >= 32, on a CPU that has AVX2 (checked once, at run
// time: the build targets every x86-64). Values of a row are mostly text longer than that.
__attribute__((target("avx2"))) inline __m256i flagged_avx2(__m256i chunk) {
  // A signed compare flags bytes below 0x20 and every byte >= 0x80; two more find '"' and '\\'.
  return _mm256_or_si256(_mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), chunk),
                         _mm256_or_si256(_mm256_cmpeq_epi8(chunk, _mm256_set1_epi8('"')),
                                         _mm256_cmpeq_epi8(chunk, _mm256_set1_epi8('\\'))));
}

__attribute__((target("avx2"))) bool copy_if_plain_avx2(char* to, const char* from, std::size_t n) {
  std::size_t i = 0;
  for (; n - i >= 32; i += 32) {
    const __m256i chunk = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + i));
    if (_mm256_movemask_epi8(flagged_avx2(chunk)) != 0) return false;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + i), chunk);
  }
  if (i < n) {  // the last 1..31 bytes: one more 32-byte block ending at n
    const __m256i chunk = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + n - 32));
    if (_mm256_movemask_epi8(flagged_avx2(chunk)) != 0) return false;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + n - 32), chunk);
  }
  return true;
}

const bool kHaveAvx2 = [] {
  __builtin_cpu_init();  // this may run before the runtime's own constructors
  return __builtin_cpu_supports("avx2") != 0;
}();
#endif

// Copies n bytes from `from` to `to` while checking them, and tells whether every one was
// kPlain (what skip_plain() would find); on false, what was copied is meaningless. One pass
// instead of skip_plain() and then a copy.
bool copy_if_plain(char* to, const char* from, std::size_t n) {
#if defined(CDC_NDJSON_AVX2)
  if (n >= 32 && kHaveAvx2) return copy_if_plain_avx2(to, from, n);
#endif
#if defined(__SSE2__)
  if (n >= 16) {
    const __m128i below_space = _mm_set1_epi8(0x20);
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const auto flagged_in = [&](__m128i chunk) {
      return _mm_or_si128(_mm_cmplt_epi8(chunk, below_space),
                          _mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)));
    };
    std::size_t i = 0;
    for (; n - i >= 16; i += 16) {
      __m128i chunk;
      std::memcpy(&chunk, from + i, sizeof chunk);
      if (_mm_movemask_epi8(flagged_in(chunk)) != 0) return false;
      std::memcpy(to + i, &chunk, sizeof chunk);
    }
    if (i < n) {  // the last 1..15 bytes: one more 16-byte block ending at n
      __m128i chunk;
      std::memcpy(&chunk, from + n - 16, sizeof chunk);
      if (_mm_movemask_epi8(flagged_in(chunk)) != 0) return false;
      std::memcpy(to + n - 16, &chunk, sizeof chunk);
    }
    return true;
  }
#endif
  if (skip_plain(from, from + n) != from + n) return false;
  std::memcpy(to, from, n);
  return true;
}

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// RFC 8259 section 6 number grammar; only used to check raw_number() in debug builds.
[[maybe_unused]] bool is_json_number(std::string_view text) {
  std::size_t i = 0;
  const auto digits = [&] {
    const std::size_t from = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i - from;
  };
  if (i < text.size() && text[i] == '-') ++i;
  if (i < text.size() && text[i] == '0') {
    ++i;
  } else if (i >= text.size() || text[i] < '1' || text[i] > '9' || digits() == 0) {
    return false;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == text.size();
}

}  // namespace

void Writer::key(std::string_view name) {
  assert(depth_ > 0 && stack_[depth_ - 1] == Container::object && "key() outside an object");
  assert(!after_key_ && "two keys in a row");
  if (need_comma_) buf_.push_back(',');
  append_quoted(name);
  buf_.push_back(':');
  after_key_ = true;
}

void Writer::string(std::string_view text) {
  before_value();
  append_quoted(text);
  need_comma_ = true;
}

bool Writer::string_if_plain(std::string_view text) {
  // Checked and copied in one pass: the text goes into the buffer's spare capacity, after room
  // for the opening quote, and is only kept (and the writer's state changed) when every byte is
  // plain. In an array before_value() first adds a comma, which shifts the text by one.
  const std::size_t n = text.size();
  const std::size_t at = buf_.size();
  buf_.reserve(at + n + 3);
  char* const staged = buf_.data() + at + 1;
  if (!copy_if_plain(staged, text.data(), n)) return false;
  before_value();
  const std::size_t start = buf_.size();  // at, or at + 1 after a comma
  buf_.resize(start + n + 2);             // within the reserved capacity: staged stays valid
  char* const out = buf_.data() + start;
  if (start != at) std::memmove(out + 1, staged, n);
  out[0] = '"';
  out[n + 1] = '"';
  need_comma_ = true;
  return true;
}

void Writer::append_plain_quoted(std::string_view text) {
  const std::size_t at = buf_.size();
  buf_.resize(at + text.size() + 2);
  char* out = buf_.data() + at;
  out[0] = '"';
  copy_bytes(out + 1, text.data(), text.size());
  out[text.size() + 1] = '"';
}

void Writer::append_quoted(std::string_view text) {
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  // Most text (column names, ASCII values) needs no escaping: when all of it is plain, it goes
  // out with its quotes in one copy instead of run by run.
  const char* p = skip_plain(begin, end);
  if (p == end) {
    append_plain_quoted(text);
    return;
  }
  buf_.push_back('"');
  // [run, p) is text that goes out unchanged: plain ASCII and valid multi-byte sequences. It
  // is appended in one piece when something must be rewritten, or at the end.
  const char* run = begin;
  while (p < end) {
    p = skip_plain(p, end);
    if (p == end) break;
    const auto byte = static_cast<unsigned char>(*p);
    if (kByteClass[byte] == kNonAscii) {
      const Utf8Step step = utf8_step(std::string_view(p, static_cast<std::size_t>(end - p)));
      if (step.valid) {
        p += step.length;
        continue;
      }
      append_literal(std::string_view(run, static_cast<std::size_t>(p - run)));
      append_literal(kReplacement);
      p += step.length;
      run = p;
      continue;
    }
    append_literal(std::string_view(run, static_cast<std::size_t>(p - run)));
    switch (byte) {
      case '"': append_literal("\\\""); break;
      case '\\': append_literal("\\\\"); break;
      case '\b': append_literal("\\b"); break;
      case '\f': append_literal("\\f"); break;
      case '\n': append_literal("\\n"); break;
      case '\r': append_literal("\\r"); break;
      case '\t': append_literal("\\t"); break;
      default: {
        constexpr char kHex[] = "0123456789abcdef";
        const char escaped[] = {'\\', 'u', '0', '0', kHex[byte >> 4], kHex[byte & 0xFU]};
        append_literal(std::string_view(escaped, sizeof escaped));
        break;
      }
    }
    ++p;
    run = p;
  }
  append_literal(std::string_view(run, static_cast<std::size_t>(p - run)));
  buf_.push_back('"');
}

void Writer::string_base64(std::string_view bytes) {
  string_base64(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
}

void Writer::string_base64(std::span<const std::byte> bytes) {
  before_value();
  const std::size_t size = bytes.size();
  const std::size_t at = buf_.size();
  // Sized once and filled through a pointer: a BLOB can be megabytes, push_back per
  // character would be the slow part.
  buf_.resize(at + 2 + (size + 2) / 3 * 4);
  char* out = buf_.data() + at;
  const auto at_byte = [bytes](std::size_t i) { return std::to_integer<std::uint32_t>(bytes[i]); };
  *out++ = '"';
  std::size_t i = 0;
  for (; size - i >= 3; i += 3) {
    const std::uint32_t group = (at_byte(i) << 16) | (at_byte(i + 1) << 8) | at_byte(i + 2);
    *out++ = kBase64[group >> 18];
    *out++ = kBase64[(group >> 12) & 0x3FU];
    *out++ = kBase64[(group >> 6) & 0x3FU];
    *out++ = kBase64[group & 0x3FU];
  }
  if (size - i == 1) {
    const std::uint32_t group = at_byte(i) << 16;
    *out++ = kBase64[group >> 18];
    *out++ = kBase64[(group >> 12) & 0x3FU];
    *out++ = '=';
    *out++ = '=';
  } else if (size - i == 2) {
    const std::uint32_t group = (at_byte(i) << 16) | (at_byte(i + 1) << 8);
    *out++ = kBase64[group >> 18];
    *out++ = kBase64[(group >> 12) & 0x3FU];
    *out++ = kBase64[(group >> 6) & 0x3FU];
    *out++ = '=';
  }
  *out = '"';
  need_comma_ = true;
}

void Writer::raw_number(std::string_view digits) {
  assert(is_json_number(digits) && "raw_number() needs a JSON number");
  before_value();
  append_literal(digits);
  need_comma_ = true;
}

template <typename Float>
void Writer::floating_value(Float value) {
  before_value();
  if (std::isfinite(value)) {
    fmt::format_to(fmt::appender(buf_), FMT_COMPILE("{}"), value);
  } else {
    append_literal("null");
  }
  need_comma_ = true;
}

void Writer::floating(double value) { floating_value(value); }

// Not a widening to double: (double)0.1f prints as 0.10000000149011612, while the float's own
// shortest form is 0.1, which is what the server stored for FLOAT.
void Writer::floating(float value) { floating_value(value); }

void Writer::boolean(bool value) {
  before_value();
  append_literal(value ? "true" : "false");
  need_comma_ = true;
}

void Writer::null() {
  before_value();
  append_literal("null");
  need_comma_ = true;
}

void Writer::end_record() {
  assert(depth_ == 0 && "end_record() inside an object or array");
  assert(record_has_value_ && "end_record() without a value would be a blank line");
  buf_.push_back('\n');
  record_start_ = buf_.size();
  record_has_value_ = false;
  need_comma_ = false;
  after_key_ = false;
}

void Writer::abandon_record() {
  buf_.resize(record_start_);
  depth_ = 0;
  record_has_value_ = false;
  need_comma_ = false;
  after_key_ = false;
}

void Writer::clear() noexcept {
  buf_.clear();
  record_start_ = 0;
  depth_ = 0;
  record_has_value_ = false;
  need_comma_ = false;
  after_key_ = false;
}

Result<void> Writer::flush_to(int fd, std::string_view what) {
  Result<void> written = write_all(fd, ended_records(), what);
  drop_ended_records();
  return written;
}

void Writer::take_ended_records(Buffer& into) {
  if (record_start_ == buf_.size()) {
    into.clear();
    Buffer ended(std::move(buf_));
    buf_ = std::move(into);
    into = std::move(ended);
    record_start_ = 0;
    return;
  }
  into.clear();
  into.append(buf_.data(), buf_.data() + record_start_);
  drop_ended_records();
}

void Writer::drop_ended_records() noexcept {
  // Keep a record in progress: the caller may flush on size between two fields.
  const std::size_t pending = buf_.size() - record_start_;
  if (pending > 0) std::memmove(buf_.data(), buf_.data() + record_start_, pending);
  buf_.resize(pending);
  record_start_ = 0;
}

std::string quoted(std::string_view text) {
  Writer writer;
  writer.string(text);
  return std::string(writer.buffered());
}

}  // namespace cdc::ndjson
