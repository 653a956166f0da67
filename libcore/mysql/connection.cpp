#include "mysql/connection.h"

#include <fmt/format.h>
#include <mariadb_version.h>
#include <mysql.h>
#include <mysqld_error.h>
#include <errmsg.h>

#include <cstdlib>
#include <cstring>
#include <utility>

namespace cdc::mysql {

struct Connection::Impl {
  MYSQL* handle = nullptr;
  std::string endpoint;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (handle != nullptr) mysql_close(handle);
  }
};

namespace {

const char* c_str_or_null(const std::optional<std::string>& text) {
  return text ? text->c_str() : nullptr;
}

// Names the server as the client library resolved it. After a failed connect the handle has
// forgotten what the option files said, so only the command line (and MYSQL_TCP_PORT, which
// the library consults next) can name it; otherwise the library's own message does.
std::string describe_endpoint(const ConnectionOptions& options, MYSQL* handle) {
  if (handle->host != nullptr && handle->host_info != nullptr) {  // connected: the library knows
    if (handle->unix_socket != nullptr && std::string_view(handle->host_info).find("socket") != std::string_view::npos)
      return fmt::format("socket {}", handle->unix_socket);
    return fmt::format("{}:{}", handle->host, handle->port);
  }
  if (options.socket && (!options.host || *options.host == "localhost"))
    return fmt::format("socket {}", *options.socket);
  if (!options.host || *options.host == "localhost") return {};
  unsigned port = options.port.value_or(0);
  if (port == 0) {
    const char* env_port = std::getenv("MYSQL_TCP_PORT");
    port = env_port != nullptr ? static_cast<unsigned>(std::strtoul(env_port, nullptr, 10)) : 0U;
  }
  return port == 0 ? *options.host : fmt::format("{}:{}", *options.host, port);
}

// Connector/C has no MYSQL_OPT_SSL_MODE. PREFERRED is its default behaviour only when TLS
// options are set; REQUIRED is SSL_ENFORCE; both VERIFY modes turn on server certificate
// verification, which in Connector/C checks the chain against --ssl-ca and the host name
// together, so VERIFY_CA is as strict as VERIFY_IDENTITY here.
void apply_tls(MYSQL* handle, const ConnectionOptions& options) {
  const my_bool yes = 1;
  const my_bool no = 0;
  if (options.ssl_ca) mysql_optionsv(handle, MYSQL_OPT_SSL_CA, options.ssl_ca->c_str());
  switch (options.ssl_mode) {
    case SslMode::unset:
      break;
    case SslMode::disabled:
      mysql_optionsv(handle, MYSQL_OPT_SSL_ENFORCE, &no);
      mysql_optionsv(handle, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &no);
      handle->options.use_ssl = 0;
      break;
    case SslMode::preferred:
      break;
    case SslMode::required:
      mysql_optionsv(handle, MYSQL_OPT_SSL_ENFORCE, &yes);
      break;
    case SslMode::verify_ca:
    case SslMode::verify_identity:
      mysql_optionsv(handle, MYSQL_OPT_SSL_ENFORCE, &yes);
      mysql_optionsv(handle, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &yes);
      break;
  }
}

std::string connect_hint(unsigned error_number) {
  switch (error_number) {
    case ER_ACCESS_DENIED_ERROR:
    case ER_DBACCESS_DENIED_ERROR:
      return "check --user and the password (-p, MYSQL_PWD or --defaults-file)";
    case CR_CONNECTION_ERROR:
    case CR_CONN_HOST_ERROR:
    case CR_UNKNOWN_HOST:
    case CR_SERVER_LOST:
      return "check --host/--port or --socket, and that the server is running";
    case CR_SSL_CONNECTION_ERROR:
      return "check --ssl-mode and --ssl-ca, and whether the server has TLS enabled";
    default:
      return "check the connection options (see --help)";
  }
}

}  // namespace

Connection::Connection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Connection::Connection(Connection&&) noexcept = default;
Connection& Connection::operator=(Connection&&) noexcept = default;
Connection::~Connection() = default;

Result<Connection> Connection::open(const ConnectionOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->handle = mysql_init(nullptr);
  if (impl->handle == nullptr) return fail(Errc::internal, "mysql_init failed: out of memory");
  MYSQL* handle = impl->handle;

  // Read [client], [client-server], [client-mariadb] and our group from the default option
  // files (or only from --defaults-file), exactly as the mysql client does.
  if (options.defaults_file) mysql_optionsv(handle, MYSQL_READ_DEFAULT_FILE, options.defaults_file->c_str());
  mysql_optionsv(handle, MYSQL_READ_DEFAULT_GROUP, options.defaults_group.c_str());
  const unsigned timeout = options.connect_timeout_seconds;
  mysql_optionsv(handle, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
  if (options.read_timeout_seconds > 0) {
    const unsigned read_timeout = options.read_timeout_seconds;
    mysql_optionsv(handle, MYSQL_OPT_READ_TIMEOUT, &read_timeout);
  }
  // A binlog event can be as large as the server's max_allowed_packet (1 GiB at most).
  const unsigned long max_packet = 1UL << 30;
  mysql_optionsv(handle, MYSQL_OPT_MAX_ALLOWED_PACKET, &max_packet);
  mysql_optionsv(handle, MYSQL_SET_CHARSET_NAME, "utf8mb4");
  if (options.socket && !options.host) {
    const mysql_protocol_type protocol = MYSQL_PROTOCOL_SOCKET;
    mysql_optionsv(handle, MYSQL_OPT_PROTOCOL, &protocol);
  }
  apply_tls(handle, options);

  // A null password lets the library take the option files' password, then MYSQL_PWD.
  if (mysql_real_connect(handle, c_str_or_null(options.host), c_str_or_null(options.user),
                         c_str_or_null(options.password), nullptr, options.port.value_or(0),
                         c_str_or_null(options.socket), CLIENT_MULTI_RESULTS) == nullptr) {
    const unsigned error_number = mysql_errno(handle);
    const std::string endpoint = describe_endpoint(options, handle);
    return fail(Errc::unavailable,
                fmt::format("cannot connect{}{}: {} [{}]; {}", endpoint.empty() ? "" : " to ", endpoint,
                            mysql_error(handle), error_number, connect_hint(error_number)));
  }
  impl->endpoint = describe_endpoint(options, handle);
  // Connector/C 3.3 with SSL_ENFORCE alone silently falls back to plain text when the server
  // offers no TLS (MDEV-28634); the VERIFY modes do abort. So REQUIRED is checked here. The
  // login before this point never sends the password in clear with the native and
  // caching_sha2 plugins (a scramble), which is why checking afterwards is acceptable.
  const bool tls_wanted = options.ssl_mode == SslMode::required || options.ssl_mode == SslMode::verify_ca ||
                          options.ssl_mode == SslMode::verify_identity;
  if (tls_wanted && mysql_get_ssl_cipher(handle) == nullptr)
    return fail(Errc::unavailable,
                fmt::format("{}: the server did not agree to TLS, which --ssl-mode requires; enable TLS on "
                            "the server (ssl_cert, ssl_key) or choose another --ssl-mode",
                            impl->endpoint));
  return Connection(std::move(impl));
}

Result<QueryResult> Connection::query(std::string_view sql) {
  MYSQL* handle = impl_->handle;
  if (mysql_real_query(handle, sql.data(), static_cast<unsigned long>(sql.size())) != 0) {
    const unsigned error_number = mysql_errno(handle);
    const Errc code = error_number >= CR_MIN_ERROR && error_number <= CR_MAX_ERROR ? Errc::unavailable
                                                                                   : Errc::server;
    return fail(code, fmt::format("{}: query '{}' failed: {} [{}]", impl_->endpoint, sql,
                                  mysql_error(handle), error_number));
  }
  QueryResult result;
  MYSQL_RES* rows = mysql_store_result(handle);
  if (rows == nullptr) {
    if (mysql_field_count(handle) == 0) return result;  // a statement without a result set
    return fail(Errc::unavailable, fmt::format("{}: reading the result of '{}' failed: {}",
                                               impl_->endpoint, sql, mysql_error(handle)));
  }
  const unsigned field_count = mysql_num_fields(rows);
  const MYSQL_FIELD* fields = mysql_fetch_fields(rows);
  result.columns.reserve(field_count);
  for (unsigned i = 0; i < field_count; ++i) result.columns.emplace_back(fields[i].name);
  while (MYSQL_ROW row = mysql_fetch_row(rows)) {
    const unsigned long* lengths = mysql_fetch_lengths(rows);
    auto& out = result.rows.emplace_back();
    out.reserve(field_count);
    for (unsigned i = 0; i < field_count; ++i) {
      if (row[i] == nullptr)
        out.emplace_back(std::nullopt);
      else
        out.emplace_back(std::string(row[i], lengths[i]));
    }
  }
  mysql_free_result(rows);
  // Drain further result sets (CLIENT_MULTI_RESULTS) so the connection stays usable.
  while (mysql_more_results(handle) && mysql_next_result(handle) == 0) {
    if (MYSQL_RES* extra = mysql_store_result(handle)) mysql_free_result(extra);
  }
  return result;
}

Result<void> Connection::send_command(std::uint8_t command, std::span<const std::uint8_t> payload, bool expect_ok) {
  MYSQL* handle = impl_->handle;
  const my_bool skip_answer = expect_ok ? 0 : 1;
  if (handle->methods->db_command(handle, static_cast<enum_server_command>(command),
                                  reinterpret_cast<const char*>(payload.data()), payload.size(), skip_answer,
                                  nullptr) != 0)
    return fail(Errc::unavailable, fmt::format("{}: sending command {:#x} failed: {} [{}]", impl_->endpoint, command,
                                               mysql_error(handle), mysql_errno(handle)));
  return {};
}

Result<std::span<const std::uint8_t>> Connection::read_packet() {
  MYSQL* handle = impl_->handle;
  const unsigned long length = mysql_net_read_packet(handle);
  if (length == packet_error) {
    const unsigned error_number = mysql_errno(handle);
    const Errc code = error_number >= CR_MIN_ERROR && error_number <= CR_MAX_ERROR ? Errc::unavailable
                                                                                   : Errc::server;
    return fail(code, fmt::format("{}: {} [{}]", impl_->endpoint, mysql_error(handle), error_number));
  }
  return std::span<const std::uint8_t>(handle->net.read_pos, length);
}

unsigned Connection::last_error_number() const { return mysql_errno(impl_->handle); }

int Connection::socket() const { return static_cast<int>(mysql_get_socket(impl_->handle)); }

std::string Connection::server_version() const { return mysql_get_server_info(impl_->handle); }

const std::string& Connection::endpoint() const { return impl_->endpoint; }

bool Connection::uses_tls() const { return mysql_get_ssl_cipher(impl_->handle) != nullptr; }

std::string client_library_version() {
  return fmt::format("MariaDB Connector/C {}", mysql_get_client_info());
}


// ---- cdc-snapshot: streamed statements ----

namespace {

// The statement handle, closed on every path (mysql_stmt_close discards unread rows).
struct StatementCloser {
  MYSQL_STMT* stmt;
  ~StatementCloser() {
    if (stmt != nullptr) mysql_stmt_close(stmt);
  }
};

bool is_integer_field(enum_field_types type) {
  switch (type) {
    case MYSQL_TYPE_TINY:
    case MYSQL_TYPE_SHORT:
    case MYSQL_TYPE_LONG:
    case MYSQL_TYPE_LONGLONG:
    case MYSQL_TYPE_INT24:
    case MYSQL_TYPE_YEAR:
      return true;
    default:
      return false;
  }
}

bool is_time_field(enum_field_types type) {
  switch (type) {
    case MYSQL_TYPE_DATE:
    case MYSQL_TYPE_NEWDATE:
    case MYSQL_TYPE_TIME:
    case MYSQL_TYPE_DATETIME:
    case MYSQL_TYPE_TIMESTAMP:
      return true;
    default:
      return false;
  }
}

}  // namespace

Result<std::uint64_t> Connection::stream_rows(
    std::string_view sql, const std::function<Result<void>(const std::vector<StreamColumn>&)>& on_columns,
    const std::function<Result<void>(const std::vector<StreamCell>&)>& on_row) {
  MYSQL* handle = impl_->handle;
  const auto server_error = [&](MYSQL_STMT* stmt, std::string_view what) {
    const unsigned error_number = stmt != nullptr ? mysql_stmt_errno(stmt) : mysql_errno(handle);
    const Errc code = error_number >= CR_MIN_ERROR && error_number <= CR_MAX_ERROR ? Errc::unavailable : Errc::server;
    return Error{code, fmt::format("{}: {} '{}' failed: {} [{}]", impl_->endpoint, what, sql,
                                   stmt != nullptr ? mysql_stmt_error(stmt) : mysql_error(handle), error_number)};
  };
  StatementCloser closer{mysql_stmt_init(handle)};
  MYSQL_STMT* stmt = closer.stmt;
  if (stmt == nullptr) return fail(Errc::internal, "mysql_stmt_init failed: out of memory");
  if (mysql_stmt_prepare(stmt, sql.data(), static_cast<unsigned long>(sql.size())) != 0)
    return fail(server_error(stmt, "preparing"));
  if (mysql_stmt_execute(stmt) != 0) return fail(server_error(stmt, "executing"));
  MYSQL_RES* meta = mysql_stmt_result_metadata(stmt);
  if (meta == nullptr) return std::uint64_t{0};
  const unsigned count = mysql_num_fields(meta);
  const MYSQL_FIELD* fields = mysql_fetch_fields(meta);
  std::vector<StreamColumn> columns(count);
  for (unsigned i = 0; i < count; ++i) {
    columns[i].name = fields[i].name;
    columns[i].type = static_cast<std::uint8_t>(fields[i].type);
    columns[i].charsetnr = static_cast<std::uint16_t>(fields[i].charsetnr);
    columns[i].flags = fields[i].flags;
    columns[i].decimals = fields[i].decimals;
    columns[i].length = fields[i].length;
  }
  mysql_free_result(meta);
  if (auto accepted = on_columns(columns); !accepted) return fail(accepted.error());

  // One bind per column, typed so that the library hands over the binary protocol's values
  // unconverted: 8-byte integers, float, double, MYSQL_TIME, or the bytes.
  std::vector<MYSQL_BIND> binds(count);
  std::vector<MYSQL_TIME> times(count);
  std::vector<std::string> buffers(count);
  std::vector<unsigned long> lengths(count);
  std::vector<my_bool> nulls(count);
  std::vector<my_bool> truncated(count);
  std::vector<StreamCell> cells(count);
  const auto bind_column = [&](unsigned i) {
    MYSQL_BIND& bind = binds[i];
    std::memset(&bind, 0, sizeof bind);
    bind.length = &lengths[i];
    bind.is_null = &nulls[i];
    bind.error = &truncated[i];
    const auto type = static_cast<enum_field_types>(columns[i].type);
    if (is_integer_field(type)) {
      bind.buffer_type = MYSQL_TYPE_LONGLONG;
      bind.buffer = &cells[i].integer;
      bind.is_unsigned = (columns[i].flags & UNSIGNED_FLAG) != 0 || type == MYSQL_TYPE_YEAR;
    } else if (type == MYSQL_TYPE_FLOAT) {
      bind.buffer_type = MYSQL_TYPE_FLOAT;
      bind.buffer = &cells[i].real32;
    } else if (type == MYSQL_TYPE_DOUBLE) {
      bind.buffer_type = MYSQL_TYPE_DOUBLE;
      bind.buffer = &cells[i].real64;
    } else if (is_time_field(type)) {
      bind.buffer_type = type == MYSQL_TYPE_NEWDATE ? MYSQL_TYPE_DATE : type;
      bind.buffer = &times[i];
      bind.buffer_length = sizeof(MYSQL_TIME);
    } else {
      if (buffers[i].empty()) buffers[i].resize(256);
      bind.buffer_type = MYSQL_TYPE_BLOB;
      bind.buffer = buffers[i].data();
      bind.buffer_length = static_cast<unsigned long>(buffers[i].size());
    }
  };
  for (unsigned i = 0; i < count; ++i) bind_column(i);
  if (mysql_stmt_bind_result(stmt, binds.data()) != 0) return fail(server_error(stmt, "binding the result of"));

  std::uint64_t rows = 0;
  for (;;) {
    const int fetched = mysql_stmt_fetch(stmt);
    if (fetched == MYSQL_NO_DATA) break;
    if (fetched == 1) return fail(server_error(stmt, "reading the rows of"));
    bool rebind = false;
    for (unsigned i = 0; i < count; ++i) {
      StreamCell& cell = cells[i];
      cell.is_null = nulls[i] != 0;
      if (cell.is_null) continue;
      const auto type = static_cast<enum_field_types>(columns[i].type);
      if (is_time_field(type)) {
        const MYSQL_TIME& t = times[i];
        // Connector/C folds a TIME's days into its hours; keep days too in case it does not.
        cell.time = StreamTime{t.year, t.month, t.day, t.hour, t.minute, t.second, t.second_part, t.neg != 0};
        if (type == MYSQL_TYPE_TIME && t.day != 0) {
          cell.time.hour += t.day * 24;
          cell.time.day = 0;
        }
      } else if (binds[i].buffer_type == MYSQL_TYPE_BLOB) {
        if (fetched == MYSQL_DATA_TRUNCATED && lengths[i] > buffers[i].size()) {
          // Longer than the buffer: grow it, read the value again, and bind the larger buffer
          // for the next rows. Memory is bounded by the largest value, not the result.
          buffers[i].resize(lengths[i]);
          MYSQL_BIND again;
          std::memset(&again, 0, sizeof again);
          unsigned long length = 0;
          again.buffer_type = MYSQL_TYPE_BLOB;
          again.buffer = buffers[i].data();
          again.buffer_length = static_cast<unsigned long>(buffers[i].size());
          again.length = &length;
          if (mysql_stmt_fetch_column(stmt, &again, i, 0) != 0) return fail(server_error(stmt, "reading a long value of"));
          rebind = true;
        }
        cell.bytes = std::string_view(buffers[i].data(), lengths[i]);
      }
    }
    ++rows;
    if (auto done = on_row(cells); !done) return fail(done.error());
    if (rebind) {
      for (unsigned i = 0; i < count; ++i) bind_column(i);
      if (mysql_stmt_bind_result(stmt, binds.data()) != 0) return fail(server_error(stmt, "binding the result of"));
    }
  }
  return rows;
}

}  // namespace cdc::mysql
