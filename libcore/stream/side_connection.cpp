#include "stream/side_connection.h"

#include <fmt/format.h>

#include <algorithm>

#include "binlog/ddl_target.h"
#include "rowimage/charset.h"

namespace cdc::stream {

mysql::Connection* SideConnection::connection() {
  if (!connection_) {
    auto connection = mysql::Connection::open(options_);
    if (!connection) return nullptr;
    connection_.emplace(std::move(*connection));
    schemas_.emplace(*connection_);
  }
  return &*connection_;
}

void SideConnection::drop() {
  schemas_.reset();
  connection_.reset();
}

void SideConnection::complete_from_catalog(binlog::TableMap& map, std::string_view at) {
  if (connection() == nullptr) {
    warn_once(map, at, "cannot reach the server for information_schema; rows are written with positional names");
    return;
  }
  auto schema = schemas_->get(map.database, map.table);
  if (!schema) {
    drop();
    warn_once(map, at,
              fmt::format("reading information_schema failed ({}); rows are written with positional names",
                          schema.error().message));
    return;
  }
  if (*schema == nullptr) {
    warn_once(map, at,
              "the table no longer exists, so information_schema cannot name its columns; rows are written with "
              "positional names");
    return;
  }
  std::string mismatch;
  if (!schema::apply_table_schema(**schema, map, mismatch))
    warn_once(map, at,
              fmt::format("its rows do not match the table's current definition ({}): they are from before a "
                          "schema change, and are written with positional names",
                          mismatch));
}

void SideConnection::add_column_types(binlog::TableMap& map) {
  if (!column_types_unavailable_) {
    if (connection() == nullptr) {
      column_types_unavailable_ = true;
    } else if (auto schema = schemas_->get(map.database, map.table); !schema) {
      drop();
      column_types_unavailable_ = true;
    } else {
      std::string mismatch;
      if (*schema != nullptr) (void)schema::apply_table_schema(**schema, map, mismatch);
      return;
    }
  }
  // The one thing the catalog changes in the values: say so once, where it matters.
  if (warned_fixed_binary_ || !may_be_fixed_binary(map)) return;
  warned_fixed_binary_ = true;
  warn_(fmt::format("{}.{}: information_schema cannot be read, so its BINARY(4) and BINARY(16) columns are written as "
                    "base64 of their bytes even if they are MariaDB INET4, INET6 or UUID columns (later tables are "
                    "not named)",
                    map.database, map.table));
}

bool SideConnection::may_be_fixed_binary(const binlog::TableMap& map) {
  return std::any_of(map.columns.begin(), map.columns.end(), [](const Column& column) {
    const bool bytes = column.collation == 0 || rowimage::is_binary_collation(column.collation);
    return column.type == ColumnType::string && bytes && (column.meta == 4 || column.meta == 16);
  });
}

void SideConnection::warn_once(const binlog::TableMap& map, std::string_view at, std::string_view what) {
  if (map.generation == warned_generation_) return;
  warned_generation_ = map.generation;
  warn_(fmt::format("{}.{} at {}: {}", map.database, map.table, at, what));
}

void SideConnection::forget_schema_of(std::string_view database, std::string_view sql, std::string_view at,
                                      bool from_catalog) {
  if (!schemas_) return;
  const binlog::DdlTarget target = binlog::ddl_target(sql, database);
  for (const auto& table : target.tables) schemas_->invalidate(table.database, table.table);
  if (target.tables.empty()) {
    if (target.database.empty())
      schemas_->invalidate_all();
    else
      schemas_->invalidate_database(target.database);
  }
  if (!from_catalog) return;
  warn_(fmt::format("schema change at {}: column metadata is read again from information_schema; rows logged "
                    "before it but read after it may not match (binlog_row_metadata=FULL avoids this)",
                    at));
}

Result<bool> SideConnection::read_only(mysql::Connection& connection) {
  auto result = connection.query("SELECT @@global.read_only");
  if (!result) return fail(std::move(result).error());
  if (result->rows.empty() || !result->rows[0][0]) return false;
  return *result->rows[0][0] != "0";
}

}  // namespace cdc::stream
