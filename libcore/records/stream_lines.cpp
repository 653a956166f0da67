#include "records/stream_lines.h"

#include <charconv>
#include <utility>

#include "ndjson/json_scan.h"
#include "ndjson/writer.h"
#include "records/kinds.h"
#include "records/members.h"

namespace cdc::records {

namespace {

void write_event_pos(const EventPos& pos, ndjson::Writer& out) {
  out.key(field::pos);
  out.begin_object();
  out.field(field::file, pos.file);
  out.field(field::offset, pos.offset);
  out.field(field::index, pos.index);
  if (pos.gtid.empty())
    out.field_null(field::gtid);
  else
    out.field(field::gtid, pos.gtid);
  out.end_object();
}

// "pos":{"file":..,"offset":..}
void write_file_pos(std::string_view file, std::uint64_t offset, ndjson::Writer& out) {
  out.key(field::pos);
  out.begin_object();
  out.field(field::file, file);
  out.field(field::offset, offset);
  out.end_object();
}

// "gtid":"..."|null,"pos":{"file":..,"offset":..}: a commit's or a discard's transaction.
void write_gtid_and_pos(std::string_view gtid, std::string_view file, std::uint64_t offset, ndjson::Writer& out) {
  if (gtid.empty())
    out.field_null(field::gtid);
  else
    out.field(field::gtid, gtid);
  write_file_pos(file, offset, out);
}

bool take(std::string_view text, std::size_t& at, std::string_view expected) noexcept {
  if (!ndjson::starts_with_bytes(text.substr(at), expected)) return false;  // inline: it runs for every line
  at += expected.size();
  return true;
}

// strict is cleared when the number has a leading zero (not JSON).
bool take_number(std::string_view text, std::size_t& at, std::uint64_t& value, bool& strict) noexcept {
  const char* end = text.data() + text.size();
  const auto [next, error] = std::from_chars(text.data() + at, end, value);
  if (error != std::errc() || next == text.data() + at) return false;
  if (text[at] == '0' && next - (text.data() + at) > 1) strict = false;
  at = static_cast<std::size_t>(next - text.data());
  return true;
}

// A string without escapes (file names and GTIDs have none), or null as "". strict is cleared
// when it holds a control character (not JSON).
bool take_plain_string(std::string_view text, std::size_t& at, std::string_view& value, bool null_ok,
                       bool& strict) noexcept {
  if (null_ok && take(text, at, "null")) {
    value = {};
    return true;
  }
  if (at >= text.size() || text[at] != '"') return false;
  const std::size_t close = text.find('"', at + 1);
  if (close == std::string_view::npos) return false;
  value = text.substr(at + 1, close - at - 1);
  if (value.find('\\') != std::string_view::npos) return false;
  for (const char c : value)
    if (static_cast<unsigned char>(c) < 0x20) strict = false;
  at = close + 1;
  return true;
}

}  // namespace

bool scan_line_pos(std::string_view text, bool commit, LinePos& pos) noexcept {
  LineEnd end;
  return scan_line_pos(text, commit, pos, end);
}

bool scan_line_pos(std::string_view text, bool commit, LinePos& pos, LineEnd& end) noexcept {
  static constexpr std::string_view kPos = R"("pos":{"file":)";
  // Backwards from the end: "pos" is a few dozen bytes away.
  const std::size_t found = ndjson::find_last(text, kPos);
  if (found == std::string_view::npos) return false;
  end.pos_member = found;
  end.ts_ms = {};
  end.strict_json = false;
  bool strict = true;
  std::size_t at = found + kPos.size();
  if (!take_plain_string(text, at, pos.file, false, strict) || !take(text, at, R"(,"offset":)") ||
      !take_number(text, at, pos.offset, strict))
    return false;
  if (commit) {
    static constexpr std::string_view kCommit = R"({"op":"commit","v":1,"gtid":)";
    std::size_t gtid_at = kCommit.size();
    return take(text, at, R"(},"position":")") && text.substr(0, kCommit.size()) == kCommit &&
           take_plain_string(text, gtid_at, pos.gtid, true, strict) && gtid_at < found;
  }
  std::uint64_t number = 0;
  if (!take(text, at, R"(,"index":)") || !take_number(text, at, number, strict) || !take(text, at, R"(,"gtid":)") ||
      !take_plain_string(text, at, pos.gtid, true, strict) || !take(text, at, "}"))
    return false;
  // A change line's origin; ddl and incident lines have none.
  if (take(text, at, R"(,"server_id":)") &&
      (!take_number(text, at, number, strict) || !take(text, at, R"(,"thread":)") ||
       !(take(text, at, "null") || take_number(text, at, number, strict))))
    return false;
  if (!take(text, at, R"(,"ts_ms":)")) return false;
  const std::size_t ts_ms = at;
  if (!take_number(text, at, number, strict) || at + 1 != text.size() || text[at] != '}') return false;
  end.ts_ms = text.substr(ts_ms, at - ts_ms);
  end.strict_json = strict;
  return true;
}

void write_ddl(const Ddl& ddl, ndjson::Writer& out) {
  begin_line(op::ddl, out);
  out.field(field::db, ddl.db);
  out.field(field::sql, ddl.sql);
  write_event_pos(ddl.pos, out);
  out.field(field::ts_ms, ddl.ts_ms);
  end_line(out);
}

void write_commit(const Commit& commit, ndjson::Writer& out) {
  begin_line(op::commit, out);
  write_gtid_and_pos(commit.gtid, commit.file, commit.offset, out);
  out.field(field::position, commit.position);
  out.field(field::rows, commit.rows);
  if (commit.xid)
    out.field(field::xid, *commit.xid);
  else
    out.field_null(field::xid);
  out.field(field::ts_ms, commit.ts_ms);
  end_line(out);
}

void write_incident(const Incident& incident, ndjson::Writer& out) {
  begin_line(op::incident, out);
  out.field(field::message, incident.message);
  write_event_pos(incident.pos, out);
  out.field(field::ts_ms, incident.ts_ms);
  end_line(out);
}

void write_span_start(const SpanStart& span, ndjson::Writer& out) {
  begin_line(op::span_start, out);
  out.field(field::position, span.position);
  end_line(out);
}

void write_span_end(const SpanEnd& span, ndjson::Writer& out) {
  begin_line(op::span_end, out);
  out.field(field::position, span.position);
  if (span.at) {
    write_file_pos(span.at->file, span.at->offset, out);
  } else {
    out.field_null(field::pos);
  }
  out.field(field::until, span.until);
  end_line(out);
}

void write_stream_discard(const StreamDiscard& discard, ndjson::Writer& out) {
  begin_line(op::discard, out);
  write_gtid_and_pos(discard.gtid, discard.file, discard.offset, out);
  out.field(field::reason, discard.reason);
  out.field(field::ts_ms, discard.ts_ms);
  end_line(out);
}

std::optional<CommitPoint> read_commit_point(std::string_view line) {
  static constexpr std::string_view kCommit = R"({"op":"commit",)";
  if (line.substr(0, kCommit.size()) != kCommit) return std::nullopt;
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(line);
  simdjson::dom::object object;
  simdjson::dom::object pos;
  if (parser.parse(padded).get_object().get(object) != simdjson::SUCCESS ||
      object[field::pos].get_object().get(pos) != simdjson::SUCCESS)
    return std::nullopt;
  auto position = string_member(object, field::position);
  auto file = string_member(pos, field::file);
  auto offset = uint_member(pos, field::offset);
  if (!position || position->empty() || !file || !offset) return std::nullopt;
  return CommitPoint{string_member(object, field::gtid).value_or(""), std::move(*file), *offset, std::move(*position)};
}

}  // namespace cdc::records
