#pragma once

// cdc-apply: a merged snapshot, then the stream, applied to a MariaDB/MySQL target, or a
// PostgreSQL one (--postgres), exactly once (cdc-apply(1)).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "apply/applier.h"
#include "mysql/connection_options.h"
#include "util/result.h"

namespace cdc::apply {

struct RunOptions {
  mysql::ConnectionOptions connection;
  // --postgres: a libpq connection string or URI; the target is PostgreSQL, --database names
  // a schema. The MariaDB connection options are then refused (the tool's command line).
  std::optional<std::string> postgres;
  std::vector<std::string> inputs;  // files in order; none or "-": standard input
  std::optional<std::string> database;
  std::optional<std::string> position_table;  // [DB.]NAME; default cdc_apply_position in --database
  std::optional<std::string> until;
  bool create_tables = false;
  std::string on_ddl = "stop";
  std::uint64_t batch_rows = 5000;
  // Read the last file on as it grows, until --until, SIGTERM or SIGINT (exit 0).
  bool follow = false;
};

struct RunOutcome {
  Stop stop = Stop::end_of_input;
  ApplyStats stats;
  AppliedState state;
  std::string stop_reason;
  double seconds = 0;
};

// The options checked and turned into the applier's, before anything connects:
// Errc::usage naming the option.
[[nodiscard]] Result<ApplyOptions> apply_options(const RunOptions& options);
// The position table: --position-table's DB, else --database.
struct PositionTable {
  std::string database;
  std::string qualified;  // `db`.`name`, "schema"."name" for PostgreSQL
};
[[nodiscard]] Result<PositionTable> position_table_name(const RunOptions& options);

[[nodiscard]] Result<RunOutcome> run(const RunOptions& options);

// --version: the shared text (cli::version_text) with libpq's version added to the libraries.
[[nodiscard]] std::string version_report(std::string shared_text);

}  // namespace cdc::apply
