#include "merge/effect_runs.h"

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <fmt/format.h>

#include <memory>
#include <queue>

#include "util/fd_io.h"
#include "util/unique_fd.h"

namespace cdc::merge {

namespace {

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

}  // namespace

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

// stored: the line, or with image_size > 0 its head (head_size bytes) and tail around the image
// at image_offset of the mapped deltas, which is read back only when the run is.
void append_run_record(std::string& plain, std::string_view key, EffectKind kind, std::int64_t count,
                       std::string_view stored, std::size_t head_size, std::uint64_t image_offset,
                       std::size_t image_size) {
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
Result<void> write_run(const TempDir::File& file, const std::function<bool(std::string&)>& fill) {
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

namespace {

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

EffectSource run_source(const TempDir::File& file, const char* source, std::size_t source_size) {
  auto reader = std::make_shared<RunReader>(file, source, source_size);
  return [reader](EffectEntry& entry) { return reader->read(entry); };
}

Result<std::unique_ptr<EffectCursor>> merge_sources(std::vector<EffectSource> sources) {
  auto cursor = std::make_unique<MergingCursor>(std::move(sources));
  if (auto started = cursor->start(); !started) return fail(started.error());
  return std::unique_ptr<EffectCursor>(std::move(cursor));
}

}  // namespace cdc::merge
