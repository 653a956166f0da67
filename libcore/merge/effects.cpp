#include "merge/effects.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <new>
#include <queue>

#include "util/fd_io.h"
#include "util/unique_fd.h"

namespace cdc::merge {

namespace {

constexpr std::size_t kEntryOverhead = 128;  // an EffectEntry in a slice (two std::string headers, the image), index

void put_group(std::string& key, std::uint32_t group) {
  key.push_back(static_cast<char>(group >> 24));
  key.push_back(static_cast<char>(group >> 16));
  key.push_back(static_cast<char>(group >> 8));
  key.push_back(static_cast<char>(group));
}

std::uint32_t get_group(std::string_view key) {
  return (std::uint32_t{static_cast<unsigned char>(key[0])} << 24) |
         (std::uint32_t{static_cast<unsigned char>(key[1])} << 16) |
         (std::uint32_t{static_cast<unsigned char>(key[2])} << 8) | std::uint32_t{static_cast<unsigned char>(key[3])};
}

void put_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// Combines a later state of the same key into an earlier one.
void combine(Effect& earlier, Effect&& later) {
  if (later.kind == EffectKind::counted && earlier.kind == EffectKind::counted) {
    earlier.count += later.count;
    if (!later.line.empty() || later.image_size != 0) {
      earlier.line = std::move(later.line);
      earlier.image = later.image;
      earlier.image_size = later.image_size;
      earlier.head_size = later.head_size;
    }
    return;
  }
  earlier = std::move(later);
}

// stored: the line, or with image_size > 0 its head (head_size bytes) and tail around the image
// at image_offset of the mapped deltas, which is read back only when the run is.
void append_record(std::string& plain, std::string_view key, EffectKind kind, std::int64_t count,
                   std::string_view stored, std::size_t head_size = 0, std::uint64_t image_offset = 0,
                   std::size_t image_size = 0) {
  put_varint(plain, key.size());
  plain.append(key);
  plain.push_back(static_cast<char>(kind));
  put_varint(plain, (static_cast<std::uint64_t>(count) << 1) ^ static_cast<std::uint64_t>(count >> 63));
  put_varint(plain, stored.size());
  plain.append(stored);
  put_varint(plain, image_size);
  if (image_size == 0) return;
  put_varint(plain, head_size);
  put_varint(plain, image_offset);
}

// One spilled run: records of (key, kind, count, line) through a zstd stream.
//   varint key size, key bytes, kind byte, varint zigzag count, varint stored size, stored
//   bytes, varint image size, and when it is not 0: varint head size, varint image offset.
// A line whose image is in the mapped deltas is stored as its head and tail only: runs are a
// fifth of the size, and the image is copied once, when the run is read back.
// fill(plain) appends records to plain and returns false when there are no more.
template <typename Fill>
Result<void> write_run(const TempDir::File& file, Fill fill) {
  std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
  if (!cctx) return fail(Errc::internal, "zstd: cannot create a compression context");
  // A fast negative level: runs are written once and read once, soon, from the page cache;
  // level 1 packs them twice as tight but costs a tenth of a small-limit merge's time.
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, -3);
  // A small window keeps each reader's decoder small (runs are read many at once).
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_windowLog, 16);
  std::string plain;
  std::string packed(ZSTD_CStreamOutSize(), '\0');
  for (bool more = true; more;) {
    more = fill(plain);
    const ZSTD_EndDirective mode = more ? ZSTD_e_continue : ZSTD_e_end;
    ZSTD_inBuffer in{plain.data(), plain.size(), 0};
    for (;;) {
      ZSTD_outBuffer out{packed.data(), packed.size(), 0};
      const std::size_t left = ZSTD_compressStream2(cctx.get(), &out, &in, mode);
      if (ZSTD_isError(left)) return fail(Errc::internal, fmt::format("zstd: {}", ZSTD_getErrorName(left)));
      if (auto wrote = write_all(file.fd, std::string_view(packed.data(), out.pos), file.path); !wrote) return wrote;
      if (mode == ZSTD_e_end ? left == 0 : in.pos == in.size) break;
    }
    plain.clear();
  }
  return {};
}

// Reads one run through small buffers: up to kMaxOpenRuns are open at once in the output pass.
class RunReader {
 public:
  static constexpr std::size_t kReadBytes = std::size_t{32} << 10;

  // source: the mapped deltas the images are read back from (see append_record).
  RunReader(const TempDir::File& file, const char* source, std::size_t source_size)
      : file_(file),
        dctx_(ZSTD_createDCtx(), ZSTD_freeDCtx),
        packed_(kReadBytes, '\0'),
        source_(source),
        source_size_(source_size) {}

  // false at the end of the run. A record is parsed once all of it is decompressed (most are
  // a hundred bytes or so: kRecordBytes are asked for first, more for a longer one).
  Result<bool> read(EffectEntry& entry) {
    for (std::size_t want = kRecordBytes;;) {
      auto have = fill(want);
      if (!have) return fail(have.error());
      if (*have == 0) return false;
      bool damaged = false;
      const std::size_t length = parse(std::string_view(plain_.data() + pos_, *have), entry, damaged);
      if (length > 0) {
        pos_ += length;
        return true;
      }
      if (damaged || *have < want) return corrupt();  // not a record, or the run ends inside it
      want *= 2;
    }
  }

 private:
  static constexpr std::size_t kRecordBytes = 512;

  Unexpected corrupt() const { return fail(Errc::internal, fmt::format("{}: spill run is damaged", file_.path)); }

  // The record at the start of bytes (write_run's format), into entry: its length, or 0 when
  // bytes end inside it, or when it is not a record (damaged is set then).
  std::size_t parse(std::string_view bytes, EffectEntry& entry, bool& damaged) const {
    std::size_t at = 0;
    bool short_of_bytes = false;
    const auto varint = [&]() -> std::uint64_t {
      std::uint64_t value = 0;
      for (int shift = 0; shift < 64; shift += 7) {
        if (at >= bytes.size()) {
          short_of_bytes = true;
          return 0;
        }
        const auto byte = static_cast<unsigned char>(bytes[at++]);
        value |= std::uint64_t{byte & 0x7fU} << shift;
        if ((byte & 0x80U) == 0) return value;
      }
      damaged = true;
      return 0;
    };
    const auto take = [&](std::uint64_t n) -> std::string_view {
      if (short_of_bytes || damaged || n > bytes.size() - at) {
        short_of_bytes = true;
        return {};
      }
      const std::string_view taken = bytes.substr(at, static_cast<std::size_t>(n));
      at += static_cast<std::size_t>(n);
      return taken;
    };
    const std::string_view key = take(varint());
    const std::string_view kind = take(1);
    const std::uint64_t zigzag = varint();
    const std::string_view stored = take(varint());
    const std::uint64_t image_size = varint();
    std::uint64_t head_size = 0;
    std::uint64_t image_offset = 0;
    if (image_size != 0) {
      head_size = varint();
      image_offset = varint();
    }
    if (damaged) return 0;
    if (short_of_bytes) return 0;
    if (key.size() < 4 ||
        (image_size != 0 && (head_size > stored.size() || source_ == nullptr || image_offset > source_size_ ||
                             image_size > source_size_ - image_offset || image_size > UINT32_MAX))) {
      damaged = true;
      return 0;
    }
    entry.group = get_group(key);
    entry.identity.assign(key.substr(4));
    entry.effect.kind = static_cast<EffectKind>(kind[0]);
    entry.effect.count = static_cast<std::int64_t>(zigzag >> 1) ^ -static_cast<std::int64_t>(zigzag & 1);
    entry.effect.line.assign(stored);
    entry.effect.image = image_size == 0 ? nullptr : source_ + image_offset;
    entry.effect.image_size = static_cast<std::uint32_t>(image_size);
    entry.effect.head_size = static_cast<std::uint32_t>(head_size);
    return at;
  }

  // Up to n decompressed bytes from pos_ on, fewer only at the end of the run: how many there
  // are.
  Result<std::size_t> fill(std::size_t n) {
    while (filled_ - pos_ < n) {
      if (pos_ > 0) {
        std::memmove(plain_.data(), plain_.data() + pos_, filled_ - pos_);
        filled_ -= pos_;
        pos_ = 0;
      }
      if (in_.pos == in_.size && !output_pending_) {
        if (eof_) break;
        auto got = pread_some();
        if (!got) return fail(got.error());
        if (*got == 0) {
          eof_ = true;
          continue;
        }
      }
      // Room for a read's worth, grown (never shrunk) for a record longer than that.
      if (plain_.size() < std::max(filled_ + kReadBytes, n)) plain_.resize(std::max(filled_ + kReadBytes, n));
      ZSTD_outBuffer out{plain_.data() + filled_, plain_.size() - filled_, 0};
      const std::size_t rc = ZSTD_decompressStream(dctx_.get(), &out, &in_);
      if (ZSTD_isError(rc)) return corrupt();
      filled_ += out.pos;
      // A full output buffer may leave decompressed bytes inside zstd.
      output_pending_ = out.pos == out.size;
    }
    return std::min(n, filled_ - pos_);
  }

  Result<std::size_t> pread_some() {
    if (!fd_.valid()) {
      // Opened on the first read: a run is closed once written (TempDir::close).
      fd_ = UniqueFd(::open(file_.path.c_str(), O_RDONLY | O_CLOEXEC));
      if (!fd_.valid()) return fail(Errc::io, fmt::format("cannot open {}: {}", file_.path, std::strerror(errno)));
    }
    for (;;) {
      const ssize_t got = ::pread(fd_.get(), packed_.data(), packed_.size(), static_cast<off_t>(offset_));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return fail(Errc::io, fmt::format("{}: read failed: {}", file_.path, std::strerror(errno)));
      offset_ += static_cast<std::uint64_t>(got);
      in_ = ZSTD_inBuffer{packed_.data(), static_cast<std::size_t>(got), 0};
      return static_cast<std::size_t>(got);
    }
  }

  TempDir::File file_;
  UniqueFd fd_;  // the run, open while it is read
  std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> dctx_;
  std::string packed_;
  const char* source_;
  std::size_t source_size_;
  ZSTD_inBuffer in_{nullptr, 0, 0};
  std::uint64_t offset_ = 0;
  bool eof_ = false;
  bool output_pending_ = false;
  std::string plain_;  // decompressed: [pos_, filled_) not read yet
  std::size_t pos_ = 0;
  std::size_t filled_ = 0;
};

// Merges the spilled runs and the sorted in-memory entries, in order: a later source wins.
class MergingCursor final : public EffectCursor {
 public:
  // One source of sorted entries: the next into the argument, false at its end.
  using Source = EffectSource;
  explicit MergingCursor(std::vector<Source> sources) : sources_(std::move(sources)) {
    heads_.resize(sources_.size());
  }
  // A source reading one run; source: the mapped deltas its images are in (nullptr: none).
  static Source run_source(const TempDir::File& file, const char* source, std::size_t source_size) {
    auto reader = std::make_shared<RunReader>(file, source, source_size);
    return [reader](EffectEntry& entry) { return reader->read(entry); };
  }

  Result<void> start() {
    for (std::size_t r = 0; r < sources_.size(); ++r)
      if (auto pulled = pull(r); !pulled) return pulled;
    return advance();
  }

  const EffectEntry* current() const noexcept override { return has_current_ ? &current_ : nullptr; }
  EffectEntry& mutable_current() noexcept override { return current_; }

  Result<void> advance() override {
    has_current_ = false;
    if (queue_.empty()) return {};
    std::size_t source = queue_.top();
    queue_.pop();
    current_ = std::move(heads_[source]);
    has_current_ = true;
    if (auto pulled = pull(source); !pulled) return pulled;
    while (!queue_.empty() && same_key(heads_[queue_.top()], current_)) {
      source = queue_.top();
      queue_.pop();
      combine(current_.effect, std::move(heads_[source].effect));
      if (auto pulled = pull(source); !pulled) return pulled;
    }
    return {};
  }

 private:
  static bool same_key(const EffectEntry& a, const EffectEntry& b) {
    return a.group == b.group && a.identity == b.identity;
  }
  // Loads the next entry of source into heads_ and queues it.
  Result<void> pull(std::size_t source) {
    auto read = sources_[source](heads_[source]);
    if (!read) return fail(read.error());
    if (*read) queue_.push(source);
    return {};
  }

  struct Later {
    const MergingCursor* self;
    // priority_queue pops the largest: "larger" = later key, or same key from a later run.
    bool operator()(std::size_t a, std::size_t b) const {
      const EffectEntry& x = self->heads_[a];
      const EffectEntry& y = self->heads_[b];
      if (x.group != y.group) return x.group > y.group;
      if (const int order = x.identity.compare(y.identity); order != 0) return order > 0;
      return a > b;
    }
  };

  std::vector<Source> sources_;
  std::vector<EffectEntry> heads_;
  std::priority_queue<std::size_t, std::vector<std::size_t>, Later> queue_{Later{this}};
  EffectEntry current_;
  bool has_current_ = false;
};

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
      append_record(plain, key_of(record), record.kind, record.count, stored, record.head_size, record.image_offset,
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
      std::vector<MergingCursor::Source> sources;
      for (std::size_t r = first; r < last; ++r)
        sources.push_back(MergingCursor::run_source(runs_[r], source_, source_size_));
      MergingCursor cursor(std::move(sources));
      if (auto started = cursor.start(); !started) return started;
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
          append_record(plain, key, effect.kind, effect.count, effect.line, effect.head_size,
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
  for (const TempDir::File& run : runs_) sources.push_back(MergingCursor::run_source(run, source_, source_size_));
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
  auto cursor = std::make_unique<MergingCursor>(std::move(sources));
  if (auto started = cursor->start(); !started) return fail(started.error());
  return std::unique_ptr<EffectCursor>(std::move(cursor));
}

}  // namespace cdc::merge
