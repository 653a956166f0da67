#pragma once

// The lines of a chunk output, which cdc-snapshot writes and cdc-merge reads: per chunk an
// op "low" line (the read view opens), its "r" rows (records/row.h), an op "high" line (the
// read view closes), or an op "discard" line when the chunk is read again; and the op "high"
// line that ends a merged snapshot (cdc-merge).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "gtid/position.h"
#include "records/chunk.h"
#include "util/result.h"

namespace cdc::ndjson {
class Writer;
}

namespace cdc::records {

// A watermark: where the binlog was when a read view opened or closed.
struct Watermark {
  std::string position;  // what cdc-stream --from accepts: a GTID position, else FILE:OFFSET
  std::string file;      // the binlog coordinates; "" (and 0) when a line has none
  std::uint64_t offset = 0;
  std::int64_t ts_ms = 0;
};

// Which chunk a line is about: the four members every chunk output line starts with.
struct ChunkRef {
  std::string db;
  std::string table;
  std::uint64_t index = 0;
  std::uint64_t count = 0;

  [[nodiscard]] std::string describe() const;  // "shop.orders chunk 3/12"
  [[nodiscard]] bool operator==(const ChunkRef&) const = default;
};

// The low line also repeats what a reader needs of the chunk line to place changes in it.
struct Low {
  ChunkRef chunk;
  Watermark mark;
  std::vector<std::string> key;
  std::vector<std::string> key_types;
  std::vector<std::uint32_t> key_collations;
  Bound start;
  Bound end;
  std::optional<std::vector<std::string>> identity;
  std::optional<std::string> where;  // the chunk line's: the rows were read filtered by it
};

struct High {
  ChunkRef chunk;
  Watermark mark;
  std::uint64_t rows = 0;
  // The bytes of the chunk's "r" lines, newlines included: what lies between its low (or
  // table) line and this line in the output. cdc-merge then need not read them to find this
  // line. nullopt: not written (an older cdc-snapshot's).
  std::optional<std::uint64_t> rows_bytes;
};

struct SnapshotDiscard {
  ChunkRef chunk;
  std::string reason;
  std::int64_t ts_ms = 0;
};

// The last line of a merged snapshot: H*, and what was merged.
struct MergedHigh {
  std::string position;
  std::optional<gtid::FilePosition> at;  // null "file" and "offset" when not known
  std::uint64_t chunks = 0;
  std::uint64_t rows = 0;
  std::int64_t ts_ms = 0;
};

// The low line of a chunk, from the chunk line and the watermark.
[[nodiscard]] Low low_of(const Chunk& chunk, Watermark mark);
[[nodiscard]] ChunkRef chunk_ref(const Chunk& chunk);

// Each writes one line, ending the record.
void write_low(const Low& low, ndjson::Writer& out);
void write_high(const High& high, ndjson::Writer& out);
void write_snapshot_discard(const SnapshotDiscard& discard, ndjson::Writer& out);
void write_merged_high(const MergedHigh& high, ndjson::Writer& out);

// Readers. Errors are Errc::corrupt_input naming the member ("\"key\" is empty"); the caller
// prefixes input:line. parse_low takes the line too: its bounds are kept as the line's own
// bytes, which cdc-merge compares with the rows' key values. Watermarks' "position" is checked
// by the caller with parse_position().
[[nodiscard]] Result<ChunkRef> parse_chunk_ref(simdjson::dom::object record);
[[nodiscard]] Result<Low> parse_low(simdjson::dom::object record, std::string_view line);
[[nodiscard]] Result<High> parse_high(simdjson::dom::object record);
// A merged snapshot's last line (cdc-sync reads H* from it); null "file"/"offset" give no `at`.
[[nodiscard]] Result<MergedHigh> parse_merged_high(simdjson::dom::object record);

}  // namespace cdc::records
