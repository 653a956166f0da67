#pragma once

// The SQL that reads one chunk (records/chunk.h, the op:"chunk" line of cdc-plan; its fields:
// man/cdc-ndjson.5, "chunk"; how cdc-snapshot reads it: man/cdc-snapshot.1). Pure: no server,
// so the SQL text is unit-tested on plain strings.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "records/chunk.h"
#include "util/result.h"

namespace cdc::snapshot {

// Checks that the chunk's database and table are names a table can have, on MariaDB as on
// MySQL: 1 to 64 characters, no U+0000, no space at the end. A line that names another table
// (not cdc-plan's, or mangled) is bad input, Errc::corrupt_input naming the table and why,
// found before any query the server would refuse.
[[nodiscard]] Result<void> check_table_name(const records::Chunk& chunk);

// Checks that the chunk's bounds fit its key types, so that select_sql() can render them:
// Errc::corrupt_input naming the field and value ("chunk field \"start\" value 2: ...").
[[nodiscard]] Result<void> check_bounds(const records::Chunk& chunk);

// The SQL literal for one bound value of a key column of COLUMN_TYPE key_type:
//   integer/float/decimal types   the number as written (a DECIMAL string must be digits)
//   BINARY/VARBINARY/BLOB         X'hex' of the base64-decoded bytes
//   anything else (text, temporal) _utf8mb4 X'hex' of the UTF-8 text (a TIMESTAMP's trailing
//                                 'Z' dropped: the session runs in UTC)
// Hex literals need no escaping, and the introducer keeps a text literal coercible, so the
// server compares it under the column's own collation.
[[nodiscard]] Result<std::string> bound_literal(simdjson::dom::element value, std::string_view key_type);


// SELECT of the chunk's columns over its key range, in key order (MariaDB INET4/INET6/UUID
// columns as they are: the server sends their text, which cdc-stream writes too):
//   SELECT `a`,`b` FROM `db`.`t` WHERE ((`k1` > s1) OR (`k1` = s1 AND `k2` >= s2))
//     AND ((`k1` < e1) OR (`k1` = e1 AND `k2` < e2)) ORDER BY `k1`,`k2`
// (the row comparisons written out, so that the server reads a range of the key's index).
// The errors of check_bounds() for a chunk that was not checked.
[[nodiscard]] Result<std::string> select_sql(const records::Chunk& chunk);

// The WHERE condition of select_sql() alone (the key range, then cdc-plan --where), without
// the WHERE; "" for a chunk of every row. cdc-apply --verify reads the same rows with it.
[[nodiscard]] Result<std::string> condition_sql(const records::Chunk& chunk);

}  // namespace cdc::snapshot
