#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "binlog/format_description.h"
#include "gtid/mariadb_gtid.h"
#include "util/byte_reader.h"

namespace cdc::binlog {

// MySQL GTID_LOG_EVENT / ANONYMOUS_GTID_LOG_EVENT / GTID_TAGGED_LOG_EVENT: opens a
// transaction (libbinlogevents control_events.cpp Gtid_event).
struct MysqlGtidEvent {
  bool anonymous = false;
  std::uint8_t flags = 0;  // bit 0: may have committed before its predecessors (parallel apply)
  std::array<std::uint8_t, 16> uuid{};
  std::string_view tag;    // MySQL 8.3+ tagged GTIDs; empty otherwise
  std::int64_t gno = 0;
  std::int64_t last_committed = 0;
  std::int64_t sequence_number = 0;
  // Microseconds since the epoch (MySQL 8.0.1+), 0 when the server did not write them.
  std::uint64_t immediate_commit_us = 0;
  std::uint64_t original_commit_us = 0;
  std::uint64_t transaction_length = 0;  // bytes of the whole transaction, this event included
};
MysqlGtidEvent decode_mysql_gtid(ByteReader& body, bool anonymous);
MysqlGtidEvent decode_mysql_gtid_tagged(ByteReader& body);

// MariaDB GTID_EVENT: opens a transaction (or a standalone DDL). The server id of the GTID is
// the event header's (sql/log_event.cc Gtid_log_event).
struct MariadbGtidEvent {
  std::uint64_t seq_no = 0;
  std::uint32_t domain_id = 0;
  std::uint8_t flags = 0;
  std::uint64_t commit_id = 0;  // group commit id when flags has kGroupCommitId

  static constexpr std::uint8_t kStandalone = 0x01;      // no BEGIN..COMMIT: one statement (DDL)
  static constexpr std::uint8_t kGroupCommitId = 0x02;
  static constexpr std::uint8_t kTransactional = 0x04;
  static constexpr std::uint8_t kAllowParallel = 0x08;
  static constexpr std::uint8_t kWaited = 0x10;
  static constexpr std::uint8_t kDdl = 0x20;
  static constexpr std::uint8_t kPreparedXa = 0x40;
  static constexpr std::uint8_t kCompletedXa = 0x80;
};
MariadbGtidEvent decode_mariadb_gtid(ByteReader& body);

// MariaDB GTID_LIST_EVENT: the binlog state (last GTID per domain and server) at the start of
// a file. Entries are read on demand to avoid building a container per event.
struct MariadbGtidListEvent {
  std::uint32_t count = 0;
  std::span<const std::uint8_t> entries;  // count x (domain u32, server u32, seq u64)

  struct Entry {
    std::uint32_t domain_id;
    std::uint32_t server_id;
    std::uint64_t seq_no;
  };
  [[nodiscard]] Entry entry(std::uint32_t index) const noexcept;
  // The binlog state the list records (the server's when it opened the file): per domain the
  // entry with the largest seq_no (the list holds one entry per domain and server).
  [[nodiscard]] gtid::MariadbGtidPos state() const;
};
MariadbGtidListEvent decode_mariadb_gtid_list(ByteReader& body);

// MySQL PREVIOUS_GTIDS_LOG_EVENT: the GTID set executed before this file; the body is the
// binary GTID-set encoding that gtid::MysqlGtidSet::decode reads.
struct PreviousGtidsEvent {
  std::span<const std::uint8_t> encoded_set;
  std::uint64_t offset = 0;  // absolute offset of encoded_set, for messages
};
PreviousGtidsEvent decode_previous_gtids(ByteReader& body);

}  // namespace cdc::binlog
