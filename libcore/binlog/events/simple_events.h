#pragma once

// The small events: one struct and one decode function each. Every decode reads through a
// ByteReader scoped to the event body (checksum already stripped) and leaves any failure in
// it; bytes left over at the end are ignored, so fields added by newer servers do not break us.

#include <cstdint>
#include <span>
#include <string_view>

#include "binlog/format_description.h"
#include "util/byte_reader.h"

namespace cdc::binlog {

// ROTATE_EVENT: the next binlog file, and where in it to continue.
struct RotateEvent {
  std::uint64_t position = 4;
  std::string_view next_file;
};
RotateEvent decode_rotate(ByteReader& body, const FormatDescription& format);

// XID_EVENT: the commit of an XA-capable (InnoDB) transaction.
struct XidEvent {
  std::uint64_t xid = 0;
};
XidEvent decode_xid(ByteReader& body);

// QUERY_EVENT: BEGIN, COMMIT, ROLLBACK, DDL, or statement-based DML.
// ddl: schema changes; account: users, roles, grants and passwords (never echoed: they can
// hold password hashes); dml: statement-based row changes (not captured); other: the rest.
enum class QueryKind : std::uint8_t { begin, commit, rollback, savepoint, xa, ddl, account, dml, other };
struct QueryEvent {
  std::uint32_t thread_id = 0;
  std::uint32_t exec_time = 0;
  std::uint16_t error_code = 0;
  std::span<const std::uint8_t> status_vars;
  std::string_view database;  // the session's default database, may be empty
  std::string_view sql;
  QueryKind kind = QueryKind::other;
};
QueryEvent decode_query(ByteReader& body, const FormatDescription& format);
// What a statement does, from its first keywords (comments and whitespace skipped).
[[nodiscard]] QueryKind classify_query(std::string_view sql) noexcept;

// ROWS_QUERY_LOG_EVENT (MySQL) and ANNOTATE_ROWS_EVENT (MariaDB): the statement text that
// produced the following row events, when binlog_rows_query_log_events / binlog_annotate_row_events is on.
struct RowsQueryEvent {
  std::string_view sql;
};
RowsQueryEvent decode_rows_query(ByteReader& body);
RowsQueryEvent decode_annotate_rows(ByteReader& body);

// INCIDENT_EVENT: the server lost track of changes (e.g. a failed non-transactional write).
struct IncidentEvent {
  std::uint16_t incident = 0;
  std::string_view message;
};
IncidentEvent decode_incident(ByteReader& body);

// MariaDB BINLOG_CHECKPOINT_EVENT: the oldest binlog file crash recovery still needs.
struct BinlogCheckpointEvent {
  std::string_view file;
};
BinlogCheckpointEvent decode_binlog_checkpoint(ByteReader& body);

// HEARTBEAT_LOG_EVENT (v1): sent by the server on an idle replication stream.
struct HeartbeatEvent {
  std::string_view file;
};
HeartbeatEvent decode_heartbeat(ByteReader& body);

}  // namespace cdc::binlog
