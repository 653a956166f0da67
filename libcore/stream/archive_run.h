#pragma once

// cdc-stream --archive DIR alone: no NDJSON, only the server's binlog files mirrored byte for
// byte into DIR as they are written, as mysqlbinlog --read-from-remote-server --raw
// --stop-never does, but resumable after any stop and checked event by event
// (man/cdc-stream.1, BINLOG ARCHIVE).

#include <cstdint>
#include <optional>
#include <string>

#include "archive/retention.h"
#include "mysql/connection_options.h"
#include "stream/live_stream.h"
#include "util/result.h"

namespace cdc::stream {

struct ArchiveOptions {
  mysql::ConnectionOptions connection;
  std::string dir;
  archive::Retention keep;
  // Where an empty archive starts: "earliest", "now" (the start of the server's current
  // file) or FILE / FILE:4. Ignored once DIR has files: the archive resumes at its end.
  std::optional<std::string> from;
  std::optional<std::uint32_t> server_id;
  unsigned heartbeat_seconds = 1;
  unsigned retry_seconds = 0;  // give up reconnecting after this long; 0: never
};

// Runs until SIGINT or SIGTERM (then Ok: the archive is consistent and synced), or until an
// error: Errc::purged when the server no longer has the file the archive goes on with,
// Errc::unavailable when reconnecting failed for longer than retry_seconds.
[[nodiscard]] Result<void> run_archive(const ArchiveOptions& options, const LiveReporter& reporter);

}  // namespace cdc::stream
