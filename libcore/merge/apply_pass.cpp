#include "merge/apply_pass.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <thread>

#include "merge/deltas.h"
#include "ndjson/json_scan.h"
#include "ndjson/line_reader.h"
#include "records/row.h"
#include "util/fd_io.h"

namespace cdc::merge {

void OutputTurn::wait_for(std::uint64_t ticket) {
  if (is(ticket)) return;
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return current_.load(std::memory_order_acquire) == ticket; });
}

void OutputTurn::pass_on(std::uint64_t ticket) {
  {
    const std::lock_guard lock(mutex_);
    current_.store(ticket + 1, std::memory_order_release);
  }
  changed_.notify_all();
}

OutputSink::OutputSink(int fd, std::string name) : fd_(fd), name_(std::move(name)) {
  buffer_.reserve(kFlushBytes + (std::size_t{1} << 16));
}

Result<void> OutputSink::flush() {
  flush_later_ = false;
  if (buffer_.empty()) return {};
  if (turn_ != nullptr && !turn_->is(ticket_)) {
    if (buffer_.size() < kHoldBytes) return {};  // held until the groups before are written
    turn_->wait_for(ticket_);
  }
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

  void build_index() {
    std::size_t size = 16;
    while (size < entries.size() * 2) size *= 2;
    slots.assign(size, 0);
    mask = size - 1;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const std::uint64_t h = hash_identity(entries[i].identity);
      for (std::uint64_t at = h & mask;; at = (at + 1) & mask) {
        if (slots[at] == 0) {
          slots[at] = (h & 0xFFFFFFFF00000000ULL) | (i + 1);
          break;
        }
      }
    }
  }
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

class RowIdentity {
 public:
  explicit RowIdentity(const TableInfo& table) : table_(table) {
    prefix_ = table.row_prefix;
  }

  // The identity text of an "r" line, or nullopt when the line lacks what it needs.
  std::optional<std::string_view> of(std::string_view line) {
    if (table_.identity_is_key) {
      // cdc-snapshot's lines start with the same bytes up to the key object.
      if (line.size() > prefix_.size() && ndjson::starts_with_bytes(line, prefix_)) {
        std::size_t end = prefix_.size();
        if (line[end] == '{' && ndjson::skip_json_value(line, end)) return line.substr(prefix_.size(), end - prefix_.size());
      }
      return ndjson::find_member(line, "\"key\"");
    }
    const auto after = after_of(line);
    if (!after) return std::nullopt;
    if (!table_.identity) return after;
    values_.assign(table_.quoted_identity.size(), {});
    ndjson::MemberScanner scanner(*after);
    std::string_view key;
    std::string_view value;
    while (scanner.next(key, value))
      for (std::size_t i = 0; i < table_.quoted_identity.size(); ++i)
        if (key == table_.quoted_identity[i]) values_[i] = value;
    for (const std::string_view v : values_)
      if (v.empty()) return std::nullopt;
    text_.clear();
    append_object(table_.quoted_identity, values_, text_);
    return std::string_view(text_);
  }

 private:
  std::optional<std::string_view> after_of(std::string_view line) const {
    if (line.size() > prefix_.size() && ndjson::starts_with_bytes(line, prefix_)) {
      std::size_t pos = prefix_.size();
      if (ndjson::skip_json_value(line, pos) && line.substr(pos, records::kRowBeforeAfter.size()) == records::kRowBeforeAfter) {
        const std::size_t start = pos + records::kRowBeforeAfter.size();
        std::size_t end = start;
        if (start < line.size() && line[start] == '{' && ndjson::skip_json_value(line, end))
          return line.substr(start, end - start);
      }
    }
    return ndjson::find_member(line, "\"after\"");
  }

  const TableInfo& table_;
  std::string prefix_;
  std::vector<std::string_view> values_;
  std::string text_;
};

// One pass over the rows of source, applying the slice; returns the rows written.
Result<std::uint64_t> pass(const Group& group, const std::vector<Segment>& source, Slice& slice,
                           std::span<const char> deltas, OutputSink& out) {
  std::uint64_t rows = 0;
  MappedPages pages(deltas.data(), deltas.size());
  RowIdentity identity(*group.table);
  const bool apply = !slice.entries.empty();
  for (const Segment& segment : source) {
    ndjson::LineReader reader(segment.fd, segment.name, segment.begin, segment.end, segment.first_line);
    for (;;) {
      auto more = reader.next();
      if (!more) return fail(more.error());
      if (!*more) break;
      const std::string_view line = reader.line();
      if (line.empty() || ndjson::trim_json_space(line).empty()) continue;
      if (apply) {
        const auto id = identity.of(line);
        if (!id)
          return fail(reader.error_here(fmt::format("an op:\"r\" line of {}.{} without its {}: not cdc-snapshot output",
                                                    group.table->db, group.table->table,
                                                    group.table->identity_is_key ? "\"key\" object"
                                                                                 : "\"after\" row or identity columns")));
        if (slice.owns(*id)) {
          if (const std::int64_t hit = slice.find(*id); hit >= 0) {
            Effect& effect = slice.entries[static_cast<std::size_t>(hit)].effect;
            char& used = slice.used[static_cast<std::size_t>(hit)];
            if (effect.kind == EffectKind::absent) continue;
            if (effect.kind == EffectKind::present) {
              if (!used) {
                used = 1;
                out.append(effect);
                pages.read(effect);
                ++rows;
              }
              continue;
            }
            if (effect.count < 0) {  // counted: this copy was deleted
              ++effect.count;
              continue;
            }
          }
        }
      }
      // The line and its '\n' in one copy, unless the reader dropped a '\r' or the input ends
      // without one.
      if (reader.terminated() && line.data()[line.size()] == '\n') {
        out.append(std::string_view(line.data(), line.size() + 1));
      } else {
        out.append(line);
        out.append("\n");
      }
      ++rows;
      if (auto flushed = out.maybe_flush(); !flushed) return fail(flushed.error());
    }
  }
  for (std::size_t i = 0; i < slice.entries.size(); ++i) {
    const Effect& effect = slice.entries[i].effect;
    if (effect.kind == EffectKind::present && !slice.used[i]) {
      out.append(effect);
      pages.read(effect);
      ++rows;
    } else if (effect.kind == EffectKind::counted) {
      for (std::int64_t n = 0; n < effect.count; ++n) {
        out.append(effect);
        pages.read(effect);
        ++rows;
      }
    }
    if (auto flushed = out.maybe_flush(); !flushed) return fail(flushed.error());
  }
  return rows;
}

}  // namespace

namespace {

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
    source = {Segment{file->fd, file->path, 0, UINT64_MAX, 1}};
    lo = slice.hi;
  }
  if (previous) temp.remove(*previous);
  return result;
}

// One group for a worker of write_groups: its index (also its turn's ticket) and its effects.
struct GroupJob {
  std::size_t index = 0;
  Slice slice;
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
  // Workers write straight to the fd, in turn: what out holds goes first.
  if (auto flushed = out.flush(); !flushed) return fail(flushed.error());
  OutputTurn turn;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::unique_ptr<GroupJob>> queue;
  std::size_t outstanding = 0;  // jobs queued or being done: their effects are in memory
  bool closing = false;
  std::atomic<bool> failed{false};
  std::optional<std::pair<std::size_t, Error>> failure;  // the first group's error, by group order
  const auto record = [&](std::size_t index, const Result<GroupResult>& written) {
    const std::lock_guard lock(mutex);
    if (written) {
      total.rows += written->rows;
      total.passes += written->passes;
      return;
    }
    failed = true;
    if (!failure || index < failure->first) failure.emplace(index, written.error());
  };
  const auto work = [&] {
    OutputSink sink(out.fd(), out.name());  // one buffer for all of this worker's groups
    for (;;) {
      std::unique_ptr<GroupJob> job;
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return closing || !queue.empty(); });
        if (queue.empty()) return;
        job = std::move(queue.front());
        queue.pop_front();
      }
      const std::size_t g = job->index;
      Result<GroupResult> written = GroupResult{};
      if (!failed) {
        sink.take_turn(turn, g);
        sink.append(before[g]);
        auto rows = pass(groups[g], groups[g].segments, job->slice, deltas, sink);
        turn.wait_for(g);
        if (!rows) {
          written = fail(rows.error());
        } else if (auto flushed = sink.flush(); !flushed) {
          written = fail(flushed.error());
        } else {
          written = GroupResult{*rows, 1};
        }
      }
      job.reset();
      turn.wait_for(g);
      record(g, written);
      {
        const std::lock_guard lock(mutex);
        --outstanding;
      }
      turn.pass_on(g);
      changed.notify_all();
    }
  };
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) workers.emplace_back(work);
  const std::uint64_t job_limit = std::max<std::uint64_t>(memory_limit / threads, 1);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    {
      std::unique_lock lock(mutex);
      changed.wait(lock, [&] { return outstanding < threads || failed; });
    }
    if (failed) break;
    auto job = std::make_unique<GroupJob>();
    job->index = g;
    Result<void> loaded = skip_to(groups[g], cursor);
    if (loaded) loaded = load_slice(groups[g].id, cursor, job_limit, job->slice);
    if (!loaded || job->slice.hi) {
      // An error, or effects that do not fit one job: alone, in passes, once the groups
      // before it are written.
      turn.wait_for(g);
      if (failed) break;
      Result<GroupResult> written = loaded ? Result<GroupResult>(GroupResult{}) : fail(loaded.error());
      if (loaded) {
        out.append(before[g]);
        written = write_group_passes(groups[g], cursor, memory_limit, deltas, temp, out, std::move(job->slice));
        if (written)
          if (auto flushed = out.flush(); !flushed) written = fail(flushed.error());
      }
      record(g, written);
      turn.pass_on(g);
      if (!written) break;
      continue;
    }
    {
      const std::lock_guard lock(mutex);
      queue.push_back(std::move(job));
      ++outstanding;
    }
    changed.notify_all();
  }
  {
    const std::lock_guard lock(mutex);
    closing = true;
  }
  changed.notify_all();
  for (std::thread& worker : workers) worker.join();
  if (failure) return fail(std::move(failure->second));
  return total;
}

}  // namespace cdc::merge
