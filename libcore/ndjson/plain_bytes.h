#pragma once

// Finding the bytes of a JSON string's text that need more than a copy (ndjson::Writer's hot
// path): '"', '\\' and control characters, which are escaped, and bytes >= 0x80, whose UTF-8
// is validated. Plain runs are found 16 bytes per step with SSE2 (every x86-64), 32 with AVX2
// where the CPU has it (checked once, at run time), else 8 per step in a 64-bit word. Inline,
// for the writer's loops; nothing else should need them.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define CDC_NDJSON_AVX2 1
#endif

namespace cdc::ndjson::plain_bytes {

enum ByteClass : std::uint8_t {
  kPlain = 0,     // copied as is
  kEscape = 1,    // '"', '\\' or a control character
  kNonAscii = 2,  // starts (or wrongly continues) a multi-byte sequence: validate it
};

inline constexpr std::array<std::uint8_t, 256> kByteClass = [] {
  std::array<std::uint8_t, 256> table{};
  for (std::size_t c = 0; c < 0x20; ++c) table[c] = kEscape;
  table['"'] = kEscape;
  table['\\'] = kEscape;
  for (std::size_t c = 0x80; c < 0x100; ++c) table[c] = kNonAscii;
  return table;
}();

inline constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
inline constexpr std::uint64_t kHighBits = 0x8080808080808080ULL;

inline constexpr std::uint64_t has_zero_byte(std::uint64_t word) { return (word - kOnes) & ~word & kHighBits; }

// True when any of the 8 bytes is not kPlain. It may also flag a plain byte sitting above a
// flagged one (borrow propagation); the byte loop then sorts that out, so only "nothing
// flagged" has to be exact, and it is.
inline constexpr bool word_needs_attention(std::uint64_t word) {
  const std::uint64_t control = (word - kOnes * 0x20) & ~word;
  const std::uint64_t quote = has_zero_byte(word ^ (kOnes * '"'));
  const std::uint64_t backslash = has_zero_byte(word ^ (kOnes * '\\'));
  return ((control | quote | backslash | word) & kHighBits) != 0;
}

// The first byte in [p, end) that is not kPlain (end when there is none). SSE2 (every x86-64)
// looks at 16 bytes per step: one signed compare flags both control characters and bytes
// >= 0x80, two more find '"' and '\\'. Elsewhere 8 bytes per step with word_needs_attention().
inline const char* skip_plain(const char* p, const char* const end) {
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

__attribute__((target("avx2"))) inline bool copy_if_plain_avx2(char* to, const char* from, std::size_t n) {
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

inline const bool kHaveAvx2 = [] {
  __builtin_cpu_init();  // this may run before the runtime's own constructors
  return __builtin_cpu_supports("avx2") != 0;
}();
#endif

// Copies n bytes from `from` to `to` while checking them, and tells whether every one was
// kPlain (what skip_plain() would find); on false, what was copied is meaningless. One pass
// instead of skip_plain() and then a copy.
inline bool copy_if_plain(char* to, const char* from, std::size_t n) {
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

}  // namespace cdc::ndjson::plain_bytes
