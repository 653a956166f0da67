#pragma once

// One op:"chunk" line of cdc-plan (its fields: man/cdc-ndjson.5, "chunk"; how cdc-snapshot
// reads it: man/cdc-snapshot.1): which table, which key range, and the SQL that reads it. Pure: no
// server, so the parsing and the SQL text are unit-tested on plain strings.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "util/result.h"

namespace cdc::snapshot {

struct ChunkColumn {
  std::string name;
  std::string type;               // information_schema COLUMN_TYPE when planned
  std::uint16_t collation_id = 0; // 0 = not a string, 63 = binary
};

struct Chunk {
  std::string db;
  std::string table;
  std::vector<std::string> key;        // chunk key columns, index order
  std::vector<std::string> key_types;  // their COLUMN_TYPE when planned
  // One SQL literal per key column (already rendered from the JSON bound), or nullopt for
  // an open end.
  std::optional<std::vector<std::string>> start;
  std::optional<std::vector<std::string>> end;
  std::uint64_t index = 0;
  std::uint64_t count = 0;
  std::vector<ChunkColumn> columns;
  std::uint64_t rows_estimate = 0;
  // The plan's JSON for start, end and identity, as cdc-merge reads them back from the low
  // line ("null" for an open end or no identity).
  std::string start_json = "null";
  std::string end_json = "null";
  std::string identity_json = "null";

  // "shop.orders chunk 3/12", for messages.
  [[nodiscard]] std::string describe() const;
};

// Reads one chunk line. A missing or mistyped field, a bound that does not fit its key type,
// or an op other than "chunk" is Errc::corrupt_input with the field named (the caller
// prefixes input:line).
[[nodiscard]] Result<Chunk> parse_chunk(simdjson::dom::object record);

// The SQL literal for one bound value of a key column of COLUMN_TYPE key_type:
//   integer/float/decimal types   the number as written (a DECIMAL string must be digits)
//   BINARY/VARBINARY/BLOB         X'hex' of the base64-decoded bytes
//   anything else (text, temporal) _utf8mb4 X'hex' of the UTF-8 text (a TIMESTAMP's trailing
//                                 'Z' dropped: the session runs in UTC)
// Hex literals need no escaping, and the introducer keeps a text literal coercible, so the
// server compares it under the column's own collation.
[[nodiscard]] Result<std::string> bound_literal(simdjson::dom::element value, std::string_view key_type);


// SELECT of the chunk's columns over its key range, in key order (MariaDB INET4/INET6/UUID
// columns as CAST(... AS BINARY(n)), their bytes as the binlog has them):
//   SELECT `a`,`b` FROM `db`.`t` WHERE (`k1`,`k2`) >= (s1,s2) AND (`k1`,`k2`) < (e1,e2) ORDER BY `k1`,`k2`
[[nodiscard]] std::string select_sql(const Chunk& chunk);

// Base64 (RFC 4648, padding optional) to bytes; nullopt when it is not base64.
[[nodiscard]] std::optional<std::string> decode_base64(std::string_view text);

}  // namespace cdc::snapshot
