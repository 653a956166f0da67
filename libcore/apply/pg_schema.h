#pragma once

// --create-tables for a PostgreSQL target: each source column type as the PostgreSQL type that
// holds its every value (cdc-apply(1), POSTGRESQL, the table of types), and CREATE TABLE.
//
//   TINYINT, SMALLINT -> smallint; MEDIUMINT, INT -> integer; BIGINT -> bigint; UNSIGNED the
//   next wider one (TINYINT UNSIGNED smallint ... BIGINT UNSIGNED numeric(20,0));
//   DECIMAL(p,s) -> numeric(p,s); FLOAT -> real; DOUBLE -> double precision;
//   BIT(n) -> bit varying(n); YEAR -> smallint; DATE -> date; TIME(n) -> interval(n);
//   DATETIME(n) -> timestamp(n); TIMESTAMP(n) -> timestamptz(n); CHAR(n), VARCHAR(n) ->
//   varchar(n); TEXT family, ENUM, SET -> text; BINARY, VARBINARY, BLOB, GEOMETRY -> bytea;
//   MySQL JSON -> jsonb; INET4, INET6 -> inet; UUID -> uuid; VECTOR -> real[]; any other -> text.

#include <string>

#include "records/table_line.h"

namespace cdc::apply {

[[nodiscard]] std::string pg_column_type(const records::TableColumn& column);

// CREATE TABLE IF NOT EXISTS "schema"."table" with the mapped types, NOT NULL where the source
// has it, and the line's key as the PRIMARY KEY.
[[nodiscard]] std::string pg_create_table_sql(const records::TableLine& line, const std::string& schema);

}  // namespace cdc::apply
