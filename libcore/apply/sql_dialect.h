#pragma once

// The SQL dialects cdc-apply writes: MariaDB/MySQL's and PostgreSQL's. What differs between
// them is gathered in a few places rather than in copies of the statement builder: the
// quoting of names (here), the literals of values (sql_value.h, pg_value.h), the per-table
// pieces of the statements (target_table.h: the upsert clause, how a keyless row is found),
// CREATE TABLE (target_table.h, pg_schema.h) and the position table (applied_state.h).

#include <cstdint>
#include <string>
#include <string_view>

namespace cdc::apply {

enum class Dialect : std::uint8_t { mariadb, postgres };

// A MariaDB/MySQL target session's sql_mode (mariadb_target.cpp): strict, so that a value the
// column cannot hold is an error rather than a warning and another value; NO_AUTO_VALUE_ON_ZERO
// keeps a source's 0 in an AUTO_INCREMENT column. The relaxed one holds for the statement of a
// row with an ENUM's error value (statement_batch.h), which strict modes refuse.
inline constexpr std::string_view kMariadbSqlMode = "STRICT_ALL_TABLES,NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION";
inline constexpr std::string_view kMariadbRelaxedSqlMode = "NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION";

// `name` with ` doubled (MariaDB), "name" with " doubled (PostgreSQL).
[[nodiscard]] std::string quote_name(Dialect dialect, std::string_view name);

// What --create-tables runs before a table's first CREATE TABLE: the database (MariaDB) or
// schema (PostgreSQL) it goes into.
[[nodiscard]] std::string create_namespace_sql(Dialect dialect, std::string_view name);

}  // namespace cdc::apply
