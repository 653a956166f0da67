#include "ndjson/utf8.h"

#include <cstdint>
#include <cstring>

namespace cdc::ndjson {

bool is_valid_utf8(std::string_view bytes) noexcept {
  constexpr std::uint64_t kHighBits = 0x8080808080808080ULL;
  std::size_t i = 0;
  const std::size_t size = bytes.size();
  while (i < size) {
    // Most of what we check is ASCII (column names, numbers as text): skip it a word at a time.
    while (size - i >= 8) {
      std::uint64_t word;
      std::memcpy(&word, bytes.data() + i, sizeof word);
      if ((word & kHighBits) != 0) break;
      i += 8;
    }
    if (i == size) break;
    if (static_cast<unsigned char>(bytes[i]) < 0x80) {
      ++i;
      continue;
    }
    const Utf8Step step = utf8_step(bytes.substr(i));
    if (!step.valid) return false;
    i += step.length;
  }
  return true;
}

}  // namespace cdc::ndjson
