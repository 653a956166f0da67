#include "binlog/checksum.h"

#include <libdeflate.h>

#include <array>

#include "binlog/event_header.h"

namespace cdc::binlog {

// libdeflate_crc32 is the IEEE CRC-32 of zlib's crc32() (and the server's my_checksum()),
// with PCLMULQDQ folding: every byte of the binlog goes through here.
std::uint32_t crc32_of(std::span<const std::uint8_t> bytes) noexcept {
  return libdeflate_crc32(0, bytes.data(), bytes.size());
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
  std::uint32_t crc = libdeflate_crc32(0, header.data(), header.size());
  crc = libdeflate_crc32(crc, covered.data() + kEventHeaderSize, covered.size() - kEventHeaderSize);
  return crc == stored;
}

}  // namespace cdc::binlog
