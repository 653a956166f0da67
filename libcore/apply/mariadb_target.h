#pragma once

// The MariaDB/MySQL target: one connection, its session set up for the literals of
// sql_value.h, and the target transactions: the batch's statements in round trips of up to
// kRoundTripBytes, each update and delete checked to have found its row, then the position
// table's row and COMMIT; on any failure ROLLBACK, so nothing of a batch is half applied.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apply/applier.h"
#include "apply/applied_state.h"
#include "mysql/connection.h"
#include "mysql/connection_options.h"

namespace cdc::apply {

class MariadbTarget final : public Target {
 public:
  // Connects, sets the session up and creates the position table (qualified: `db`.`name`)
  // when it is missing, and its database first when create_database names it
  // (--create-tables).
  [[nodiscard]] static Result<std::unique_ptr<MariadbTarget>> open(mysql::ConnectionOptions options,
                                                                   std::string position_table,
                                                                   const std::optional<std::string>& create_database);

  [[nodiscard]] Result<AppliedState> load_state();
  [[nodiscard]] Result<void> commit(const StatementBatch& batch, const AppliedState& state) override;
  [[nodiscard]] Result<void> create_table(const std::string& sql) override;
  [[nodiscard]] Result<void> run_ddl(const std::string& database, std::string_view sql) override;

  static constexpr std::size_t kRoundTripBytes = std::size_t{8} << 20;

 private:
  MariadbTarget(mysql::Connection connection, std::string position_table);
  Result<void> run_statements(const StatementBatch& batch);

  mysql::Connection connection_;
  std::string position_table_;
  std::string sql_;
  std::vector<std::uint64_t> affected_;
};

}  // namespace cdc::apply
