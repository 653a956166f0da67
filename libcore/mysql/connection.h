#pragma once

#include <memory>
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
