#include "apply/applied_state.h"

#include <charconv>

#include <fmt/format.h>

#include "apply/pg_value.h"
#include "apply/sql_value.h"
#include "gtid/position.h"

namespace cdc::apply {

std::string create_position_table_sql(std::string_view qualified_table, Dialect dialect) {
  if (dialect == Dialect::postgres)
    return fmt::format(
        "CREATE TABLE IF NOT EXISTS {} (applier varchar(64) NOT NULL PRIMARY KEY, position text NOT NULL, "
        "snapshot_done smallint NOT NULL, snapshot_rows bigint NOT NULL, source_pos varchar(600) NOT NULL, "
        "gtid varchar(200) NOT NULL, transactions bigint NOT NULL, changes bigint NOT NULL, "
        "applied_at timestamp(3) NOT NULL)",
        qualified_table);
  return fmt::format(
      "CREATE TABLE IF NOT EXISTS {} (applier VARCHAR(64) NOT NULL PRIMARY KEY, position TEXT NOT NULL, "
      "snapshot_done TINYINT NOT NULL, snapshot_rows BIGINT UNSIGNED NOT NULL, source_pos VARCHAR(600) NOT NULL, "
      "gtid VARCHAR(200) NOT NULL, transactions BIGINT UNSIGNED NOT NULL, changes BIGINT UNSIGNED NOT NULL, "
      "applied_at DATETIME(3) NOT NULL) ENGINE=InnoDB",
      qualified_table);
}

std::string read_position_sql(std::string_view qualified_table) {
  std::string sql = fmt::format(
      "SELECT position, snapshot_done, snapshot_rows, source_pos, gtid, transactions, changes FROM {} WHERE applier=",
      qualified_table);
  append_quoted(sql, kApplierName);
  return sql;
}

void append_write_position_sql(std::string& out, std::string_view qualified_table, const AppliedState& state,
                               Dialect dialect) {
  const bool pg = dialect == Dialect::postgres;
  const auto quoted = [&](std::string_view text) { pg ? append_pg_quoted(out, text) : append_quoted(out, text); };
  out.append(pg ? "INSERT INTO " : "REPLACE INTO ");
  out.append(qualified_table);
  out.append(" (applier,position,snapshot_done,snapshot_rows,source_pos,gtid,transactions,changes,applied_at) VALUES (");
  quoted(kApplierName);
  out.push_back(',');
  quoted(state.position);
  fmt::format_to(std::back_inserter(out), ",{},{},", state.snapshot_done ? 1 : 0, state.snapshot_rows);
  quoted(state.source_pos);
  out.push_back(',');
  quoted(state.gtid);
  fmt::format_to(std::back_inserter(out), ",{},{},", state.transactions, state.changes);
  if (!pg) {
    out.append("UTC_TIMESTAMP(3))");
    return;
  }
  out.append(
      "now() AT TIME ZONE 'UTC') ON CONFLICT (applier) DO UPDATE SET position=EXCLUDED.position,"
      "snapshot_done=EXCLUDED.snapshot_done,snapshot_rows=EXCLUDED.snapshot_rows,source_pos=EXCLUDED.source_pos,"
      "gtid=EXCLUDED.gtid,transactions=EXCLUDED.transactions,changes=EXCLUDED.changes,applied_at=EXCLUDED.applied_at");
}

namespace {

Result<std::uint64_t> number_of(const std::optional<std::string>& text, std::string_view column) {
  std::uint64_t value = 0;
  if (!text || std::from_chars(text->data(), text->data() + text->size(), value).ec != std::errc())
    return fail(Errc::corrupt_input, fmt::format("the position table's {} is not a number", column));
  return value;
}

}  // namespace

Result<AppliedState> parse_position_rows(const mysql::QueryResult& result) {
  AppliedState state;
  if (result.rows.empty()) return state;
  const auto& row = result.rows.front();
  if (row.size() != 7) return fail(Errc::corrupt_input, "the position table has other columns than cdc-apply's");
  state.position = row[0].value_or("");
  if (!state.position.empty()) {
    if (auto parsed = gtid::Position::parse(state.position); !parsed)
      return fail(Errc::corrupt_input,
                  fmt::format("the position table's position '{}' is not a position: {}", state.position,
                              parsed.error().message));
  }
  auto done = number_of(row[1], "snapshot_done");
  if (!done) return fail(done.error());
  state.snapshot_done = *done != 0;
  auto rows = number_of(row[2], "snapshot_rows");
  if (!rows) return fail(rows.error());
  state.snapshot_rows = *rows;
  state.source_pos = row[3].value_or("");
  state.gtid = row[4].value_or("");
  auto transactions = number_of(row[5], "transactions");
  if (!transactions) return fail(transactions.error());
  state.transactions = *transactions;
  auto changes = number_of(row[6], "changes");
  if (!changes) return fail(changes.error());
  state.changes = *changes;
  return state;
}

}  // namespace cdc::apply
