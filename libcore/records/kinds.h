#pragma once

// The NDJSON line kinds the tools exchange, in one list: each kind's "op", the tool that
// writes it and its fields in the order they are written. The codecs (records/*.h) write and
// read the lines with these names; man/cdc-ndjson(5) documents every kind, and a test walks
// all_kinds() to check that it does. A new line kind is one entry here, one record type and
// one codec beside the others.

#include <cstdint>
#include <span>
#include <string_view>

namespace cdc::records {

// The "op" values.
namespace op {
inline constexpr std::string_view chunk = "chunk";
inline constexpr std::string_view low = "low";
inline constexpr std::string_view row = "r";
inline constexpr std::string_view high = "high";
inline constexpr std::string_view discard = "discard";
inline constexpr std::string_view insert = "c";
inline constexpr std::string_view update = "u";
inline constexpr std::string_view erase = "d";
inline constexpr std::string_view ddl = "ddl";
inline constexpr std::string_view commit = "commit";
inline constexpr std::string_view incident = "incident";
inline constexpr std::string_view span_start = "span_start";
inline constexpr std::string_view span_end = "span_end";
inline constexpr std::string_view check = "check";
inline constexpr std::string_view check_summary = "check_summary";
inline constexpr std::string_view table = "table";
inline constexpr std::string_view verify = "verify";
inline constexpr std::string_view verify_summary = "verify_summary";
}  // namespace op

// The member names. A nested member is written "pos.file" in the field lists below.
namespace field {
inline constexpr std::string_view op = "op";
inline constexpr std::string_view v = "v";
inline constexpr std::string_view db = "db";
inline constexpr std::string_view table = "table";
inline constexpr std::string_view key = "key";
inline constexpr std::string_view key_types = "key_types";
inline constexpr std::string_view key_collations = "key_collations";
inline constexpr std::string_view start = "start";
inline constexpr std::string_view end = "end";
inline constexpr std::string_view index = "index";
inline constexpr std::string_view count = "count";
inline constexpr std::string_view columns = "columns";
inline constexpr std::string_view name = "name";
inline constexpr std::string_view type = "type";
inline constexpr std::string_view collation_id = "collation_id";
inline constexpr std::string_view identity = "identity";
inline constexpr std::string_view rows_estimate = "rows_estimate";
inline constexpr std::string_view where = "where";
inline constexpr std::string_view all_versions = "all_versions";
inline constexpr std::string_view position = "position";
inline constexpr std::string_view file = "file";
inline constexpr std::string_view offset = "offset";
inline constexpr std::string_view rows = "rows";
inline constexpr std::string_view rows_bytes = "rows_bytes";
inline constexpr std::string_view chunks = "chunks";
inline constexpr std::string_view reason = "reason";
inline constexpr std::string_view before = "before";
inline constexpr std::string_view after = "after";
inline constexpr std::string_view json_diffs = "json_diffs";
inline constexpr std::string_view partial = "partial";
inline constexpr std::string_view pos = "pos";
inline constexpr std::string_view gtid = "gtid";
inline constexpr std::string_view ts_ms = "ts_ms";
inline constexpr std::string_view sql = "sql";
inline constexpr std::string_view query = "query";
inline constexpr std::string_view message = "message";
inline constexpr std::string_view until = "until";
inline constexpr std::string_view status = "status";
inline constexpr std::string_view value = "value";
inline constexpr std::string_view want = "want";
inline constexpr std::string_view fix = "fix";
inline constexpr std::string_view flavor = "flavor";
inline constexpr std::string_view usable = "usable";
inline constexpr std::string_view failed = "failed";
inline constexpr std::string_view warnings = "warnings";
inline constexpr std::string_view output_bytes = "output_bytes";
inline constexpr std::string_view span = "span";
inline constexpr std::string_view server = "server";
inline constexpr std::string_view server_id = "server_id";
inline constexpr std::string_view saved_at = "saved_at";
inline constexpr std::string_view nullable = "nullable";
inline constexpr std::string_view charset = "charset";
inline constexpr std::string_view collation = "collation";
inline constexpr std::string_view values = "values";
inline constexpr std::string_view thread = "thread";
inline constexpr std::string_view xid = "xid";
}  // namespace field

// The version every line carries as "v".
inline constexpr int kVersion = 1;

enum class Kind : std::uint8_t {
  chunk,             // cdc-plan: one chunk of a table's key range
  check,             // cdc-plan --check: one requirement of the server
  check_summary,     // cdc-plan --check: the verdict, last line
  table,             // cdc-stream, cdc-snapshot, cdc-merge: what a table looks like
  low,               // cdc-snapshot: a chunk's read view opens (low watermark)
  row,               // cdc-snapshot, cdc-merge: one row ("r")
  high,              // cdc-snapshot: a chunk's read view closes (high watermark)
  snapshot_discard,  // cdc-snapshot: the chunk's lines since its low line are void
  merged_high,       // cdc-merge: the merged snapshot's last line
  insert,            // cdc-stream: a row inserted ("c")
  update,            // cdc-stream: a row updated ("u")
  erase,             // cdc-stream: a row deleted ("d")
  ddl,               // cdc-stream: a statement that changes the schema
  commit,            // cdc-stream: a transaction's end
  incident,          // cdc-stream: an INCIDENT event of the server
  span_start,        // cdc-stream --until: where the span starts, first line
  span_end,          // cdc-stream --until: the span reached --until, last line
  stream_discard,    // cdc-stream: the transaction in flight is read again
  verify,            // cdc-apply --verify: one chunk compared between source and target
  verify_summary,    // cdc-apply --verify: the counts, last line
  stream_state,      // cdc-stream --state: the state file (one object, no "op")
};

struct KindInfo {
  Kind kind;
  std::string_view name;  // unique, for messages and tests: the op, or "<tool> <op>" where ops repeat
  std::string_view op;    // the "op" member's value; "" for the state file
  std::string_view tool;  // the tool that writes it
  // Members in the order the tool writes them; optional ones included, nested ones as
  // "parent.member", array elements' members as "parent[].member".
  std::span<const std::string_view> fields;
};

// Every kind, in the enum's order.
[[nodiscard]] std::span<const KindInfo> all_kinds() noexcept;
[[nodiscard]] const KindInfo& kind_info(Kind kind) noexcept;

}  // namespace cdc::records
