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

// `name` with ` doubled (MariaDB), "name" with " doubled (PostgreSQL).
[[nodiscard]] std::string quote_name(Dialect dialect, std::string_view name);

// What --create-tables runs before a table's first CREATE TABLE: the database (MariaDB) or
// schema (PostgreSQL) it goes into.
[[nodiscard]] std::string create_namespace_sql(Dialect dialect, std::string_view name);

}  // namespace cdc::apply
