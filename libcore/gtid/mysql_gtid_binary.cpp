// The binary form of a MySQL GTID set: COM_BINLOG_DUMP_GTID's payload and the body of
// PREVIOUS_GTIDS_LOG_EVENT. Layout in mysql_gtid_set.h; source: Gtid_set::encode,
// Gtid_set::add_gtid_encoding, encode_nsids_format / decode_nsids_format
// (sql/rpl_gtid_set.cc, MySQL 8.3+), Tag::encode_tag (libs/mysql/gtid/tag.cpp) and the
// varlen integers of libs/mysql/serialization/variable_length_integers.h.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "gtid/mysql_gtid_set.h"

namespace cdc::gtid {

namespace {

// Gtid_format in libs/mysql/gtid/gtid_format.h; stored in the top byte of n_sids.
enum class GtidFormat : std::uint8_t {
  untagged = 0,
  tagged = 1,
};

constexpr std::uint64_t kInt64Max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
constexpr std::size_t kIntervalBytes = 16;  // 8-byte start + 8-byte exclusive end

void append_u64(std::string& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

// n_sids with the format: untagged keeps the plain count (format 0 in the top byte);
// tagged repeats the format in the lowest byte and shifts the count up by one byte.
std::uint64_t encode_n_sids(std::uint64_t n_sids, GtidFormat format) {
  const auto code = static_cast<std::uint64_t>(format);
  if (format == GtidFormat::tagged) return (code << 56) | (n_sids << 8) | code;
  return n_sids;
}

// MySQL's serialization varlen unsigned integer: the count of trailing one bits in the
// first byte says how many bytes follow; the value's low bits sit above them. A tag length
// (<= 32) always takes one byte written as length << 1, but longer forms are legal input.
std::uint64_t read_varlen(ByteReader& reader) {
  const std::uint8_t first = reader.u8();
  if (!reader.ok()) return 0;
  const int size = std::countr_one(first) + 1;  // 1..9 bytes in all
  if (size == 1) return static_cast<std::uint64_t>(first >> 1);
  const std::uint64_t rest = reader.uint_le(static_cast<std::size_t>(size - 1), "tag length");
  const int shift = 8 - size + (size == 9 ? 1 : 0);
  const std::uint64_t low = size == 9 ? 0 : static_cast<std::uint64_t>(first >> size);
  return low | (rest << shift);
}

}  // namespace

std::size_t MysqlGtidSet::encoded_size() const {
  const bool tagged = has_tags();
  std::size_t size = 8;
  for (const auto& [tsid, list] : entries_) {
    size += Uuid::kByteLength + 8 + kIntervalBytes * list.size();
    if (tagged) size += 1 + tsid.tag.size();
  }
  return size;
}

void MysqlGtidSet::encode(std::string& out) const {
  const GtidFormat format = has_tags() ? GtidFormat::tagged : GtidFormat::untagged;
  out.reserve(out.size() + encoded_size());
  append_u64(out, encode_n_sids(entries_.size(), format));
  for (const auto& [tsid, list] : entries_) {
    out.append(reinterpret_cast<const char*>(tsid.uuid.bytes.data()), Uuid::kByteLength);
    if (format == GtidFormat::tagged) {
      out.push_back(static_cast<char>(tsid.tag.size() << 1));  // one-byte varlen: length <= 32
      out.append(tsid.tag);
    }
    append_u64(out, list.size());
    for (const Interval& interval : list) {
      append_u64(out, interval.start);
      append_u64(out, interval.end + 1);  // exclusive; end <= kMaxGno keeps it <= INT64_MAX
    }
  }
}

Result<MysqlGtidSet> MysqlGtidSet::decode(ByteReader& reader) {
  auto truncated = [&]() -> Unexpected {
    return fail(Errc::corrupt_input, "GTID set encoding: " + reader.failure_text());
  };
  auto corrupt = [&](std::uint64_t offset, std::string what) -> Unexpected {
    reader.fail(what);
    return fail(Errc::corrupt_input, fmt::format("GTID set encoding: {} at offset {}", what, offset));
  };

  const std::uint64_t header_offset = reader.offset();
  const std::uint64_t header = reader.uint_le(8, "n_sids");
  if (!reader.ok()) return truncated();
  const auto format_code = static_cast<std::uint8_t>(header >> 56);
  if (format_code > static_cast<std::uint8_t>(GtidFormat::tagged)) {
    return corrupt(header_offset, fmt::format("unknown format {} in n_sids 0x{:016x}", format_code, header));
  }
  // Like decode_nsids_format, only the top byte decides; the copy of the format in the
  // lowest byte of the tagged form is not checked.
  const auto format = static_cast<GtidFormat>(format_code);
  const bool tagged = format == GtidFormat::tagged;
  const std::uint64_t n_sids = tagged ? (header >> 8) & 0xffff'ffff'ffffULL : header & 0x00ff'ffff'ffff'ffffULL;
  const std::size_t min_entry = Uuid::kByteLength + 8 + (tagged ? 1 : 0);
  if (n_sids > reader.remaining() / min_entry) {
    return corrupt(header_offset, fmt::format("n_sids {} does not fit in the {} bytes left ({} or more each)",
                                              n_sids, reader.remaining(), min_entry));
  }

  MysqlGtidSet set;
  for (std::uint64_t sid = 0; sid < n_sids; ++sid) {
    Tsid tsid;
    const auto uuid_bytes = reader.bytes(Uuid::kByteLength, "UUID");
    if (!reader.ok()) return truncated();
    std::copy(uuid_bytes.begin(), uuid_bytes.end(), tsid.uuid.bytes.begin());

    if (tagged) {
      const std::uint64_t tag_offset = reader.offset();
      const std::uint64_t length = read_varlen(reader);
      if (!reader.ok()) return truncated();
      if (length > kMaxTagLength) {
        return corrupt(tag_offset, fmt::format("tag length {} is more than {}", length, kMaxTagLength));
      }
      const std::string_view chars = reader.chars(static_cast<std::size_t>(length), "tag");
      if (!reader.ok()) return truncated();
      auto tag = normalize_tag(chars);  // the server also folds upper case here
      if (!tag) return corrupt(tag_offset, "invalid " + tag.error().message);
      tsid.tag = std::move(*tag);
    }

    const std::uint64_t count_offset = reader.offset();
    const std::uint64_t n_intervals = reader.uint_le(8, "n_intervals");
    if (!reader.ok()) return truncated();
    if (n_intervals > reader.remaining() / kIntervalBytes) {
      return corrupt(count_offset, fmt::format("n_intervals {} does not fit in the {} bytes left ({} each)",
                                               n_intervals, reader.remaining(), kIntervalBytes));
    }
    if (n_intervals == 0) continue;  // the server writes no such entry; it adds nothing
    Intervals& list = set.entries_[tsid];
    std::uint64_t previous_end = 0;
    for (std::uint64_t i = 0; i < n_intervals; ++i) {
      const std::uint64_t interval_offset = reader.offset();
      const std::uint64_t start = reader.uint_le(8, "interval start");
      const std::uint64_t end = reader.uint_le(8, "interval end");
      if (!reader.ok()) return truncated();
      // The server reads both as signed 64-bit (sint8korr): values >= 2^63 are negative.
      if (start <= previous_end || end <= start || end > kInt64Max) {
        return corrupt(interval_offset,
                       fmt::format("interval [{}, {}) of {} is not increasing (need {} < start < end <= 2^63-1)",
                                   static_cast<std::int64_t>(start), static_cast<std::int64_t>(end),
                                   tsid.to_string(), previous_end));
      }
      previous_end = end;
      const Interval interval{start, end - 1};
      // A TSID seen in an earlier entry needs merging; otherwise the list stays sorted.
      if (list.empty() || list.back().end + 1 < interval.start) {
        list.push_back(interval);
      } else {
        set.add_unchecked(tsid, interval);
      }
    }
  }
  return set;
}

}  // namespace cdc::gtid
