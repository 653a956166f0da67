#pragma once

#include <cstddef>
#include <cstdint>

#include "binlog/event_type.h"
#include "util/byte_reader.h"

namespace cdc::binlog {

// The v4 common header in front of every event (binlog version 4: MySQL 5.0+, MariaDB).
constexpr std::size_t kEventHeaderSize = 19;
constexpr std::size_t kChecksumSize = 4;
// "\xfebin": the magic every binlog file starts with.
constexpr std::size_t kBinlogMagicSize = 4;

// Header flags (libbinlogevents binlog_event.h LOG_EVENT_*_F).
constexpr std::uint16_t kFlagBinlogInUse = 0x0001;     // FDE of a file the server had open
constexpr std::uint16_t kFlagArtificial = 0x0020;      // made up by the server (fake ROTATE)
constexpr std::uint16_t kFlagRelayLog = 0x0040;
constexpr std::uint16_t kFlagIgnorable = 0x0080;       // a reader may skip it if unknown

struct EventHeader {
  std::uint32_t timestamp = 0;   // seconds since the epoch, when the statement began
  std::uint8_t type_code = 0;    // EventType, kept raw so unknown codes survive
  std::uint32_t server_id = 0;
  std::uint32_t event_size = 0;  // header + body + checksum
  std::uint32_t next_position = 0;  // log_pos: offset of the next event (0 in some relay logs)
  std::uint16_t flags = 0;

  [[nodiscard]] EventType type() const noexcept { return static_cast<EventType>(type_code); }
};

// Reads the 19 header bytes; fails the reader when fewer are there.
EventHeader read_event_header(ByteReader& in) noexcept;

}  // namespace cdc::binlog
