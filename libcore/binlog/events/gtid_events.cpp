#include "binlog/events/gtid_events.h"

namespace cdc::binlog {

MysqlGtidEvent decode_mysql_gtid(ByteReader& body, bool anonymous) {
  MysqlGtidEvent event;
  event.anonymous = anonymous;
  event.flags = body.u8();
  const auto uuid = body.bytes(16, "GTID uuid");
  for (std::size_t i = 0; i < uuid.size(); ++i) event.uuid[i] = uuid[i];
  event.gno = static_cast<std::int64_t>(body.u64());
  if (body.empty()) return event;  // 5.6 wrote no logical clock
  constexpr std::uint8_t kLogicalTimestampTypecode = 2;
  if (body.u8() == kLogicalTimestampTypecode) {
    event.last_committed = static_cast<std::int64_t>(body.u64());
    event.sequence_number = static_cast<std::int64_t>(body.u64());
  }
  if (body.remaining() < 7) return event;  // before 8.0.1
  // Commit timestamps are 7 bytes; the top bit of the immediate one says the original follows.
  constexpr std::uint64_t kHasOriginal = std::uint64_t{1} << 55;
  const std::uint64_t immediate = body.uint_le(7, "GTID immediate commit timestamp");
  event.immediate_commit_us = immediate & ~kHasOriginal;
  event.original_commit_us =
      (immediate & kHasOriginal) != 0 ? body.uint_le(7, "GTID original commit timestamp") : event.immediate_commit_us;
  if (!body.empty()) event.transaction_length = body.packed_integer("GTID transaction length");
  return event;
}

namespace {

// MySQL 8.3+ serialization (libs/mysql/serialization): variable-length integers whose first
// byte's trailing one-bits count the extra bytes; signed values are zig-zag encoded.
std::uint64_t read_varlen_unsigned(ByteReader& in) {
  const std::uint8_t first = in.u8();
  if (!in.ok()) return 0;
  int extra = 0;
  while (extra < 8 && (first >> extra & 1U) != 0) ++extra;
  std::uint64_t value = extra == 8 ? 0 : static_cast<std::uint64_t>(first >> (extra + 1));
  for (int i = 0; i < extra; ++i) {
    const std::uint64_t byte = in.u8();
    const int shift = extra == 8 ? 8 * i : 7 - extra + 8 * i;
    value |= byte << shift;
  }
  return value;
}

std::int64_t read_varlen_signed(ByteReader& in) {
  const std::uint64_t zigzag = read_varlen_unsigned(in);
  return static_cast<std::int64_t>(zigzag >> 1) ^ -static_cast<std::int64_t>(zigzag & 1);
}

}  // namespace

MysqlGtidEvent decode_mysql_gtid_tagged(ByteReader& body) {
  // The tagged GTID event is a serialized message: a header of three integers (format
  // version, serialized size, last non-ignorable field id), then fields, each preceded by its
  // id, in order: flags, uuid (16 integers), gno, tag (length + bytes), last_committed,
  // sequence_number, immediate/original commit timestamps, transaction length,
  // immediate/original server versions, commit group ticket. Optional fields may be absent.
  // (Checked against binlog_transaction_with_GTID_TAG.000001 written by 9.6.0.)
  MysqlGtidEvent event;
  for (int i = 0; i < 3; ++i) (void)read_varlen_unsigned(body);
  while (!body.empty() && body.ok()) {
    const std::uint64_t field = read_varlen_unsigned(body);
    switch (field) {
      case 0: event.flags = static_cast<std::uint8_t>(read_varlen_unsigned(body)); break;
      case 1: {
        for (auto& byte : event.uuid) byte = static_cast<std::uint8_t>(read_varlen_unsigned(body));
        break;
      }
      case 2: event.gno = read_varlen_signed(body); break;
      case 3: {
        const std::uint64_t length = read_varlen_unsigned(body);
        event.tag = body.chars(length, "GTID tag");
        break;
      }
      case 4: event.last_committed = read_varlen_signed(body); break;
      case 5: event.sequence_number = read_varlen_signed(body); break;
      case 6: event.immediate_commit_us = read_varlen_unsigned(body); break;
      case 7: event.original_commit_us = read_varlen_unsigned(body); break;
      case 8: event.transaction_length = read_varlen_unsigned(body); break;
      case 9:
      case 10:
      case 11: (void)read_varlen_unsigned(body); break;
      default:
        return event;  // a field a newer server added: everything we need is read
    }
  }
  if (event.original_commit_us == 0) event.original_commit_us = event.immediate_commit_us;
  return event;
}

MariadbGtidEvent decode_mariadb_gtid(ByteReader& body) {
  MariadbGtidEvent event;
  event.seq_no = body.u64();
  event.domain_id = body.u32();
  event.flags = body.u8();
  if ((event.flags & MariadbGtidEvent::kGroupCommitId) != 0) event.commit_id = body.u64();
  return event;
}

MariadbGtidListEvent decode_mariadb_gtid_list(ByteReader& body) {
  MariadbGtidListEvent event;
  // The top 4 bits of the count are flags (GTID_LIST_EVENT's gl_flags).
  event.count = body.u32() & 0x0fffffffU;
  constexpr std::size_t kEntrySize = 16;
  if (event.count > body.remaining() / kEntrySize) {
    body.fail("GTID_LIST count " + std::to_string(event.count) + " exceeds the event");
    return event;
  }
  event.entries = body.bytes(std::size_t{event.count} * kEntrySize, "GTID_LIST entries");
  return event;
}

MariadbGtidListEvent::Entry MariadbGtidListEvent::entry(std::uint32_t index) const noexcept {
  ByteReader in(entries.subspan(std::size_t{index} * 16, 16));
  Entry entry{};
  entry.domain_id = in.u32();
  entry.server_id = in.u32();
  entry.seq_no = in.u64();
  return entry;
}

gtid::MariadbGtidPos MariadbGtidListEvent::state() const {
  gtid::MariadbGtidPos listed;
  for (std::uint32_t i = 0; i < count; ++i) {
    const Entry listed_entry = entry(i);
    const auto held = listed.find(listed_entry.domain_id);
    if (!held || held->seq_no < listed_entry.seq_no)
      listed.advance(gtid::MariadbGtid{listed_entry.domain_id, listed_entry.server_id, listed_entry.seq_no});
  }
  return listed;
}

PreviousGtidsEvent decode_previous_gtids(ByteReader& body) {
  PreviousGtidsEvent event;
  event.offset = body.offset();
  event.encoded_set = body.rest();
  return event;
}

}  // namespace cdc::binlog
