#pragma once

// --require-read-only and --watch-dns: a job meant for a replica stops (exit 4) when the
// server it reads turns out to be, or turns into, a primary, or when its host name moves.

#include <chrono>
#include <string>
#include <vector>

#include "mysql/connection.h"
#include "stream/side_connection.h"
#include "util/result.h"

namespace cdc::stream {

class PrimaryGuard {
 public:
  PrimaryGuard(bool require_read_only, bool watch_dns, std::string host, std::chrono::seconds check_every)
      : require_read_only_(require_read_only), watch_dns_(watch_dns), host_(std::move(host)), check_every_(check_every) {}

  // At start-up, on the replication connection: the addresses the host resolves to now, and
  // whether the server is read-only. True when the run must not start (message() says why).
  [[nodiscard]] Result<bool> primary_at_start(mysql::Connection& connection);
  // Between transactions, at most every check_every: true when the run must stop.
  [[nodiscard]] Result<bool> switched(SideConnection& side);

  [[nodiscard]] const std::string& message() const noexcept { return message_; }

 private:
  bool require_read_only_;
  bool watch_dns_;
  std::string host_;
  std::chrono::seconds check_every_;
  std::vector<std::string> addresses_;
  std::string message_;
  std::chrono::steady_clock::time_point last_check_ = std::chrono::steady_clock::now();
};

}  // namespace cdc::stream
