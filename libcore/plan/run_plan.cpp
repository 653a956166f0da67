#include "plan/run_plan.h"

#include <fmt/format.h>

#include <cmath>

#include "check/server_check.h"
#include "filter/evaluate.h"
#include "mysql/connection.h"
#include "ndjson/writer.h"
#include "util/fd_io.h"
#include "util/table_filter.h"

namespace cdc::plan {

namespace {

const ChunkKeyOption* chunk_key_for(const PlanOptions& options, const TableRef& ref) {
  for (const ChunkKeyOption& key : options.chunk_keys)
    if (key.database == ref.database && key.table == ref.table) return &key;
  return nullptr;
}

// Applies the table's --columns (if any) to its columns: only those named, the key's and the
// identity's stay. Errc::usage for a table without a key, an unknown column, or a column its
// --where reads that would be left out.
Result<void> keep_columns(std::span<const filter::ColumnsOption> options, const filter::WhereOption* where,
                          TableKey& table) {
  auto option = filter::columns_for(options, table.ref.database, table.ref.table);
  if (!option) return fail(std::move(option).error());
  if (*option == nullptr) return {};
  const std::string name = fmt::format("{}.{}", table.ref.database, table.ref.table);
  if (!table.identity)
    return fail(Errc::usage, fmt::format("--columns '{}': {} has no primary key or unique NOT NULL index, so only its "
                                         "whole row tells rows apart: capture all its columns",
                                         (*option)->text, name));
  std::vector<std::string> names;
  for (const records::ChunkColumn& column : table.columns) names.push_back(column.name);
  std::vector<std::string> always = *table.identity;
  for (const KeyColumn& column : table.key) always.push_back(column.name);
  auto kept = filter::kept_columns(**option, name, names, always, where ? &where->expression : nullptr);
  if (!kept) return fail(std::move(kept).error());
  std::vector<records::ChunkColumn> columns;
  for (std::size_t i = 0; i < table.columns.size(); ++i)
    if ((*kept)[i]) columns.push_back(std::move(table.columns[i]));
  table.columns = std::move(columns);
  return {};
}

}  // namespace

Result<void> validate(const PlanOptions& options) {
  if (auto filter = TableFilter::parse(options.tables, options.exclude); !filter)
    return fail(std::move(filter).error());
  if (options.policy.chunk_size == 0) return fail(Errc::usage, "--chunk-size must be at least 1");
  const double lower = options.policy.factor_lower;
  const double upper = options.policy.factor_upper;
  if (!std::isfinite(lower) || lower <= 0)
    return fail(Errc::usage, "--distribution-factor-lower must be a positive number");
  if (!std::isfinite(upper) || upper < lower)
    return fail(Errc::usage, "--distribution-factor-upper must be a number no smaller than the lower bound");
  return {};
}

Result<PlanSummary> run(const mysql::ConnectionOptions& connection_options, const PlanOptions& options, int out_fd,
                        int err_fd, std::string_view tool_name) {
  if (auto valid = validate(options); !valid) return fail(std::move(valid).error());
  auto connection = mysql::Connection::open(connection_options);
  if (!connection) return fail(std::move(connection).error());
  connection->reconnect_when_lost(
      {options.retry_for_seconds, [err_fd, tool_name](std::string_view message) {
         (void)write_all(err_fd, fmt::format("{}: notice: {}\n", tool_name, message), "stderr");
       }});

  // The same check as --check, on this connection; its problems go to stderr so that stdout
  // stays chunk lines only.
  auto facts = check::gather_facts(*connection);
  if (!facts) return fail(std::move(facts).error());
  const check::Report report = check::evaluate(*facts, check::CheckWants{options.include_query});
  std::string problems;
  for (const check::CheckLine& line : report.lines)
    if (line.status != check::Status::ok) problems += fmt::format("{}: {}\n", tool_name, check::describe_problem(line));
  (void)write_all(err_fd, problems, "stderr");
  if (!report.usable()) {
    if (!options.force)
      return fail(Errc::config, fmt::format("{} is not usable for CDC until the failing settings above are fixed "
                                            "(--force plans anyway)",
                                            connection->endpoint()));
    (void)write_all(err_fd, fmt::format("{}: warning: planning anyway (--force)\n", tool_name), "stderr");
  }
  // Temporal bounds print as the server's text; TIMESTAMP ones in UTC, as the snapshot reads them.
  if (auto zone = connection->set_session("SET time_zone = '+00:00'"); !zone) return fail(std::move(zone).error());

  auto tables = discover_tables(*connection, options.tables, options.exclude);
  if (!tables) return fail(std::move(tables).error());
  if (tables->empty())
    return fail(Errc::usage, fmt::format("no base table matches --tables '{}'{}", options.tables,
                                         options.exclude.empty() ? "" : " without --exclude"));
  for (const ChunkKeyOption& key : options.chunk_keys) {
    bool found = false;
    for (const TableRef& ref : *tables) found = found || (ref.database == key.database && ref.table == key.table);
    if (!found)
      return fail(Errc::usage,
                  fmt::format("--chunk-key names {}.{}, which is not among the planned tables", key.database, key.table));
  }

  for (const filter::WhereOption& where : options.wheres) {
    bool found = false;
    for (const TableRef& ref : *tables) found = found || where.filter.selects(ref.database, ref.table);
    if (!found)
      return fail(Errc::usage, fmt::format("--where '{}' selects none of the planned tables", where.text));
  }
  for (const filter::ColumnsOption& columns : options.columns) {
    bool found = false;
    for (const TableRef& ref : *tables) found = found || columns.filter.selects(ref.database, ref.table);
    if (!found)
      return fail(Errc::usage, fmt::format("--columns '{}' selects none of the planned tables", columns.text));
  }

  std::vector<TableKey> keyed;
  std::string key_errors;
  for (const TableRef& ref : *tables) {
    auto table = describe_table(*connection, ref, chunk_key_for(options, ref));
    if (!table) {
      if (table.error().code != Errc::usage) return fail(std::move(table).error());
      if (!key_errors.empty()) key_errors += fmt::format("\n{}: error: ", tool_name);
      key_errors += table.error().message;
      continue;
    }
    keyed.push_back(std::move(*table));
  }
  if (!key_errors.empty()) return fail(Errc::usage, key_errors);
  // Each table's --where (nullptr: none), checked against its columns, and its --columns
  // applied, before the first line is written.
  std::vector<const filter::WhereOption*> wheres;
  for (TableKey& table : keyed) {
    auto where = filter::where_for(options.wheres, table.ref.database, table.ref.table);
    if (!where) return fail(std::move(where).error());
    wheres.push_back(*where);
    if (*where != nullptr) {
      const auto columns = filter::table_columns(table.columns);
      if (auto bound = filter::BoundFilter::bind((*where)->expression, columns); !bound)
        return fail(Errc::usage, fmt::format("--where '{}' on {}.{}: {}", (*where)->text, table.ref.database,
                                             table.ref.table, bound.error().message));
    }
    if (auto kept = keep_columns(options.columns, *where, table); !kept) return fail(std::move(kept).error());
  }

  PlanSummary summary;
  ndjson::Writer out;
  for (std::size_t t = 0; t < keyed.size(); ++t) {
    const TableKey& table = keyed[t];
    const filter::WhereOption* where = wheres[t];
    if (const auto warning = plan_warning(table))
      (void)write_all(err_fd, fmt::format("{}: warning: {}\n", tool_name, *warning), "stderr");
    auto plan = split_table(*connection, table, options.policy);
    if (!plan) return fail(std::move(plan).error());
    for (std::size_t i = 0; i < plan->chunks.size(); ++i) {
      records::Chunk chunk = chunk_record(*plan, i);
      if (where != nullptr) chunk.where = where->expression.source;
      records::write_chunk(chunk, out);
    }
    if (auto written = out.flush_to(out_fd, "stdout"); !written) return fail(std::move(written).error());
    ++summary.tables;
    summary.chunks += plan->chunks.size();
  }
  return summary;
}

}  // namespace cdc::plan
