#pragma once

// The chunk line (op "chunk"), which cdc-plan writes and cdc-snapshot reads: which table, which
// key range, which columns. One type for every tool that handles a chunk:
//
//   {"op":"chunk","v":1,"db":"shop","table":"orders","key":["id"],"key_types":["int(11)"],
//    "start":[1000]|null,"end":[2000]|null,"index":3,"count":12,
//    "columns":[{"name":"id","type":"int(11)","collation_id":0},...],"identity":null,
//    "rows_estimate":8096[,"where":"status = 'open'"]}
//
// A row is in a chunk iff (key) >= start (when start is not null) and (key) < end (when end is
// not null), compared by the server under the key columns' collations.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "util/result.h"

namespace cdc::ndjson {
class Writer;
}

namespace cdc::records {

// One end of a key range: one JSON value per key column, as text ("1000", "\"AAE=\""), in
// the key's order; nullopt for an open end.
using Bound = std::optional<std::vector<std::string>>;

struct ChunkColumn {
  std::string name;
  std::string type;                // information_schema COLUMN_TYPE when planned
  std::uint32_t collation_id = 0;  // 0: not a string column; 63: binary
};

struct Chunk {
  std::string db;
  std::string table;
  // The chunk key's columns, in index order; empty for a table read whole (no primary key and
  // no --chunk-key: its one chunk, start and end null).
  std::vector<std::string> key;
  std::vector<std::string> key_types;  // their COLUMN_TYPE when planned
  Bound start;                         // inclusive
  Bound end;                           // exclusive
  std::uint64_t index = 0;
  std::uint64_t count = 0;
  std::vector<ChunkColumn> columns;
  // The columns that tell rows apart when the key does not (a table without a unique key:
  // nullopt, the whole row).
  std::optional<std::vector<std::string>> identity;
  std::uint64_t rows_estimate = 0;
  // cdc-plan --where: only the rows this expression (filter/expression.h, as the user wrote it)
  // is TRUE on; nullopt: every row. Written only when set.
  std::optional<std::string> where;
  // A MariaDB table WITH SYSTEM VERSIONING: its history rows are read too (FOR SYSTEM_TIME
  // ALL), with the row_start/row_end columns, as the binary log has them. Written only when set.
  bool all_versions = false;

  // "shop.orders chunk 3/12", for messages.
  [[nodiscard]] std::string describe() const;
};

// "shop.orders chunk 3/12": how every tool names a chunk in its messages.
[[nodiscard]] std::string describe_chunk(std::string_view db, std::string_view table, std::uint64_t index,
                                         std::uint64_t count);

// Writes the line, ending the record.
void write_chunk(const Chunk& chunk, ndjson::Writer& out);

// Reads one chunk line. A missing or mistyped field, a bound without one value per key
// column, or an op other than "chunk" is Errc::corrupt_input naming the field (the caller
// prefixes input:line). Bound values are kept minified, as simdjson prints them; whether they
// fit their key types is for the reader to check.
[[nodiscard]] Result<Chunk> parse_chunk(simdjson::dom::object record);

// Writes a bound: null, or the array of its values' JSON text.
void write_bound(const Bound& bound, ndjson::Writer& out);

}  // namespace cdc::records
