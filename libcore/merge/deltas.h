#pragma once

// Reads cdc-stream's output (man/cdc-stream.1, STDIN/STDOUT) into the effects of each chunk
// (man/cdc-merge.1, "The merge"): for chunk i with low L_i, each change after L_i
// whose chunk-key value falls in chunk i's range, in log order. An update is two sides: the
// old row leaves the chunk of its old key, the new row enters the chunk of its new key, each
// side only when the change is after that chunk's low. Changes after H* are not applied (the
// stream from H* carries them) and are counted. Lines of tables not being merged, commit and
// incident lines are skipped by a prefix scan, without parsing.
//
// The deltas must prove that they cover the merge (man/cdc-merge.1, "Input: changes"): a
// span_start first line at or before every chunk's low, a span_end last line at or after H*,
// every line whole (ended by a newline, well formed), of a cdc-stream kind, and in log order
// (pos non-decreasing; MariaDB GTIDs increasing per domain). The order check reads "pos" from
// the end of each line, where cdc-stream writes it, so skipped lines cost a few comparisons.

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "gtid/position.h"
#include "merge/chunk_input.h"
#include "merge/effects.h"
#include "ndjson/line_reader.h"
#include "util/result.h"

namespace cdc::merge {

struct DeltaContext {
  std::span<const ChunkInfo> chunks;
  std::span<const TableInfo> tables;
  std::span<const std::uint32_t> chunk_group;  // effect group of each chunk
  gtid::Position high;                         // H*
  bool high_is_until = false;                  // H* is --until, not the highest high
  gtid::Position lowest_low;                   // for the fix in messages
  // --check-deltas: only what shows the deltas cover the span (span lines, whole lines of
  // cdc-stream's kinds, log order); no change applied, no DDL or image checked.
  bool check_only = false;
};

struct DeltaSummary {
  std::uint64_t changes_applied = 0;     // changes with at least one side applied
  std::uint64_t changes_after_high = 0;  // changes of merged tables after H*, not applied
};

// Errors: Errc::corrupt_input "<deltas>:<line>: ..." for a malformed or torn line, a line that
// is not cdc-stream's, lines out of log order, deltas that do not cover the span (no span_start
// or span_end line, or one on the wrong side of a watermark), an image without a key or
// identity column, a partial image, or a DDL on a merged table during the snapshot.
[[nodiscard]] Result<DeltaSummary> read_deltas(ndjson::LineReader& reader, const DeltaContext& context, EffectStore& effects);

// The same as read_deltas over fd (a regular file) from byte begin, read in two parts at once,
// the second on another thread, into first and second (later entries win, as in
// EffectStore::finish). nullopt when the file is too small to be worth it, or when either part
// fails or they are not in log order across the split: then read them with read_deltas into an
// empty store, which gives the error message with its line number (a part does not know it).
inline constexpr std::uint64_t kMinPartedDeltas = std::uint64_t{4} << 20;
[[nodiscard]] std::optional<DeltaSummary> read_deltas_in_parts(int fd, const std::string& name, std::uint64_t begin,
                                                               const DeltaContext& context, EffectStore& first,
                                                               EffectStore& second);

// {"a":1,"b":"x"}: the members named by quoted_names with the given raw values, as
// ndjson::Writer writes an object. Both sides of the merge build identities with this, so a
// snapshot row's key object and a change's identity are the same bytes.
void append_object(std::span<const std::string> quoted_names, std::span<const std::string_view> values,
                   std::string& out);

}  // namespace cdc::merge
