#include "merge/apply_pass.h"

#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "util/fd_io.h"

namespace cdc::merge {

OutputSink::OutputSink(int fd, std::string name) : fd_(fd), name_(std::move(name)) {
  buffer_.reserve(kFlushBytes + (std::size_t{1} << 16));
}

Result<void> OutputSink::flush() {
  flush_later_ = false;
  if (buffer_.empty()) return {};
  if (converter_ != nullptr) {
    auto converted = output::convert_lines(*converter_, buffer_, converted_);
    buffer_.clear();
    if (!converted) return converted;
    return converted_.flush_to(fd_, name_);
  }
  auto wrote = write_all(fd_, buffer_, name_);
  buffer_.clear();
  return wrote;
}

Result<void> OutputSink::finish() {
  if (auto flushed = flush(); !flushed) return flushed;
  if (converter_ == nullptr) return {};
  if (auto finished = converter_->finish(converted_); !finished) return finished;
  return converted_.flush_to(fd_, name_);
}

namespace {

// Loads entries of the group until the limit (at least one entry).
Result<void> load_slice(std::uint32_t group, EffectCursor& cursor, std::uint64_t limit, Slice& slice) {
  std::uint64_t used = 0;
  while (const EffectEntry* entry = cursor.current()) {
    if (entry->group != group) break;
    const std::uint64_t cost = effect_cost(entry->identity.size(), entry->effect.line.size());
    if (!slice.entries.empty() && used + cost > limit) break;
    used += cost;
    slice.entries.push_back(std::move(cursor.mutable_current()));
    if (auto moved = cursor.advance(); !moved) return moved;
  }
  if (const EffectEntry* entry = cursor.current(); entry != nullptr && entry->group == group)
    slice.hi = entry->identity;
  slice.used.assign(slice.entries.size(), 0);
  slice.build_index();
  return {};
}

// One pass over the rows of source, applying the slice; returns the rows written.
Result<std::uint64_t> pass(const Group& group, const std::vector<Segment>& source, Slice& slice,
                           std::span<const char> deltas, OutputSink& out) {
  std::uint64_t rows = 0;
  MappedPages pages(deltas.data(), deltas.size());
  GatherWriter gather(out, pages);
  RowBlock block;
  for (const Segment& segment : source) {
    for (std::uint64_t from = segment.begin; from < segment.end; from += RowBlock::kBytes) {
      if (auto read = block.read(segment, from, from + RowBlock::kBytes, *group.table, &slice); !read)
        return fail(read.error());
      rows += block.write(&slice, gather);
      if (auto wrote = gather.flush(); !wrote) return fail(wrote.error());
    }
  }
  rows += write_added_rows(slice, gather);
  if (auto wrote = gather.flush(); !wrote) return fail(wrote.error());
  return rows;
}

// Skips the entries of groups before this one (none are expected: every group is written).
Result<void> skip_to(const Group& group, EffectCursor& cursor) {
  while (const EffectEntry* entry = cursor.current()) {
    if (entry->group >= group.id) break;
    if (auto moved = cursor.advance(); !moved) return moved;
  }
  return {};
}

// write_group after skip_to, its first slice already loaded when first is given.
Result<GroupResult> write_group_passes(const Group& group, EffectCursor& cursor, std::uint64_t memory_limit,
                                       std::span<const char> deltas, TempDir& temp, OutputSink& out,
                                       std::optional<Slice> first) {
  GroupResult result;
  std::vector<Segment> source = group.segments;
  std::optional<TempDir::File> previous;
  std::optional<std::string> lo;
  for (;;) {
    Slice slice;
    if (first) {
      slice = std::move(*first);
      first.reset();
    } else {
      slice.lo = lo;
      if (auto loaded = load_slice(group.id, cursor, memory_limit, slice); !loaded) return fail(loaded.error());
    }
    const bool last = !slice.hi;
    ++result.passes;
    if (last) {
      auto rows = pass(group, source, slice, deltas, out);
      if (!rows) return fail(rows.error());
      result.rows = *rows;
      break;
    }
    auto file = temp.create("pass");
    if (!file) return fail(file.error());
    OutputSink sink(file->fd, file->path);
    auto rows = pass(group, source, slice, deltas, sink);
    if (!rows) return fail(rows.error());
    if (auto flushed = sink.flush(); !flushed) return fail(flushed.error());
    if (previous) temp.remove(*previous);
    previous = *file;
    struct stat written {};
    if (::fstat(file->fd, &written) != 0) return errno_error("cannot read the size of", file->path);
    source = {Segment{file->fd, file->path, 0, static_cast<std::uint64_t>(written.st_size), 1}};
    lo = slice.hi;
  }
  if (previous) temp.remove(*previous);
  return result;
}

// A group whose blocks the workers of write_groups read: its effects, and where its next
// block starts.
struct GroupWork {
  std::size_t index = 0;  // into the groups
  Slice slice;
  std::size_t segment = 0;
  std::uint64_t from = 0;
  bool started = false;  // a block of it was handed out
  std::uint64_t rows = 0;
};

// The output of write_groups with threads: workers take the next block of the groups queued
// (add), read it, and the one whose block is next in output order writes it, then any read
// after it. At most kSlotsPerWorker blocks a worker are read ahead of the one being written.
class ParallelOutput {
 public:
  ParallelOutput(std::span<const Group> groups, std::span<const std::string> before, std::span<const char> deltas,
                 OutputSink& out, unsigned threads)
      : groups_(groups),
        before_(before),
        pages_(deltas.data(), deltas.size()),
        gather_(out, pages_),
        threads_(threads),
        slots_(std::size_t{threads} * kSlotsPerWorker) {
    for (unsigned t = 0; t < threads; ++t) workers_.emplace_back([this] { work(); });
  }
  ParallelOutput(const ParallelOutput&) = delete;
  ParallelOutput& operator=(const ParallelOutput&) = delete;
  ~ParallelOutput() { stop(); }

  // Waits until fewer than threads groups hold their effects; false once a write failed.
  bool wait_for_room() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return failed_ || in_memory_.size() < threads_; });
    return !failed_;
  }
  // Waits until every group added is written (out is then free for the caller); false once a
  // write failed.
  bool wait_until_written() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return failed_ || (in_memory_.empty() && !writing_); });
    return !failed_;
  }
  void add(std::unique_ptr<GroupWork> work) {
    {
      const std::lock_guard lock(mutex_);
      const std::vector<Segment>& segments = groups_[work->index].segments;
      work->from = segments.front().begin;
      claimable_.push_back(work.get());
      in_memory_.push_back(std::move(work));
    }
    changed_.notify_all();
  }
  // A group written by the caller, in turn (after wait_until_written).
  void record(const Result<GroupResult>& written) {
    const std::lock_guard lock(mutex_);
    if (written) {
      total_.rows += written->rows;
      total_.passes += written->passes;
    } else if (!failed_) {
      failed_ = true;
      failure_ = written.error();
    }
  }
  // Waits for the workers to write everything added.
  Result<GroupResult> finish() {
    stop();
    if (failed_) return fail(failure_);
    return total_;
  }

 private:
  static constexpr std::size_t kSlotsPerWorker = 2;

  // A block read by a worker, waiting for its turn to be written.
  struct Slot {
    RowBlock block;
    GroupWork* group = nullptr;
    bool first = false;  // the group's first block: its bytes in before go first
    bool last = false;   // the group's last block: its added rows follow, then its effects go
    Result<void> read;
    bool ready = false;
  };

  void stop() {
    {
      const std::lock_guard lock(mutex_);
      closing_ = true;
    }
    changed_.notify_all();
    for (std::thread& worker : workers_) worker.join();
    workers_.clear();
  }

  // Under the lock: the next block of the first group with blocks left, into slot.
  void claim(Slot& slot, const Segment*& segment, std::uint64_t& from, std::uint64_t& to) {
    GroupWork& work = *claimable_.front();
    const std::vector<Segment>& segments = groups_[work.index].segments;
    const auto skip_done = [&] {
      while (work.segment < segments.size() && work.from >= segments[work.segment].end)
        if (++work.segment < segments.size()) work.from = segments[work.segment].begin;
    };
    skip_done();
    segment = nullptr;
    from = to = 0;
    if (work.segment < segments.size()) {
      segment = &segments[work.segment];
      from = work.from;
      to = std::min(segment->end, from + RowBlock::kBytes);
      work.from = to;
      skip_done();
    }
    slot.group = &work;
    slot.first = !work.started;
    slot.last = work.segment >= segments.size();
    slot.ready = false;
    work.started = true;
    if (slot.last) claimable_.pop_front();
  }

  void work() {
    for (;;) {
      Slot* slot = nullptr;
      const Segment* segment = nullptr;
      std::uint64_t from = 0;
      std::uint64_t to = 0;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] {
          return failed_ || (!claimable_.empty() && claimed_ < written_ + slots_.size()) ||
                 (closing_ && claimable_.empty());
        });
        if (failed_ || claimable_.empty()) return;
        slot = &slots_[claimed_ % slots_.size()];
        ++claimed_;
        claim(*slot, segment, from, to);
      }
      const TableInfo& table = *groups_[slot->group->index].table;
      slot->read = segment != nullptr ? slot->block.read(*segment, from, to, table, &slot->group->slice)
                                      : slot->block.read(Segment{}, 0, 0, table, nullptr);
      {
        const std::lock_guard lock(mutex_);
        slot->ready = true;
        if (writing_ || slot != &slots_[written_ % slots_.size()]) continue;
        writing_ = true;
      }
      write_ready();
    }
  }

  // Writes the blocks that are next in order and read, until one is not read yet.
  void write_ready() {
    for (;;) {
      Slot& slot = slots_[written_ % slots_.size()];
      GroupWork& group = *slot.group;
      Result<void> status = slot.read;
      if (status) {
        if (slot.first) gather_.add(before_[group.index]);
        group.rows += slot.block.write(&group.slice, gather_);
        if (slot.last) group.rows += write_added_rows(group.slice, gather_);
        status = gather_.flush();
      }
      std::unique_ptr<GroupWork> done;  // freed after the lock
      const std::lock_guard lock(mutex_);
      if (!status) {
        if (!failed_) failure_ = status.error();
        failed_ = true;
        writing_ = false;
        changed_.notify_all();
        return;
      }
      if (slot.last) {
        total_.rows += group.rows;
        ++total_.passes;
        done = std::move(in_memory_.front());
        in_memory_.pop_front();
      }
      slot.ready = false;
      ++written_;
      changed_.notify_all();
      if (!slots_[written_ % slots_.size()].ready) {
        writing_ = false;
        return;
      }
    }
  }

  std::span<const Group> groups_;
  std::span<const std::string> before_;
  MappedPages pages_;     // the writer's
  GatherWriter gather_;   // the writer's
  unsigned threads_;
  std::vector<Slot> slots_;  // block n in slots_[n % size]
  std::vector<std::thread> workers_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<GroupWork>> in_memory_;  // groups added and not written whole
  std::deque<GroupWork*> claimable_;                  // groups with blocks not handed out
  std::uint64_t claimed_ = 0;                         // blocks handed out
  std::uint64_t written_ = 0;                         // blocks written
  bool writing_ = false;                              // a worker is writing blocks
  bool closing_ = false;
  bool failed_ = false;
  Error failure_;
  GroupResult total_;
};

}  // namespace

Result<GroupResult> write_group(const Group& group, EffectCursor& cursor, std::uint64_t memory_limit,
                                std::span<const char> deltas, TempDir& temp, OutputSink& out) {
  if (auto skipped = skip_to(group, cursor); !skipped) return fail(skipped.error());
  return write_group_passes(group, cursor, memory_limit, deltas, temp, out, std::nullopt);
}

Result<GroupResult> write_groups(std::span<const Group> groups, std::span<const std::string> before,
                                 EffectCursor& cursor, std::uint64_t memory_limit, std::span<const char> deltas,
                                 TempDir& temp, OutputSink& out, unsigned threads) {
  GroupResult total;
  if (threads <= 1 || groups.size() <= 1 || out.has_converter()) {
    for (std::size_t g = 0; g < groups.size(); ++g) {
      out.append(before[g]);
      auto written = write_group(groups[g], cursor, memory_limit, deltas, temp, out);
      if (!written) return fail(written.error());
      total.rows += written->rows;
      total.passes += written->passes;
    }
    return total;
  }
  // The workers write straight to the fd: what out holds goes first.
  if (auto flushed = out.flush(); !flushed) return fail(flushed.error());
  ParallelOutput output(groups, before, deltas, out, threads);
  const std::uint64_t group_limit = std::max<std::uint64_t>(memory_limit / threads, 1);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (!output.wait_for_room()) break;
    auto work = std::make_unique<GroupWork>();
    work->index = g;
    Result<void> loaded = skip_to(groups[g], cursor);
    if (loaded) loaded = load_slice(groups[g].id, cursor, group_limit, work->slice);
    if (loaded && !work->slice.hi) {
      output.add(std::move(work));
      continue;
    }
    // An error, or effects that do not fit one group's share: alone, in passes, once the
    // groups before it are written.
    if (!output.wait_until_written()) break;
    Result<GroupResult> written = loaded ? Result<GroupResult>(GroupResult{}) : fail(loaded.error());
    if (loaded) {
      out.append(before[g]);
      written = write_group_passes(groups[g], cursor, memory_limit, deltas, temp, out, std::move(work->slice));
      if (written)
        if (auto flushed = out.flush(); !flushed) written = fail(flushed.error());
    }
    output.record(written);
    if (!written) break;
  }
  return output.finish();
}

}  // namespace cdc::merge
