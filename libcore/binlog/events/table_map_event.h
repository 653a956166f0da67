#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "binlog/format_description.h"
#include "column/column_type.h"
#include "util/byte_reader.h"

namespace cdc::binlog {

// TABLE_MAP_EVENT: which table the next row events change, its column types and type
// metadata, and (binlog_row_metadata) the optional metadata: names, signedness, charsets,
// ENUM/SET strings, primary key, geometry types, visibility, vector sizes.
// The decoder keeps one per table id for the rows events that follow, so it owns its strings.
struct TableMap {
  std::uint64_t table_id = 0;
  std::uint16_t flags = 0;
  std::string database;
  std::string table;
  std::vector<Column> columns;

  // Optional metadata; empty when the server did not write it.
  std::vector<std::string> column_names;
  std::vector<std::vector<std::string>> enum_values;  // per column; empty for non-ENUM columns
  std::vector<std::vector<std::string>> set_values;   // per column; empty for non-SET columns
  std::vector<std::uint32_t> primary_key;             // column indexes in key order
  std::vector<std::uint32_t> primary_key_prefix;      // prefix length per key column, 0 = whole
  std::vector<std::uint32_t> geometry_types;          // per column; 0 elsewhere
  std::vector<std::uint32_t> vector_dimensions;       // per column; 0 elsewhere
  std::vector<bool> visible;                          // per column; empty = all visible
  bool has_signedness = false;
  bool has_charsets = false;
  bool has_enum_set_strings = false;
  // Per column, information_schema's COLUMN_TYPE ("int(11)", "" for a column it does not list)
  // when the catalog completed the map (schema::apply_table_schema); empty otherwise. Only the
  // table line (schema/table_description) reads it: it decodes nothing.
  std::vector<std::string> column_types;

  // The encoded event body this was decoded from, to skip re-decoding identical maps.
  std::vector<std::uint8_t> source;
  // Which decode this is: Decoder sets a new, process-wide unique value each time it decodes a
  // map into its slot (not when it skips an identical one), so caches of what is derived from
  // a map (the NDJSON writer's escaped names, charsets) can key on (address, generation) and
  // notice a slot that now holds another table. 0: not from a Decoder; cache nothing.
  std::uint64_t generation = 0;

  [[nodiscard]] bool has_column_names() const noexcept { return !column_names.empty(); }
};

// Which columns each optional metadata field covers, as the servers write them: the
// signedness bitmap, the charset fields (CHAR, VARCHAR, TEXT/BLOB, VECTOR) and the ENUM/SET
// ones. The catalog (schema/) fills the same columns when the binlog has no metadata.
[[nodiscard]] bool has_signedness_bit(ColumnType type, ServerFlavor flavor);
[[nodiscard]] bool is_character(ColumnType type);
[[nodiscard]] bool is_enum_or_set(ColumnType type);

// Decodes into `out` (reusing its storage). Failures are left in `body`.
void decode_table_map(ByteReader& body, const FormatDescription& format, TableMap& out);

// The table id alone, to look up a cached map before decoding the rest.
std::uint64_t peek_table_id(ByteReader body, const FormatDescription& format, EventType type);

}  // namespace cdc::binlog
