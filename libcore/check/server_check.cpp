#include "check/server_check.h"

#include <fmt/format.h>

#include <cstdlib>

#include "ndjson/writer.h"
#include "records/check_lines.h"
#include "util/text.h"

namespace cdc::check {

namespace {

constexpr std::string_view kVariables =
    "'log_bin','binlog_format','binlog_row_image','binlog_row_metadata','binlog_row_value_options',"
    "'gtid_mode','enforce_gtid_consistency','gtid_strict_mode','gtid_binlog_pos','gtid_domain_id',"
    "'binlog_expire_logs_seconds','expire_logs_days','server_id','binlog_checksum',"
    "'binlog_transaction_compression','binlog_annotate_row_events','replicate_annotate_row_events',"
    "'binlog_rows_query_log_events'";

}  // namespace

std::string_view status_name(Status status) {
  switch (status) {
    case Status::ok: return "ok";
    case Status::warn: return "warn";
    case Status::fail: return "fail";
  }
  return "fail";
}

Result<ServerFacts> gather_facts(mysql::Connection& connection) {
  ServerFacts facts;
  auto identity = connection.query("SELECT VERSION(), @@version_comment, CURRENT_USER()");
  if (!identity) return fail(std::move(identity).error());
  if (identity->rows.size() != 1 || identity->rows[0].size() != 3)
    return fail(Errc::server, "SELECT VERSION() returned an unexpected result");
  const auto& row = identity->rows[0];
  facts.version = row[0].value_or("");
  facts.version_comment = row[1].value_or("");
  facts.current_user = row[2].value_or("");

  // SHOW VARIABLES rather than SELECT @@x: a variable this server lacks is simply absent,
  // where @@x would fail the whole query.
  auto variables =
      connection.query(fmt::format("SHOW GLOBAL VARIABLES WHERE Variable_name IN ({})", kVariables));
  if (!variables) return fail(std::move(variables).error());
  for (const auto& variable : variables->rows)
    if (variable.size() == 2 && variable[0]) facts.variables[to_lower(*variable[0])] = variable[1].value_or("");

  auto grants = connection.query("SHOW GRANTS");
  if (!grants) return fail(std::move(grants).error());
  for (const auto& grant : grants->rows)
    if (!grant.empty() && grant[0]) facts.grants.push_back(*grant[0]);
  return facts;
}

Result<void> gather_table_sizes(mysql::Connection& connection, const TableFilter& filter, ServerFacts& facts) {
  auto tables = connection.query(
      "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_ROWS, DATA_LENGTH FROM information_schema.TABLES WHERE TABLE_TYPE IN "
      "('BASE TABLE', 'SYSTEM VERSIONED') AND TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')");
  if (!tables) return fail(std::move(tables).error());
  ServerFacts::Tables sizes;
  for (const auto& row : tables->rows) {
    if (row.size() != 4 || !row[0] || !row[1] || !filter.selects(*row[0], *row[1])) continue;
    ++sizes.count;
    sizes.rows += row[2] ? std::strtoull(row[2]->c_str(), nullptr, 10) : 0;
    sizes.bytes += row[3] ? std::strtoull(row[3]->c_str(), nullptr, 10) : 0;
  }
  facts.tables = sizes;
  return {};
}

void write_report(const Report& report, ndjson::Writer& out) {
  std::vector<std::string_view> failed;
  std::vector<std::string_view> warnings;
  for (const CheckLine& line : report.lines) {
    records::write_check({line.name, status_name(line.status), line.value, line.want, line.message, line.fix}, out);
    if (line.status == Status::fail) failed.push_back(line.name);
    if (line.status == Status::warn) warnings.push_back(line.name);
  }
  records::write_check_summary({report.flavor == Flavor::mariadb ? "mariadb" : "mysql", report.usable(), failed, warnings},
                               out);
}

std::string describe_problem(const CheckLine& line) {
  return fmt::format("{}: {} is '{}', want {}: {}; fix: {}", status_name(line.status), line.name, line.value,
                     line.want, line.message, line.fix);
}

}  // namespace cdc::check
