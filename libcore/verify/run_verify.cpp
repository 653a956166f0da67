#include "verify/run_verify.h"

#include <fmt/format.h>

#include <chrono>

#include "apply/run_apply.h"
#include "ndjson/writer.h"
#include "plan/planner.h"
#include "util/exit_code.h"
#include "util/table_filter.h"
#include "verify/mariadb_sides.h"
#include "verify/postgres_side.h"
#include "verify/verify_lines.h"

namespace cdc::verify {

Result<void> check_options(const VerifyOptions& options) {
  if (options.tables.empty()) return fail(Errc::usage, "--verify needs --tables: the source's tables to compare");
  if (auto filter = TableFilter::parse(options.tables, options.exclude); !filter) return fail(filter.error());
  if (!options.source.defaults_file)
    return fail(Errc::usage, "--verify needs --source-defaults-file: the option file with the source's host, user "
                             "and password (never on the command line)");
  if (options.chunk_size == 0) return fail(Errc::usage, "--chunk-size must be at least 1");
  if (options.rounds < 2)
    return fail(Errc::usage, "--verify-rounds: give at least 2 (a difference is reported when it held in two)");
  if (options.database && options.database->empty()) return fail(Errc::usage, "--database: the name is empty");
  return {};
}

int exit_code(const VerifySummary& summary) noexcept {
  if (summary.differs > 0) return static_cast<int>(ExitCode::failure);
  if (summary.unsettled > 0) return static_cast<int>(ExitCode::temp_failure);
  return static_cast<int>(ExitCode::success);
}

namespace {

Result<mysql::Connection> connect(const mysql::ConnectionOptions& options, std::string_view which) {
  auto connection = mysql::Connection::open(options);
  if (!connection) return fail(connection.error().with_context(which));
  if (auto prepared = prepare_verify_session(*connection); !prepared) return fail(prepared.error());
  return std::move(*connection);
}

}  // namespace

Result<VerifySummary> run(const VerifyOptions& options, int out_fd) {
  if (auto checked = check_options(options); !checked) return fail(checked.error());
  apply::RunOptions apply_options;
  apply_options.database = options.database;
  apply_options.position_table = options.position_table;
  apply_options.postgres = options.postgres;
  auto table = apply::position_table_name(apply_options);
  if (!table) return fail(table.error());
  const auto started = std::chrono::steady_clock::now();

  // The target: MariaDB/MySQL, or PostgreSQL (--postgres), whose row text differs (digest_sql.h).
  const Peer peer = options.postgres ? Peer::postgres : Peer::mariadb;
  std::unique_ptr<MariadbTargetSide> mariadb_target;
  std::unique_ptr<PostgresTargetSide> postgres_target;
  TargetSide* target = nullptr;
  Result<gtid::Position> held = fail(Errc::internal, "no target");
  if (options.postgres) {
    auto opened = PostgresTargetSide::open(*options.postgres, options.database, table->qualified,
                                           std::chrono::seconds(options.wait_seconds));
    if (!opened) return fail(opened.error());
    postgres_target = std::move(*opened);
    target = postgres_target.get();
    held = postgres_target->position();
  } else {
    auto target_connection = connect(options.target, "the target");
    if (!target_connection) return fail(target_connection.error());
    mariadb_target = std::make_unique<MariadbTargetSide>(std::move(*target_connection), options.database,
                                                         table->qualified, std::chrono::seconds(options.wait_seconds));
    target = mariadb_target.get();
    held = mariadb_target->position();
  }
  // The source's position must have the form of the target's (a GTID position, a GTID set or
  // FILE:OFFSET, as its commit lines had), to be compared with it.
  if (!held) return fail(held.error());
  auto source_connection = connect(options.source, "the source");
  if (!source_connection) return fail(source_connection.error());
  MariadbSource source(std::move(*source_connection), held->kind, peer);

  // Tables and chunks as cdc-plan finds them, on the source.
  mysql::Connection& planner = source.connection();
  auto tables = plan::discover_tables(planner, options.tables, options.exclude);
  if (!tables) return fail(tables.error());
  if (tables->empty())
    return fail(Errc::usage, fmt::format("no base table of the source matches --tables '{}'{}", options.tables,
                                         options.exclude.empty() ? "" : " without --exclude"));
  plan::ChunkPolicy policy;
  policy.chunk_size = options.chunk_size;
  VerdictOptions verdict_options;
  verdict_options.rounds = options.rounds;
  VerifySummary summary;
  ndjson::Writer out;
  for (const plan::TableRef& ref : *tables) {
    auto described = plan::describe_table(planner, ref, nullptr);
    if (!described) return fail(described.error());
    auto split = plan::split_table(planner, *described, policy);
    if (!split) return fail(split.error());
    // The current rows only: cdc-apply applies a system-versioned table's changes, not its history.
    split->all_versions = false;
    const RowKeys keys = RowKeys::of(*split, peer);
    source.set_keys(&keys);
    if (mariadb_target) mariadb_target->set_keys(&keys);
    if (postgres_target)
      if (auto set = postgres_target->set_table(*split, &keys); !set) return fail(set.error());
    ++summary.tables;
    for (std::size_t i = 0; i < split->chunks.size(); ++i) {
      const records::Chunk chunk = plan::chunk_record(*split, i);
      auto verdict = verify_chunk(chunk, source, *target, verdict_options);
      if (!verdict) return fail(verdict.error().with_context(chunk.describe()));
      ++summary.chunks;
      switch (verdict->status) {
        case Status::equal: ++summary.equal; break;
        case Status::differs: ++summary.differs; break;
        case Status::unsettled: ++summary.unsettled; break;
      }
      summary.keys_total += verdict->keys.size();
      write_verify_line(chunk, *verdict, options.max_keys, out);
      if (auto written = out.flush_to(out_fd, "stdout"); !written) return fail(written.error());
    }
  }
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  write_summary_line(summary, out);
  if (auto written = out.flush_to(out_fd, "stdout"); !written) return fail(written.error());
  return summary;
}

}  // namespace cdc::verify
