#pragma once

// cdc-plan without --check: check the server, discover the tables, choose their keys, split
// them and write one op:"chunk" line per chunk.

#include <string>
#include <string_view>
#include <vector>

#include "filter/columns_option.h"
#include "filter/where_option.h"
#include "mysql/connection_options.h"
#include "plan/chunk.h"
#include "plan/planner.h"
#include "util/result.h"

namespace cdc::plan {

struct PlanOptions {
  std::string tables;   // --tables
  std::string exclude;  // --exclude
  ChunkPolicy policy;
  std::vector<ChunkKeyOption> chunk_keys;  // --chunk-key
  // --where: bound to each table it selects (a column it names must exist, each literal fit
  // its column), and written into the table's chunk lines. Each must select a planned table.
  std::vector<filter::WhereOption> wheres;
  // --columns: only these columns (and the key's and identity's) in the chunk lines of the
  // tables each selects, so in what cdc-snapshot reads. Each must select a planned table.
  std::vector<filter::ColumnsOption> columns;
  bool force = false;                      // plan even when the server check fails
  bool include_query = false;              // --include-query: the check warns when statements are not logged
  // --retry-for: a query whose connection is lost runs again on a new connection (backoff as
  // cdc-stream's) until reconnecting has failed this long; 0: forever. The first connection
  // is not retried: a wrong host or password fails at once.
  unsigned retry_for_seconds = 0;
};

struct PlanSummary {
  std::size_t tables = 0;
  std::size_t chunks = 0;
};

// Validates the options that need no server (chunk size, factor bounds).
[[nodiscard]] Result<void> validate(const PlanOptions& options);

// The server check's problems go to err_fd, prefixed with tool_name; a failing check is
// Errc::config unless options.force. Every table's key is chosen before the first chunk line
// is written, so a table without a usable key stops the run with nothing on out_fd.
[[nodiscard]] Result<PlanSummary> run(const mysql::ConnectionOptions& connection_options, const PlanOptions& options,
                                      int out_fd, int err_fd, std::string_view tool_name);

}  // namespace cdc::plan
