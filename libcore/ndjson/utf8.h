#pragma once

// UTF-8 well-formedness as Unicode defines it (The Unicode Standard, ch. 3, Table 3-7), shared
// by is_valid_utf8() and the NDJSON writer's replacement policy (writer.h) so both agree on
// what "valid" means byte for byte.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cdc::ndjson {

// True when bytes is well-formed UTF-8: no overlong forms (C0 80, E0 80 80), no encoded
// surrogates (ED A0 80 = U+D800), nothing above U+10FFFF (F4 90 80 80, F5..FF), no truncated
// sequence and no stray continuation byte. The empty string is valid.
[[nodiscard]] bool is_valid_utf8(std::string_view bytes) noexcept;

// What the sequence at the start of some bytes is.
struct Utf8Step {
  std::size_t length;  // > 0: the whole code point if valid, else its maximal ill-formed subpart
  bool valid;
};

// Classifies the sequence starting at rest[0], which must be a non-ASCII byte (>= 0x80).
//
// An invalid result has the length of the "maximal subpart" (Unicode ch. 3, "U+FFFD
// Substitution of Maximal Subparts", also what the WHATWG decoder and ICU do): the longest
// prefix that could still have begun a well-formed sequence, or 1 byte when even the first
// byte cannot. So E2 82 41 is {2, invalid} followed by 'A', and E0 80 80 is three 1-byte
// subparts because no well-formed sequence starts E0 80. Replacing each subpart with U+FFFD
// gives the same output as every mainstream decoder, which keeps diffs between tools quiet.
[[nodiscard]] constexpr Utf8Step utf8_step(std::string_view rest) noexcept {
  const auto at = [rest](std::size_t i) { return static_cast<unsigned char>(rest[i]); };
  const unsigned char lead = at(0);
  std::size_t continuations = 0;
  // The second byte's range is what rules out overlongs, surrogates and > U+10FFFF (Table 3-7);
  // later continuation bytes are always 80..BF.
  unsigned char second_lo = 0x80;
  unsigned char second_hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    continuations = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    continuations = 2;
    if (lead == 0xE0) second_lo = 0xA0;  // E0 80..9F would be overlong
    if (lead == 0xED) second_hi = 0x9F;  // ED A0..BF would be U+D800..U+DFFF
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    continuations = 3;
    if (lead == 0xF0) second_lo = 0x90;  // F0 80..8F would be overlong
    if (lead == 0xF4) second_hi = 0x8F;  // F4 90.. would be above U+10FFFF
  } else {
    // 80..BF stray continuation, C0/C1 (only ever overlong), F5..FF (only ever > U+10FFFF).
    return {1, false};
  }
  if (rest.size() < 2 || at(1) < second_lo || at(1) > second_hi) return {1, false};
  for (std::size_t i = 2; i <= continuations; ++i) {
    if (i >= rest.size() || (at(i) & 0xC0U) != 0x80U) return {i, false};
  }
  return {continuations + 1, true};
}

// Appends code point cp (at most U+10FFFF, not a surrogate: the caller checks) as UTF-8.
inline void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace cdc::ndjson
