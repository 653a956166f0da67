#pragma once

// The state file of cdc-stream --state (records/kinds.h: Kind::stream_state): not a line of
// a stream but one JSON object, read back by cdc-stream and cdc-sync. stream/state_file.h
// keeps it on disk.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "util/result.h"

namespace cdc::records {

// Where a stream resumes, as cdc-stream --state keeps it: one small JSON object a person can
// read and a script can take apart with jq, e.g.
//   {"v":1,"position":"0-1-42","file":"binlog.000003","offset":1234,"gtid":"0-1-42",
//    "output_bytes":5678,"span":"open","server":"127.0.0.1:3306","server_id":1,
//    "saved_at":"2026-11-29T15:04:05Z"}
// `position` is what --from accepts; `output_bytes` is there only with --output, `span` only
// with --output and --until (a bounded run's span_start is in the output: "open"; its
// span_end too: "closed"). `server_id` is the server the position was read from: FILE:OFFSET
// means nothing on another server.
struct StreamState {
  std::string position;
  std::string file;
  std::uint64_t offset = 0;
  std::string gtid;
  std::optional<std::uint64_t> output_bytes;
  std::string span;  // "", "open" or "closed"
  std::string server;
  std::optional<std::uint32_t> server_id;
  std::string saved_at;
};

// The state as one JSON line, and back. parse_state's errors are Errc::corrupt_input naming
// the file (`name`) and saying what to do.
[[nodiscard]] std::string format_state(const StreamState& state);
[[nodiscard]] Result<StreamState> parse_state(std::string_view text, std::string_view name);

}  // namespace cdc::records
