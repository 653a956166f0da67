#pragma once

#include "check/server_check.h"
#include "mysql/connection_options.h"
#include "util/table_filter.h"
#include "util/result.h"

namespace cdc::check {

// cdc-plan --check: connects, gathers, evaluates, writes the NDJSON report to out_fd and one
// line per problem to err_fd (prefixed with tool_name). The report says whether the server
// is usable; the caller turns that into the exit code. With tables (--tables, --exclude),
// the snapshot_length line weighs their snapshot against the binlog retention; `wants` what
// the run means to use besides (--include-query).
Result<Report> run(const mysql::ConnectionOptions& options, const TableFilter* tables, const CheckWants& wants,
                   int out_fd, int err_fd, std::string_view tool_name);

}  // namespace cdc::check
