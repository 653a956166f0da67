#pragma once

// The effect of the deltas on each chunk, as cdc-merge collects them: per (group, identity)
// the last state of the row, or for tables without an identity a signed count per (group,
// row text). A group is one chunk, or every chunk of a table whose key order is not
// reproduced (see TableInfo::ordered).
//
// Memory is bounded by a limit: past it, the entries are sorted by (group, identity) and
// written as one zstd-compressed run to the temp dir, and collecting goes on. finish() then
// merges the runs (later runs win; counts add up) into one sorted stream. So that the output
// pass needs little more than the limit, finish() writes what is still in memory as one more
// run when there are runs, and merges runs kMaxOpenRuns at a time, in as many levels as it
// takes, until at most kMaxOpenRuns are left to read at once (each open run costs a zstd
// decoder with a 64 KiB window and two 32 KiB buffers).
//
// When the deltas are a regular file, mapped whole (set_source), a row's image (most of its
// line) is not copied: the entry keeps the line's other bytes and where the image is, a run
// keeps the same, and the line is put together when the entry is handed out. The image is
// not resident until then, so it does not count against the limit; the mapped pages read
// back are dropped from the process as it goes (every 512 KiB of pages).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "merge/temp_dir.h"
#include "util/result.h"

namespace cdc::merge {

// A fast hash of short byte strings (identities are a few dozen bytes): 8 bytes at a time,
// multiplied and folded. The effects index and the output pass's lookup table share it.
inline std::uint64_t hash_identity(std::string_view text) noexcept {
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ULL;
  std::uint64_t h = text.size() * kMul;
  std::size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    std::uint64_t chunk;
    std::memcpy(&chunk, text.data() + i, 8);
    h = (h ^ chunk) * kMul;
    h ^= h >> 29;
  }
  // The last 1..7 bytes in two loads of fixed size (which may overlap), not a memcpy call of
  // a variable size: most identities end here.
  const std::size_t left = text.size() - i;
  const char* rest = text.data() + i;
  std::uint64_t tail = 0;
  if (left >= 4) {
    std::uint32_t low = 0;
    std::uint32_t high = 0;
    std::memcpy(&low, rest, 4);
    std::memcpy(&high, rest + left - 4, 4);
    tail = low | (std::uint64_t{high} << 32);
  } else if (left > 0) {
    tail = std::uint64_t{static_cast<unsigned char>(rest[0])} |
           (std::uint64_t{static_cast<unsigned char>(rest[left / 2])} << 8) |
           (std::uint64_t{static_cast<unsigned char>(rest[left - 1])} << 16);
  }
  h = (h ^ tail) * kMul;
  h ^= h >> 32;
  return h;
}


enum class EffectKind : std::uint8_t {
  absent = 0,   // identity-keyed: the row is gone
  present = 1,  // identity-keyed: the row is `line`
  counted = 2,  // whole-row identity: `count` more (or fewer) copies of the row
};

struct Effect {
  EffectKind kind = EffectKind::absent;
  std::int64_t count = 0;
  // The complete output "r" line with its '\n' (present; counted when inserted). With an image
  // (image_size > 0), the line is line's first head_size bytes, the image, then the rest of
  // line: the image stays in the mapped deltas until it is written (append_line).
  std::string line;
  const char* image = nullptr;
  std::uint32_t image_size = 0;
  std::uint32_t head_size = 0;

  void append_line(std::string& out) const {
    if (image_size == 0) {
      out.append(line);
      return;
    }
    out.append(line, 0, head_size);
    out.append(image, image_size);
    out.append(line, head_size);
  }
};

struct EffectEntry {
  std::uint32_t group = 0;
  std::string identity;
  Effect effect;
};

// Bytes an entry is charged against the memory limit (text plus bookkeeping).
[[nodiscard]] std::size_t effect_cost(std::size_t identity_size, std::size_t line_size) noexcept;

class EffectCursor;
struct EffectEntry;
// One sorted stream of entries: the next into the argument, false at its end.
using EffectSource = std::function<Result<bool>(EffectEntry&)>;

class EffectStore {
 public:
  EffectStore(std::uint64_t memory_limit, TempDir& temp);

  // The row with this identity is now `line` (present) or gone (absent).
  [[nodiscard]] Result<void> set_present(std::uint32_t group, std::string_view identity, std::string_view line);
  [[nodiscard]] Result<void> set_absent(std::uint32_t group, std::string_view identity);
  // Whole-row identity: one more copy (line given) or one fewer (delta -1).
  [[nodiscard]] Result<void> add_count(std::uint32_t group, std::string_view row, std::int64_t delta,
                                       std::string_view line);

  // The text the deltas were read from, mapped whole (a regular file): then a row can be
  // kept as head + a range of it + tail (set_present_split), and its image is read back from
  // the mapping instead of being copied. Must stay mapped until the cursor of finish() is done.
  void set_source(const char* data, std::size_t size) noexcept {
    source_ = data;
    source_size_ = size;
  }
  [[nodiscard]] const char* source() const noexcept { return source_; }
  [[nodiscard]] std::size_t source_size() const noexcept { return source_size_; }
  [[nodiscard]] bool has_source(std::uint64_t offset, std::size_t size) const noexcept {
    return source_ != nullptr && offset <= source_size_ && size <= source_size_ - offset;
  }
  // set_present with the line head + source[image_offset, image_offset + image_size) + tail.
  [[nodiscard]] Result<void> set_present_split(std::uint32_t group, std::string_view identity, std::string_view head,
                                               std::uint64_t image_offset, std::size_t image_size,
                                               std::string_view tail);

  [[nodiscard]] std::size_t runs() const noexcept { return runs_.size(); }
  [[nodiscard]] bool empty() const noexcept { return runs_.empty() && records_.empty(); }

  // Ends collecting: the merged, sorted entries. The store is left empty.
  [[nodiscard]] Result<std::unique_ptr<EffectCursor>> finish() {
    EffectStore* self = this;
    return finish(std::span<EffectStore* const>(&self, 1));
  }
  // The same over stores that collected consecutive parts of the deltas, in their order: for a
  // key in several, a later store's entry wins (counts add up), as a later run's does.
  [[nodiscard]] static Result<std::unique_ptr<EffectCursor>> finish(std::span<EffectStore* const> stores);

 private:
  // Keys and lines, appended to large blocks that never move (no copying as it grows, and
  // the blocks are reused after a spill). A reference is the block index in the high 24 bits
  // and the offset in the low 40.
  class Arena {
   public:
    Arena() = default;
    Arena(const Arena&) = delete;
    Arena& operator=(const Arena&) = delete;
    Arena(Arena&& other) noexcept;
    Arena& operator=(Arena&& other) noexcept;
    ~Arena();
    [[nodiscard]] std::uint64_t append(std::string_view bytes) { return append(bytes, {}); }
    // first then second, contiguous.
    [[nodiscard]] std::uint64_t append(std::string_view first, std::string_view second);
    [[nodiscard]] char* at(std::uint64_t ref) const noexcept {
      return blocks_[ref >> 40].data + (ref & ((std::uint64_t{1} << 40) - 1));
    }
    [[nodiscard]] std::uint64_t used() const noexcept { return used_; }
    void clear() noexcept;    // empties it, keeping the blocks for reuse
    void release() noexcept;  // frees every block

   private:
    struct Block {
      char* data = nullptr;
      std::size_t size = 0;
      std::size_t filled = 0;
    };
    std::vector<Block> blocks_;
    std::size_t current_ = 0;  // the block being filled
    std::uint64_t used_ = 0;
  };

  // The entries live in the arena and a record table, looked up by an open-addressing index:
  // no allocation per change.
  struct Record {
    std::uint64_t hash = 0;
    std::uint64_t key_offset = 0;  // arena refs; key = group (4 bytes, big-endian) + identity
    std::uint64_t line_offset = 0;
    std::uint32_t key_size = 0;
    std::uint32_t line_size = 0;
    std::int64_t count = 0;
    // image_size > 0: the line is the arena's first head_size bytes, then the source's
    // [image_offset, image_offset + image_size), then the rest of the arena's line_size bytes.
    std::uint64_t image_offset = 0;
    std::uint32_t image_size = 0;
    std::uint32_t head_size = 0;
    EffectKind kind = EffectKind::absent;
  };

  Record& slot(std::uint32_t group, std::string_view identity);
  void set_line(Record& record, std::string_view line);
  void grow_index();
  [[nodiscard]] std::string_view key_of(const Record& record) const noexcept {
    return {arena_.at(record.key_offset), record.key_size};
  }
  [[nodiscard]] std::vector<std::uint32_t> sorted_records() const;
  void clear_memory();
  Result<void> maybe_spill();
  Result<void> spill();
  Result<void> merge_runs(std::size_t max_open_runs);
  static constexpr std::size_t kMaxOpenRuns = 8;

 private:
  // Ends collecting into sources of sorted entries for a MergingCursor, in order.
  Result<void> finish_sources(std::size_t max_open_runs, std::vector<EffectSource>& sources);

  std::uint64_t limit_;
  TempDir& temp_;
  std::string key_;  // scratch
  Arena arena_;
  std::vector<Record> records_;
  // High 32 bits: the key's hash; low 32: record index + 1; 0 = empty. A probe reads a record
  // only when the hashes agree.
  std::vector<std::uint64_t> index_;
  std::vector<TempDir::File> runs_;
  const char* source_ = nullptr;
  std::size_t source_size_ = 0;
};

// The pages of the mapped deltas that writing images (Effect::append_line) made resident,
// dropped from the process (they stay in the page cache) as it goes. A file written in large
// blocks sits in large page-cache folios, and touching one byte of such a folio can map all of
// it, up to 2 MiB: so each 2 MiB region touched counts as all of it, and once a second region
// is touched, the regions read so far are dropped whole.
class MappedPages {
 public:
  static constexpr std::uint64_t kRegionBytes = std::uint64_t{2} << 20;
  MappedPages(const char* data, std::size_t size) noexcept : data_(data), size_(size) {}
  MappedPages(const MappedPages&) = delete;
  MappedPages& operator=(const MappedPages&) = delete;
  ~MappedPages() { forget(); }
  void read(const Effect& effect) noexcept {
    if (effect.image_size == 0 || data_ == nullptr) return;
    const auto offset = static_cast<std::uint64_t>(effect.image - data_);
    const std::uint64_t first = offset / kRegionBytes;
    const std::uint64_t last = (offset + effect.image_size - 1) / kRegionBytes;
    if (touched_ && (first < lo_ || last > hi_)) forget();  // a region not read yet
    lo_ = touched_ ? std::min(lo_, first) : first;
    hi_ = touched_ ? std::max(hi_, last) : last;
    touched_ = true;
  }
  void forget() noexcept;

 private:
  const char* data_;
  std::size_t size_;
  std::uint64_t lo_ = 0;  // the regions read since the last forget(), inclusive
  std::uint64_t hi_ = 0;
  bool touched_ = false;
};

// The merged stream of entries, sorted by group then identity bytes.
class EffectCursor {
 public:
  virtual ~EffectCursor() = default;
  // The current entry, or nullptr at the end.
  [[nodiscard]] virtual const EffectEntry* current() const noexcept = 0;
  // Moves to the next entry (the current one may be moved from before this).
  [[nodiscard]] virtual Result<void> advance() = 0;
  [[nodiscard]] virtual EffectEntry& mutable_current() noexcept = 0;
};

}  // namespace cdc::merge
