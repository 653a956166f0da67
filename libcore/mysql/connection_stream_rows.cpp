// cdc-snapshot's streamed statements (mysql::Connection::stream_rows): a prepared statement whose
// rows come one at a time over the binary protocol, each value decoded straight from the
// packet into its server text.
#include <fmt/format.h>
#include <mysql.h>

#include <cstdlib>
#include <cstring>

#include "mysql/connection_impl.h"
#include "util/bits.h"

namespace cdc::mysql {

namespace {

// The statement handle, closed on every path (mysql_stmt_close discards unread rows).
struct StatementCloser {
  MYSQL_STMT* stmt;
  ~StatementCloser() {
    if (stmt != nullptr) mysql_stmt_close(stmt);
  }
};

// How stream_rows reads one column of a binary-protocol row (the COM_STMT_EXECUTE result
// row: fixed-size little-endian integers and floats, a length byte and the fields for the
// temporal types, a length-encoded string for everything else).
enum class WireKind : std::uint8_t { int1, int2, int4, int8, float4, double8, date_time, time, bytes };

WireKind wire_kind(enum_field_types type) {
  switch (type) {
    case MYSQL_TYPE_TINY: return WireKind::int1;
    case MYSQL_TYPE_SHORT:
    case MYSQL_TYPE_YEAR: return WireKind::int2;
    case MYSQL_TYPE_LONG:
    case MYSQL_TYPE_INT24: return WireKind::int4;
    case MYSQL_TYPE_LONGLONG: return WireKind::int8;
    case MYSQL_TYPE_FLOAT: return WireKind::float4;
    case MYSQL_TYPE_DOUBLE: return WireKind::double8;
    case MYSQL_TYPE_DATE:
    case MYSQL_TYPE_NEWDATE:
    case MYSQL_TYPE_DATETIME:
    case MYSQL_TYPE_TIMESTAMP: return WireKind::date_time;
    case MYSQL_TYPE_TIME: return WireKind::time;
    default: return WireKind::bytes;
  }
}

// What the result callback needs: where each column's value goes and how it is laid out.
struct RowDecoder {
  std::vector<Connection::StreamCell>* cells = nullptr;
  std::vector<WireKind> kinds;
  std::vector<unsigned char> is_unsigned;
};

// Connector/C's result callback (STMT_ATTR_CB_RESULT): called for every column of every
// fetched row with *row at the column's value in the packet (row is null for a NULL), before
// mysql_stmt_fetch returns; it must step *row past the value. No bind buffers, no copies: a
// string cell points into the connection's packet buffer, which holds the row until the next
// fetch.
void decode_column(void* data, unsigned int column, unsigned char** row) {
  auto& decoder = *static_cast<RowDecoder*>(data);
  Connection::StreamCell& cell = (*decoder.cells)[column];
  if (row == nullptr) {
    cell.is_null = true;
    return;
  }
  cell.is_null = false;
  unsigned char* p = *row;
  const bool is_unsigned = decoder.is_unsigned[column] != 0;
  switch (decoder.kinds[column]) {
    case WireKind::int1:
      cell.integer = is_unsigned ? static_cast<std::int64_t>(p[0]) : static_cast<std::int8_t>(p[0]);
      *row = p + 1;
      return;
    case WireKind::int2: {
      const auto raw = static_cast<std::uint16_t>(load_le(p, 2));
      cell.integer = is_unsigned ? static_cast<std::int64_t>(raw) : static_cast<std::int16_t>(raw);
      *row = p + 2;
      return;
    }
    case WireKind::int4: {
      const auto raw = static_cast<std::uint32_t>(load_le(p, 4));
      cell.integer = is_unsigned ? static_cast<std::int64_t>(raw) : static_cast<std::int32_t>(raw);
      *row = p + 4;
      return;
    }
    case WireKind::int8:
      cell.integer = static_cast<std::int64_t>(load_le(p, 8));  // unsigned ones bit-cast
      *row = p + 8;
      return;
    case WireKind::float4: {
      const auto raw = static_cast<std::uint32_t>(load_le(p, 4));
      std::memcpy(&cell.real32, &raw, sizeof raw);
      *row = p + 4;
      return;
    }
    case WireKind::double8: {
      const std::uint64_t raw = load_le(p, 8);
      std::memcpy(&cell.real64, &raw, sizeof raw);
      *row = p + 8;
      return;
    }
    case WireKind::date_time: {
      // length (0, 4, 7 or 11), year(2) month day, hour minute second, microseconds(4)
      const unsigned length = p[0];
      const unsigned char* t = p + 1;
      Connection::StreamTime time;
      if (length >= 4) {
        time.year = static_cast<unsigned>(load_le(t, 2));
        time.month = t[2];
        time.day = t[3];
      }
      if (length >= 7) {
        time.hour = t[4];
        time.minute = t[5];
        time.second = t[6];
      }
      if (length >= 11) time.micros = static_cast<unsigned long>(load_le(t + 7, 4));
      cell.time = time;
      *row = p + 1 + length;
      return;
    }
    case WireKind::time: {
      // length (0, 8 or 12), negative, days(4), hour minute second, microseconds(4); the days
      // are folded into the hours (TIME goes up to 838:59:59).
      const unsigned length = p[0];
      const unsigned char* t = p + 1;
      Connection::StreamTime time;
      if (length >= 8) {
        time.negative = t[0] != 0;
        time.hour = static_cast<unsigned>(load_le(t + 1, 4)) * 24 + t[5];
        time.minute = t[6];
        time.second = t[7];
      }
      if (length >= 12) time.micros = static_cast<unsigned long>(load_le(t + 8, 4));
      cell.time = time;
      *row = p + 1 + length;
      return;
    }
    case WireKind::bytes: {
      // A length-encoded string: < 251 in one byte, 0xFC 2 bytes, 0xFD 3, 0xFE 8.
      std::uint64_t length = p[0];
      unsigned char* value = p + 1;
      if (length == 0xFC) {
        length = load_le(p + 1, 2);
        value = p + 3;
      } else if (length == 0xFD) {
        length = load_le(p + 1, 3);
        value = p + 4;
      } else if (length == 0xFE) {
        length = load_le(p + 1, 8);
        value = p + 9;
      }
      cell.bytes = std::string_view(reinterpret_cast<const char*>(value), static_cast<std::size_t>(length));
      *row = value + length;
      return;
    }
  }
}

}  // namespace

Result<std::uint64_t> Connection::stream_rows(
    std::string_view sql, const std::function<Result<void>(const std::vector<StreamColumn>&)>& on_columns,
    const std::function<Result<void>(const std::vector<StreamCell>&)>& on_row) {
  MYSQL* handle = impl_->handle;
  const auto server_error = [&](MYSQL_STMT* stmt, std::string_view what) {
    return statement_error(fmt::format("{}: {} '{}'", impl_->endpoint, what, sql), mysql_stmt_errno(stmt),
                           mysql_stmt_error(stmt), mysql_errno(handle), mysql_error(handle));
  };
  StatementCloser closer{mysql_stmt_init(handle)};
  MYSQL_STMT* stmt = closer.stmt;
  if (stmt == nullptr) return fail(Errc::internal, "mysql_stmt_init failed: out of memory");
  // The values are decoded by decode_column straight from the packet, with no result binds:
  // the library's own per-column conversion (and its copy of every string into a bind
  // buffer) was most of the client's cost per row.
  std::vector<StreamCell> cells;
  RowDecoder decoder;
  decoder.cells = &cells;
  if (mysql_stmt_attr_set(stmt, STMT_ATTR_CB_USER_DATA, &decoder) != 0 ||
      mysql_stmt_attr_set(stmt, STMT_ATTR_CB_RESULT, reinterpret_cast<const void*>(&decode_column)) != 0)
    return fail(server_error(stmt, "setting up the fetch of"));
  // Prepared and executed in one round trip on MariaDB (10.2+ takes the execute of the
  // statement just prepared in the same packet); Connector/C does the two in turn elsewhere.
  if (mariadb_stmt_execute_direct(stmt, sql.data(), sql.size()) != 0) return fail(server_error(stmt, "executing"));
  MYSQL_RES* meta = mysql_stmt_result_metadata(stmt);
  if (meta == nullptr) return std::uint64_t{0};
  const unsigned count = mysql_num_fields(meta);
  const MYSQL_FIELD* fields = mysql_fetch_fields(meta);
  std::vector<StreamColumn> columns(count);
  for (unsigned i = 0; i < count; ++i) {
    columns[i].name = fields[i].name;
    columns[i].type = static_cast<std::uint8_t>(fields[i].type);
    columns[i].charsetnr = static_cast<std::uint16_t>(fields[i].charsetnr);
    columns[i].flags = fields[i].flags;
    columns[i].decimals = fields[i].decimals;
    columns[i].length = fields[i].length;
  }
  mysql_free_result(meta);
  if (auto accepted = on_columns(columns); !accepted) return fail(accepted.error());

  cells.resize(count);
  decoder.kinds.resize(count);
  decoder.is_unsigned.resize(count);
  for (unsigned i = 0; i < count; ++i) {
    const auto type = static_cast<enum_field_types>(columns[i].type);
    decoder.kinds[i] = wire_kind(type);
    decoder.is_unsigned[i] = (columns[i].flags & UNSIGNED_FLAG) != 0 || type == MYSQL_TYPE_YEAR ? 1 : 0;
  }

  std::uint64_t rows = 0;
  for (;;) {
    const int fetched = mysql_stmt_fetch(stmt);
    if (fetched == MYSQL_NO_DATA) break;  // the server's end of the rows (an EOF or OK packet), nothing else
    // A lost or KILLed connection's error is on the connection, not the statement.
    if (fetched == 1) return fail(server_error(stmt, "reading the rows of"));
    ++rows;
    if (auto done = on_row(cells); !done) return fail(done.error());
  }
  return rows;
}

}  // namespace cdc::mysql
