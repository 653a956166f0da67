#include "apply/mariadb_target.h"

#include <fmt/format.h>

#include <algorithm>

#include "mysql/sql_text.h"

namespace cdc::apply {

namespace {

// time_zone: TIMESTAMP values come in UTC. sql_mode: strict, so a value the column cannot
// hold is an error rather than a warning and a clipped value; NO_AUTO_VALUE_ON_ZERO keeps a
// source's 0 in an AUTO_INCREMENT column; no NO_BACKSLASH_ESCAPES, for append_quoted's
// escapes; no NO_ZERO_DATE, for the zero dates the source holds. foreign_key_checks: the
// source checked them; its order of changes within a transaction need not satisfy them
// row by row (cascades are logged as rows of their own).
const std::string kSession =
    fmt::format("SET time_zone='+00:00', sql_mode='{}', foreign_key_checks=0", kMariadbSqlMode);

}  // namespace

MariadbTarget::MariadbTarget(mysql::Connection connection, mysql::ConnectionOptions options,
                             std::string position_table)
    : connection_(std::move(connection)), options_(std::move(options)), position_table_(std::move(position_table)) {}

Result<mysql::Connection> MariadbTarget::connect(const mysql::ConnectionOptions& options) {
  auto connection = mysql::Connection::open(options);
  if (!connection) return fail(connection.error());
  if (auto set = connection->query(kSession); !set) return fail(set.error());
  return connection;
}

Result<std::unique_ptr<MariadbTarget>> MariadbTarget::open(mysql::ConnectionOptions options,
                                                           std::string position_table,
                                                           const std::optional<std::string>& create_database) {
  options.found_rows = true;
  auto connection = connect(options);
  if (!connection) return fail(connection.error());
  if (create_database) {
    if (auto created = connection->query("CREATE DATABASE IF NOT EXISTS " + mysql::quote_identifier(*create_database));
        !created)
      return fail(created.error());
  }
  if (auto created = connection->query(create_position_table_sql(position_table)); !created)
    return fail(created.error().code, fmt::format("creating the position table: {}", created.error().message));
  return std::unique_ptr<MariadbTarget>(
      new MariadbTarget(std::move(*connection), std::move(options), std::move(position_table)));
}

Result<AppliedState> MariadbTarget::reconnect() {
  auto connection = connect(options_);
  if (!connection) return fail(connection.error());
  connection_ = std::move(*connection);
  return load_state();
}

Result<AppliedState> MariadbTarget::load_state() {
  auto rows = connection_.query(read_position_sql(position_table_));
  if (!rows) return fail(rows.error());
  return parse_position_rows(*rows);
}

Result<void> MariadbTarget::run_statements(const StatementBatch& batch) {
  const auto& statements = batch.statements();
  const std::string_view sql = batch.sql();
  std::size_t first = 0;
  std::size_t begin = 0;  // where statement `first` starts in sql
  while (first < statements.size()) {
    std::size_t last = first + 1;
    while (last < statements.size() && statements[last].end - begin <= kRoundTripBytes) ++last;
    affected_.clear();
    auto done = connection_.execute_batch(sql.substr(begin, statements[last - 1].end - begin), last - first, affected_);
    if (!done) return fail(target_error(done.error(), batch.describe(statements[std::min(first + affected_.size(), last - 1)])));
    for (std::size_t i = first; i < last; ++i) {
      const StatementInfo& info = statements[i];
      if (info.exact && affected_[i - first] != info.expected)
        return unexpected_count(batch, i, affected_[i - first],
                                [this](std::string_view text, std::size_t count, std::vector<std::uint64_t>& counts) {
                                  return connection_.execute_batch(text, count, counts);
                                });
    }
    begin = statements[last - 1].end + 1;  // past the ';'
    first = last;
  }
  return {};
}

Result<void> MariadbTarget::commit(const StatementBatch& batch, const AppliedState& state) {
  if (auto begun = connection_.query("START TRANSACTION"); !begun) return fail(begun.error());
  auto applied = run_statements(batch);
  if (applied) {
    sql_.clear();
    append_write_position_sql(sql_, position_table_, state);
    sql_.append(";COMMIT");
    affected_.clear();
    if (auto done = connection_.execute_batch(sql_, 2, affected_); !done)
      applied = fail(target_error(done.error(), "position table's row"));
  }
  if (!applied) {
    (void)connection_.query("ROLLBACK");  // a lost connection rolls back by itself
    // A statement that failed between a relaxed sql_mode and its restore left it relaxed.
    (void)connection_.query(kSession);
    return applied;
  }
  return {};
}

Result<void> MariadbTarget::create_table(const std::string& sql) {
  if (auto done = connection_.query(sql); !done)
    return fail(target_error(done.error(), "CREATE TABLE of --create-tables"));
  return {};
}

Result<void> MariadbTarget::run_ddl(const std::string& database, std::string_view sql) {
  if (!database.empty()) {
    if (auto used = connection_.query("USE " + mysql::quote_identifier(database)); !used)
      return fail(target_error(used.error(), "USE before the DDL"));
  }
  if (auto done = connection_.query(sql); !done) return fail(target_error(done.error(), "DDL"));
  return {};
}

}  // namespace cdc::apply
