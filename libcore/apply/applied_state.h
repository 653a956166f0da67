#pragma once

// The position table: what cdc-apply has applied, kept in the target and written in the same
// target transaction as the rows, so that the two cannot disagree whatever stops a run
// (cdc-apply(1), EXACTLY ONCE). One row per applier:
//
//   applier        'default' (several sources into one target: the next step's --applier)
//   position       the last applied source position, as commit lines write it ("0-1-42",
//                  a MySQL GTID set, "binlog.000003:4711"); the snapshot's high position once
//                  the snapshot is applied; '' before
//   snapshot_done  1 once a snapshot's high line was applied: its "r" lines are skipped after
//   snapshot_rows  the "r" lines applied so far: a rerun skips that many
//   source_pos     file:offset of the last applied commit, for people
//   gtid           its GTID, '' without
//   transactions, changes   counts over every run
//   applied_at     when the row was written (UTC)

#include <cstdint>
#include <string>
#include <string_view>

#include "apply/sql_dialect.h"
#include "mysql/connection.h"
#include "util/result.h"

namespace cdc::apply {

struct AppliedState {
  std::string position;
  bool snapshot_done = false;
  std::uint64_t snapshot_rows = 0;
  std::string source_pos;
  std::string gtid;
  std::uint64_t transactions = 0;
  std::uint64_t changes = 0;

  bool operator==(const AppliedState&) const = default;
};

inline constexpr std::string_view kDefaultPositionTable = "cdc_apply_position";
inline constexpr std::string_view kApplierName = "default";

// qualified_table: `db`.`name` (PostgreSQL: "schema"."name"). The same columns in both dialects;
// PostgreSQL's types are the nearest it has (snapshot_done smallint, the counts bigint).
[[nodiscard]] std::string create_position_table_sql(std::string_view qualified_table,
                                                    Dialect dialect = Dialect::mariadb);
[[nodiscard]] std::string read_position_sql(std::string_view qualified_table);
// The statement that writes state, appended to out: REPLACE (MariaDB), INSERT ... ON CONFLICT
// (PostgreSQL).
void append_write_position_sql(std::string& out, std::string_view qualified_table, const AppliedState& state,
                               Dialect dialect = Dialect::mariadb);
// The state in read_position_sql's result: no row is the state of a first run.
[[nodiscard]] Result<AppliedState> parse_position_rows(const mysql::QueryResult& result);

}  // namespace cdc::apply
