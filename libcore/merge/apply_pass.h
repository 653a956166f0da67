#pragma once

// The output pass of cdc-merge: each group's snapshot rows with the effects of the deltas
// applied, then the rows the deltas added. Rows are streamed from the chunk outputs and never
// held; unchanged rows are copied byte for byte. A row's identity is found by scanning its
// line (the raw "key" object when the identity is the chunk key), without parsing JSON.
//
// Output order within a group: the snapshot rows in input order (replaced, dropped or kept),
// then the added rows sorted by identity bytes. When a group's effects do not fit the memory
// limit, the group is done in several passes, each over one slice of the identity space (a
// range of the sorted effects), rewriting the rows through a temp file; the result is the same
// bytes as one pass.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "merge/chunk_input.h"
#include "merge/effects.h"
#include "merge/temp_dir.h"
#include "ndjson/writer.h"
#include "output/converter.h"
#include "util/result.h"

namespace cdc::merge {

// Whose turn it is to write: the output pass's workers write their groups' bytes in group
// order, each waiting for the ones before it to be done.
class OutputTurn {
 public:
  [[nodiscard]] bool is(std::uint64_t ticket) const noexcept { return current_.load(std::memory_order_acquire) == ticket; }
  void wait_for(std::uint64_t ticket);
  void pass_on(std::uint64_t ticket);  // ticket's bytes are all written: the next one's turn

 private:
  std::atomic<std::uint64_t> current_{0};
  std::mutex mutex_;
  std::condition_variable changed_;
};

// Buffered output to an fd, written in large blocks. With a converter (the output stage,
// --format), the whole lines buffered go through it when they are written. With a turn, the
// bytes are held until the ticket's turn (up to kHoldBytes, then it waits for it).
class OutputSink {
 public:
  OutputSink(int fd, std::string name);
  // Bytes written from now on are ticket's, in turn (the sink is empty: flushed in turn).
  void take_turn(OutputTurn& turn, std::uint64_t ticket) noexcept {
    turn_ = &turn;
    ticket_ = ticket;
  }
  void set_converter(output::Converter* converter) noexcept { converter_ = converter; }
  [[nodiscard]] bool has_converter() const noexcept { return converter_ != nullptr; }
  // The converter's held lines out, then everything written (the end of the output).
  [[nodiscard]] Result<void> finish();
  void append(std::string_view bytes) {
    buffer_.append(bytes);
    if (buffer_.size() >= kFlushBytes) flush_later_ = true;
  }
  void append(const Effect& effect) {
    effect.append_line(buffer_);
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
  static constexpr std::size_t kHoldBytes = std::size_t{1} << 20;
  OutputTurn* turn_ = nullptr;
  std::uint64_t ticket_ = 0;
  int fd_;
  std::string name_;
  std::string buffer_;
  bool flush_later_ = false;
  output::Converter* converter_ = nullptr;
  ndjson::Writer converted_;
};

// A range of lines of one input: a chunk's rows.
struct Segment {
  int fd = -1;
  std::string name;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t first_line = 1;
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
// write_group does one by one. With threads > 1 and no converter on out, groups are done by
// that many workers at once, each with its effects loaded whole under memory_limit / threads
// and its bytes written in turn; a group whose effects do not fit is done alone, in passes.
[[nodiscard]] Result<GroupResult> write_groups(std::span<const Group> groups, std::span<const std::string> before,
                                               EffectCursor& cursor, std::uint64_t memory_limit,
                                               std::span<const char> deltas, TempDir& temp, OutputSink& out,
                                               unsigned threads);

}  // namespace cdc::merge
