#include "merge/apply_pass.h"

#include <fmt/format.h>

#include <cstring>
#include <optional>

#include "merge/deltas.h"
#include "ndjson/json_scan.h"
#include "ndjson/line_reader.h"
#include "records/row.h"
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
Result<std::uint64_t> pass(const Group& group, const std::vector<Segment>& source, Slice& slice, OutputSink& out) {
  std::uint64_t rows = 0;
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
                out.append(effect.line);
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
      out.append(effect.line);
      ++rows;
    } else if (effect.kind == EffectKind::counted) {
      for (std::int64_t n = 0; n < effect.count; ++n) {
        out.append(effect.line);
        ++rows;
      }
    }
    if (auto flushed = out.maybe_flush(); !flushed) return fail(flushed.error());
  }
  return rows;
}

}  // namespace

Result<GroupResult> write_group(const Group& group, EffectCursor& cursor, std::uint64_t memory_limit, TempDir& temp,
                                OutputSink& out) {
  GroupResult result;
  // Skip entries of groups that are not written (none are expected: every group is written).
  while (const EffectEntry* entry = cursor.current()) {
    if (entry->group >= group.id) break;
    if (auto moved = cursor.advance(); !moved) return fail(moved.error());
  }
  std::vector<Segment> source = group.segments;
  std::optional<TempDir::File> previous;
  std::optional<std::string> lo;
  for (;;) {
    Slice slice;
    slice.lo = lo;
    if (auto loaded = load_slice(group.id, cursor, memory_limit, slice); !loaded) return fail(loaded.error());
    const bool last = !slice.hi;
    ++result.passes;
    if (last) {
      auto rows = pass(group, source, slice, out);
      if (!rows) return fail(rows.error());
      result.rows = *rows;
      break;
    }
    auto file = temp.create("pass");
    if (!file) return fail(file.error());
    OutputSink sink(file->fd, file->path);
    auto rows = pass(group, source, slice, sink);
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

}  // namespace cdc::merge
