#include "check/run_check.h"

#include <fmt/format.h>

#include "mysql/connection.h"
#include "ndjson/writer.h"
#include "util/fd_io.h"

namespace cdc::check {

Result<Report> run(const mysql::ConnectionOptions& options, const TableFilter* tables, const CheckWants& wants,
                   int out_fd, int err_fd, std::string_view tool_name) {
  auto connection = mysql::Connection::open(options);
  if (!connection) return fail(std::move(connection).error());
  auto facts = gather_facts(*connection);
  if (!facts) return fail(std::move(facts).error());
  if (tables != nullptr)
    if (auto sized = gather_table_sizes(*connection, *tables, *facts); !sized) return fail(std::move(sized).error());
  Report report = evaluate(*facts, wants);

  ndjson::Writer out;
  write_report(report, out);
  if (auto written = out.flush_to(out_fd, "stdout"); !written) return fail(std::move(written).error());

  std::string problems;
  for (const CheckLine& line : report.lines)
    if (line.status != Status::ok) problems += fmt::format("{}: {}\n", tool_name, describe_problem(line));
  if (!report.usable())
    problems += fmt::format("{}: error: {} is not usable for CDC until the failing settings above are fixed\n",
                            tool_name, connection->endpoint());
  (void)write_all(err_fd, problems, "stderr");
  return report;
}

}  // namespace cdc::check
