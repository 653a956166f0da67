// MysqlGtidSet: values, canonical text, set algebra. The text parser is in
// mysql_gtid_text.cpp, the binary form in mysql_gtid_binary.cpp.

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "gtid/mysql_gtid_set.h"
#include "gtid/text_helpers.h"

namespace cdc::gtid {

namespace {

using Intervals = MysqlGtidSet::Intervals;

using detail::is_tag_char;
using detail::is_tag_start;

// Intervals hold end <= kMaxGno < UINT64_MAX, so end + 1 never overflows.
bool touches_or_overlaps(const Interval& left, const Interval& right) noexcept {
  return right.start <= left.end + 1;  // left.start <= right.start
}

// Adds one interval to a canonical list, merging what it overlaps or touches.
void add_interval(Intervals& list, Interval interval) {
  // First interval that could merge: its end reaches interval.start - 1.
  auto first = std::partition_point(list.begin(), list.end(),
                                    [&](const Interval& x) { return x.end + 1 < interval.start; });
  auto last = first;
  while (last != list.end() && last->start <= interval.end + 1) {
    interval.start = std::min(interval.start, last->start);
    interval.end = std::max(interval.end, last->end);
    ++last;
  }
  first = list.erase(first, last);
  list.insert(first, interval);
}

Intervals union_of(const Intervals& a, const Intervals& b) {
  Intervals out;
  out.reserve(a.size() + b.size());
  auto push = [&](const Interval& x) {
    if (!out.empty() && touches_or_overlaps(out.back(), x)) {
      out.back().end = std::max(out.back().end, x.end);
    } else {
      out.push_back(x);
    }
  };
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].start <= b[j].start)) {
      push(a[i++]);
    } else {
      push(b[j++]);
    }
  }
  return out;
}

// Pieces of two canonical lists are canonical again: two adjacent pieces would lie in one
// interval of each list, and that pair yields a single piece.
Intervals intersection_of(const Intervals& a, const Intervals& b) {
  Intervals out;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const std::uint64_t low = std::max(a[i].start, b[j].start);
    const std::uint64_t high = std::min(a[i].end, b[j].end);
    if (low <= high) out.push_back({low, high});
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

Intervals difference_of(const Intervals& a, const Intervals& b) {
  Intervals out;
  std::size_t j = 0;
  for (const Interval& x : a) {
    std::uint64_t cursor = x.start;
    while (j < b.size() && b[j].end < cursor) ++j;
    bool done = false;
    for (std::size_t k = j; k < b.size() && b[k].start <= x.end; ++k) {
      if (b[k].start > cursor) out.push_back({cursor, b[k].start - 1});
      if (b[k].end >= x.end) {
        done = true;
        break;
      }
      cursor = std::max(cursor, b[k].end + 1);
    }
    if (!done) out.push_back({cursor, x.end});
  }
  return out;
}

// Every interval of sub lies inside one interval of super (super is canonical, so an
// interval of sub cannot span two of them).
bool is_subset(const Intervals& sub, const Intervals& super) {
  std::size_t j = 0;
  for (const Interval& x : sub) {
    while (j < super.size() && super[j].end < x.start) ++j;
    if (j == super.size() || super[j].start > x.start || super[j].end < x.end) return false;
  }
  return true;
}

bool contains_number(const Intervals& list, std::uint64_t number) {
  // First interval starting after number; the one before it is the only candidate.
  auto it = std::upper_bound(list.begin(), list.end(), number,
                             [](std::uint64_t n, const Interval& x) { return n < x.start; });
  if (it == list.begin()) return false;
  return std::prev(it)->end >= number;
}

void append_interval(std::string& out, const Interval& interval) {
  fmt::format_to(std::back_inserter(out), "{}", interval.start);
  if (interval.end != interval.start) fmt::format_to(std::back_inserter(out), "-{}", interval.end);
}

const Intervals kNoIntervals;

}  // namespace

Result<std::string> normalize_tag(std::string_view tag) {
  static constexpr std::string_view kRule = "tags are [a-z_][a-z0-9_]{0,31}, case-insensitive";
  if (tag.size() > kMaxTagLength) {
    return fail(Errc::usage, fmt::format("tag '{}' has {} characters, more than {} ({})", detail::excerpt(tag, 40),
                                         tag.size(), kMaxTagLength, kRule));
  }
  std::string out;
  out.reserve(tag.size());
  for (std::size_t i = 0; i < tag.size(); ++i) {
    const char c = tag[i];
    if (i == 0 ? !is_tag_start(c) : !is_tag_char(c)) {
      return fail(Errc::usage,
                  fmt::format("tag '{}': {} is not allowed {}({})", detail::excerpt(tag, 40), detail::describe_char(c),
                              i == 0 ? "as the first character " : "", kRule));
    }
    out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  return out;
}

std::string Tsid::to_string() const {
  std::string out = uuid.to_string();
  if (!tag.empty()) out.append(":").append(tag);
  return out;
}

std::string Gtid::to_string() const {
  std::string out = uuid.to_string();
  if (!tag.empty()) out.append(":").append(tag);
  fmt::format_to(std::back_inserter(out), ":{}", number);
  return out;
}

bool MysqlGtidSet::has_tags() const noexcept {
  return std::any_of(entries_.begin(), entries_.end(), [](const auto& entry) { return !entry.first.tag.empty(); });
}

const MysqlGtidSet::Intervals& MysqlGtidSet::intervals(const Uuid& uuid, std::string_view tag) const {
  const auto it = entries_.find(Tsid{uuid, std::string(tag)});
  return it == entries_.end() ? kNoIntervals : it->second;
}

std::string MysqlGtidSet::to_string() const {
  std::string out;
  const Uuid* previous_uuid = nullptr;
  for (const auto& [tsid, list] : entries_) {
    if (previous_uuid == nullptr || *previous_uuid != tsid.uuid) {
      if (previous_uuid != nullptr) out.push_back(',');
      tsid.uuid.append_to(out);
      previous_uuid = &tsid.uuid;
    }
    if (!tsid.tag.empty()) out.append(":").append(tsid.tag);
    for (const Interval& interval : list) {
      out.push_back(':');
      append_interval(out, interval);
    }
  }
  return out;
}

bool MysqlGtidSet::contains(const Gtid& gtid) const {
  const auto it = entries_.find(Tsid{gtid.uuid, gtid.tag});
  return it != entries_.end() && contains_number(it->second, gtid.number);
}

bool MysqlGtidSet::contains(const MysqlGtidSet& other) const {
  auto mine = entries_.begin();
  for (const auto& [tsid, list] : other.entries_) {
    while (mine != entries_.end() && mine->first < tsid) ++mine;
    if (mine == entries_.end() || mine->first != tsid) return false;
    if (!is_subset(list, mine->second)) return false;
  }
  return true;
}

Result<void> MysqlGtidSet::add(const Gtid& gtid) { return add(gtid.uuid, gtid.tag, gtid.number, gtid.number); }

Result<void> MysqlGtidSet::add(const Uuid& uuid, std::string_view tag, std::uint64_t start, std::uint64_t end) {
  for (const std::uint64_t number : {start, end}) {
    if (number < 1 || number > kMaxGno) {
      return fail(Errc::usage, fmt::format("GTID number {} is out of range (1 to {})", number, kMaxGno));
    }
  }
  if (start > end) return fail(Errc::usage, fmt::format("GTID interval {}-{} starts after it ends", start, end));
  auto normalized = normalize_tag(tag);
  if (!normalized) return fail(std::move(normalized).error());
  add_unchecked(Tsid{uuid, std::move(*normalized)}, Interval{start, end});
  return {};
}

void MysqlGtidSet::add_unchecked(const Tsid& tsid, Interval interval) {
  add_interval(entries_[tsid], interval);
}

MysqlGtidSet MysqlGtidSet::union_with(const MysqlGtidSet& other) const {
  MysqlGtidSet out = *this;
  for (const auto& [tsid, list] : other.entries_) {
    auto [it, inserted] = out.entries_.try_emplace(tsid, list);
    if (!inserted) it->second = union_of(it->second, list);
  }
  return out;
}

MysqlGtidSet MysqlGtidSet::intersect(const MysqlGtidSet& other) const {
  MysqlGtidSet out;
  for (const auto& [tsid, list] : entries_) {
    const auto it = other.entries_.find(tsid);
    if (it == other.entries_.end()) continue;
    Intervals common = intersection_of(list, it->second);
    if (!common.empty()) out.entries_.emplace_hint(out.entries_.end(), tsid, std::move(common));
  }
  return out;
}

MysqlGtidSet MysqlGtidSet::subtract(const MysqlGtidSet& other) const {
  MysqlGtidSet out;
  for (const auto& [tsid, list] : entries_) {
    const auto it = other.entries_.find(tsid);
    if (it == other.entries_.end()) {
      out.entries_.emplace_hint(out.entries_.end(), tsid, list);
      continue;
    }
    Intervals rest = difference_of(list, it->second);
    if (!rest.empty()) out.entries_.emplace_hint(out.entries_.end(), tsid, std::move(rest));
  }
  return out;
}

}  // namespace cdc::gtid
