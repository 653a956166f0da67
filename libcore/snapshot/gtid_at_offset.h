#pragma once

// The MariaDB GTID position at a binlog point, for the low watermarks of cdc-snapshot.
//
// The low watermark's binlog point is exact (binlog_snapshot_file and _position, the point
// of the read view); its GTID position is that point's. BINLOG_GTID_POS(file, offset) gives
// it, but the server reads the binlog from the file's start for every call: 0.36 s per chunk
// at 830 MB, hours of server time for a billion-row table. So only the first point of the
// process is asked of BINLOG_GTID_POS; each later one advances the last answer by the GTID
// events between the two points, read over the replication protocol from the last point on.
// What that reads is what the server wrote between the two chunks, whatever the binlog's
// size, and nothing at all when nothing was written.
//
// The replication connection stays open from one chunk to the next, paused where the last
// point was: opening one (login, replica registration, the dump's setup) cost the server more
// than a chunk's rows on a server that writes between chunks. A kept connection that the
// server dropped meanwhile (net_write_timeout while the chunk was read, a restart) is opened
// again once from the last point before anything is reported.
//
// Nor is the first point asked where that can be helped: before its first read view a process
// samples the binlog's end and @@gtid_binlog_pos between two SHOW MASTER STATUS in one round
// trip (sample()). When both statuses name the same point, no transaction was written in
// between (the server reads its position and writes its binlog under one lock), so the GTID
// position is that point's, and the first low is advanced from it: on a server whose active
// binlog is 650 MB, BINLOG_GTID_POS cost each process 0.07 to 0.09 s of server time before its
// first chunk with the file in the page cache (more when it is not), a fifth of a million-row
// snapshot's.
//
// The replication read needs the REPLICATION SLAVE privilege (which cdc-stream needs too).
// Without it, or when the server cannot send the bytes (the file was purged, another
// server behind the same name), the point is asked of BINLOG_GTID_POS, as before; a refused
// privilege or an unsuitable server setting is not tried again.

#include <cstdint>
#include <optional>
#include <string>

#include "binlog/decoder.h"
#include "gtid/mariadb_gtid.h"
#include "gtid/position.h"
#include "mysql/connection.h"
#include "mysql/connection_options.h"
#include "replication/binlog_client.h"
#include "util/result.h"

namespace cdc::snapshot {

class GtidAtOffset {
 public:
  explicit GtidAtOffset(mysql::ConnectionOptions options) : options_(std::move(options)) {}

  // The GTID position at file:offset, a transaction boundary; "" when the server knows none
  // (then the watermark is FILE:OFFSET). sql is the chunk's connection, for BINLOG_GTID_POS.
  // A lost connection is Errc::unavailable.
  [[nodiscard]] Result<std::string> position(mysql::Connection& sql, const gtid::FilePosition& point);

  // Before the first read view (when no point is known yet; tried once a process): the binlog's
  // end and its GTID position, when the server is still long enough to read both at one point;
  // else nothing (the first position() then asks BINLOG_GTID_POS). A lost connection is
  // Errc::unavailable.
  [[nodiscard]] Result<void> sample(mysql::Connection& sql);
  [[nodiscard]] bool knows_a_point() const noexcept { return known_.has_value(); }

  // How the last position() was found, for the tests and the benchmark.
  enum class Source { known, advanced, asked };
  [[nodiscard]] Source last_source() const noexcept { return last_source_; }
  // How many sample()s found a point, for the tests.
  [[nodiscard]] std::uint64_t points_sampled() const noexcept { return points_sampled_; }
  // How many replication connections were opened so far, for the tests.
  [[nodiscard]] std::uint64_t streams_opened() const noexcept { return streams_opened_; }
  // The kept replication connection's id on the server (for KILL in the tests); 0 without one.
  [[nodiscard]] std::uint64_t stream_thread_id() const { return stream_ ? stream_->client.connection().thread_id() : 0; }

 private:
  struct Known {
    gtid::FilePosition point;
    gtid::MariadbGtidPos state;
  };
  // Reads the events from known_->point up to `to`; an error other than Errc::unavailable
  // means "ask the server instead".
  Result<gtid::MariadbGtidPos> advance(const Known& from, const gtid::FilePosition& to);
  // advance() on the kept stream, opened at from.point when there is none.
  Result<gtid::MariadbGtidPos> read_stream(const Known& from, const gtid::FilePosition& to);

  // The replication stream, stopped at `at` (after the last event read).
  struct Stream {
    replication::BinlogClient client;
    binlog::Decoder decoder;
    std::string file;  // the binlog file of the events now arriving
    gtid::FilePosition at;
  };
  mysql::ConnectionOptions options_;
  std::optional<Known> known_;
  std::optional<Stream> stream_;
  bool replication_refused_ = false;
  Source last_source_ = Source::asked;
  std::uint64_t streams_opened_ = 0;
  std::uint64_t points_sampled_ = 0;
  bool sample_tried_ = false;
};

}  // namespace cdc::snapshot
