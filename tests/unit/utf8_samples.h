#pragma once

// Random valid UTF-8 for the NDJSON tests, shared by the writer and reader tests.

#include <cstddef>
#include <random>
#include <string>

namespace cdc::test {

// Text that uses every code point class: ASCII (controls too), 2-, 3- and 4-byte forms.
inline std::string random_valid_utf8(std::mt19937& rng, std::size_t code_points) {
  std::string out;
  std::uniform_int_distribution<int> kind(0, 3);
  for (std::size_t i = 0; i < code_points; ++i) {
    std::uint32_t cp = 0;
    switch (kind(rng)) {
      case 0: cp = std::uniform_int_distribution<std::uint32_t>(0, 0x7F)(rng); break;
      case 1: cp = std::uniform_int_distribution<std::uint32_t>(0x80, 0x7FF)(rng); break;
      case 2:
        do cp = std::uniform_int_distribution<std::uint32_t>(0x800, 0xFFFF)(rng);
        while (cp >= 0xD800 && cp <= 0xDFFF);
        break;
      default: cp = std::uniform_int_distribution<std::uint32_t>(0x10000, 0x10FFFF)(rng); break;
    }
    const auto byte = [](std::uint32_t v) { return static_cast<char>(static_cast<unsigned char>(v)); };
    if (cp < 0x80) {
      out += byte(cp);
    } else if (cp < 0x800) {
      out += byte(0xC0 | (cp >> 6));
      out += byte(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += byte(0xE0 | (cp >> 12));
      out += byte(0x80 | ((cp >> 6) & 0x3F));
      out += byte(0x80 | (cp & 0x3F));
    } else {
      out += byte(0xF0 | (cp >> 18));
      out += byte(0x80 | ((cp >> 12) & 0x3F));
      out += byte(0x80 | ((cp >> 6) & 0x3F));
      out += byte(0x80 | (cp & 0x3F));
    }
  }
  return out;
}

}  // namespace cdc::test
