#pragma once

// The lines of cdc-stream besides the row changes (records/row.h): ddl, commit, incident,
// span_start, span_end and discard. Written once per statement or transaction, so the records
// hold views: no allocation on the stream's path.
//
//   {"op":"ddl","v":1,"db":..,"sql":..,"pos":EVENT_POS,"ts_ms":N}
//   {"op":"commit","v":1,"gtid":..|null,"pos":{"file":..,"offset":N},"position":..,"rows":N,"xid":N|null,
//    "ts_ms":N}
//   {"op":"incident","v":1,"message":..,"pos":EVENT_POS,"ts_ms":N}
//   {"op":"span_start","v":1,"position":..}
//   {"op":"span_end","v":1,"position":..,"pos":{"file":..,"offset":N}|null,"until":..}
//   {"op":"discard","v":1,"gtid":..|null,"pos":{"file":..,"offset":N},"reason":..,"ts_ms":N}
//
// with EVENT_POS {"file":..,"offset":N,"index":N,"gtid":..|null}, as a change line has it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gtid/position.h"
#include "records/position.h"

namespace cdc::ndjson {
class Writer;
}

namespace cdc::records {

// An event's "pos": where it is, the row's index in it, its transaction's GTID ("" for null).
struct EventPos {
  std::string_view file;
  std::uint64_t offset = 0;
  std::uint64_t index = 0;
  std::string_view gtid;
};

struct Ddl {
  std::string_view db;
  std::string_view sql;
  EventPos pos;
  std::uint64_t ts_ms = 0;
};

struct Commit {
  std::string_view gtid;  // "" for null
  std::string_view file;  // where the transaction ends
  std::uint64_t offset = 0;
  std::string_view position;  // what --from takes to resume after it
  std::uint64_t rows = 0;
  std::optional<std::uint64_t> xid;  // the XID event's; null for a COMMIT query
  std::uint64_t ts_ms = 0;
};

struct Incident {
  std::string_view message;
  EventPos pos;
  std::uint64_t ts_ms = 0;
};

struct SpanStart {
  std::string_view position;
};

struct SpanEnd {
  std::string_view position;
  std::optional<gtid::FilePosition> at;  // the end of the last whole transaction; null when not known
  std::string_view until;
};

struct StreamDiscard {
  std::string_view gtid;  // "" for null
  std::string_view file;  // where the transaction began
  std::uint64_t offset = 0;
  std::string_view reason;
  std::uint64_t ts_ms = 0;
};

// Each writes one line, ending the record.
void write_ddl(const Ddl& ddl, ndjson::Writer& out);
void write_commit(const Commit& commit, ndjson::Writer& out);
void write_incident(const Incident& incident, ndjson::Writer& out);
void write_span_start(const SpanStart& span, ndjson::Writer& out);
void write_span_end(const SpanEnd& span, ndjson::Writer& out);
void write_stream_discard(const StreamDiscard& discard, ndjson::Writer& out);

// The "pos" (and GTID) of a change, ddl, incident or commit line read from its bytes, without
// parsing it: from the line's end for change, ddl and incident lines, where "pos" comes after
// the images and the SQL (so the bytes of "pos" inside an image or a string cannot be taken
// for it), followed by a change line's "server_id" and "thread". False when the line is not in the exact form the writers above and
// stream/change_writer give it; the caller then parses it (read_pos()), which also catches a
// torn line whose tail is another line's.
[[nodiscard]] bool scan_line_pos(std::string_view line, bool commit, LinePos& pos) noexcept;
// What else scan_line_pos read of a line's end: where its "pos" member starts (the quote of the
// key), and the text of a change, ddl or incident line's last member, "ts_ms" (empty for a
// commit line). strict_json: that end, from "pos" on, is also JSON as ndjson/json_check.h checks
// it (its strings without control characters, its numbers without leading zeros; UTF-8 is the
// caller's to check), so a scan that proves the rest of the line need not read it.
struct LineEnd {
  std::size_t pos_member = 0;
  std::string_view ts_ms;
  bool strict_json = false;
};
[[nodiscard]] bool scan_line_pos(std::string_view line, bool commit, LinePos& pos, LineEnd& end) noexcept;

// A commit line read back (at a run's start, from the end of its --output): what a state
// resuming right after that transaction would hold. nullopt for any other line, or one that
// is not JSON.
struct CommitPoint {
  std::string gtid;      // "" for null
  std::string file;      // where the transaction ends
  std::uint64_t offset = 0;
  std::string position;  // where to resume after it
};
[[nodiscard]] std::optional<CommitPoint> read_commit_point(std::string_view line);

}  // namespace cdc::records
