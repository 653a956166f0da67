// Binlogs from before MySQL 5.0 (issue 30): their first event, START_EVENT_V3, is refused with
// a message that says what the file is and what to do, not misread as version 4 events.

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "binlog/decoder.h"

namespace {

// A START_EVENT_V3 as MySQL 3.23 (header of 13 bytes, format version 1) or 4.x (19 bytes,
// version 3) wrote it: the common header, then the version, 50 bytes of server version and
// a timestamp.
std::vector<std::uint8_t> start_event_v3(std::size_t header_length, std::uint16_t version, const std::string& server) {
  std::vector<std::uint8_t> event(header_length + 2 + 50 + 4, 0);
  event[4] = 1;  // START_EVENT_V3
  event[5] = 1;  // server id 1
  const auto size = static_cast<std::uint32_t>(event.size());
  for (std::size_t i = 0; i < 4; ++i) event[9 + i] = static_cast<std::uint8_t>(size >> (8 * i));
  if (header_length == 19)
    for (std::size_t i = 0; i < 4; ++i) event[13 + i] = static_cast<std::uint8_t>((4 + size) >> (8 * i));
  event[header_length] = static_cast<std::uint8_t>(version);
  event[header_length + 1] = static_cast<std::uint8_t>(version >> 8);
  for (std::size_t i = 0; i < server.size(); ++i) event[header_length + 2 + i] = static_cast<std::uint8_t>(server[i]);
  return event;
}

}  // namespace

TEST_CASE("binlog: a MySQL 4.x binlog (format version 3) is refused, naming the version and what to do") {
  cdc::binlog::Decoder decoder("old-bin.000001");
  const auto decoded = decoder.decode(start_event_v3(19, 3, "4.1.22-log"), 4);
  REQUIRE_FALSE(decoded.has_value());
  CHECK(decoded.error().code == cdc::Errc::corrupt_input);
  CHECK(decoded.error().message ==
        "old-bin.000001:4: START_EVENT_V3: a binlog of format version 3 written by MySQL 4.1.22-log, from before "
        "MySQL 5.0; cdc reads format version 4 (MySQL 5.0 and later, MariaDB): replay it into a newer server "
        "(mysqlbinlog FILE | mysql) and read that server's binlog");
}

TEST_CASE("binlog: a MySQL 3.23 binlog (format version 1, 13-byte headers) is refused the same way") {
  cdc::binlog::Decoder decoder("ancient-bin.001");
  const auto decoded = decoder.decode(start_event_v3(13, 1, "3.23.58-log"), 4);
  REQUIRE_FALSE(decoded.has_value());
  CHECK(decoded.error().message.starts_with(
      "ancient-bin.001:4: START_EVENT_V3: a binlog of format version 1 written by MySQL 3.23.58-log, from before "
      "MySQL 5.0"));
}

TEST_CASE("binlog: a START_EVENT_V3 too short to say its version is refused too") {
  cdc::binlog::Decoder decoder("short");
  std::vector<std::uint8_t> event(19, 0);
  event[4] = 1;
  event[9] = 19;
  const auto decoded = decoder.decode(event, 4);
  REQUIRE_FALSE(decoded.has_value());
  CHECK(decoded.error().message.starts_with("short:4: START_EVENT_V3: a binlog of format version before 4, from"));
}
