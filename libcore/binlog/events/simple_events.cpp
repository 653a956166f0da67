#include "binlog/events/simple_events.h"

#include <cctype>

namespace cdc::binlog {

RotateEvent decode_rotate(ByteReader& body, const FormatDescription& format) {
  RotateEvent event;
  // The post-header (8-byte position) is absent only in binlog v1, which we do not read.
  if (format.post_header(EventType::rotate) >= 8 || format.post_header(EventType::rotate) == 0)
    event.position = body.u64();
  event.next_file = body.chars(body.remaining(), "next binlog file name");
  return event;
}

XidEvent decode_xid(ByteReader& body) {
  // Unlike most events, XID never grew: a longer body is corruption, not a newer server.
  const XidEvent event{body.u64()};
  if (body.ok() && !body.empty()) body.fail("XID event has " + std::to_string(body.remaining()) + " bytes after the xid");
  return event;
}

QueryEvent decode_query(ByteReader& body, const FormatDescription& format) {
  QueryEvent event;
  const std::size_t post_header = format.post_header(EventType::query) != 0 ? format.post_header(EventType::query) : 13;
  ByteReader fixed = body.sub(post_header, "QUERY post-header");
  event.thread_id = fixed.u32();
  event.exec_time = fixed.u32();
  const std::uint8_t database_length = fixed.u8();
  event.error_code = fixed.u16();
  const std::uint16_t status_length = post_header >= 13 ? fixed.u16() : 0;
  body.adopt_failure(fixed);
  event.status_vars = body.bytes(status_length, "QUERY status variables");
  event.database = body.chars(database_length, "QUERY database name");
  body.skip(1, "QUERY database name terminator");
  event.sql = body.chars(body.remaining());
  event.kind = classify_query(event.sql);
  return event;
}

namespace {

std::string_view skip_space_and_comments(std::string_view text) {
  for (;;) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    if (text.starts_with("/*")) {
      // Versioned comments (/*!50100 ... */) hold real SQL; the first keyword after them
      // still names the statement, so skipping the comment marker alone is enough.
      if (text.size() > 2 && text[2] == '!') {
        text.remove_prefix(3);
        while (!text.empty() && std::isdigit(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
        continue;
      }
      const std::size_t end = text.find("*/");
      if (end == std::string_view::npos) return {};
      text.remove_prefix(end + 2);
      continue;
    }
    if (text.starts_with("#") || text.starts_with("-- ")) {
      const std::size_t end = text.find('\n');
      if (end == std::string_view::npos) return {};
      text.remove_prefix(end + 1);
      continue;
    }
    return text;
  }
}

bool keyword_is(std::string_view text, std::string_view keyword) {
  if (text.size() < keyword.size()) return false;
  for (std::size_t i = 0; i < keyword.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(text[i])) != keyword[i]) return false;
  return text.size() == keyword.size() || !(std::isalnum(static_cast<unsigned char>(text[keyword.size()])) ||
                                            text[keyword.size()] == '_');
}

}  // namespace

QueryKind classify_query(std::string_view sql) noexcept {
  const std::string_view text = skip_space_and_comments(sql);
  if (keyword_is(text, "BEGIN")) return QueryKind::begin;
  if (keyword_is(text, "START")) {
    const std::string_view rest = skip_space_and_comments(text.substr(5));
    if (keyword_is(rest, "TRANSACTION")) return QueryKind::begin;
  }
  if (keyword_is(text, "COMMIT")) return QueryKind::commit;
  if (keyword_is(text, "ROLLBACK")) {
    const std::string_view rest = skip_space_and_comments(text.substr(8));
    return keyword_is(rest, "TO") ? QueryKind::savepoint : QueryKind::rollback;
  }
  if (keyword_is(text, "SAVEPOINT") || keyword_is(text, "RELEASE")) return QueryKind::savepoint;
  if (keyword_is(text, "XA")) return QueryKind::xa;
  if (keyword_is(text, "GRANT") || keyword_is(text, "REVOKE")) return QueryKind::account;
  if (keyword_is(text, "SET")) {
    const std::string_view rest = skip_space_and_comments(text.substr(3));
    if (keyword_is(rest, "PASSWORD") || keyword_is(rest, "DEFAULT")) return QueryKind::account;
  }
  for (const std::string_view verb : {"CREATE", "ALTER", "DROP", "RENAME"}) {
    if (!keyword_is(text, verb)) continue;
    std::string_view rest = skip_space_and_comments(text.substr(verb.size()));
    if (keyword_is(rest, "OR")) rest = skip_space_and_comments(skip_space_and_comments(rest.substr(2)).substr(7));
    if (keyword_is(rest, "DEFINER")) break;  // CREATE DEFINER=... VIEW/PROCEDURE: schema objects
    if (keyword_is(rest, "USER") || keyword_is(rest, "ROLE")) return QueryKind::account;
  }
  for (const std::string_view dml : {"INSERT", "UPDATE", "DELETE", "REPLACE", "LOAD"})
    if (keyword_is(text, dml)) return QueryKind::dml;
  for (const std::string_view ddl : {"CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE"})
    if (keyword_is(text, ddl)) return QueryKind::ddl;
  return QueryKind::other;
}

RowsQueryEvent decode_rows_query(ByteReader& body) {
  // One length byte that the server truncates at 255; the text runs to the end of the body.
  body.skip(1, "ROWS_QUERY length");
  return RowsQueryEvent{body.chars(body.remaining())};
}

RowsQueryEvent decode_annotate_rows(ByteReader& body) { return RowsQueryEvent{body.chars(body.remaining())}; }

IncidentEvent decode_incident(ByteReader& body) {
  IncidentEvent event;
  event.incident = body.u16();
  if (!body.empty()) event.message = body.chars(body.u8(), "INCIDENT message");
  return event;
}

BinlogCheckpointEvent decode_binlog_checkpoint(ByteReader& body) {
  const std::uint32_t length = body.u32();
  return BinlogCheckpointEvent{body.chars(length, "BINLOG_CHECKPOINT file name")};
}

HeartbeatEvent decode_heartbeat(ByteReader& body) { return HeartbeatEvent{body.chars(body.remaining())}; }

}  // namespace cdc::binlog
