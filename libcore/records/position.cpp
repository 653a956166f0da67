#include "records/position.h"

#include <fmt/format.h>

#include "records/kinds.h"

namespace cdc::records {

Result<gtid::Position> parse_position(std::string_view text) {
  auto position = gtid::Position::parse(text);
  if (!position)
    return fail(Errc::corrupt_input, fmt::format("\"{}\": {}", field::position, position.error().message));
  return position;
}

Result<gtid::Position> read_position(simdjson::dom::object record) {
  std::string_view text;
  if (record[field::position].get_string().get(text) != simdjson::SUCCESS)
    return fail(Errc::corrupt_input, fmt::format("\"{}\" is missing or not a string", field::position));
  return parse_position(text);
}

Result<LinePos> read_pos(simdjson::dom::object record, bool gtid_in_pos) {
  LinePos pos;
  simdjson::dom::object pos_object;
  if (record[field::pos].get_object().get(pos_object) != simdjson::SUCCESS ||
      pos_object[field::file].get_string().get(pos.file) != simdjson::SUCCESS ||
      pos_object[field::offset].get_uint64().get(pos.offset) != simdjson::SUCCESS)
    return fail(Errc::corrupt_input, "\"pos\" is missing, or lacks \"file\" or \"offset\"");
  simdjson::dom::element gtid;
  if ((gtid_in_pos ? pos_object[field::gtid] : record[field::gtid]).get(gtid) == simdjson::SUCCESS &&
      !gtid.is_null() && gtid.get_string().get(pos.gtid) != simdjson::SUCCESS)
    return fail(Errc::corrupt_input, "\"gtid\" is neither a string nor null");
  return pos;
}

}  // namespace cdc::records
