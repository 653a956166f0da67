#pragma once

// MySQL GTID sets: `uuid:1-100:200,uuid2:1-7`, and the tagged GTIDs of MySQL 8.3+
// (`uuid:tag:1-5`). Plain values: parse, print canonically, compare, combine, and the binary
// form that COM_BINLOG_DUMP_GTID sends and PREVIOUS_GTIDS_LOG_EVENT carries.
//
// Facts from the server source (mysql-server 8.4, sql/rpl_gtid_set.cc and libs/mysql/gtid/):
// - A transaction number (GNO) is 1 .. 2^63-2. The server keeps intervals with an exclusive
//   end in a signed 64-bit integer and rejects 2^63-1 (parse_gno: `ret >= GNO_END`,
//   GNO_END = INT64_MAX), so 9223372036854775806 is the largest GNO it can hold.
// - A tag is [a-z_][a-z0-9_]{0,31}; the server takes upper case and folds it to lower case
//   (Tag::from_cstring / Tag::replace). A GTID set's text is, per UUID, the untagged
//   intervals first and then each tag in byte order: `uuid:1-5:7:alpha:1-3:beta:9`.
// - Sets print sorted by UUID bytes, then tag (Tsid_map::get_sorted_sidno), with adjacent
//   intervals merged (add_gno_interval). The server joins UUIDs with ",\n"; to_string() here
//   joins with "," so the canonical text stays on one line (parse() accepts both).

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gtid/format.h"
#include "gtid/uuid.h"
#include "util/byte_reader.h"
#include "util/result.h"

namespace cdc::gtid {

// The largest transaction number a MySQL server accepts (INT64_MAX - 1, see above).
inline constexpr std::uint64_t kMaxGno = 9223372036854775806ULL;
// tag_max_length in libs/mysql/gtid/gtid_constants.h.
inline constexpr std::size_t kMaxTagLength = 32;

// Checks a tag and returns it folded to lower case. The empty tag ("untagged") is valid.
// Errors are Errc::usage, e.g. "tag 'a-b': '-' is not allowed (tags are [a-z_][a-z0-9_]{0,31})".
Result<std::string> normalize_tag(std::string_view tag);

// The tagged source id: MySQL calls the pair (uuid, tag) a TSID. An empty tag is untagged.
struct Tsid {
  Uuid uuid;
  std::string tag;

  [[nodiscard]] std::string to_string() const;  // "uuid" or "uuid:tag"
  friend auto operator<=>(const Tsid&, const Tsid&) = default;
  friend bool operator==(const Tsid&, const Tsid&) = default;
};

// One transaction: "uuid:n" or "uuid:tag:n".
struct Gtid {
  Uuid uuid;
  std::string tag;  // lower case; empty = untagged
  std::uint64_t number = 0;

  // Exactly one GTID, as the text form above (whitespace around separators allowed).
  static Result<Gtid> parse(std::string_view text);
  [[nodiscard]] std::string to_string() const;
  friend bool operator==(const Gtid&, const Gtid&) = default;
};

// A closed interval [start, end] of transaction numbers, 1 <= start <= end <= kMaxGno.
struct Interval {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  friend bool operator==(const Interval&, const Interval&) = default;
};

class MysqlGtidSet {
 public:
  // Sorted, disjoint, non-adjacent intervals (1-3 and 4-6 are stored as 1-6); never empty.
  using Intervals = std::vector<Interval>;
  // Ordered like the server prints: by UUID bytes, then tag ("" = untagged first).
  using Entries = std::map<Tsid, Intervals>;

  MysqlGtidSet() = default;

  // MySQL's text form (Gtid_set::add_gtid_text), for example
  //   "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7:9-12,\n4f...:1-3:mytag:5"
  // - entries are separated by ',', and whitespace (newlines too) is allowed around ',', ':'
  //   and '-' and at both ends; "" or only whitespace is the empty set;
  // - an entry is a UUID followed by ':'-separated items, each either an interval ("7",
  //   "9-12") or a tag that applies to the intervals after it ("uuid:1-3:tag:5" = untagged
  //   1-3 plus tag:5); the same UUID may appear in several entries; intervals may overlap and
  //   come in any order;
  // - as on the server, empty entries (",,", a trailing ',') and an entry without intervals
  //   ("uuid", "uuid:tag") add nothing and are not errors.
  // Stricter than the server where it would silently drop or misread data: an inverted
  // interval "5-3" (the server ignores it), and numbers with a leading zero, a sign or a
  // "0x" prefix (the server reads them with strtoll base 0: "010" would be 8) are errors.
  // Errors are Errc::usage: "invalid GTID set at offset 41: expected ...".
  static Result<MysqlGtidSet> parse(std::string_view text);

  // Canonical text: entries as described in the file comment, joined with "," (no newline);
  // the empty set is "".
  [[nodiscard]] std::string to_string() const;

  [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }
  [[nodiscard]] bool has_tags() const noexcept;
  [[nodiscard]] const Entries& entries() const noexcept { return entries_; }
  // The intervals of one TSID; empty when the set holds none of it.
  [[nodiscard]] const Intervals& intervals(const Uuid& uuid, std::string_view tag = {}) const;

  [[nodiscard]] bool contains(const Gtid& gtid) const;
  // Superset test: every GTID of other is in this set.
  [[nodiscard]] bool contains(const MysqlGtidSet& other) const;

  // Add one GTID, or the closed range [start, end] of one TSID. Errc::usage for numbers
  // outside 1..kMaxGno, start > end, or a malformed tag (the tag is folded to lower case).
  Result<void> add(const Gtid& gtid);
  Result<void> add(const Uuid& uuid, std::string_view tag, std::uint64_t start, std::uint64_t end);

  // Set algebra; each returns a new set and leaves both operands unchanged.
  [[nodiscard]] MysqlGtidSet union_with(const MysqlGtidSet& other) const;
  [[nodiscard]] MysqlGtidSet intersect(const MysqlGtidSet& other) const;
  [[nodiscard]] MysqlGtidSet subtract(const MysqlGtidSet& other) const;  // this − other

  // Binary form (Gtid_set::encode in sql/rpl_gtid_set.cc), all integers little-endian:
  //   untagged format (no tag in the set; what every server before 8.3 reads):
  //     8 bytes  n_sids
  //     per sid: 16 bytes UUID, 8 bytes n_intervals, per interval 8 bytes start and
  //              8 bytes end, the end EXCLUSIVE (1-5 is stored as [1, 6))
  //   tagged format (Gtid_format::tagged = 1, used as soon as one tag is present):
  //     8 bytes  format byte 0x01 | n_sids << 8 | 0x01 << 56 (so n_sids has 48 bits)
  //     per TSID: 16 bytes UUID, the tag as a varlen length (one byte length << 1 for the
  //              at most 32 characters; 0x00 for untagged) and its characters, then
  //              n_intervals and the intervals as above
  // Each (uuid, tag) pair is its own entry; entries come in to_string() order.
  void encode(std::string& out) const;
  [[nodiscard]] std::size_t encoded_size() const;

  // Reads one encoded set (either format) from the reader and leaves any bytes after it
  // unread (the COM_BINLOG_DUMP_GTID and PREVIOUS_GTIDS callers know the length and may
  // check reader.empty()). Counts are checked against the bytes that remain before anything
  // is allocated, so hostile input costs at most O(input size). Like the server
  // (add_gtid_encoding), intervals within an entry must be increasing and non-touching
  // ([start, end) with start > previous end, end > start); a TSID repeated in a later entry
  // is merged. Errors are Errc::corrupt_input with the offset; the reader is failed too.
  static Result<MysqlGtidSet> decode(ByteReader& reader);

  friend bool operator==(const MysqlGtidSet&, const MysqlGtidSet&) = default;

 private:
  // Adds an already validated range of a validated (lower-case) TSID.
  void add_unchecked(const Tsid& tsid, Interval interval);

  Entries entries_;
};

}  // namespace cdc::gtid

template <>
struct fmt::formatter<cdc::gtid::Tsid> : cdc::gtid::detail::ToStringFormatter {};
template <>
struct fmt::formatter<cdc::gtid::Gtid> : cdc::gtid::detail::ToStringFormatter {};
template <>
struct fmt::formatter<cdc::gtid::MysqlGtidSet> : cdc::gtid::detail::ToStringFormatter {};
