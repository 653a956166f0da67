#pragma once

#include <cstdint>
#include <functional>
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
  // The statements in one round trip (multiple statements are turned on for the connection
  // the first time), one result each, in order. The server stops at the first that fails;
  // the error names it. Not retried on a lost connection, whatever reconnect_when_lost says:
  // for work that is tried again as a whole (a snapshot chunk).
  Result<std::vector<QueryResult>> query_batch(std::span<const std::string> statements);
  // For writers (cdc-apply): count statements joined by ';' in sql, in one round trip, without
  // result sets; the rows each affected are appended to affected (an UPDATE's found rows with
  // found_rows). On failure affected holds the counts of the statements before the one that
  // failed, and the message is the server's, without the text (a batch of rows runs to
  // megabytes). Not retried.
  Result<void> execute_batch(std::string_view sql, std::size_t count, std::vector<std::uint64_t>& affected);

  // ---- reconnecting (cdc-plan, whose queries each stand alone) ----
  // When set, a query whose connection is lost (Errc::unavailable: the network, a server
  // restart, KILL) is run again on a new connection, after the session statements given to
  // set_session, on the schedule of util/retry.h; notice is told of every wait. Without it
  // (the default) the error is returned, for callers that retry larger units of work.
  struct Reconnect {
    unsigned retry_for_seconds = 0;  // 0: forever
    std::function<void(std::string_view)> notice;
  };
  void reconnect_when_lost(Reconnect policy);
  // Runs a session statement (SET ...) and remembers it for the connections reconnect opens.
  Result<void> set_session(std::string_view sql);

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
  // The server's id for this connection (CONNECTION_ID(), what KILL takes).
  [[nodiscard]] std::uint64_t thread_id() const;
  // Whether the session is inside a transaction, as the server's status flags said in its
  // last answer (SERVER_STATUS_IN_TRANS).
  [[nodiscard]] bool in_transaction() const;

 private:
  struct Impl;
  explicit Connection(std::unique_ptr<Impl> impl);
  Result<QueryResult> query_once(std::string_view sql);
  // A new connection in place of the lost one, with the session statements run again.
  Result<void> reopen();
  std::unique_ptr<Impl> impl_;

  // ---- cdc-snapshot: one statement's result streamed row by row (binary protocol) ----
 public:
  // A result column as the server describes it. type is the protocol's field type (the same
  // numbers as ColumnType: 1 TINY ... 254 STRING, 255 GEOMETRY); flags the
  // protocol's column flags (32 UNSIGNED, 128 BINARY, 256 ENUM, 2048 SET); charsetnr the
  // collation id the values come in (the column's own with character_set_results = NULL).
  struct StreamColumn {
    std::string name;
    std::uint8_t type = 0;
    std::uint16_t charsetnr = 0;
    std::uint32_t flags = 0;
    std::uint32_t decimals = 0;
    std::uint64_t length = 0;
  };
  // One value of a row, valid only during the row callback. Which member holds it follows
  // the column's type: integers (TINY..LONGLONG, INT24, YEAR) in integer (unsigned ones
  // bit-cast), FLOAT in real32, DOUBLE in real64, DATE/TIME/DATETIME/TIMESTAMP in time, every
  // other type in bytes (the value's own bytes, no conversion: it points into the connection's
  // packet buffer, which holds the row until the next fetch). A TIME's days are in hour.
  struct StreamTime {
    unsigned year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    unsigned long micros = 0;
    bool negative = false;
  };
  struct StreamCell {
    bool is_null = false;
    std::int64_t integer = 0;
    float real32 = 0;
    double real64 = 0;
    StreamTime time;
    std::string_view bytes;
  };
  // Prepares sql (no parameters), executes it and fetches its rows one at a time without
  // storing the result: memory holds one row (one packet, decoded in place: no bind buffers,
  // no copies of the values). on_columns runs once before the first row; an
  // error from on_row stops the fetch (the rest is discarded) and is returned. The value is
  // the number of rows read.
  Result<std::uint64_t> stream_rows(
      std::string_view sql, const std::function<Result<void>(const std::vector<StreamColumn>&)>& on_columns,
      const std::function<Result<void>(const std::vector<StreamCell>&)>& on_row);
};

// The client library's own version, for --version.
[[nodiscard]] std::string client_library_version();

// Which errors mean the connection is gone (Errc::unavailable), not that the server refused
// the statement (Errc::server): the client library's own (CR_*: lost, gone away, cannot
// connect), the server telling it closes this connection (killed, shutting down), and 0, a
// failure the library gave no number for.
[[nodiscard]] Errc error_category(unsigned error_number) noexcept;

// The error of a failed call on a prepared statement: the statement's own when it has one,
// else the connection's. Connector/C leaves a failed row fetch's error on the connection, not
// the statement: mysql_stmt_fetch returns 1 with mysql_stmt_errno 0 when the connection was
// lost or KILLed while the rows came. With no error on either, the connection is taken as
// lost (Errc::unavailable), so that the caller's retry reads the work again. what: "{endpoint}:
// reading the rows of '{sql}'", before " failed: ...".
[[nodiscard]] Error statement_error(std::string_view what, unsigned statement_errno, std::string_view statement_text,
                                    unsigned connection_errno, std::string_view connection_text);

}  // namespace cdc::mysql
