#pragma once

// The "table" line's description of a table (records/table_line.h, cdc-ndjson(5) table) from
// what a tool knows of it: a TABLE_MAP event as the binlog and the catalog filled it
// (cdc-stream), or information_schema (cdc-snapshot). Neither sets "pos" nor "ts_ms": the
// caller knows where the description holds from.

#include <string>
#include <string_view>

#include "binlog/events/table_map_event.h"
#include "records/table_line.h"
#include "schema/table_schema.h"

namespace cdc::schema {

// A column's type as information_schema's COLUMN_TYPE writes it, from a TABLE_MAP alone:
// the type, length or precision, fractional seconds, " unsigned" when the binlog logged
// signedness, text or binary by the charset, ENUM/SET labels when logged. What the binlog does
// not carry is missing: integer display widths ("int", not "int(11)"), FLOAT(M,D), ZEROFILL,
// MariaDB's INET4/INET6/UUID (logged as binary(N)); without a charset a string column's length
// unit is unknown, so it is written without one ("varchar", "char", "text" by the length width).
[[nodiscard]] std::string column_type_text(const binlog::TableMap& map, std::size_t index);

// The table line of `map`: information_schema's COLUMN_TYPE where the catalog completed the
// map (TableMap::column_types), column_type_text() elsewhere; names ("@1".. when not known),
// the key when the map has one.
[[nodiscard]] records::TableLine describe_table_map(const binlog::TableMap& map);

// The table line of a schema read by read_table_schema(): the columns information_schema
// lists (not the hidden ones the server adds), with their COLUMN_TYPE.
[[nodiscard]] records::TableLine describe_table_schema(std::string_view database, std::string_view table,
                                                       const TableSchema& schema);

}  // namespace cdc::schema
