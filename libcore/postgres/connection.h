#pragma once

// One PostgreSQL connection through libpq, the protocol's reference client (what psql and
// every driver that does not reimplement the protocol use). The PGconn stays behind the pimpl:
// this is the only module that sees libpq's headers.
//
// Errors: Errc::unavailable when the server cannot be reached, refuses the login, or the
// connection is lost (the server restarted, the backend was terminated: SQLSTATE classes 08
// and 57P); Errc::server when the server refused a statement, with its message and SQLSTATE.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace cdc::postgres {

using Rows = std::vector<std::vector<std::optional<std::string>>>;

// "libpq 15.20": the client library's version (PQlibVersion), for --version.
[[nodiscard]] std::string library_version();

class Connection {
 public:
  // conninfo: a libpq connection string ("host=/run/pg port=5433 dbname=copy user=cdc") or URI
  // (postgresql://...); the password, when one is needed, from PGPASSWORD or ~/.pgpass as libpq
  // reads them. Notices (CREATE ... IF NOT EXISTS's "already exists, skipping") are not printed.
  [[nodiscard]] static Result<Connection> open(const std::string& conninfo, const char* application_name);
  Connection(Connection&&) noexcept;
  Connection& operator=(Connection&&) noexcept;
  ~Connection();

  // The rows of the last statement in sql (the simple protocol: several statements allowed).
  [[nodiscard]] Result<Rows> query(const std::string& sql);
  // count statements in sql in one round trip; the rows each affected (PQcmdTuples) appended
  // to affected. PostgreSQL stops at the first that fails: affected then holds the counts of
  // the ones before it. sql must end with a NUL (a std::string's c_str()).
  [[nodiscard]] Result<void> execute_batch(const char* sql, std::size_t count, std::vector<std::uint64_t>& affected);
  // Whether the connection is still usable (not lost).
  [[nodiscard]] bool usable() const;
  // "15.20": PQserverVersion's text.
  [[nodiscard]] std::string server_version() const;

 private:
  struct Impl;
  explicit Connection(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cdc::postgres
