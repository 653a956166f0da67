// libFuzzer entry point for the GTID decoders and parsers, and for what a resume reads: the
// positions --from/--until take and cdc-stream's state file.
//
// The input is used six ways: as a binary MySQL GTID set (the COM_BINLOG_DUMP_GTID /
// PREVIOUS_GTIDS_LOG_EVENT form), as MySQL GTID-set text, as a MariaDB GTID position, as
// one MySQL GTID, as a position of any form and as a state file. Whatever parses must survive a round trip unchanged; anything else must be
// a clean error. Seeds worth keeping: the PREVIOUS_GTIDS bodies quoted in
// tests/unit/gtid_test.cpp and the hostile cases listed there.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gtid/mariadb_gtid.h"
#include "gtid/mysql_gtid_set.h"
#include "gtid/position.h"
#include "records/state.h"
#include "util/byte_reader.h"

namespace {

void require(bool condition) {
  if (!condition) __builtin_trap();
}

void check_binary(const std::uint8_t* data, std::size_t size) {
  cdc::ByteReader reader(data, size);
  const auto decoded = cdc::gtid::MysqlGtidSet::decode(reader);
  if (!decoded) {
    require(decoded.error().code == cdc::Errc::corrupt_input);
    require(!reader.ok());
    return;
  }
  std::string encoded;
  decoded->encode(encoded);
  require(encoded.size() == decoded->encoded_size());
  cdc::ByteReader again_reader(encoded);
  const auto again = cdc::gtid::MysqlGtidSet::decode(again_reader);
  require(again.has_value() && *again == *decoded && again_reader.empty());
  const auto reparsed = cdc::gtid::MysqlGtidSet::parse(decoded->to_string());
  require(reparsed.has_value() && *reparsed == *decoded);
}

void check_text(std::string_view text) {
  if (const auto set = cdc::gtid::MysqlGtidSet::parse(text)) {
    const auto again = cdc::gtid::MysqlGtidSet::parse(set->to_string());
    require(again.has_value() && *again == *set);
    require(set->union_with(*set) == *set && set->subtract(*set).empty());
  } else {
    require(set.error().code == cdc::Errc::usage);
  }
  if (const auto pos = cdc::gtid::MariadbGtidPos::parse(text)) {
    const auto again = cdc::gtid::MariadbGtidPos::parse(pos->to_string());
    require(again.has_value() && *again == *pos);
  } else {
    require(pos.error().code == cdc::Errc::usage);
  }
  if (const auto gtid = cdc::gtid::Gtid::parse(text)) {
    const auto again = cdc::gtid::Gtid::parse(gtid->to_string());
    require(again.has_value() && *again == *gtid);
  }
  if (const auto position = cdc::gtid::Position::parse(text)) {
    const auto again = cdc::gtid::Position::parse(position->to_string());
    require(again.has_value() && again->kind == position->kind && again->to_string() == position->to_string());
  } else {
    require(position.error().code == cdc::Errc::usage);
  }
  if (const auto state = cdc::records::parse_state(text, "fuzz")) {
    const auto again = cdc::records::parse_state(cdc::records::format_state(*state), "fuzz");
    require(again.has_value() && again->position == state->position && again->offset == state->offset &&
            again->output_bytes == state->output_bytes);
  } else {
    require(state.error().code == cdc::Errc::corrupt_input);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  check_binary(data, size);
  check_text(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
