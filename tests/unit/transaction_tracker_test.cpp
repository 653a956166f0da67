// Resume positions across files and seeded starts (stream/transaction_tracker).

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "gtid/position.h"
#include "stream/transaction_tracker.h"

namespace {

using cdc::gtid::Position;
using cdc::stream::TransactionTracker;

// A GTID_LIST body: count x (domain u32, server u32, seq u64), little-endian.
std::vector<std::uint8_t> gtid_list_entries(const std::vector<std::array<std::uint64_t, 3>>& gtids) {
  std::vector<std::uint8_t> bytes;
  const auto put = [&bytes](std::uint64_t value, int size) {
    for (int i = 0; i < size; ++i) bytes.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
  };
  for (const auto& gtid : gtids) {
    put(gtid[0], 4);
    put(gtid[1], 4);
    put(gtid[2], 8);
  }
  return bytes;
}

cdc::binlog::MariadbGtidEvent mariadb_transaction(std::uint32_t domain, std::uint64_t seq) {
  cdc::binlog::MariadbGtidEvent event;
  event.domain_id = domain;
  event.seq_no = seq;
  event.flags = cdc::binlog::MariadbGtidEvent::kTransactional;
  return event;
}

}  // namespace

TEST_CASE("transaction tracker: a seeded MariaDB position is not moved back by an older GTID list") {
  TransactionTracker tracker;
  tracker.start_file("binlog.000003");
  tracker.seed(*Position::parse("0-1-100,1-2-7"));
  // The dump starts in the file whose list predates the seeded position.
  const auto entries = gtid_list_entries({{0, 1, 40}, {1, 2, 3}, {2, 5, 9}});
  cdc::binlog::MariadbGtidListEvent list;
  list.count = 3;
  list.entries = entries;
  tracker.mariadb_gtid_list(list);
  CHECK(tracker.position_at(400).to_string() == "0-1-100,1-2-7,2-5-9");

  tracker.begin_mariadb(mariadb_transaction(0, 101), 1);
  CHECK(tracker.in_transaction());
  tracker.count_rows(2);
  const auto end = tracker.end(900);
  CHECK(end.gtid == "0-1-101");
  CHECK(end.position == "0-1-101,1-2-7,2-5-9");
  CHECK(end.rows == 2);
  CHECK_FALSE(tracker.in_transaction());
  CHECK(tracker.last_gtid() == "0-1-101");
}

TEST_CASE("MariaDB GTID list: the state it records keeps each domain's latest entry") {
  // One entry per (domain, server): a domain whose primary changed is listed once per server.
  const auto entries = gtid_list_entries({{0, 1, 40}, {0, 2, 45}, {1, 2, 3}, {0, 3, 44}, {2, 5, 9}});
  cdc::binlog::MariadbGtidListEvent list;
  list.count = 5;
  list.entries = entries;
  CHECK(list.state().to_string() == "0-2-45,1-2-3,2-5-9");
  list.count = 0;
  CHECK(list.state().empty());
}

TEST_CASE("transaction tracker: without a known GTID state positions are FILE:OFFSET") {
  TransactionTracker tracker;
  tracker.start_file("binlog.000007");
  // A GTID seen mid-file says nothing about the transactions before it.
  cdc::binlog::MysqlGtidEvent gtid;
  gtid.uuid = {0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1, 0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62};
  gtid.gno = 5;
  tracker.begin_mysql(gtid);
  tracker.count_rows(1);
  const auto end = tracker.end(1234);
  CHECK(end.position == "binlog.000007:1234");
  CHECK(end.gtid == "3e11fa47-71ca-11e1-9e33-c80aa9429562:5");
  CHECK(tracker.position_at(1234).kind == Position::Kind::file);

  // Seeded with the set before it, the same transaction ends at a GTID set.
  TransactionTracker seeded;
  seeded.start_file("binlog.000007");
  seeded.seed(*Position::parse("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-4"));
  seeded.begin_mysql(gtid);
  seeded.count_rows(1);
  CHECK(seeded.end(1234).position == "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5");
}
