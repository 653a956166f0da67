#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "binlog/checksum.h"
#include "binlog/event_type.h"
#include "util/byte_reader.h"

namespace cdc::binlog {

enum class ServerFlavor : std::uint8_t { mysql, mariadb };

// FORMAT_DESCRIPTION_EVENT: what every later event of the file looks like. Until one is read,
// a decoder assumes the v4 defaults of a 5.0 server (no checksums).
struct FormatDescription {
  std::uint16_t binlog_version = 4;
  std::string server_version;  // "8.0.36", "10.11.6-MariaDB-log"
  std::uint32_t create_timestamp = 0;
  std::uint8_t header_length = 19;
  // Post-header length per event type code; 0 where the server did not say.
  std::array<std::uint8_t, 256> post_header_length{};
  ChecksumAlgorithm checksum = ChecksumAlgorithm::off;
  ServerFlavor flavor = ServerFlavor::mysql;

  [[nodiscard]] std::uint8_t post_header(EventType type) const noexcept {
    return post_header_length[static_cast<std::uint8_t>(type)];
  }
  // The length of the table id in TABLE_MAP and rows events: 6 bytes, or 4 before MySQL 5.1.4
  // (a post-header of 6 rather than 8).
  [[nodiscard]] std::size_t table_id_size(EventType type) const noexcept {
    return post_header(type) == 6 ? 4 : 6;
  }
};

// Decodes the event body: everything after the 19 header bytes, checksum included. Whether
// the last 5 bytes are the algorithm byte and a CRC depends on the server version the body
// itself names, so this event decides for itself. Failures are left in `body`.
FormatDescription decode_format_description(ByteReader& body);

// True when this server version writes the checksum-algorithm byte (MySQL 5.6.1+, MariaDB 5.3+).
[[nodiscard]] bool version_has_checksum_byte(std::string_view server_version) noexcept;

}  // namespace cdc::binlog
