#include "binlog/format_description.h"

#include "util/server_version.h"

namespace cdc::binlog {

namespace {

constexpr std::size_t kServerVersionLength = 50;
constexpr std::size_t kAlgorithmAndCrc = 1 + 4;

}  // namespace

bool version_has_checksum_byte(std::string_view server_version) noexcept {
  const ServerVersion version = ServerVersion::parse(server_version);
  // sql/log_event.cc: checksum_version_split_mysql = 5.6.1, checksum_version_split_mariadb = 5.3.0.
  if (server_version.find("MariaDB") != std::string_view::npos || server_version.find("-maria-") != std::string_view::npos)
    return version.at_least(5, 3, 0);
  return version.at_least(5, 6, 1);
}

FormatDescription decode_format_description(ByteReader& body) {
  FormatDescription description;
  description.binlog_version = body.u16();
  const std::string_view version_field = body.chars(kServerVersionLength, "server version");
  description.server_version.assign(version_field.substr(0, version_field.find('\0')));
  description.create_timestamp = body.u32();
  description.header_length = body.u8();
  if (!body.ok()) return description;
  description.flavor = description.server_version.find("MariaDB") != std::string::npos ? ServerFlavor::mariadb
                                                                                        : ServerFlavor::mysql;
  if (description.binlog_version != 4) {
    body.fail("binlog format version " + std::to_string(description.binlog_version) +
              " (MySQL before 5.0) is not supported");
    return description;
  }
  if (description.header_length < 19) {
    body.fail("format description names a common header shorter than 19 bytes");
    return description;
  }
  std::size_t lengths = body.remaining();
  const bool has_algorithm = version_has_checksum_byte(description.server_version);
  if (has_algorithm) {
    if (lengths < kAlgorithmAndCrc) {
      body.fail("format description too short for its checksum algorithm byte");
      return description;
    }
    lengths -= kAlgorithmAndCrc;
  }
  const auto post_headers = body.bytes(lengths, "post-header lengths");
  for (std::size_t i = 0; i < post_headers.size() && i + 1 < description.post_header_length.size(); ++i)
    description.post_header_length[i + 1] = post_headers[i];  // the array starts at type code 1
  if (has_algorithm) {
    const std::uint8_t algorithm = body.u8();
    // 255 (BINLOG_CHECKSUM_ALG_UNDEF) is what 5.6 servers write when checksums were never
    // configured: no checksums follow.
    description.checksum = algorithm == 1 ? ChecksumAlgorithm::crc32 : ChecksumAlgorithm::off;
    if (algorithm > 1 && algorithm != 255) body.fail("unknown binlog checksum algorithm " + std::to_string(algorithm));
  }
  return description;
}

}  // namespace cdc::binlog
