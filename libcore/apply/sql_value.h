#pragma once

// A column value of cdc-ndjson(5) (VALUES) as a SQL literal for a MariaDB/MySQL target, by the
// column's type from its table line (a PostgreSQL target's: pg_value.h, which append_literal
// hands the columns of that dialect). The target session is set up for these literals
// (mariadb_target.h): time_zone '+00:00', so a TIMESTAMP's UTC text is taken as UTC, and a
// sql_mode without NO_BACKSLASH_ESCAPES, so the quoting below holds.

#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "apply/sql_dialect.h"
#include "output/table_columns.h"
#include "records/table_line.h"
#include "util/result.h"

namespace cdc::apply {

// What a literal of one column needs: its kind (output::ValueKind, read from the type text
// once) and its quoted name.
struct ColumnSql {
  std::string name;
  std::string quoted;  // `name`, or "name" for PostgreSQL
  std::string type;    // the table line's type text, for messages and CREATE TABLE
  output::ValueKind kind = output::ValueKind::other;
  bool is_unsigned = false;
  unsigned bits = 0;  // BIT(n)'s n
  Dialect dialect = Dialect::mariadb;
};

[[nodiscard]] ColumnSql column_sql(const records::TableColumn& column, Dialect dialect = Dialect::mariadb);

// Where the literal goes: a comparison (a WHERE of an update or delete) casts FLOAT and MySQL
// JSON values to the column's type, which a decimal or string literal would not equal.
enum class LiteralUse { value, comparison };

// Appends the literal of value to out: NULL; integers, BIT, YEAR and DECIMAL as numbers;
// FLOAT and DOUBLE in their shortest text; text, ENUM, SET, dates, times and MariaDB's INET4,
// INET6 and UUID quoted; a TIMESTAMP's "...Z" without the Z; BINARY, BLOB and GEOMETRY from
// base64 to X'..'; MySQL JSON's value as its JSON text; VECTOR through STRING_TO_VECTOR.
// scratch is reused for decoded bytes. Errc::corrupt_input "column `c` (type): why" when the
// value is not of the column's encoding.
[[nodiscard]] Result<void> append_literal(std::string& out, const ColumnSql& column, simdjson::dom::element value,
                                          LiteralUse use, std::string& scratch);

// What the literals of both dialects share (pg_value.cpp too):
// "column `c` (type): why", Errc::corrupt_input.
[[nodiscard]] Unexpected bad_value(const ColumnSql& column, std::string_view why);
// A JSON number as the integer or shortest double text it is; false, nothing written, for a
// value of another JSON type.
[[nodiscard]] bool append_json_number(std::string& out, simdjson::dom::element value);
// A DECIMAL's text: digits, one point, a leading minus; nothing a literal could hide.
[[nodiscard]] bool is_decimal_text(std::string_view text) noexcept;

// '...' with quote, backslash and NUL escaped.
void append_quoted(std::string& out, std::string_view text);
// X'..' of the bytes.
void append_hex_literal(std::string& out, std::string_view bytes);

}  // namespace cdc::apply
