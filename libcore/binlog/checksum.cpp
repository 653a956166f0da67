#include "binlog/checksum.h"

#include <zlib.h>

#include <array>

#include "binlog/event_header.h"

namespace cdc::binlog {

std::uint32_t crc32_of(std::span<const std::uint8_t> bytes) noexcept {
  uLong crc = ::crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths; feed huge events in pieces.
  while (!bytes.empty()) {
    const std::size_t piece = std::min<std::size_t>(bytes.size(), 1U << 30);
    crc = ::crc32(crc, bytes.data(), static_cast<uInt>(piece));
    bytes = bytes.subspan(piece);
  }
  return static_cast<std::uint32_t>(crc);
}

bool event_checksum_matches(std::span<const std::uint8_t> event) noexcept {
  if (event.size() < kEventHeaderSize + kChecksumSize) return false;
  const std::size_t body_end = event.size() - kChecksumSize;
  const std::uint32_t stored = static_cast<std::uint32_t>(event[body_end]) |
                               static_cast<std::uint32_t>(event[body_end + 1]) << 8 |
                               static_cast<std::uint32_t>(event[body_end + 2]) << 16 |
                               static_cast<std::uint32_t>(event[body_end + 3]) << 24;
  const std::span<const std::uint8_t> covered = event.first(body_end);
  if (crc32_of(covered) == stored) return true;
  constexpr std::size_t kFlagsOffset = 17;
  const auto type = static_cast<EventType>(event[4]);
  if (type != EventType::format_description || (event[kFlagsOffset] & kFlagBinlogInUse) == 0) return false;
  // Recompute with the in-use bit cleared: the header first, then the rest unchanged.
  std::array<std::uint8_t, kEventHeaderSize> header{};
  for (std::size_t i = 0; i < kEventHeaderSize; ++i) header[i] = event[i];
  header[kFlagsOffset] = static_cast<std::uint8_t>(header[kFlagsOffset] & ~kFlagBinlogInUse);
  uLong crc = ::crc32(0L, Z_NULL, 0);
  crc = ::crc32(crc, header.data(), static_cast<uInt>(header.size()));
  crc = ::crc32(crc, covered.data() + kEventHeaderSize, static_cast<uInt>(covered.size() - kEventHeaderSize));
  return static_cast<std::uint32_t>(crc) == stored;
}

}  // namespace cdc::binlog
