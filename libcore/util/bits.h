#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace cdc {

// Bit `index` of a little-endian bitmap (bit 0 = lowest bit of byte 0): the row events'
// column, null and partial-JSON bitmaps.
[[nodiscard]] inline bool lsb_bit(std::span<const std::uint8_t> bitmap, std::size_t index) noexcept {
  return ((static_cast<unsigned>(bitmap[index / 8]) >> (index % 8)) & 1U) != 0;
}

// Bit `index` counted from the most significant bit of byte 0 (TABLE_MAP optional metadata).
[[nodiscard]] inline bool msb_bit(std::span<const std::uint8_t> bitmap, std::size_t index) noexcept {
  return ((static_cast<unsigned>(bitmap[index / 8]) >> (7 - index % 8)) & 1U) != 0;
}

// The unsigned little-endian integer of `width` bytes (0 to 8) at `at`, as a loop over the
// bytes reads it, in at most two loads: row images hold several per value (lengths, integers).
[[nodiscard]] inline std::uint64_t load_le(const std::uint8_t* at, std::size_t width) noexcept {
  if constexpr (std::endian::native != std::endian::little) {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < width; ++i) value |= std::uint64_t{at[i]} << (8 * i);
    return value;
  }
  const auto load = [](const std::uint8_t* from, auto word) {
    std::memcpy(&word, from, sizeof word);
    return std::uint64_t{word};
  };
  // Two overlapping loads: the low word, and the word ending at the last byte shifted down so
  // that only the bytes past the low word remain.
  if (width >= 4) return load(at, std::uint32_t{}) | (load(at + width - 4, std::uint32_t{}) >> (8 * (8 - width))) << 32;
  if (width >= 2) return load(at, std::uint16_t{}) | (load(at + width - 2, std::uint16_t{}) >> (8 * (4 - width))) << 16;
  return width == 1 ? at[0] : 0;
}

}  // namespace cdc
