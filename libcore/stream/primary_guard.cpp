#include "stream/primary_guard.h"

#include <netdb.h>
#include <sys/socket.h>

#include <fmt/format.h>

#include <algorithm>

namespace cdc::stream {

namespace {

// The sorted addresses a host name resolves to.
std::vector<std::string> resolve(const std::string& host) {
  std::vector<std::string> addresses;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return addresses;
  for (addrinfo* entry = found; entry != nullptr; entry = entry->ai_next) {
    char text[NI_MAXHOST];
    if (::getnameinfo(entry->ai_addr, entry->ai_addrlen, text, sizeof text, nullptr, 0, NI_NUMERICHOST) == 0)
      addresses.emplace_back(text);
  }
  ::freeaddrinfo(found);
  std::sort(addresses.begin(), addresses.end());
  addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
  return addresses;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out.empty() ? "nothing" : out;
}

}  // namespace

Result<bool> PrimaryGuard::primary_at_start(mysql::Connection& connection) {
  if (watch_dns_) {
    addresses_ = resolve(host_);
    if (addresses_.empty()) return fail(Errc::unavailable, fmt::format("--watch-dns: {} does not resolve", host_));
  }
  if (!require_read_only_) return false;
  auto read_only = SideConnection::read_only(connection);
  if (!read_only) return fail(std::move(read_only).error());
  if (*read_only) return false;
  message_ = fmt::format("{} is not read-only (@@global.read_only is OFF): it looks like a primary, and "
                         "--require-read-only wants a replica; no change was read",
                         connection.endpoint());
  return true;
}

Result<bool> PrimaryGuard::switched(SideConnection& side) {
  if (!require_read_only_ && !watch_dns_) return false;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_check_ < check_every_) return false;
  last_check_ = now;
  if (watch_dns_) {
    const auto addresses = resolve(host_);
    if (!addresses.empty() && addresses != addresses_) {
      message_ = fmt::format("--watch-dns: {} now resolves to {} (it was {})", host_, join(addresses), join(addresses_));
      return true;
    }
  }
  if (require_read_only_) {
    mysql::Connection* connection = side.connection();
    if (connection == nullptr) return false;  // the replication connection will notice a dead server
    auto read_only = SideConnection::read_only(*connection);
    if (!read_only) {
      side.drop();
      return false;
    }
    if (!*read_only) {
      message_ = fmt::format("{} turned writable (@@global.read_only is OFF): the stream is on a primary now, which "
                             "--require-read-only forbids",
                             connection->endpoint());
      return true;
    }
  }
  return false;
}

}  // namespace cdc::stream
