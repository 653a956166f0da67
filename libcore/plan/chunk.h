#pragma once

// A table's key range split into chunks, and their op:"chunk" lines (records/chunk.h; the
// fields: man/cdc-ndjson.5, "chunk"). Everything here is pure: the planner (planner.h) asks
// the server for the key's bounds and boundaries, these functions turn them into key ranges
// and lines.
//
// A row is in a chunk iff (key) >= start (when start is not null) and (key) < end (when end is
// not null), compared by the server under the key columns' collations. Boundaries are real key
// values, so two values equal under a collation always fall on the same side of every boundary.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "records/chunk.h"
#include "util/result.h"

namespace cdc::ndjson {
class Writer;
}

namespace cdc::plan {

// How a key column's values are written in the chunk line and in SQL.
enum class KeyKind : std::uint8_t {
  signed_integer,    // TINYINT..BIGINT, YEAR: JSON number, SQL digits
  unsigned_integer,  // ... UNSIGNED
  decimal,           // DECIMAL: JSON string, SQL digits
  text,              // CHAR/VARCHAR/TEXT: JSON string (UTF-8), SQL _utf8mb4 X'..' (the column's collation compares)
  binary,            // BINARY/VARBINARY/BLOB: JSON base64, SQL X'..' (bytes compare)
  temporal,          // DATE, DATETIME, TIME: JSON string as the server prints it, SQL '...'
  timestamp,         // TIMESTAMP: JSON string in UTC with a trailing Z, SQL '...' in a '+00:00' session
  fixed_binary,      // MariaDB INET4/INET6/UUID: JSON string as the server prints it, SQL '...' (read as the type)
};

struct KeyColumn {
  std::string name;
  std::string column_type;  // information_schema COLUMN_TYPE, e.g. "int(10) unsigned"
  KeyKind kind = KeyKind::signed_integer;
};


// One value per key column, as the server's text protocol returns it (bytes for binary).
using KeyTuple = std::vector<std::string>;

struct KeyRange {
  std::optional<KeyTuple> start;  // inclusive; nullopt: open
  std::optional<KeyTuple> end;    // exclusive; nullopt: open
  std::uint64_t rows_estimate = 0;
};

struct TableSplit {
  std::string database;
  std::string table;
  std::vector<KeyColumn> key;
  std::vector<records::ChunkColumn> columns;
  std::vector<KeyRange> chunks;
  std::optional<std::vector<std::string>> identity;  // see TableKey::identity
  bool all_versions = false;                         // see records::Chunk::all_versions
};

struct ChunkPolicy {
  std::uint64_t chunk_size = 8096;  // rows per chunk, as Flink CDC's default
  double factor_lower = 0.05;       // distribution factor bounds for the even split (Flink's defaults)
  double factor_upper = 1000.0;
};

// An integer key's MIN and MAX, both as "biased" unsigned values: unsigned keys as they are,
// signed ones with the sign bit flipped, so that order and differences work in uint64 for
// every integer type, BIGINT UNSIGNED up to 18446744073709551615 included.
struct IntegerKeyRange {
  bool is_unsigned = false;
  std::uint64_t min = 0;
  std::uint64_t max = 0;
};

[[nodiscard]] std::uint64_t bias_signed(std::int64_t value) noexcept;
[[nodiscard]] std::string unbiased_text(std::uint64_t biased, bool is_unsigned);
// Parses the server's text of an integer key value into a biased value.
[[nodiscard]] std::optional<std::uint64_t> parse_biased(std::string_view text, bool is_unsigned);

// (max - min + 1) / rows: how many key values each row gets; +infinity when rows is 0.
[[nodiscard]] double distribution_factor(const IntegerKeyRange& range, std::uint64_t rows) noexcept;

// The even split: ranges of chunk_size * factor key values, the first open below and the last
// open above (rows inserted outside [min, max] later still belong to a chunk). nullopt when the
// factor is outside [factor_lower, factor_upper]: the keys are too sparse or too dense for
// arithmetic, and the index must be walked instead.
[[nodiscard]] std::optional<std::vector<KeyRange>> plan_integer_chunks(const IntegerKeyRange& range,
                                                                    std::uint64_t rows, const ChunkPolicy& policy);

// Chunks from the boundaries a walk of the index found (strictly increasing real key values):
// [null, b0), [b0, b1), ..., [bn, null). No boundaries: one chunk, null/null.
[[nodiscard]] std::vector<KeyRange> chunks_from_boundaries(std::vector<KeyTuple> boundaries, std::uint64_t rows,
                                                        std::uint64_t chunk_size);

// The SQL literal of one key value (see KeyKind); an error for text that cannot be the kind.
[[nodiscard]] Result<std::string> sql_literal(const KeyColumn& column, std::string_view value);
// The row comparison (key) OP (values) with OP one of ">", ">=", "<", expanded into
// a > x OR (a = x AND b > y) ... (mysql::row_comparison), which MariaDB's range optimizer
// turns into index ranges (it does not for the row constructor form).
[[nodiscard]] Result<std::string> key_compare_sql(const std::vector<KeyColumn>& key, const KeyTuple& values,
                                                  std::string_view op);
// The WHERE condition selecting a chunk's rows ("TRUE" for null/null).
[[nodiscard]] Result<std::string> chunk_condition_sql(const std::vector<KeyColumn>& key, const KeyRange& chunk);

// One key value as the chunk lines write it (see KeyKind), from the server's text of it (its
// bytes for binary); cdc-apply --verify writes the keys it reports so too.
void write_value(const KeyColumn& column, std::string_view value, ndjson::Writer& out);

// The op:"chunk" line of plan.chunks[index], its bounds as JSON by the key columns' kinds.
[[nodiscard]] records::Chunk chunk_record(const TableSplit& plan, std::size_t index);
// One op:"chunk" line (ending the record) for plan.chunks[index].
void write_chunk_line(const TableSplit& plan, std::size_t index, ndjson::Writer& out);

}  // namespace cdc::plan
