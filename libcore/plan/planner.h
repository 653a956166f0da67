#pragma once

// Planning one table against the server: which key, its columns, and the chunks. Only
// information_schema, MIN/MAX through the index and index walks with LIMIT ... OFFSET are
// read: no lock, no COUNT(*). A walk reads each index entry once (an InnoDB primary key's
// entries are the rows, so walking it reads the table's pages once).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mysql/connection.h"
#include "plan/chunk.h"
#include "util/result.h"

namespace cdc::plan {

// --chunk-key DB.TABLE=COL[,COL]
struct ChunkKeyOption {
  std::string database;
  std::string table;
  std::vector<std::string> columns;
};
[[nodiscard]] Result<ChunkKeyOption> parse_chunk_key(std::string_view text);

struct TableRef {
  std::string database;
  std::string table;
  std::uint64_t rows_estimate = 0;  // information_schema.TABLES.TABLE_ROWS
  // TABLE_TYPE 'SYSTEM VERSIONED': every query reads it FOR SYSTEM_TIME ALL, history included.
  bool system_versioned = false;
};

// A table with its chunk key chosen, ready to split.
struct TableKey {
  TableRef ref;
  // The index the key walks ("PRIMARY" or a secondary index); "" without a key, or for a
  // --chunk-key that no index starts with.
  std::string index;
  std::vector<KeyColumn> key;  // empty: the table has no primary key and no --chunk-key
  std::vector<records::ChunkColumn> columns;
  // The columns that identify a row (primary key, else a unique NOT NULL index); none: the
  // whole row is its identity.
  std::optional<std::vector<std::string>> identity;
};

// Base tables selected by the filter, in (database, table) order; never the system schemas.
[[nodiscard]] Result<std::vector<TableRef>> discover_tables(mysql::Connection& connection,
                                                            std::string_view include, std::string_view exclude);

// The table's columns and its chunk key: the primary key, or chunk_key when given (the leading
// columns of an index, or any columns: then index is "" and the table is split by a sort). A
// table with neither gets no key: it is read whole, as one chunk (plan_warning says so).
// Errc::usage when chunk_key names a column that cannot be a chunk key.
[[nodiscard]] Result<TableKey> describe_table(mysql::Connection& connection, const TableRef& ref,
                                              const ChunkKeyOption* chunk_key);

// What cdc-plan warns of a table, if anything: without a key it is one chunk (and how to split
// it); with a --chunk-key that no index starts with, the sort and the scans that costs.
[[nodiscard]] std::optional<std::string> plan_warning(const TableKey& table);

// Splits the table (see man/cdc-plan.1, DESCRIPTION): the even split for a single integer key
// whose distribution factor is within bounds, else a walk of the index.
[[nodiscard]] Result<TableSplit> split_table(mysql::Connection& connection, const TableKey& table,
                                            const ChunkPolicy& policy);

}  // namespace cdc::plan
