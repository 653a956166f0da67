#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mysql/connection_options.h"
#include "util/result.h"

namespace cdc::mysql {

// A fully read, small result set (server variables, grants, catalog rows). Large results
// are streamed by the snapshot reader, never through this type.
struct QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
};

// One client connection. The MYSQL handle stays behind the pimpl so that no other module
// sees the client library's headers.
class Connection {
 public:
  [[nodiscard]] static Result<Connection> open(const ConnectionOptions& options);

  Connection(Connection&&) noexcept;
  Connection& operator=(Connection&&) noexcept;
  ~Connection();

  Result<QueryResult> query(std::string_view sql);

  // The protocol level, for the commands the client library has no call for (the binlog
  // dump): one command packet out on this connection (TLS and all), then packets in. With
  // expect_ok the server's OK (or error) answer is read too.
  Result<void> send_command(std::uint8_t command, std::span<const std::uint8_t> payload, bool expect_ok);
  // The next packet's payload, valid until the next call. An error packet or a broken
  // connection is an error; last_error_number() tells which (CR_* client codes are >= 2000).
  Result<std::span<const std::uint8_t>> read_packet();
  [[nodiscard]] unsigned last_error_number() const;
  // The socket, for shutdown(2) from a signal handler: it wakes a blocked read_packet.
  [[nodiscard]] int socket() const;

  // The text of VERSION() as the handshake reported it, e.g. "10.11.6-MariaDB-0+deb12u1-log".
  [[nodiscard]] std::string server_version() const;
  // "host:port" or "socket path", for error messages.
  [[nodiscard]] const std::string& endpoint() const;
  [[nodiscard]] bool uses_tls() const;

 private:
  struct Impl;
  explicit Connection(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The client library's own version, for --version.
[[nodiscard]] std::string client_library_version();

}  // namespace cdc::mysql
