#pragma once

// Where a live stream starts and stops, checked against the server before anything is read:
// --from and --until resolved (now, earliest, a position), a FILE:OFFSET that the server
// has, a MariaDB GTID position in domains the server knows, a saved state from this server.

#include <functional>
#include <string>
#include <string_view>

#include "gtid/position.h"
#include "replication/binlog_client.h"
#include "stream/state_file.h"
#include "util/result.h"

namespace cdc::stream {

// The one message for "that binlog is gone", whether SHOW BINARY LOGS or the dump said so.
[[nodiscard]] Error purged_binlog(std::string_view position, std::string_view oldest);

// The error a run reports when the server ended its binlog dump with `error`: the binlog for
// `position` purged (naming the oldest one left, listed over a new connection), another
// replica registered with our server id (a usage error), a lost connection (unavailable: the
// caller retries), or the error itself. `run` names the run for the message ("stream", "dump").
[[nodiscard]] Error dump_error(const replication::BinlogClient& client, const Error& error,
                               const mysql::ConnectionOptions& connection, std::string_view position,
                               std::uint32_t server_id, std::string_view run);

// "now", "earliest" (only when for_start) or a position in the server's flavor's form.
[[nodiscard]] Result<gtid::Position> resolve_position(replication::BinlogClient& client, const std::string& text,
                                                      bool for_start);

// A FILE:OFFSET must name a binlog the server has, at most at its current end: the dump
// would otherwise wait forever for an offset the file never reaches.
[[nodiscard]] Result<void> check_file_position(replication::BinlogClient& client,
                                               const gtid::FilePosition& position);

// Every domain of a MariaDB GTID position must be one the server has logged (its
// @@gtid_binlog_state): the server streams a position with an unknown domain without a
// word, and the bogus domain would be carried into every later position. `given` says where
// the position came from, for the message ("--from", "state.json").
[[nodiscard]] Result<void> check_known_domains(replication::BinlogClient& client, const gtid::MariadbGtidPos& position,
                                               std::string_view given);

// A saved FILE:OFFSET is a place in one server's binlog files: resumed against another
// server (another server_id) it names unrelated bytes. GTID positions move between servers.
// warn gets a word when an older state without server_id was saved against another address.
[[nodiscard]] Result<void> check_saved_server(const replication::BinlogClient& client, const records::StreamState& saved,
                                              const gtid::Position& position, std::string_view state_path,
                                              const std::function<void(std::string_view)>& warn);

}  // namespace cdc::stream
