#pragma once

#include <cstddef>
#include <cstdint>
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

}  // namespace cdc
