#pragma once

// The output pass's unit of work: a block of a chunk's rows, read with one pread() and looked up
// against the group's effects, then written with writev() straight from the block and from the
// effects, with no copy of the rows in between (most rows are unchanged: their bytes go out as
// they were read).
//
// Reading a block (read_row_block) only looks rows up; what a row with an effect becomes (the
// effect's line, nothing, or the row itself) is decided when the block is written
// (write_row_block), blocks in output order. So two workers can read the blocks of one group at
// once and write them in turn, and the result is the bytes of one thread: a row's effect is
// used once (the first row with its identity gets the line, later ones are dropped), and a
// keyless table's deleted copies are the first ones in output order.

#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "merge/chunk_input.h"
#include "merge/effects.h"
#include "util/result.h"

namespace cdc::merge {

class OutputSink;

// A range of lines of one input: a chunk's rows.
struct Segment {
  int fd = -1;
  std::string name;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t first_line = 1;
  // Every line must be an "r" line of the table as cdc-snapshot writes it (starting with the
  // table's row prefix): a chunk whose rows the first pass did not read (ChunkInfo::rows_unread).
  bool only_written_rows = false;
};

// One slice of a group's effects: entries sorted by identity, looked up in an open-addressing
// table of (hash, entry) pairs. Most rows have no effect, so a lookup usually ends at the
// first empty slot without touching the entries.
struct Slice {
  std::vector<EffectEntry> entries;
  std::vector<char> used;
  std::vector<std::uint64_t> slots;  // high 32 bits: hash; low 32: entry index + 1; 0 = empty
  std::uint64_t mask = 0;
  std::optional<std::string> lo;  // rows with identity in [lo, hi) are this slice's
  std::optional<std::string> hi;
  // One bit per value of an integer key's digits (digits_value), set for each entry whose
  // identity is {"name":DIGITS}: a row whose key is one integer is looked up only when its bit is
  // set, and most rows have no entry. The keys of one chunk are mostly a range narrower than the
  // bits, so few rows pass without an entry.
  std::vector<std::uint64_t> digit_bits;

  // The value a row's or an entry's key digits are filtered by (the same for the same digits).
  [[nodiscard]] static std::uint64_t digits_value(std::string_view digits) noexcept {
    std::uint64_t value = 0;
    for (const char c : digits) value = value * 10 + static_cast<std::uint64_t>(c - '0');
    return value;
  }
  [[nodiscard]] bool may_hold_digits(std::uint64_t value) const noexcept {
    const std::uint64_t bit = value & (kDigitBits - 1);
    return digit_bits.empty() || ((digit_bits[bit >> 6] >> (bit & 63)) & 1U) != 0;
  }
  static constexpr std::uint64_t kDigitBits = std::uint64_t{1} << 16;

  void build_index();
  // The entry index for identity, or -1.
  [[nodiscard]] std::int64_t find(std::string_view identity) const noexcept {
    const std::uint64_t h = hash_identity(identity);
    for (std::uint64_t at = h & mask;; at = (at + 1) & mask) {
      const std::uint64_t slot = slots[at];
      if (slot == 0) return -1;
      if ((slot ^ h) >> 32 != 0) continue;
      const std::size_t index = (slot & 0xFFFFFFFFULL) - 1;
      if (entries[index].identity == identity) return static_cast<std::int64_t>(index);
    }
  }
  [[nodiscard]] bool owns(std::string_view identity) const {
    if (lo && identity < *lo) return false;
    if (hi && identity >= *hi) return false;
    return true;
  }
};

// Views of bytes that stay where they are until flush(), written with writev() when the sink
// writes straight to its fd (no converter), else appended to it. The pages of the mapped deltas
// an effect's image was written from are reported to pages after the write.
class GatherWriter {
 public:
  GatherWriter(OutputSink& out, MappedPages& pages) : out_(out), pages_(pages) {}
  void add(std::string_view bytes) {
    if (!bytes.empty()) vectors_.push_back(iovec{const_cast<char*>(bytes.data()), bytes.size()});
  }
  // The effect's line; when many views are gathered, they are written first (an effect's line
  // is a whole line: a converter takes whole lines), and a failure is kept for flush().
  void add(const Effect& effect);
  [[nodiscard]] Result<void> flush();

 private:
  OutputSink& out_;
  MappedPages& pages_;
  std::vector<iovec> vectors_;
  std::vector<const Effect*> effects_;  // written since the last flush
  Result<void> failure_;
};

// A block of a segment's rows: the bytes read, and what to write of them.
class RowBlock {
 public:
  // The bytes a block reads (more when its last line goes on past them).
  static constexpr std::size_t kBytes = std::size_t{256} << 10;

  // Reads the rows of segment that start in [from, to) (from is segment.begin or any offset
  // after it: the block starts at the first line that starts there) and looks each up in slice,
  // when given and not empty; blank lines are dropped. Errors: a row without its identity
  // (Errc::corrupt_input, with its line number), a read error, a line longer than
  // ndjson::LineReader::kMaxLineBytes.
  [[nodiscard]] Result<void> read(const Segment& segment, std::uint64_t from, std::uint64_t to,
                                  const TableInfo& table, const Slice* slice);

  // Adds the block's output to out, deciding each looked-up row against its entry in slice (the
  // one given to read(), or nullptr), marking a present effect used and counting a deleted copy;
  // returns the rows it makes. The block must not change until out is flushed.
  [[nodiscard]] std::uint64_t write(Slice* slice, GatherWriter& out) const;

 private:
  // What to write, in order: bytes of the block, a "\n", or a row whose identity has an entry.
  struct Piece {
    static constexpr std::int32_t kCopy = -1;
    static constexpr std::int32_t kNewline = -2;
    std::uint32_t offset = 0;
    std::uint32_t length = 0;
    std::int32_t entry = kCopy;  // or the entry of the row at [offset, offset + length), its line end excluded
  };
  [[nodiscard]] Result<bool> read_more(const Segment& segment, std::uint64_t limit);
  void copy(std::size_t offset, std::size_t length);
  // The row's identity; key_digits_ is set to its key's digits value when the key is one
  // integer of digits only (the common fast path), else cleared.
  [[nodiscard]] std::optional<std::string_view> identity_of(std::string_view line, const TableInfo& table);

  std::unique_ptr<char[]> bytes_;
  std::size_t capacity_ = 0;
  std::size_t filled_ = 0;
  std::uint64_t offset_ = 0;  // the file offset of bytes_[0]
  std::vector<Piece> pieces_;
  std::uint64_t copied_rows_ = 0;  // rows in kCopy pieces
  std::vector<std::string_view> values_;  // scratch for identity_of
  std::optional<std::uint64_t> key_digits_;  // identity_of's
  std::string identity_;
};

// Adds the rows the slice's effects add after the group's snapshot rows (present effects no
// row used, counted inserts); returns how many.
[[nodiscard]] std::uint64_t write_added_rows(const Slice& slice, GatherWriter& out);

}  // namespace cdc::merge
