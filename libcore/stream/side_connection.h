#pragma once

// What a live stream asks the server while the replication connection streams: the catalog,
// for rows logged without binlog_row_metadata=FULL, and read_only, for the primary-switch
// guard. One second connection, opened when first needed and dropped when a query on it
// fails (the replication connection notices a dead server; this one only retries later).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "binlog/events/table_map_event.h"
#include "mysql/connection.h"
#include "mysql/connection_options.h"
#include "schema/table_schema.h"
#include "util/result.h"

namespace cdc::stream {

class SideConnection {
 public:
  SideConnection(const mysql::ConnectionOptions& options, std::function<void(std::string_view)> warn)
      : options_(options), warn_(std::move(warn)) {}

  // nullptr when it cannot be opened now.
  mysql::Connection* connection();
  void drop();

  // Names, ENUM/SET labels, signedness and keys from information_schema as it is now, for a
  // map whose binlog carried no such metadata. `at` (FILE:OFFSET) is for the warnings.
  void complete_from_catalog(binlog::TableMap& map, std::string_view at);
  // For a map the binlog described in full (binlog_row_metadata=FULL): information_schema's
  // COLUMN_TYPE texts (TableMap::column_types), for the table line, and which columns are
  // MariaDB's INET4/INET6/UUID (Column::fixed_binary), when the catalog still describes the
  // map. Without them the line has the types the map gives and such columns are written as
  // binary strings; a server that cannot be reached for them is not asked again in the run,
  // and the first map that may have such columns says so once.
  void add_column_types(binlog::TableMap& map);
  // After a DDL: what it touched is read again from the catalog. `from_catalog`: rows are
  // completed from it (complete_from_catalog), which the warning explains.
  void forget_schema_of(std::string_view database, std::string_view sql, std::string_view at, bool from_catalog);

  // @@global.read_only on the given connection.
  [[nodiscard]] static Result<bool> read_only(mysql::Connection& connection);

 private:
  void warn_once(const binlog::TableMap& map, std::string_view at, std::string_view what);
  // Whether a column of map could be an INET4, INET6 or UUID: a BINARY(4) or BINARY(16).
  static bool may_be_fixed_binary(const binlog::TableMap& map);

  const mysql::ConnectionOptions& options_;
  std::function<void(std::string_view)> warn_;
  std::optional<mysql::Connection> connection_;
  std::optional<schema::SchemaCache> schemas_;
  std::uint64_t warned_generation_ = 0;
  bool column_types_unavailable_ = false;
  bool warned_fixed_binary_ = false;
};

}  // namespace cdc::stream
