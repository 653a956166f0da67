#pragma once

// The effect of the deltas on each chunk, as cdc-merge collects them: per (group, identity)
// the last state of the row, or for tables without an identity a signed count per (group,
// row text). A group is one chunk, or every chunk of a table whose key order is not
// reproduced (see TableInfo::ordered).
//
// Memory is bounded by a limit: past it, the entries are sorted by (group, identity) and
// written as one zstd-compressed run to the temp dir, and collecting goes on. finish() then
// merges the runs (later runs win; counts add up) into one sorted stream.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "merge/temp_dir.h"
#include "util/result.h"

namespace cdc::merge {

enum class EffectKind : std::uint8_t {
  absent = 0,   // identity-keyed: the row is gone
  present = 1,  // identity-keyed: the row is `line`
  counted = 2,  // whole-row identity: `count` more (or fewer) copies of the row
};

struct Effect {
  EffectKind kind = EffectKind::absent;
  std::int64_t count = 0;
  std::string line;  // the complete output "r" line with its '\n' (present; counted when inserted)
};

struct EffectEntry {
  std::uint32_t group = 0;
  std::string identity;
  Effect effect;
};

// Bytes an entry is charged against the memory limit (text plus bookkeeping).
[[nodiscard]] std::size_t effect_cost(std::size_t identity_size, std::size_t line_size) noexcept;

class EffectCursor;

class EffectStore {
 public:
  EffectStore(std::uint64_t memory_limit, TempDir& temp);

  // The row with this identity is now `line` (present) or gone (absent).
  [[nodiscard]] Result<void> set_present(std::uint32_t group, std::string_view identity, std::string_view line);
  [[nodiscard]] Result<void> set_absent(std::uint32_t group, std::string_view identity);
  // Whole-row identity: one more copy (line given) or one fewer (delta -1).
  [[nodiscard]] Result<void> add_count(std::uint32_t group, std::string_view row, std::int64_t delta,
                                       std::string_view line);

  [[nodiscard]] std::size_t runs() const noexcept { return runs_.size(); }
  [[nodiscard]] bool empty() const noexcept { return runs_.empty() && records_.empty(); }

  // Ends collecting: the merged, sorted entries. The store is left empty.
  [[nodiscard]] Result<std::unique_ptr<EffectCursor>> finish();

 private:
  // The entries live in one arena of bytes (keys and lines) and a record table, looked up by
  // an open-addressing index: no allocation per change.
  struct Record {
    std::uint64_t hash = 0;
    std::uint64_t key_offset = 0;  // key = group (4 bytes, big-endian) + identity
    std::uint64_t line_offset = 0;
    std::uint32_t key_size = 0;
    std::uint32_t line_size = 0;
    std::int64_t count = 0;
    EffectKind kind = EffectKind::absent;
  };

  Record& slot(std::uint32_t group, std::string_view identity);
  void set_line(Record& record, std::string_view line);
  void grow_index();
  [[nodiscard]] std::string_view key_of(const Record& record) const noexcept {
    return std::string_view(arena_).substr(record.key_offset, record.key_size);
  }
  [[nodiscard]] std::vector<std::uint32_t> sorted_records() const;
  void clear_memory();
  Result<void> maybe_spill();

  std::uint64_t limit_;
  TempDir& temp_;
  std::string key_;  // scratch
  std::string arena_;
  std::vector<Record> records_;
  std::vector<std::uint32_t> index_;  // record index + 1; 0 = empty
  std::vector<TempDir::File> runs_;
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
