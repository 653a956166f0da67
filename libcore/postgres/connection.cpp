#include "postgres/connection.h"

#include <libpq-fe.h>

#include <charconv>
#include <cstring>

#include <fmt/format.h>

namespace cdc::postgres {

struct Connection::Impl {
  PGconn* conn = nullptr;
  ~Impl() {
    if (conn != nullptr) PQfinish(conn);
  }
};

namespace {

void ignore_notice(void*, const char*) {}

// libpq's messages end with a newline and may span lines ("DETAIL: ..."): one line.
std::string one_line(std::string_view text) {
  std::string line;
  for (char c : text) {
    if (c == '\n' || c == '\t') c = ' ';
    if (c == ' ' && (line.empty() || line.back() == ' ')) continue;
    line.push_back(c);
  }
  if (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

// SQLSTATE 08xxx (connection exception) and 57P01..57P05 (the server shutting down, the
// backend terminated): the connection is gone, whatever PQstatus says yet. So is it for an
// error without SQLSTATE: the server gives every error of its own one, so that one is libpq's
// ("server closed the connection unexpectedly", read before PQstatus turns bad).
bool connection_lost(PGconn* conn, const PGresult* result) {
  if (PQstatus(conn) != CONNECTION_OK) return true;
  const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  if (state == nullptr) return true;
  return std::strncmp(state, "08", 2) == 0 || std::strncmp(state, "57P", 3) == 0;
}

Error error_of(PGconn* conn, const PGresult* result) {
  if (result == nullptr || PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY) == nullptr) {
    const Errc code = connection_lost(conn, result) ? Errc::unavailable : Errc::server;
    return Error{code, one_line(PQerrorMessage(conn))};
  }
  std::string message = PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
  if (const char* detail = PQresultErrorField(result, PG_DIAG_MESSAGE_DETAIL)) message += fmt::format(" ({})", detail);
  if (const char* state = PQresultErrorField(result, PG_DIAG_SQLSTATE)) message += fmt::format(" [SQLSTATE {}]", state);
  return Error{connection_lost(conn, result) ? Errc::unavailable : Errc::server, one_line(message)};
}

}  // namespace

std::string library_version() {
  const int version = PQlibVersion();
  return fmt::format("libpq {}.{}", version / 10000, version % 10000);
}

Connection::Connection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Connection::Connection(Connection&&) noexcept = default;
Connection& Connection::operator=(Connection&&) noexcept = default;
Connection::~Connection() = default;

Result<Connection> Connection::open(const std::string& conninfo, const char* application_name) {
  // dbname expanded: conninfo may be a whole connection string or URI; its own
  // application_name wins over ours.
  const char* keywords[] = {"fallback_application_name", "dbname", nullptr};
  const char* values[] = {application_name, conninfo.c_str(), nullptr};
  auto impl = std::make_unique<Impl>();
  impl->conn = PQconnectdbParams(keywords, values, 1);
  if (impl->conn == nullptr) return fail(Errc::internal, "libpq: out of memory");
  if (PQstatus(impl->conn) != CONNECTION_OK)
    return fail(Errc::unavailable, fmt::format("cannot connect to PostgreSQL: {}", one_line(PQerrorMessage(impl->conn))));
  PQsetNoticeProcessor(impl->conn, ignore_notice, nullptr);
  return Connection(std::move(impl));
}

Result<Rows> Connection::query(const std::string& sql) {
  PGconn* conn = impl_->conn;
  if (PQsendQuery(conn, sql.c_str()) == 0) return fail(error_of(conn, nullptr));
  Rows rows;
  std::optional<Error> error;
  while (PGresult* result = PQgetResult(conn)) {
    const ExecStatusType status = PQresultStatus(result);
    if (status == PGRES_TUPLES_OK) {
      rows.clear();
      const int count = PQntuples(result);
      const int fields = PQnfields(result);
      for (int r = 0; r < count; ++r) {
        auto& row = rows.emplace_back();
        for (int f = 0; f < fields; ++f) {
          if (PQgetisnull(result, r, f) != 0)
            row.emplace_back();
          else
            row.emplace_back(std::string(PQgetvalue(result, r, f), static_cast<std::size_t>(PQgetlength(result, r, f))));
        }
      }
    } else if (status != PGRES_COMMAND_OK && status != PGRES_EMPTY_QUERY && !error) {
      error = error_of(conn, result);
    }
    PQclear(result);
  }
  if (error && PQstatus(conn) != CONNECTION_OK) error->code = Errc::unavailable;
  if (error) return fail(*error);
  if (PQstatus(conn) != CONNECTION_OK) return fail(error_of(conn, nullptr));
  return rows;
}

Result<void> Connection::execute_batch(const char* sql, std::size_t count, std::vector<std::uint64_t>& affected) {
  PGconn* conn = impl_->conn;
  if (PQsendQuery(conn, sql) == 0) return fail(error_of(conn, nullptr));
  // Every result is read, to PQgetResult's NULL, also after an error: the connection takes no
  // new query before.
  std::optional<Error> error;
  std::size_t seen = 0;
  while (PGresult* result = PQgetResult(conn)) {
    const ExecStatusType status = PQresultStatus(result);
    if (!error) {
      if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
        const char* tuples = PQcmdTuples(result);
        std::uint64_t rows = 0;
        (void)std::from_chars(tuples, tuples + std::strlen(tuples), rows);  // "" for BEGIN, COMMIT
        affected.push_back(rows);
        ++seen;
      } else {
        error = error_of(conn, result);
      }
    }
    PQclear(result);
  }
  // Gone by the last result: whatever error came first is the connection's.
  if (error && PQstatus(conn) != CONNECTION_OK) error->code = Errc::unavailable;
  if (error) return fail(*error);
  if (PQstatus(conn) != CONNECTION_OK) return fail(error_of(conn, nullptr));
  if (seen != count)
    return fail(Errc::internal, fmt::format("{} statements sent, {} results back", count, seen));
  return {};
}

bool Connection::usable() const { return PQstatus(impl_->conn) == CONNECTION_OK; }

std::string Connection::server_version() const {
  const int version = PQserverVersion(impl_->conn);
  return fmt::format("{}.{}", version / 10000, version % 10000);
}

}  // namespace cdc::postgres
