#pragma once

#include <cstdint>
#include <span>

namespace cdc::binlog {

// binlog_checksum: the algorithm byte of the format description event.
enum class ChecksumAlgorithm : std::uint8_t { off = 0, crc32 = 1, undefined = 255 };

// CRC-32 (ISO-HDLC, as zlib's crc32()) of the bytes, which is what the server stores.
[[nodiscard]] std::uint32_t crc32_of(std::span<const std::uint8_t> bytes) noexcept;

// Verifies an event's trailing CRC32. A format description event of a binlog the server still
// had open carries LOG_EVENT_BINLOG_IN_USE_F, but the server computed its checksum with that
// flag clear (sql/binlog.cc writes the flag afterwards), so it is verified that way.
[[nodiscard]] bool event_checksum_matches(std::span<const std::uint8_t> event) noexcept;

}  // namespace cdc::binlog
