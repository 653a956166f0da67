#pragma once

// --from and --until TIME: where in a binlog a time falls.
//
// A transaction's time is its commit time as the binlog records it (TransactionStart's
// `committed`), and "at TIME" means the first transaction, in binlog order, committed at or
// after it. Binlog files are searched by when they were opened (their format description's
// timestamp): a file opens after every transaction of the files before it committed, so the
// time falls in the last file opened before it, and only that one is read (from its start,
// for the GTID state), whatever the length of the history.

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "gtid/position.h"
#include "mysql/connection_options.h"
#include "replication/binlog_client.h"
#include "util/result.h"
#include "util/time_text.h"

namespace cdc::stream {

// What a binlog file's first events say.
struct FileOpening {
  UtcTime opened;              // its format description's timestamp (or the next event's when 0)
  std::optional<bool> history;  // whether its GTID list / previous GTIDs is non-empty; nullopt without one
};

// Reads FileOpening from a file's events, the first ones first; true once it has all it needs.
class FileOpeningReader {
 public:
  // An event's bytes, header to checksum. Errc::corrupt_input when its header is short.
  Result<bool> add(std::span<const std::uint8_t> event);
  [[nodiscard]] const FileOpening& opening() const noexcept { return opening_; }
  [[nodiscard]] bool has_time() const noexcept { return opening_.opened.micros != 0; }

 private:
  FileOpening opening_;
  unsigned events_ = 0;
};

// The index of the file to start reading at for `time` among `count` files in binlog order:
// the last one opened before `time`, or 0 when none was. Reads O(log count) openings.
Result<std::size_t> file_for_time(std::size_t count, UtcTime time,
                                  const std::function<Result<FileOpening>(std::size_t)>& opening);

// Where a live stream starts for --from TIME.
struct TimeStart {
  // The boundary before the first transaction committed at or after the time, or the binlog's
  // end when none has yet: a GTID position where the server has one there, else FILE:OFFSET.
  gtid::Position position;
  gtid::FilePosition at;            // that boundary in the binlog files
  std::optional<UtcTime> committed;  // the transaction's time; nullopt at the end
};

// Searches the server's binlogs (short dumps that stop at the binlog's end, one per file the
// search opens, then a read of one file). Errc::purged when the time is before the oldest
// binlog and binlogs before it are gone.
Result<TimeStart> locate_time(const mysql::ConnectionOptions& options, replication::BinlogClient& client,
                              UtcTime time);

// The notice that says where a TIME fell: "--from 2026-...Z: the first transaction committed at
// or after it is at binlog.000003:1234 (committed 2026-...Z); starting from 0-1-57".
std::string describe_time_start(std::string_view option, UtcTime time, const TimeStart& start);

}  // namespace cdc::stream
