#pragma once

// The replica side of the replication protocol: one connection that registers as a replica
// and receives binlog events, as a server's IO thread does. It hands out each event's bytes;
// decoding is binlog::Decoder's job, exactly as for files.

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gtid/position.h"
#include "mysql/connection.h"
#include "util/result.h"
#include "util/server_version.h"

namespace cdc::replication {

enum class Flavor { mysql, mariadb };

// What the run needs to know about the server before dumping.
struct ServerInfo {
  Flavor flavor = Flavor::mysql;
  ServerVersion version;
  std::string version_text;
  std::uint32_t server_id = 0;
  std::string binlog_format;
  bool checksums = false;            // binlog_checksum is CRC32: every event sent carries one
  std::string binlog_row_metadata;   // empty before MySQL 8.0.14 / MariaDB 10.5
  bool log_bin = false;
  // MySQL: gtid_mode is ON. MariaDB: always (every MariaDB 10+ transaction has a GTID).
  bool gtids = false;
  // The statement text goes into the binlog before its rows (--include-query):
  // binlog_annotate_row_events on MariaDB, binlog_rows_query_log_events on MySQL, as set
  // globally (a session may set its own).
  bool logs_statements = false;
};

// The server's current end: what SHOW BINARY LOG STATUS / SHOW MASTER STATUS print.
struct ServerEnd {
  gtid::FilePosition file;
  std::string gtids;  // Executed_Gtid_Set (MySQL) or @@gtid_binlog_pos (MariaDB); "" without
};

// What a dump does at the binlog's end: wait for more (tailing), or stop there (reading what
// the server has, as mysqlbinlog without --stop-never).
enum class DumpEnd { wait, stop };

// Why the server refused or ended a dump; the run picks its exit code from this.
enum class DumpFailure { none, purged, lost, same_server_id, other };

class BinlogClient {
 public:
  [[nodiscard]] static Result<BinlogClient> open(const mysql::ConnectionOptions& options);

  [[nodiscard]] const ServerInfo& server() const noexcept { return server_; }
  [[nodiscard]] mysql::Connection& connection() noexcept { return connection_; }
  [[nodiscard]] const mysql::Connection& connection() const noexcept { return connection_; }

  [[nodiscard]] Result<ServerEnd> server_end();
  // The oldest binlog the server still has (SHOW BINARY LOGS).
  [[nodiscard]] Result<std::string> oldest_binlog();
  // SHOW BINARY LOGS: every binlog the server has, oldest first, with its size now.
  struct BinlogFile {
    std::string name;
    std::uint64_t size = 0;
  };
  [[nodiscard]] Result<std::vector<BinlogFile>> binlog_files();
  // Fails when a replica with this id is connected already (when the account may list
  // replicas at all: SHOW SLAVE HOSTS needs more than REPLICATION SLAVE on MariaDB 10.5+).
  [[nodiscard]] Result<void> check_server_id(std::uint32_t server_id);

  // Registers as replica `server_id` and asks for events from `start`. A MySQL GTID set or a
  // MariaDB GTID position makes the server skip what the set already holds.
  // every_event: also what a file has and a replica does not need (MariaDB's ANNOTATE_ROWS
  // events), for a byte-for-byte copy of the files.
  [[nodiscard]] Result<void> start_dump(const gtid::Position& start, std::uint32_t server_id,
                                        std::chrono::milliseconds heartbeat, DumpEnd end = DumpEnd::wait,
                                        bool every_event = false);

  // The next event, header to checksum; valid until the next call. With DumpEnd::stop, an
  // empty span at the binlog's end.
  [[nodiscard]] Result<std::span<const std::uint8_t>> next_event();
  // After next_event or start_dump failed with `error`: what kind of failure it was.
  [[nodiscard]] DumpFailure classify_failure(const Error& error) const;

  [[nodiscard]] int socket() const { return connection_.socket(); }

 private:
  explicit BinlogClient(mysql::Connection connection) : connection_(std::move(connection)) {}
  Result<void> read_server_info();
  Result<void> register_replica(std::uint32_t server_id);

  mysql::Connection connection_;
  ServerInfo server_;
  bool stops_at_end_ = false;
};

// A replica id that two runs on one host are unlikely to share: derived from the host name,
// the process id and the time, in [2^30, 2^31) where hand-picked server ids rarely are.
[[nodiscard]] std::uint32_t default_server_id();

}  // namespace cdc::replication
