#pragma once

// Each column's value as text in the row text that cdc-apply --verify hashes (digest_sql.h),
// when the two servers are not of one kind: a MariaDB source and a PostgreSQL target that
// cdc-apply filled through its type mapping (apply/pg_schema.h). Both servers must write the
// same bytes for the same value, so each type gets one text that both can produce in SQL:
//
//   integers, DECIMAL, DATE, CHAR/VARCHAR/TEXT, ENUM, SET, UUID, INET4/INET6, MySQL's JSON
//                     the value's text as MariaDB prints it (text in UTF-8)
//   FLOAT, DOUBLE     the double's shortest digits D and exponent X, value = D x 10^X, as
//                     "-11e-1" ("0" for zero): both servers print the shortest digits that
//                     read back as the double, but place the point and write the exponent
//                     their own ways (1e20 and 1e+20), so the text is taken apart and put back
//                     together the same way on both; a FLOAT as the double it is (MariaDB
//                     prints a FLOAT with 6 digits, PostgreSQL's real with up to 9)
//   BIT(n)            n binary digits
//   YEAR              the number (0, not MariaDB's 0000)
//   TIME              the signed number of microseconds (PostgreSQL keeps it as an interval)
//   DATETIME(n), TIMESTAMP(n)
//                     'YYYY-MM-DD HH:MM:SS' and n fractional digits, TIMESTAMP in UTC
//   BINARY, VARBINARY, BLOB, GEOMETRY
//                     lowercase hex of the bytes
//
// MySQL's JSON becomes jsonb, which keeps its own text of a document: documents with numbers
// written otherwise (1.0, 1e2) differ. VECTOR has no common text: refused.

#include <string>

#include "records/chunk.h"
#include "util/result.h"

namespace cdc::verify {

// Which kind of server the other side of the comparison is.
enum class Peer : std::uint8_t { mariadb, postgres };

// The MariaDB expression of a column's text in the row text, when the other side is `peer`.
[[nodiscard]] std::string mariadb_value_sql(const records::ChunkColumn& column, Peer peer);

// Whether a PostgreSQL target's column can be compared: Errc::unsupported for VECTOR.
[[nodiscard]] Result<void> postgres_comparable(const records::ChunkColumn& column);

// The PostgreSQL expression of the same text, on the column cdc-apply's mapping made of it.
[[nodiscard]] std::string postgres_value_sql(const records::ChunkColumn& column);

// A key column's value on a PostgreSQL target as MariaDB's client receives it (the key a
// verify line names, compared in the key's order): its text; binary strings as hex, which
// the caller decodes (postgres_key_is_hex).
[[nodiscard]] std::string postgres_key_sql(const records::ChunkColumn& column);
[[nodiscard]] bool postgres_key_is_hex(const records::ChunkColumn& column);

// Whether the text of a column in the row text is a JSON number (integers, YEAR, FLOAT,
// DOUBLE), so a table without a key lists it as one in the rows it reports.
[[nodiscard]] bool canonical_is_number(const records::ChunkColumn& column);

// A PostgreSQL string literal: '...' with ' doubled (standard_conforming_strings on).
[[nodiscard]] std::string postgres_quoted(std::string_view text);

}  // namespace cdc::verify
