#pragma once

// A column value of cdc-ndjson(5) (VALUES) as a PostgreSQL literal, for the column types of
// pg_schema.h's mapping (cdc-apply(1), POSTGRESQL). The session is set up for these literals
// (postgres_target.h): standard_conforming_strings on (a backslash is itself inside '...'),
// IntervalStyle postgres, client_encoding UTF8.
//
// Most values go as quoted text that the column's type reads with its own input function
// ('2024-02-29', '1.1', '\x00ff', '::1'): PostgreSQL takes such an untyped literal as a
// value of the column it meets, in an INSERT, a SET and a comparison alike, so that a REAL
// compares with the float the text reads as. Integers and DECIMAL go as numbers, BIT(n) as
// B'...' of n digits.
//
// Values PostgreSQL cannot hold are refused rather than changed: a date or datetime with a zero
// year, month or day ('0000-00-00' and MariaDB's other zero parts), the zero TIMESTAMP, text
// with the NUL character, JSON with \u0000, ENUM and SET numbers (no labels in the binlog).

#include <string>
#include <string_view>

#include <simdjson.h>

#include "apply/sql_value.h"
#include "util/result.h"

namespace cdc::apply {

// Appends the literal of value to out; scratch is reused for decoded bytes. Errc::corrupt_input
// "column "c" (type): why" when the value is not of the column's encoding or PostgreSQL
// cannot hold it.
[[nodiscard]] Result<void> append_pg_literal(std::string& out, const ColumnSql& column, simdjson::dom::element value,
                                             std::string& scratch);

// '...' with ' doubled; the text must hold no NUL (PostgreSQL's text cannot).
void append_pg_quoted(std::string& out, std::string_view text);

}  // namespace cdc::apply
