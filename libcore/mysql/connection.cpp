#include "mysql/connection.h"

#include <fmt/format.h>
#include <mariadb_version.h>
#include <mysql.h>
#include <mysqld_error.h>
#include <errmsg.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>

#include "mysql/connection_impl.h"
#include "util/bits.h"
#include "util/retry.h"

namespace cdc::mysql {

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

// Connector/C has no MYSQL_OPT_SSL_MODE; each mode is built from its TLS options. What 3.3
// (OpenSSL) does with them, read in its source and checked by tests/integration/tls.sh:
//  - MYSQL_OPT_SSL_ENFORCE, or any of ssl_ca, ssl_cert, ssl_key (given here or in the option
//    files), turns TLS on, but the client still goes on in plain text when the server offers
//    no TLS (MDEV-28634) unless MYSQL_OPT_SSL_VERIFY_SERVER_CERT is set;
//  - with ssl_ca set, the handshake verifies the certificate chain against it, in every mode;
//  - MYSQL_OPT_SSL_VERIFY_SERVER_CERT adds the host-name check, and without ssl_ca verifies
//    the chain against the system's default authorities.
// So VERIFY_CA with --ssl-ca is ssl_ca alone (chain, no host name); VERIFY_CA without it needs
// VERIFY_SERVER_CERT, the only way to have the chain checked against the default
// authorities, and then checks the host name too. DISABLED leaves the files out, since
// ssl_ca alone would turn TLS back on. REQUIRED and VERIFY_CA are checked after the
// handshake (Connection::open) for the plain-text fallback.
bool verifies_host_name(const ConnectionOptions& options) {
  return options.ssl_mode == SslMode::verify_identity || (options.ssl_mode == SslMode::verify_ca && !options.ssl_ca);
}

void apply_tls(MYSQL* handle, const ConnectionOptions& options) {
  const my_bool yes = 1;
  const my_bool no = 0;
  if (options.ssl_mode == SslMode::disabled) {
    mysql_optionsv(handle, MYSQL_OPT_SSL_ENFORCE, &no);
    mysql_optionsv(handle, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &no);
    return;
  }
  if (options.ssl_ca) mysql_optionsv(handle, MYSQL_OPT_SSL_CA, options.ssl_ca->c_str());
  if (options.ssl_cert) mysql_optionsv(handle, MYSQL_OPT_SSL_CERT, options.ssl_cert->c_str());
  if (options.ssl_key) mysql_optionsv(handle, MYSQL_OPT_SSL_KEY, options.ssl_key->c_str());
  if (options.ssl_mode != SslMode::unset) mysql_optionsv(handle, MYSQL_OPT_SSL_ENFORCE, &yes);
  if (verifies_host_name(options)) mysql_optionsv(handle, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &yes);
}

bool same_file(const std::string& given, const char* used) {
  std::error_code ignored;
  return given == used || std::filesystem::equivalent(given, used, ignored);
}

// Connector/C reads the option files inside mysql_real_connect, after the options set here,
// so an option file's ssl-ca, ssl-cert or ssl-key replaces the command line's. Names the first
// such replacement (the handle keeps its options after a failed connect too, thanks to
// CLIENT_REMEMBER_OPTIONS), so that no other CA than --ssl-ca's is trusted unnoticed.
std::optional<std::string> replaced_tls_file(const ConnectionOptions& options, const MYSQL* handle) {
  if (options.ssl_mode == SslMode::disabled) return std::nullopt;
  const std::tuple<std::string_view, const std::optional<std::string>*, const char*> files[] = {
      {"ssl-ca", &options.ssl_ca, handle->options.ssl_ca},
      {"ssl-cert", &options.ssl_cert, handle->options.ssl_cert},
      {"ssl-key", &options.ssl_key, handle->options.ssl_key}};
  for (const auto& [name, given, used] : files) {
    if (!*given || (used != nullptr && same_file(**given, used))) continue;
    return fmt::format("the option files' {} ('{}') replaced --{} ('{}'): the client library reads them after "
                       "the command line; remove {} from the option files, or give --defaults-file with a "
                       "file without it",
                       name, used != nullptr ? used : "", name, **given, name);
  }
  return std::nullopt;
}

std::string connect_hint(unsigned error_number, std::string_view error_text, const ConnectionOptions& options,
                         const MYSQL* handle) {
  switch (error_number) {
    case ER_ACCESS_DENIED_ERROR:
    case ER_DBACCESS_DENIED_ERROR:
      return "check --user and the password (-p, MYSQL_PWD or --defaults-file); an account created with "
             "REQUIRE SSL also needs TLS (--ssl-mode REQUIRED or stricter), one with REQUIRE X509 a client "
             "certificate too (--ssl-cert and --ssl-key)";
    case CR_CONNECTION_ERROR:
    case CR_CONN_HOST_ERROR:
    case CR_UNKNOWN_HOST:
    case CR_SERVER_LOST:
      return "check --host/--port or --socket, and that the server is running";
    case CR_SSL_CONNECTION_ERROR:
      // DISABLED hands the library no TLS files, so these came from the option files.
      if (options.ssl_mode == SslMode::disabled) {
        for (const char* file : {handle->options.ssl_ca, handle->options.ssl_cert, handle->options.ssl_key})
          if (file != nullptr)
            return fmt::format("--ssl-mode DISABLED cannot keep the option files' TLS settings ('{}') from turning "
                               "TLS on, as the client library reads them while it connects: remove their ssl-ca, "
                               "ssl-cert and ssl-key lines, or give --defaults-file with a file without them",
                               file);
      }
      // The library's text for a failed host-name check (ma_tls_verify_server_cert).
      if (verifies_host_name(options) && error_text.find("Validation of SSL server certificate") != std::string_view::npos)
        return fmt::format("the server's TLS certificate does not name the host '{}' (--ssl-mode {}): connect "
                           "with a name the certificate has (its subjectAltName), or use --ssl-mode VERIFY_CA "
                           "with --ssl-ca to check the certificate without the host name",
                           options.host.value_or("localhost"),
                           options.ssl_mode == SslMode::verify_ca ? "VERIFY_CA without --ssl-ca" : "VERIFY_IDENTITY");
      return "the TLS handshake failed: check --ssl-ca (the authority that signed the server's certificate), "
             "--ssl-cert and --ssl-key, --ssl-mode, and that the server has TLS enabled";
    default:
      return "check the connection options (see --help)";
  }
}

}  // namespace

constexpr unsigned kErConnectionKilled = 1927;  // MariaDB's ER_CONNECTION_KILLED
Errc error_category(unsigned error_number) noexcept {
  if (error_number >= CR_MIN_ERROR && error_number <= CR_MAX_ERROR) return Errc::unavailable;
  if (error_number == kErConnectionKilled || error_number == ER_SERVER_SHUTDOWN) return Errc::unavailable;
  // No number: the library found the connection unusable without saying why (a row fetch on
  // a connection closed under it). Taken as lost: a retry on a new connection is the remedy.
  if (error_number == 0) return Errc::unavailable;
  return Errc::server;
}

Error statement_error(std::string_view what, unsigned statement_errno, std::string_view statement_text,
                      unsigned connection_errno, std::string_view connection_text) {
  if (statement_errno != 0)
    return Error{error_category(statement_errno),
                 fmt::format("{} failed: {} [{}]", what, statement_text, statement_errno)};
  if (connection_errno != 0)
    return Error{error_category(connection_errno),
                 fmt::format("{} failed: {} [{}]", what, connection_text, connection_errno)};
  return Error{Errc::unavailable,
               fmt::format("{} failed with no error from the client library or the server: taken as a lost "
                           "connection [0]",
                           what)};
}

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
                         c_str_or_null(options.socket),
                         CLIENT_MULTI_RESULTS | CLIENT_REMEMBER_OPTIONS | (options.found_rows ? CLIENT_FOUND_ROWS : 0)) ==
      nullptr) {
    const unsigned error_number = mysql_errno(handle);
    const std::string endpoint = describe_endpoint(options, handle);
    const std::string_view error_text = mysql_error(handle);
    const std::optional<std::string> replaced = replaced_tls_file(options, handle);
    return fail(Errc::unavailable,
                fmt::format("cannot connect{}{}: {} [{}]; {}", endpoint.empty() ? "" : " to ", endpoint, error_text,
                            error_number, replaced ? *replaced : connect_hint(error_number, error_text, options, handle)));
  }
  impl->endpoint = describe_endpoint(options, handle);
  if (const std::optional<std::string> replaced = replaced_tls_file(options, handle))
    return fail(Errc::usage, fmt::format("{}: {}", impl->endpoint, *replaced));
  impl->options = options;
  // Connector/C 3.3 without VERIFY_SERVER_CERT silently falls back to plain text when the
  // server offers no TLS (MDEV-28634). So REQUIRED and VERIFY_CA are checked here. The
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

void Connection::reconnect_when_lost(Reconnect policy) { impl_->reconnect = std::move(policy); }

Result<void> Connection::set_session(std::string_view sql) {
  auto done = query(sql);
  if (!done) return fail(std::move(done).error());
  impl_->session.emplace_back(sql);
  return {};
}

Result<void> Connection::reopen() {
  auto fresh = Connection::open(impl_->options);
  if (!fresh) return fail(std::move(fresh).error());
  std::swap(impl_->handle, fresh->impl_->handle);  // the old handle is closed with `fresh`
  impl_->multi_statements = false;
  impl_->endpoint = fresh->impl_->endpoint;
  for (const std::string& sql : impl_->session)
    if (auto done = query_once(sql); !done) return fail(std::move(done).error());
  return {};
}

Result<QueryResult> Connection::query(std::string_view sql) {
  auto result = query_once(sql);
  if (result || !impl_->reconnect || result.error().code != Errc::unavailable) return result;
  RetrySchedule schedule(impl_->reconnect->retry_for_seconds);
  Error error = result.error();
  for (;;) {
    const auto wait = schedule.after_failure();
    if (!wait)
      return fail(error.with_context(
          fmt::format("gave up reconnecting after {} s (--retry-for)", schedule.retry_for_seconds())));
    if (impl_->reconnect->notice)
      impl_->reconnect->notice(fmt::format("{}; reconnecting in {:.1f} s, then running the query again",
                                           error.message, std::chrono::duration<double>(*wait).count()));
    std::this_thread::sleep_for(*wait);
    if (auto reopened = reopen(); !reopened) {
      error = reopened.error();
      if (error.code != Errc::unavailable) return fail(std::move(error));
      continue;
    }
    result = query_once(sql);
    if (result || result.error().code != Errc::unavailable) return result;
    error = result.error();
  }
}

namespace {

// The result set the last statement left (none for a statement without one), read whole.
Result<QueryResult> store_result(MYSQL* handle, const std::string& endpoint, std::string_view sql) {
  QueryResult result;
  MYSQL_RES* rows = mysql_store_result(handle);
  if (rows == nullptr) {
    if (mysql_field_count(handle) == 0) return result;  // a statement without a result set
    return fail(Errc::unavailable,
                fmt::format("{}: reading the result of '{}' failed: {}", endpoint, sql, mysql_error(handle)));
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
  return result;
}

// Further result sets (CLIENT_MULTI_RESULTS: a procedure's; a failed batch's rest), read and
// dropped so that the connection stays usable.
void drain_results(MYSQL* handle) {
  while (mysql_more_results(handle) && mysql_next_result(handle) == 0) {
    if (MYSQL_RES* extra = mysql_store_result(handle)) mysql_free_result(extra);
  }
}

}  // namespace

Result<QueryResult> Connection::query_once(std::string_view sql) {
  MYSQL* handle = impl_->handle;
  if (mysql_real_query(handle, sql.data(), static_cast<unsigned long>(sql.size())) != 0) {
    const unsigned error_number = mysql_errno(handle);
    const Errc code = error_category(error_number);
    return fail(code, fmt::format("{}: query '{}' failed: {} [{}]", impl_->endpoint, sql,
                                  mysql_error(handle), error_number));
  }
  auto result = store_result(handle, impl_->endpoint, sql);
  drain_results(handle);
  return result;
}

Result<std::vector<QueryResult>> Connection::query_batch(std::span<const std::string> statements) {
  MYSQL* handle = impl_->handle;
  if (!impl_->multi_statements) {
    if (mysql_set_server_option(handle, MYSQL_OPTION_MULTI_STATEMENTS_ON) != 0) {
      const unsigned error_number = mysql_errno(handle);
      return fail(error_category(error_number), fmt::format("{}: enabling multiple statements failed: {} [{}]",
                                                            impl_->endpoint, mysql_error(handle), error_number));
    }
    impl_->multi_statements = true;
  }
  std::string sql;
  for (const std::string& statement : statements) {
    if (!sql.empty()) sql += ';';
    sql += statement;
  }
  std::vector<QueryResult> results;
  results.reserve(statements.size());
  // The server runs the statements in order and stops at the first that fails.
  const auto failed = [&]() -> Unexpected {
    const unsigned error_number = mysql_errno(handle);
    const std::string& statement = statements[std::min(results.size(), statements.size() - 1)];
    Error error{error_category(error_number), fmt::format("{}: query '{}' failed: {} [{}]", impl_->endpoint,
                                                          statement, mysql_error(handle), error_number)};
    drain_results(handle);
    return fail(std::move(error));
  };
  if (mysql_real_query(handle, sql.data(), static_cast<unsigned long>(sql.size())) != 0) return failed();
  for (;;) {
    auto result = store_result(handle, impl_->endpoint, statements[results.size()]);
    if (!result) return fail(std::move(result).error());
    results.push_back(std::move(*result));
    if (results.size() == statements.size()) break;
    const int next = mysql_next_result(handle);
    if (next > 0) return failed();
    if (next < 0)
      return fail(Errc::internal, fmt::format("{}: {} statements sent, {} results came back", impl_->endpoint,
                                              statements.size(), results.size()));
  }
  drain_results(handle);
  return results;
}

Result<void> Connection::execute_batch(std::string_view sql, std::size_t count, std::vector<std::uint64_t>& affected) {
  MYSQL* handle = impl_->handle;
  if (!impl_->multi_statements) {
    if (mysql_set_server_option(handle, MYSQL_OPTION_MULTI_STATEMENTS_ON) != 0) {
      const unsigned error_number = mysql_errno(handle);
      return fail(error_category(error_number), fmt::format("{}: enabling multiple statements failed: {} [{}]",
                                                            impl_->endpoint, mysql_error(handle), error_number));
    }
    impl_->multi_statements = true;
  }
  const auto failed = [&]() -> Unexpected {
    const unsigned error_number = mysql_errno(handle);
    Error error{error_category(error_number),
                fmt::format("{}: {} [{}]", impl_->endpoint, mysql_error(handle), error_number)};
    drain_results(handle);
    return fail(std::move(error));
  };
  if (mysql_real_query(handle, sql.data(), static_cast<unsigned long>(sql.size())) != 0) return failed();
  for (std::size_t done = 0;;) {
    if (MYSQL_RES* rows = mysql_store_result(handle)) mysql_free_result(rows);
    affected.push_back(static_cast<std::uint64_t>(mysql_affected_rows(handle)));
    if (++done == count) break;
    const int next = mysql_next_result(handle);
    if (next > 0) return failed();
    if (next < 0)
      return fail(Errc::internal,
                  fmt::format("{}: {} statements sent, {} results came back", impl_->endpoint, count, done));
  }
  drain_results(handle);
  return {};
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

std::uint64_t Connection::thread_id() const { return mysql_thread_id(impl_->handle); }

bool Connection::in_transaction() const {
  unsigned int status = 0;
  if (mariadb_get_infov(impl_->handle, MARIADB_CONNECTION_SERVER_STATUS, &status) != 0) return false;
  return (status & SERVER_STATUS_IN_TRANS) != 0;
}

std::string client_library_version() {
  return fmt::format("MariaDB Connector/C {}", mysql_get_client_info());
}

}  // namespace cdc::mysql
