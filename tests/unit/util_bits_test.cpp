// util/bits.h: the bitmaps and little-endian integers of row images.

#include <doctest/doctest.h>

#include <array>
#include <cstdint>

#include "util/bits.h"

TEST_CASE("load_le reads every width 0..8 as a byte loop does, at every alignment") {
  std::array<std::uint8_t, 24> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(0xA1 + i * 37);
  for (std::size_t at = 0; at + 8 <= bytes.size(); ++at)
    for (std::size_t width = 0; width <= 8; ++width) {
      std::uint64_t expected = 0;
      for (std::size_t b = 0; b < width; ++b) expected |= std::uint64_t{bytes[at + b]} << (8 * b);
      CAPTURE(at);
      CAPTURE(width);
      CHECK(cdc::load_le(bytes.data() + at, width) == expected);
    }
  // It reads only its bytes: a value at the very end of a buffer.
  const std::array<std::uint8_t, 3> tail = {0x01, 0x02, 0xFF};
  CHECK(cdc::load_le(tail.data(), 3) == 0xFF0201);
  CHECK(cdc::load_le(tail.data() + 1, 2) == 0xFF02);
  CHECK(cdc::load_le(tail.data() + 2, 1) == 0xFF);
}

TEST_CASE("lsb_bit and msb_bit count from opposite ends of each byte") {
  const std::array<std::uint8_t, 2> bitmap = {0x81, 0x02};
  CHECK(cdc::lsb_bit(bitmap, 0));
  CHECK(cdc::lsb_bit(bitmap, 7));
  CHECK_FALSE(cdc::lsb_bit(bitmap, 1));
  CHECK(cdc::lsb_bit(bitmap, 9));
  CHECK(cdc::msb_bit(bitmap, 0));
  CHECK(cdc::msb_bit(bitmap, 7));
  CHECK(cdc::msb_bit(bitmap, 14));
  CHECK_FALSE(cdc::msb_bit(bitmap, 9));
}
