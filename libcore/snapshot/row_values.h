#pragma once

// Writes the values of a SELECT (binary protocol, results in each column's own character
// set) in the value encoding of man/cdc-ndjson.5 (VALUES), byte-identical to what cdc-stream
// writes for the same row from its binlog row image. To make that hold by construction, the
// temporal values are packed into their binlog form and handed to the binlog decoders
// (rowimage/scalar_values.h), and the rest goes through the same writer calls the row-image
// code makes:
//   integers, YEAR       Writer::integer / unsigned_integer
//   FLOAT, DOUBLE        Writer::floating(float) / floating(double) on the raw value
//   DECIMAL              the server's text, which has exactly the scale's fraction digits
//   BIT                  the big-endian bytes as a number
//   text, ENUM, SET      rowimage::write_text / to_utf8 by the column's collation id; CHAR
//                        without its pad (trim_char_padding)
//   binary collation     base64 (BINARY(n) comes back with its 0x00 padding, as the binlog
//                        side pads it)
//   GEOMETRY             base64 of SRID + WKB
//   INET4, INET6, UUID   MariaDB sends its text, in the connection's charset: as text, which
//                        is what rowimage/fixed_binary_values.h writes from the binlog's bytes
// MySQL's JSON type (MYSQL_TYPE_JSON) is refused: its text form is not the binlog decoder's.

#include <vector>

#include "mysql/connection.h"
#include "ndjson/writer.h"
#include "rowimage/charset.h"
#include "util/result.h"

namespace cdc::snapshot {

using StreamColumn = mysql::Connection::StreamColumn;
using StreamCell = mysql::Connection::StreamCell;

// The columns write_value() writes inline, without the general dispatch: the common types of
// a wide table, each exactly as the general path would write it.
enum class FastPath : std::uint8_t {
  none,          // the general path (write_value_general)
  signed_int,    // TINYINT..BIGINT: Writer::integer
  unsigned_int,  // the same UNSIGNED, and YEAR: Writer::unsigned_integer
  text,          // VARCHAR/TEXT in an ASCII-compatible charset, not ENUM/SET: write_text
  char_text,     // CHAR in such a charset: its pad spaces trimmed, then as text
};

// What writing a column needs, resolved once per result.
struct ColumnWriter {
  std::uint8_t type = 0;
  std::uint32_t flags = 0;
  std::uint8_t fsp = 0;
  std::uint16_t collation = 0;
  rowimage::Charset charset = rowimage::Charset::unknown;
  FastPath fast = FastPath::none;
};

// Checks every result column has a type this writer handles; Errc::unsupported names one that
// has not.
[[nodiscard]] Result<std::vector<ColumnWriter>> plan_columns(const std::vector<StreamColumn>& columns);

// write_value() for the columns without a fast path, and for NULL.
[[nodiscard]] Result<void> write_value_general(const ColumnWriter& column, const StreamCell& cell,
                                               ndjson::Writer& out, rowimage::TextScratch& scratch);

// One value as one JSON value (the caller has written the key). Errc::corrupt_input for a
// value the server cannot have sent (a BIT longer than 8 bytes). Inline: a snapshot writes
// millions of values, most of them integers and text.
[[nodiscard]] inline Result<void> write_value(const ColumnWriter& column, const StreamCell& cell,
                                              ndjson::Writer& out, rowimage::TextScratch& scratch) {
  if (!cell.is_null) {
    switch (column.fast) {
      case FastPath::signed_int: out.integer(cell.integer); return {};
      case FastPath::unsigned_int: out.unsigned_integer(static_cast<std::uint64_t>(cell.integer)); return {};
      case FastPath::char_text: {
        // trim_char_padding() for an ASCII-compatible charset: the 0x20 pad bytes.
        std::string_view text = cell.bytes;
        while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
        if (!out.string_if_plain(text)) rowimage::write_text(text, column.charset, out, scratch);
        return {};
      }
      case FastPath::text:
        if (!out.string_if_plain(cell.bytes)) rowimage::write_text(cell.bytes, column.charset, out, scratch);
        return {};
      case FastPath::none: break;
    }
  }
  return write_value_general(column, cell, out, scratch);
}

}  // namespace cdc::snapshot
