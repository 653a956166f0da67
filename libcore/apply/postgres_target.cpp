#include "apply/postgres_target.h"

#include <fmt/format.h>

#include <algorithm>

namespace cdc::apply {

namespace {

// standard_conforming_strings: a backslash is itself inside '...' (pg_value.h quotes so).
// TimeZone UTC: a TIMESTAMP's text carries its Z, but the position table's applied_at and a
// person's psql read UTC too. IntervalStyle postgres: how '-838:59:59' reads as an interval.
// client_min_messages: no notices for CREATE ... IF NOT EXISTS. Foreign keys stay checked:
// PostgreSQL has no session switch for them short of superuser rights (cdc-apply(1)).
constexpr const char* kSession =
    "SET standard_conforming_strings=on; SET client_encoding='UTF8'; SET TimeZone='UTC'; SET DateStyle='ISO, YMD'; "
    "SET IntervalStyle='postgres'; SET client_min_messages=warning";

}  // namespace

PostgresTarget::PostgresTarget(postgres::Connection connection, std::string conninfo, std::string position_table)
    : connection_(std::move(connection)), conninfo_(std::move(conninfo)), position_table_(std::move(position_table)) {}

Result<postgres::Connection> PostgresTarget::connect(const std::string& conninfo) {
  auto connection = postgres::Connection::open(conninfo, "cdc-apply");
  if (!connection) return fail(connection.error());
  if (auto set = connection->query(kSession); !set) return fail(set.error());
  return connection;
}

Result<std::unique_ptr<PostgresTarget>> PostgresTarget::open(const std::string& conninfo, std::string position_table,
                                                             const std::optional<std::string>& create_schema) {
  auto connection = connect(conninfo);
  if (!connection) return fail(connection.error());
  if (create_schema) {
    if (auto created = connection->query(create_namespace_sql(Dialect::postgres, *create_schema)); !created)
      return fail(created.error().code, fmt::format("creating the schema {}: {}", *create_schema, created.error().message));
  }
  if (auto created = connection->query(create_position_table_sql(position_table, Dialect::postgres)); !created)
    return fail(created.error().code, fmt::format("creating the position table: {}", created.error().message));
  return std::unique_ptr<PostgresTarget>(new PostgresTarget(std::move(*connection), conninfo, std::move(position_table)));
}

Result<AppliedState> PostgresTarget::reconnect() {
  auto connection = connect(conninfo_);
  if (!connection) return fail(connection.error());
  connection_ = std::move(*connection);
  return load_state();
}

Result<AppliedState> PostgresTarget::load_state() {
  auto rows = connection_.query(read_position_sql(position_table_));
  if (!rows) return fail(rows.error());
  mysql::QueryResult result;
  result.rows = std::move(*rows);
  return parse_position_rows(result);
}

Result<void> PostgresTarget::run_statements(const StatementBatch& batch) {
  const auto& statements = batch.statements();
  const std::string_view sql = batch.sql();
  std::size_t first = 0;
  std::size_t begin = 0;  // where statement `first` starts in sql
  // BEGIN goes with the first round trip; its result is the first one back.
  bool begun = false;
  while (first < statements.size() || !begun) {
    std::size_t last = first;
    if (first < statements.size()) {
      ++last;
      while (last < statements.size() && statements[last].end - begin <= kRoundTripBytes) ++last;
    }
    sql_.clear();
    if (!begun) sql_.append("BEGIN;");
    const std::size_t end = last > first ? statements[last - 1].end : begin;
    sql_.append(sql.substr(begin, end - begin));  // a NUL-terminated copy, as PQsendQuery reads
    affected_.clear();
    const std::size_t skip = begun ? 0 : 1;
    auto done = connection_.execute_batch(sql_.c_str(), last - first + skip, affected_);
    if (!done) {
      if (affected_.size() < skip) return fail(target_error(done.error(), "BEGIN"));
      const std::size_t failed = std::min(first + affected_.size() - skip, last - 1);
      return fail(target_error(done.error(), batch.describe(statements[failed])));
    }
    begun = true;
    for (std::size_t i = first; i < last; ++i) {
      const StatementInfo& info = statements[i];
      if (info.exact && affected_[i - first + skip] != info.expected)
        return unexpected_count(batch, i, affected_[i - first + skip],
                                [this](std::string_view text, std::size_t count, std::vector<std::uint64_t>& counts) {
                                  const std::string terminated(text);  // PQsendQuery reads up to a NUL
                                  return connection_.execute_batch(terminated.c_str(), count, counts);
                                });
    }
    begin = end + 1;  // past the ';'
    first = last;
  }
  return {};
}

Result<void> PostgresTarget::commit(const StatementBatch& batch, const AppliedState& state) {
  auto applied = run_statements(batch);
  if (applied) {
    sql_.clear();
    append_write_position_sql(sql_, position_table_, state, Dialect::postgres);
    sql_.append(";COMMIT");
    affected_.clear();
    if (auto done = connection_.execute_batch(sql_.c_str(), 2, affected_); !done)
      applied = fail(target_error(done.error(), "position table's row"));
  }
  if (!applied) {
    if (connection_.usable()) (void)connection_.query("ROLLBACK");  // a lost connection rolls back by itself
    return applied;
  }
  return {};
}

Result<void> PostgresTarget::create_table(const std::string& sql) {
  if (auto done = connection_.query(sql); !done)
    return fail(target_error(done.error(), "CREATE of --create-tables"));
  return {};
}

Result<void> PostgresTarget::run_ddl(const std::string&, std::string_view) {
  return fail(Errc::usage, "--on-ddl apply: a MySQL DDL cannot run on a PostgreSQL target");
}

}  // namespace cdc::apply
