#pragma once

// The digit table the value writers share (numeric_values.cpp, temporal_values.cpp).

#include <array>

namespace cdc::rowimage {

// "00" "01" ... "99": two digits per lookup instead of a division by 10 per digit.
inline constexpr std::array<char, 200> kDigitPairs = [] {
  std::array<char, 200> pairs{};
  for (unsigned i = 0; i < 100; ++i) {
    pairs[2 * i] = static_cast<char>('0' + i / 10);
    pairs[2 * i + 1] = static_cast<char>('0' + i % 10);
  }
  return pairs;
}();

}  // namespace cdc::rowimage
