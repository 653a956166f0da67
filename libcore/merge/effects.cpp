#include "merge/effects.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <new>

#include "merge/effect_runs.h"
#include "util/fd_io.h"
#include "util/unique_fd.h"

namespace cdc::merge {

namespace {

constexpr std::size_t kEntryOverhead = 128;  // an EffectEntry in a slice (two std::string headers, the image), index

}  // namespace

std::size_t effect_cost(std::size_t identity_size, std::size_t line_size) noexcept {
  return identity_size + 4 + line_size + kEntryOverhead;
}

EffectStore::EffectStore(std::uint64_t memory_limit, TempDir& temp) : limit_(memory_limit), temp_(temp) {}

namespace {
// Pages are only resident once written, so a large block costs nothing until it fills.
constexpr std::size_t kArenaBlockBytes = std::size_t{4} << 20;
}  // namespace

EffectStore::Arena::Arena(Arena&& other) noexcept
    : blocks_(std::move(other.blocks_)), current_(other.current_), used_(other.used_) {
  other.blocks_.clear();
  other.current_ = 0;
  other.used_ = 0;
}

EffectStore::Arena& EffectStore::Arena::operator=(Arena&& other) noexcept {
  if (this != &other) {
    release();
    blocks_ = std::move(other.blocks_);
    current_ = other.current_;
    used_ = other.used_;
    other.blocks_.clear();
    other.current_ = 0;
    other.used_ = 0;
  }
  return *this;
}

EffectStore::Arena::~Arena() { release(); }

std::uint64_t EffectStore::Arena::append(std::string_view first, std::string_view second) {
  const std::size_t bytes = first.size() + second.size();
  while (current_ < blocks_.size() && blocks_[current_].filled + bytes > blocks_[current_].size) {
    if (current_ + 1 == blocks_.size()) break;
    ++current_;
  }
  if (current_ >= blocks_.size() || blocks_[current_].filled + bytes > blocks_[current_].size) {
    const std::size_t size = std::max(kArenaBlockBytes, (bytes + kArenaBlockBytes - 1) / kArenaBlockBytes *
                                                            kArenaBlockBytes);
    void* data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (data == MAP_FAILED) throw std::bad_alloc();
    blocks_.push_back(Block{static_cast<char*>(data), size, 0});
    current_ = blocks_.size() - 1;
  }
  Block& block = blocks_[current_];
  const std::uint64_t ref = (std::uint64_t{current_} << 40) | block.filled;
  if (!first.empty()) std::memcpy(block.data + block.filled, first.data(), first.size());
  if (!second.empty()) std::memcpy(block.data + block.filled + first.size(), second.data(), second.size());
  block.filled += bytes;
  used_ += bytes;
  return ref;
}

void EffectStore::Arena::clear() noexcept {
  for (Block& block : blocks_) block.filled = 0;
  current_ = 0;
  used_ = 0;
}

void EffectStore::Arena::release() noexcept {
  for (const Block& block : blocks_) ::munmap(block.data, block.size);
  blocks_.clear();
  current_ = 0;
  used_ = 0;
}

void EffectStore::grow_index() {
  std::size_t size = index_.empty() ? 1024 : index_.size() * 2;
  index_.assign(size, 0);
  const std::size_t mask = size - 1;
  for (std::size_t r = 0; r < records_.size(); ++r) {
    const std::uint64_t hash = records_[r].hash;
    std::size_t at = hash & mask;
    while (index_[at] != 0) at = (at + 1) & mask;
    index_[at] = (hash & 0xFFFFFFFF00000000ULL) | (r + 1);
  }
}

EffectStore::Record& EffectStore::slot(std::uint32_t group, std::string_view identity) {
  key_.clear();
  put_group(key_, group);
  key_.append(identity);
  if (records_.size() * 2 >= index_.size()) grow_index();
  const std::uint64_t hash = hash_identity(key_);
  const std::size_t mask = index_.size() - 1;
  std::size_t at = hash & mask;
  for (; index_[at] != 0; at = (at + 1) & mask) {
    if ((index_[at] ^ hash) >> 32 != 0) continue;
    Record& record = records_[(index_[at] & 0xFFFFFFFFULL) - 1];
    if (record.hash == hash && key_of(record) == key_) return record;
  }
  Record record;
  record.hash = hash;
  record.key_offset = arena_.append(key_);
  record.key_size = static_cast<std::uint32_t>(key_.size());
  records_.push_back(record);
  index_[at] = (hash & 0xFFFFFFFF00000000ULL) | records_.size();
  return records_.back();
}

void MappedPages::forget() noexcept {
  if (!touched_) return;
  const std::uint64_t lo = lo_ * kRegionBytes;
  const std::uint64_t hi = std::min<std::uint64_t>(size_, (hi_ + 1) * kRegionBytes);
  if (hi > lo) ::madvise(const_cast<char*>(data_) + lo, hi - lo, MADV_DONTNEED);
  touched_ = false;
}

Result<void> EffectStore::set_present_split(std::uint32_t group, std::string_view identity, std::string_view head,
                                            std::uint64_t image_offset, std::size_t image_size,
                                            std::string_view tail) {
  Record& record = slot(group, identity);
  record.kind = EffectKind::present;
  record.count = 1;
  record.line_offset = arena_.append(head, tail);
  record.line_size = static_cast<std::uint32_t>(head.size() + tail.size());
  record.head_size = static_cast<std::uint32_t>(head.size());
  record.image_offset = image_offset;
  record.image_size = static_cast<std::uint32_t>(image_size);
  return maybe_spill();
}

void EffectStore::set_line(Record& record, std::string_view line) {
  if (record.image_size != 0) {
    // A split line's stored bytes are only its head and tail: never overwrite them in place.
    record.image_size = 0;
    record.head_size = 0;
    record.line_size = 0;
  }
  if (line.size() > record.line_size) {
    record.line_offset = arena_.append(line);
  } else if (!line.empty()) {
    std::memcpy(arena_.at(record.line_offset), line.data(), line.size());  // in place: the old line was longer
  }
  record.line_size = static_cast<std::uint32_t>(line.size());
}

Result<void> EffectStore::set_present(std::uint32_t group, std::string_view identity, std::string_view line) {
  Record& record = slot(group, identity);
  record.kind = EffectKind::present;
  record.count = 1;
  set_line(record, line);
  return maybe_spill();
}

Result<void> EffectStore::set_absent(std::uint32_t group, std::string_view identity) {
  Record& record = slot(group, identity);
  record.kind = EffectKind::absent;
  record.count = 0;
  record.line_size = 0;
  record.image_size = 0;
  record.head_size = 0;
  return maybe_spill();
}

Result<void> EffectStore::add_count(std::uint32_t group, std::string_view row, std::int64_t delta,
                                    std::string_view line) {
  Record& record = slot(group, row);
  record.kind = EffectKind::counted;
  record.count += delta;
  if (!line.empty()) set_line(record, line);
  return maybe_spill();
}

std::vector<std::uint32_t> EffectStore::sorted_records() const {
  // By group (the key's first 4 bytes), then identity bytes. Most comparisons are of integers:
  // the 8 bytes of each identity after the prefix all of them share (as `{"id":` is for a
  // table's keys), big-endian and zero-padded, which orders as the bytes do wherever they
  // differ; only equal ones compare the whole identities.
  struct Sortable {
    std::uint32_t group;
    std::uint32_t record;
    std::uint64_t bytes;  // of the identity, after the shared prefix
  };
  std::size_t shared = SIZE_MAX;
  std::string_view first;
  for (const Record& record : records_) {
    const std::string_view identity = key_of(record).substr(4);
    if (shared == SIZE_MAX) {
      first = identity;
      shared = identity.size();
      continue;
    }
    std::size_t common = 0;
    const std::size_t most = std::min(shared, identity.size());
    while (common < most && identity[common] == first[common]) ++common;
    shared = common;
  }
  std::vector<Sortable> sortable(records_.size());
  for (std::uint32_t r = 0; r < sortable.size(); ++r) {
    const std::string_view key = key_of(records_[r]);
    const std::string_view rest = key.substr(4 + shared);
    std::uint64_t bytes = 0;
    for (std::size_t i = 0; i < 8; ++i)
      bytes = (bytes << 8) | (i < rest.size() ? static_cast<unsigned char>(rest[i]) : 0U);
    sortable[r] = Sortable{get_group(key), r, bytes};
  }
  std::sort(sortable.begin(), sortable.end(), [&](const Sortable& a, const Sortable& b) {
    if (a.group != b.group) return a.group < b.group;
    if (a.bytes != b.bytes) return a.bytes < b.bytes;
    return key_of(records_[a.record]).substr(4) < key_of(records_[b.record]).substr(4);
  });
  std::vector<std::uint32_t> order(records_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = sortable[i].record;
  return order;
}

void EffectStore::clear_memory() {
  arena_.clear();
  records_.clear();
  std::fill(index_.begin(), index_.end(), 0);
}

Result<void> EffectStore::maybe_spill() {
  const std::uint64_t used =
      arena_.used() + records_.size() * (sizeof(Record) + 2 * sizeof(std::uint32_t)) +
      index_.size() * 8;
  if (used <= limit_ || records_.empty()) return {};
  return spill();
}

Result<void> EffectStore::spill() {
  const std::vector<std::uint32_t> order = sorted_records();
  auto file = temp_.create("run");
  if (!file) return fail(file.error());
  std::size_t next = 0;
  auto written = write_run(*file, [&](std::string& plain) {
    while (next < order.size() && plain.size() < (std::size_t{1} << 20)) {
      const Record& record = records_[order[next++]];
      const std::string_view stored(record.line_size == 0 ? nullptr : arena_.at(record.line_offset),
                                    record.line_size);
      append_run_record(plain, key_of(record), record.kind, record.count, stored, record.head_size, record.image_offset,
                    record.image_size);
    }
    return next < order.size();
  });
  if (!written) return written;
  temp_.close(*file);
  runs_.push_back(*file);
  clear_memory();
  if (index_.size() > 4096) index_ = {};  // a small limit needs no large index
  return {};
}

Result<void> EffectStore::merge_runs(std::size_t max_open_runs) {
  while (runs_.size() > max_open_runs) {
    std::vector<TempDir::File> merged;
    for (std::size_t first = 0; first < runs_.size(); first += max_open_runs) {
      const std::size_t last = std::min(runs_.size(), first + max_open_runs);
      if (last - first == 1) {
        merged.push_back(runs_[first]);
        continue;
      }
      std::vector<EffectSource> sources;
      for (std::size_t r = first; r < last; ++r) sources.push_back(run_source(runs_[r], source_, source_size_));
      auto merging = merge_sources(std::move(sources));
      if (!merging) return fail(merging.error());
      EffectCursor& cursor = **merging;
      auto file = temp_.create("run");
      if (!file) return fail(file.error());
      Result<void> status;
      std::string key;
      auto written = write_run(*file, [&](std::string& plain) {
        while (status && cursor.current() != nullptr && plain.size() < (std::size_t{1} << 20)) {
          const EffectEntry& entry = *cursor.current();
          key.clear();
          put_group(key, entry.group);
          key.append(entry.identity);
          const Effect& effect = entry.effect;
          append_run_record(plain, key, effect.kind, effect.count, effect.line, effect.head_size,
                        effect.image_size == 0 ? 0 : static_cast<std::uint64_t>(effect.image - source_),
                        effect.image_size);
          status = cursor.advance();
        }
        return status && cursor.current() != nullptr;
      });
      if (!status) return status;
      if (!written) return written;
      for (std::size_t r = first; r < last; ++r) temp_.remove(runs_[r]);
      temp_.close(*file);
      merged.push_back(*file);
    }
    runs_ = std::move(merged);
  }
  return {};
}

Result<void> EffectStore::finish_sources(std::size_t max_open_runs, std::vector<EffectSource>& sources) {
  // With runs on disk, the entries in memory become one more run, so that the output pass
  // holds only the runs' read buffers; and at most max_open_runs runs are read at once (merged
  // first, as many levels as it takes).
  if (!runs_.empty() && !records_.empty())
    if (auto spilled = spill(); !spilled) return spilled;
  if (!runs_.empty()) {
    arena_.release();
    records_ = {};
    index_ = {};
    if (auto merged = merge_runs(max_open_runs); !merged) return merged;
  }
  for (const TempDir::File& run : runs_) sources.push_back(run_source(run, source_, source_size_));
  // The entries still in memory are the latest run; they are handed out one by one, in key
  // order, from the arena (so memory does not double here).
  struct Memory {
    Arena arena;
    std::vector<Record> records;
    std::vector<std::uint32_t> order;
    std::size_t next = 0;
    const EffectStore* store = nullptr;
  };
  auto memory = std::make_shared<Memory>();
  memory->store = this;
  memory->order = sorted_records();
  memory->arena = std::move(arena_);
  memory->records = std::move(records_);
  records_ = {};
  index_ = {};
  sources.push_back([memory](EffectEntry& entry) -> Result<bool> {
    if (memory->next >= memory->order.size()) {
      memory->arena.release();
      memory->records = {};
      return false;
    }
    const Record& record = memory->records[memory->order[memory->next++]];
    const std::string_view key(memory->arena.at(record.key_offset), record.key_size);
    entry.group = get_group(key);
    entry.identity.assign(key.substr(4));
    entry.effect.kind = record.kind;
    entry.effect.count = record.count;
    Effect& effect = entry.effect;
    if (record.line_size == 0)
      effect.line.clear();
    else
      effect.line.assign(memory->arena.at(record.line_offset), record.line_size);
    effect.image = record.image_size == 0 ? nullptr : memory->store->source_ + record.image_offset;
    effect.image_size = record.image_size;
    effect.head_size = record.head_size;
    return true;
  });
  return {};
}

Result<std::unique_ptr<EffectCursor>> EffectStore::finish(std::span<EffectStore* const> stores) {
  std::vector<EffectSource> sources;
  const std::size_t max_open_runs = kMaxOpenRuns;
  for (EffectStore* store : stores)
    if (auto finished = store->finish_sources(max_open_runs, sources); !finished) return fail(finished.error());
  return merge_sources(std::move(sources));
}

}  // namespace cdc::merge
