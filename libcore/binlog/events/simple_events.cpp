#include "binlog/events/simple_events.h"

#include "binlog/sql_tokens.h"

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

QueryKind classify_query(std::string_view sql) noexcept {
  SqlTokens statement(sql);
  statement.skip_space();
  // Each form read from the statement's start: a copy of the tokens per question.
  const auto starts = [&](std::string_view first, std::string_view second = {}) {
    SqlTokens tokens = statement;
    return tokens.keyword(first) && (second.empty() || tokens.keyword(second));
  };
  if (starts("BEGIN") || starts("START", "TRANSACTION")) return QueryKind::begin;
  if (starts("COMMIT")) return QueryKind::commit;
  if (starts("ROLLBACK")) return starts("ROLLBACK", "TO") ? QueryKind::savepoint : QueryKind::rollback;
  if (starts("SAVEPOINT") || starts("RELEASE")) return QueryKind::savepoint;
  if (starts("XA")) return QueryKind::xa;
  if (starts("GRANT") || starts("REVOKE") || starts("SET", "PASSWORD") || starts("SET", "DEFAULT"))
    return QueryKind::account;
  for (const std::string_view verb : {"CREATE", "ALTER", "DROP", "RENAME"}) {
    SqlTokens tokens = statement;
    if (!tokens.keyword(verb)) continue;
    if (tokens.keyword("OR")) tokens.keyword("REPLACE");
    if (tokens.keyword("DEFINER")) break;  // CREATE DEFINER=... VIEW/PROCEDURE: schema objects
    if (tokens.keyword("USER") || tokens.keyword("ROLE")) return QueryKind::account;
  }
  for (const std::string_view dml : {"INSERT", "UPDATE", "DELETE", "REPLACE", "LOAD"})
    if (starts(dml)) return QueryKind::dml;
  for (const std::string_view ddl : {"CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE"})
    if (starts(ddl)) return QueryKind::ddl;
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
