#pragma once

// The inside of mysql::Connection, behind its pimpl: the client library's handle and what
// reopen() replays. Shared by connection.cpp (opening, queries, the replication commands) and
// connection_stream_rows.cpp (cdc-snapshot's streamed statements); no other module includes it,
// so that none sees the client library's headers.

#include <mysql.h>

#include <optional>
#include <string>
#include <vector>

#include "mysql/connection.h"

namespace cdc::mysql {

struct Connection::Impl {
  MYSQL* handle = nullptr;
  std::string endpoint;
  ConnectionOptions options;                  // for reopen()
  std::optional<Reconnect> reconnect;
  std::vector<std::string> session;           // set_session statements, replayed by reopen()
  bool multi_statements = false;              // turned on by query_batch

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (handle != nullptr) mysql_close(handle);
  }
};

}  // namespace cdc::mysql
