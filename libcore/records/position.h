#pragma once

// Positions as the lines carry them: the "position" member (low, high, commit, span_start,
// span_end, a merged snapshot's high, the state file) is the text cdc-stream --from takes,
// and "pos" the binlog coordinates of one event. The one parser of both, for every reader.

#include <cstdint>
#include <string_view>

#include <simdjson.h>

#include "gtid/position.h"
#include "util/result.h"

namespace cdc::records {

// Where a line's event is in the binlog: "pos"'s file and offset, and its transaction's GTID
// ("" for null). Views into the line.
struct LinePos {
  std::string_view file;
  std::uint64_t offset = 0;
  std::string_view gtid;
};

// A "position" text: Errc::corrupt_input "\"position\": <why>" when it does not parse.
[[nodiscard]] Result<gtid::Position> parse_position(std::string_view text);
// The record's "position": also "\"position\" is missing or not a string".
[[nodiscard]] Result<gtid::Position> read_position(simdjson::dom::object record);

// The record's "pos" object (file and offset) and the GTID: a commit's or a discard's top-level
// "gtid", a change's, ddl's or incident's "pos"."gtid" (gtid_in_pos). Errc::corrupt_input
// naming what is missing.
[[nodiscard]] Result<LinePos> read_pos(simdjson::dom::object record, bool gtid_in_pos);

}  // namespace cdc::records
