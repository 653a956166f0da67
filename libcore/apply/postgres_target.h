#pragma once

// The PostgreSQL target (cdc-apply --postgres): one libpq connection, its session set up for
// the literals of pg_value.h, and the target transactions: BEGIN and the batch's statements
// sent with the simple query protocol in round trips of up to kRoundTripBytes (several
// statements per query string), every result read and each update and delete checked to have
// found its row (PQcmdTuples); then the position table's row and COMMIT in one last round
// trip. On any failure ROLLBACK, so nothing of a batch is half applied.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apply/applied_state.h"
#include "apply/applier.h"
#include "postgres/connection.h"

namespace cdc::apply {

class PostgresTarget final : public Target {
 public:
  // Connects, sets the session up and creates the position table ("schema"."name") when it
  // is missing, and its schema first when create_schema names it (--create-tables).
  [[nodiscard]] static Result<std::unique_ptr<PostgresTarget>> open(const std::string& conninfo,
                                                                    std::string position_table,
                                                                    const std::optional<std::string>& create_schema);

  [[nodiscard]] Result<AppliedState> load_state();
  [[nodiscard]] Result<void> commit(const StatementBatch& batch, const AppliedState& state) override;
  [[nodiscard]] Result<void> create_table(const std::string& sql) override;
  // --on-ddl apply is refused for PostgreSQL targets before anything runs: a MySQL DDL is not
  // PostgreSQL's.
  [[nodiscard]] Result<void> run_ddl(const std::string& database, std::string_view sql) override;

  static constexpr std::size_t kRoundTripBytes = std::size_t{8} << 20;

 private:
  PostgresTarget(postgres::Connection connection, std::string position_table);
  Result<void> run_statements(const StatementBatch& batch);

  postgres::Connection connection_;
  std::string position_table_;
  std::string sql_;
  std::vector<std::uint64_t> affected_;
};

}  // namespace cdc::apply
