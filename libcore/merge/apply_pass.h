#pragma once

// The output pass of cdc-merge: each group's snapshot rows with the effects of the deltas
// applied, then the rows the deltas added. Rows are streamed from the chunk outputs in blocks
// (merge/row_blocks.h) and never held beyond one; unchanged rows are written byte for byte,
// from where they were read. A row's identity is found by scanning its line (the raw "key"
// object when the identity is the chunk key), without parsing JSON.
//
// Output order within a group: the snapshot rows in input order (replaced, dropped or kept),
// then the added rows sorted by identity bytes. When a group's effects do not fit the memory
// limit, the group is done in several passes, each over one slice of the identity space (a
// range of the sorted effects), rewriting the rows through a temp file; the result is the same
// bytes as one pass.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "merge/chunk_input.h"
#include "merge/effects.h"
#include "merge/row_blocks.h"
#include "merge/temp_dir.h"
#include "ndjson/writer.h"
#include "output/converter.h"
#include "util/result.h"

namespace cdc::merge {

// Buffered output to an fd, written in large blocks. With a converter (the output stage,
// --format), the whole lines buffered go through it when they are written.
class OutputSink {
 public:
  OutputSink(int fd, std::string name);
  void set_converter(output::Converter* converter) noexcept { converter_ = converter; }
  [[nodiscard]] bool has_converter() const noexcept { return converter_ != nullptr; }
  // The converter's held lines out, then everything written (the end of the output).
  [[nodiscard]] Result<void> finish();
  void append(std::string_view bytes) {
    buffer_.append(bytes);
    if (buffer_.size() >= kFlushBytes) flush_later_ = true;
  }
  // Writes the buffer when it is large (call between rows).
  [[nodiscard]] Result<void> maybe_flush() {
    if (!flush_later_) return {};
    return flush();
  }
  [[nodiscard]] Result<void> flush();
  [[nodiscard]] int fd() const noexcept { return fd_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  static constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
  int fd_;
  std::string name_;
  std::string buffer_;
  bool flush_later_ = false;
  output::Converter* converter_ = nullptr;
  ndjson::Writer converted_;
};

struct Group {
  std::uint32_t id = 0;
  const TableInfo* table = nullptr;
  std::vector<Segment> segments;  // its chunks' rows, in output order
};

struct GroupResult {
  std::uint64_t rows = 0;
  std::uint64_t passes = 0;
};

// Writes one group's rows to out, consuming the group's entries from the cursor (which is at
// the group's first entry or past it). deltas: the mapped deltas the effects' images are in
// (empty when they are not mapped).
[[nodiscard]] Result<GroupResult> write_group(const Group& group, EffectCursor& cursor, std::uint64_t memory_limit,
                                              std::span<const char> deltas, TempDir& temp, OutputSink& out);

// Writes the groups in order, each after its bytes in before (a table line, or nothing), as
// write_group does one by one. With threads > 1, that many workers read the blocks of the
// groups' rows at once (up to threads groups at a time, each with its effects loaded whole
// under memory_limit / threads), and each block is written in output order by the worker that
// finds it next in line; a group whose effects do not fit is done alone, in passes.
[[nodiscard]] Result<GroupResult> write_groups(std::span<const Group> groups, std::span<const std::string> before,
                                               EffectCursor& cursor, std::uint64_t memory_limit,
                                               std::span<const char> deltas, TempDir& temp, OutputSink& out,
                                               unsigned threads);

}  // namespace cdc::merge
