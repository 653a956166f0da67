#pragma once

// Pieces of SQL text the tools build: identifiers and byte-exact literals. Hex literals need no
// escaping and keep every byte, whatever the connection's character set.

#include <string>
#include <string_view>
#include <vector>

namespace cdc::mysql {

// `name` quoted for SQL: backticks, inner ones doubled.
[[nodiscard]] std::string quote_identifier(std::string_view name);

// The bytes as upper-case hex digits, for X'..' literals: "ab" -> "6162".
[[nodiscard]] std::string hex_digits(std::string_view bytes);

// UTF-8 text as a SQL literal: "ab" -> _utf8mb4 X'6162'. The introducer makes the literal
// coercible, so a compared column's collation decides (and keys compare as the column does).
[[nodiscard]] std::string text_literal(std::string_view utf8);

// Bytes as a binary SQL literal: "ab" -> X'6162' ("" -> X'', the empty binary string).
[[nodiscard]] std::string bytes_literal(std::string_view bytes);

// The row comparison (c1, c2, c3) OP (v1, v2, v3), OP one of ">", ">=", "<", "<=", written out
//   ((c1 S v1) OR (c1 = v1 AND c2 S v2) OR (c1 = v1 AND c2 = v2 AND c3 OP v3))
// with S the strict form of OP; one column gives (c1 OP v1). MariaDB's range optimizer turns
// this form into ranges of an index on (c1, c2, c3); for the row constructor form it reads
// every row of the table ("type: index" in 10.11), so a chunk of a composite key would cost a
// scan of the whole table. columns are quoted identifiers, values SQL literals, one per column.
[[nodiscard]] std::string row_comparison(const std::vector<std::string>& columns,
                                         const std::vector<std::string>& values, std::string_view op);

}  // namespace cdc::mysql
