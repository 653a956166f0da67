#pragma once

// Writes the values of a SELECT (binary protocol, results in each column's own character
// set) in DESIGN.md's value encoding, byte-identical to what cdc-stream writes for the same
// row from its binlog row image. To make that hold by construction, the temporal values are
// packed into their binlog form and handed to the binlog decoders (rowimage/scalar_values.h),
// and the rest goes through the same writer calls the row-image code makes:
//   integers, YEAR       Writer::integer / unsigned_integer
//   FLOAT, DOUBLE        Writer::floating(float) / floating(double) on the raw value
//   DECIMAL              the server's text, which has exactly the scale's fraction digits
//   BIT                  the big-endian bytes as a number
//   text, ENUM, SET      rowimage::write_text / to_utf8 by the column's collation id; CHAR
//                        without its pad (trim_char_padding)
//   binary collation     base64 (BINARY(n) comes back with its 0x00 padding, as the binlog
//                        side pads it)
//   GEOMETRY             base64 of SRID + WKB
// MySQL's JSON type (MYSQL_TYPE_JSON) is refused: its text form is not the binlog decoder's.

#include <vector>

#include "mysql/connection.h"
#include "ndjson/writer.h"
#include "rowimage/charset.h"
#include "util/result.h"

namespace cdc::snapshot {

using StreamColumn = mysql::Connection::StreamColumn;
using StreamCell = mysql::Connection::StreamCell;

// What writing a column needs, resolved once per result.
struct ColumnWriter {
  std::uint8_t type = 0;
  std::uint32_t flags = 0;
  std::uint8_t fsp = 0;
  std::uint16_t collation = 0;
  rowimage::Charset charset = rowimage::Charset::unknown;
};

// Checks every result column has a type this writer handles; Errc::unsupported names one that
// has not.
[[nodiscard]] Result<std::vector<ColumnWriter>> plan_columns(const std::vector<StreamColumn>& columns);

// One value as one JSON value (the caller has written the key). Errc::corrupt_input for a
// value the server cannot have sent (a BIT longer than 8 bytes).
[[nodiscard]] Result<void> write_value(const ColumnWriter& column, const StreamCell& cell, ndjson::Writer& out,
                                       rowimage::TextScratch& scratch);

}  // namespace cdc::snapshot
