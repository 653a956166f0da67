#include "plan/planner.h"

#include <fmt/format.h>

#include <algorithm>

#include "mysql/sql_text.h"
#include "rowimage/fixed_binary_values.h"
#include "schema/table_schema.h"
#include "util/table_filter.h"
#include "util/text.h"

namespace cdc::plan {

namespace {

std::string table_name(const TableRef& ref) { return fmt::format("{}.{}", ref.database, ref.table); }

std::string qualified(const TableRef& ref) {
  return fmt::format("{}.{}{}", mysql::quote_identifier(ref.database), mysql::quote_identifier(ref.table),
                     ref.system_versioned ? " FOR SYSTEM_TIME ALL" : "");
}

std::string where_table(const TableRef& ref) {
  return fmt::format(" WHERE TABLE_SCHEMA = {} AND TABLE_NAME = {}", schema::sql_string_literal(ref.database),
                     schema::sql_string_literal(ref.table));
}

std::optional<KeyKind> kind_of(std::string_view data_type, std::string_view column_type, std::uint32_t collation_id) {
  const std::string type = to_lower(data_type);
  const bool is_unsigned = to_lower(column_type).find("unsigned") != std::string::npos;
  if (type == "tinyint" || type == "smallint" || type == "mediumint" || type == "int" || type == "integer" ||
      type == "bigint")
    return is_unsigned ? KeyKind::unsigned_integer : KeyKind::signed_integer;
  if (type == "year") return KeyKind::signed_integer;
  if (type == "decimal" || type == "numeric") return KeyKind::decimal;
  if (type == "char" || type == "varchar" || type == "tinytext" || type == "text" || type == "mediumtext" ||
      type == "longtext")
    return collation_id == 63 ? KeyKind::binary : KeyKind::text;
  if (type == "binary" || type == "varbinary" || type == "tinyblob" || type == "blob" || type == "mediumblob" ||
      type == "longblob")
    return KeyKind::binary;
  if (type == "date" || type == "datetime" || type == "time") return KeyKind::temporal;
  if (type == "timestamp") return KeyKind::timestamp;
  if (rowimage::fixed_binary_type_named(type) != FixedBinaryType::none) return KeyKind::fixed_binary;
  // ENUM and SET sort by their numbers but compare with strings as text, FLOAT/DOUBLE print
  // rounded values: boundaries would not be exact, so they cannot be chunk keys.
  return std::nullopt;
}

std::string fix_hint(const TableRef& ref) {
  return fmt::format("give --chunk-key {}=COL[,COL] naming the leading columns of an index whose columns are "
                     "NOT NULL integers, decimals, strings, binary strings, dates, INET4, INET6 or UUID",
                     table_name(ref));
}

std::string select_key_sql(const TableKey& table, std::string_view where, std::uint64_t offset) {
  std::string columns;
  for (const KeyColumn& column : table.key) {
    if (!columns.empty()) columns += ", ";
    columns += mysql::quote_identifier(column.name);
  }
  return fmt::format("SELECT {} FROM {} FORCE INDEX ({}){}{} ORDER BY {} LIMIT 1 OFFSET {}", columns,
                     qualified(table.ref), mysql::quote_identifier(table.index), where.empty() ? "" : " WHERE ", where,
                     columns, offset);
}

Result<std::optional<KeyTuple>> one_tuple(mysql::Connection& connection, const std::string& sql, std::size_t width) {
  auto result = connection.query(sql);
  if (!result) return fail(std::move(result).error());
  if (result->rows.empty()) return std::optional<KeyTuple>();
  KeyTuple tuple;
  for (std::size_t i = 0; i < width; ++i) {
    const auto& value = result->rows.front().at(i);
    if (!value) return fail(Errc::server, fmt::format("'{}' returned NULL for a NOT NULL key column", sql));
    tuple.push_back(*value);
  }
  return std::optional<KeyTuple>(std::move(tuple));
}

// Boundaries by walking the index: the first at row chunk_size of the index order, each next
// one chunk_size - 1 rows after the first key strictly greater than the previous boundary. A
// boundary is a real key value and chunks compare with it on the server, so the rows equal to
// it under the collation (a run of 'a', 'A', 'a ') all start the next chunk; a chunk holds at
// most chunk_size rows plus the rest of such a run.
Result<std::vector<KeyTuple>> walk_index(mysql::Connection& connection, const TableKey& table, std::uint64_t chunk_size) {
  std::vector<KeyTuple> boundaries;
  auto first = one_tuple(connection, select_key_sql(table, "", chunk_size), table.key.size());
  if (!first) return fail(std::move(first).error());
  if (!*first) return boundaries;
  boundaries.push_back(std::move(**first));
  for (;;) {
    auto after = key_compare_sql(table.key, boundaries.back(), ">");
    if (!after) return fail(std::move(after).error());
    auto next = one_tuple(connection, select_key_sql(table, *after, chunk_size - 1), table.key.size());
    if (!next) return fail(std::move(next).error());
    if (!*next) return boundaries;
    // The server found it strictly greater; equal text would mean a value that does not print
    // exactly, which would loop for ever.
    if (**next == boundaries.back())
      return fail(Errc::server, fmt::format("{}: walking index {} found the boundary twice; {}", table_name(table.ref),
                                            table.index, fix_hint(table.ref)));
    boundaries.push_back(std::move(**next));
  }
}

// Boundaries of a key that no index starts with, computed by the server in one sort of the
// table: the key of every chunk_size-th row (numbered in key order), each kept once under the
// key's collations (GROUP BY), so that they increase strictly and rows equal to a boundary
// all start the next chunk, as for a walk.
Result<std::vector<KeyTuple>> sort_boundaries(mysql::Connection& connection, const TableKey& table,
                                              std::uint64_t chunk_size) {
  std::string columns;
  for (const KeyColumn& column : table.key) {
    if (!columns.empty()) columns += ", ";
    columns += mysql::quote_identifier(column.name);
  }
  auto result = connection.query(fmt::format(
      "SELECT {0} FROM (SELECT {0}, ROW_NUMBER() OVER (ORDER BY {0}) AS cdc_row FROM {1}) AS numbered "
      "WHERE cdc_row > 1 AND (cdc_row - 1) % {2} = 0 GROUP BY {0} ORDER BY {0}",
      columns, qualified(table.ref), chunk_size));
  if (!result) return fail(std::move(result).error());
  std::vector<KeyTuple> boundaries;
  for (const auto& row : result->rows) {
    KeyTuple tuple;
    for (std::size_t i = 0; i < table.key.size(); ++i) {
      if (!row.at(i)) return fail(Errc::server, fmt::format("{}: a NOT NULL key column gave NULL", table_name(table.ref)));
      tuple.push_back(*row[i]);
    }
    boundaries.push_back(std::move(tuple));
  }
  return boundaries;
}

}  // namespace

Result<ChunkKeyOption> parse_chunk_key(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return fail(Errc::usage, fmt::format("--chunk-key '{}': {} (want DB.TABLE=COL[,COL])", text, why));
  };
  const std::size_t equals = text.find('=');
  if (equals == std::string_view::npos) return bad("no '='");
  const std::string_view name = text.substr(0, equals);
  const std::size_t dot = name.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == name.size()) return bad("no DB.TABLE before '='");
  ChunkKeyOption option{std::string(name.substr(0, dot)), std::string(name.substr(dot + 1)), {}};
  std::string_view rest = text.substr(equals + 1);
  for (;;) {
    const std::size_t comma = rest.find(',');
    const std::string_view column = rest.substr(0, comma);
    if (column.empty()) return bad("an empty column name");
    option.columns.emplace_back(column);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return option;
}

Result<std::vector<TableRef>> discover_tables(mysql::Connection& connection, std::string_view include,
                                              std::string_view exclude) {
  auto filter = TableFilter::parse(include, exclude);
  if (!filter) return fail(std::move(filter).error());
  auto result = connection.query(
      "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_ROWS, TABLE_TYPE FROM information_schema.TABLES "
      "WHERE TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED', 'SEQUENCE') "
      "AND TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys') "
      "ORDER BY TABLE_SCHEMA, TABLE_NAME");
  if (!result) return fail(std::move(result).error());
  std::vector<TableRef> tables;
  for (const auto& row : result->rows) {
    if (!row.at(0) || !row.at(1)) continue;
    if (!filter->selects(*row[0], *row[1])) continue;
    TableRef ref{*row[0], *row[1], 0};
    if (row.at(2)) ref.rows_estimate = parse_biased(*row[2], true).value_or(0);
    ref.system_versioned = row.at(3).value_or("") == "SYSTEM VERSIONED";
    tables.push_back(std::move(ref));
  }
  return tables;
}

Result<TableKey> describe_table(mysql::Connection& connection, const TableRef& ref, const ChunkKeyOption* chunk_key) {
  auto columns = connection.query(
      "SELECT COLUMN_NAME, COLUMN_TYPE, DATA_TYPE, IS_NULLABLE FROM information_schema.COLUMNS" + where_table(ref) +
      " ORDER BY ORDINAL_POSITION");
  if (!columns) return fail(std::move(columns).error());
  auto schema = schema::read_table_schema(connection, ref.database, ref.table);
  if (!schema) return fail(std::move(schema).error());
  if (!*schema || columns->rows.empty())
    return fail(Errc::server, fmt::format("{}: the table no longer exists", table_name(ref)));

  TableKey table;
  table.ref = ref;
  struct Described {
    std::string data_type;
    bool nullable = false;
  };
  std::vector<Described> described;
  for (const auto& row : columns->rows) {
    records::ChunkColumn info;
    info.name = row.at(0).value_or("");
    info.type = row.at(1).value_or("");
    for (const schema::ColumnSchema& column : (*schema)->columns)
      if (!column.hidden && column.name == info.name) info.collation_id = column.collation_id;
    table.columns.push_back(std::move(info));
    described.push_back({row.at(2).value_or(""), row.at(3).value_or("") == "YES"});
  }
  // A versioned table's implicit row_start/row_end: COLUMNS does not list them, but the binary
  // log has them, and each unique key ends with row_end (several versions of one row share
  // its primary key). The snapshot reads them as cdc-stream does (cdc-plan(1)).
  std::string row_end;
  if (ref.system_versioned && !(*schema)->primary_key.empty())
    row_end = (*schema)->columns[(*schema)->primary_key.back()].name;
  for (const schema::ColumnSchema& column : (*schema)->columns) {
    if (!ref.system_versioned || !column.period) continue;
    table.columns.push_back(records::ChunkColumn{column.name, column.column_type, 0});
    described.push_back({"timestamp", false});
  }

  // Indexes as (name, columns in order).
  auto statistics = connection.query("SELECT INDEX_NAME, COLUMN_NAME, NON_UNIQUE FROM information_schema.STATISTICS" +
                                     where_table(ref) + " ORDER BY INDEX_NAME, SEQ_IN_INDEX");
  if (!statistics) return fail(std::move(statistics).error());
  std::vector<std::pair<std::string, std::vector<std::string>>> indexes;
  std::vector<bool> index_unique;
  for (const auto& row : statistics->rows) {
    const std::string index = row.at(0).value_or("");
    if (indexes.empty() || indexes.back().first != index) {
      indexes.emplace_back(index, std::vector<std::string>{});
      index_unique.push_back(row.at(2).value_or("1") == "0");
    }
    indexes.back().second.push_back(row.at(1).value_or(""));
  }
  for (std::size_t i = 0; i < indexes.size(); ++i)
    if (!row_end.empty() && index_unique[i] &&
        std::none_of(indexes[i].second.begin(), indexes[i].second.end(),
                     [&](const std::string& name) { return iequals(name, row_end); }))
      indexes[i].second.push_back(row_end);
  // What tells two rows apart for cdc-merge: the primary key, else a unique index over NOT NULL
  // columns (several NULLs may share a unique index); else nothing, and rows are whole values.
  const auto not_null = [&](const std::string& name) {
    for (std::size_t i = 0; i < table.columns.size(); ++i)
      if (iequals(table.columns[i].name, name)) return !described[i].nullable;
    return false;
  };
  for (std::size_t i = 0; i < indexes.size(); ++i) {
    const auto& [index, index_columns] = indexes[i];
    if (!index_unique[i] || !std::all_of(index_columns.begin(), index_columns.end(), not_null)) continue;
    if (index == "PRIMARY" || !table.identity) table.identity = index_columns;
    if (index == "PRIMARY") break;
  }

  std::vector<std::string> key_columns;
  if (chunk_key != nullptr) {
    for (const auto& [index, index_columns] : indexes) {
      if (index_columns.size() < chunk_key->columns.size()) continue;
      if (std::equal(chunk_key->columns.begin(), chunk_key->columns.end(), index_columns.begin(), iequals)) {  // names are case-insensitive
        table.index = index;
        key_columns = chunk_key->columns;
        if (index == "PRIMARY") break;
      }
    }
    // No index starts with them: the split sorts the table and each chunk scans it (plan_warning).
    if (table.index.empty()) key_columns = chunk_key->columns;
  } else {
    for (const auto& [index, index_columns] : indexes)
      if (index == "PRIMARY") {
        table.index = index;
        key_columns = index_columns;
      }
    // No primary key: the table is read whole, as one chunk without a key (keyless_warning).
    if (table.index.empty()) return table;
  }

  for (const std::string& name : key_columns) {
    std::size_t at = table.columns.size();
    for (std::size_t i = 0; i < table.columns.size(); ++i)
      if (iequals(table.columns[i].name, name)) at = i;
    if (at == table.columns.size())
      return fail(Errc::usage, fmt::format("{}: no column {}", table_name(ref), name));
    const records::ChunkColumn& column = table.columns[at];
    const auto kind = kind_of(described[at].data_type, column.type, column.collation_id);
    if (!kind)
      return fail(Errc::usage, fmt::format("{}: key column {} is {}, which cannot be split exactly; {}",
                                           table_name(ref), column.name, column.type, fix_hint(ref)));
    if (described[at].nullable)
      return fail(Errc::usage, fmt::format("{}: key column {} allows NULL, which no key range holds; {}",
                                           table_name(ref), column.name, fix_hint(ref)));
    table.key.push_back(KeyColumn{column.name, column.type, *kind});
  }
  return table;
}

std::optional<std::string> plan_warning(const TableKey& table) {
  if (table.key.empty())
    return fmt::format("{} has no primary key: it is read as one chunk, which is neither split nor resumed inside (a "
                       "snapshot stopped in it reads it again from its start); to split it, {}",
                       table_name(table.ref), fix_hint(table.ref));
  if (table.index.empty()) {
    std::string columns;
    for (const KeyColumn& column : table.key) columns += (columns.empty() ? "" : ",") + column.name;
    return fmt::format("{}: --chunk-key {} is not the start of an index: the split sorts the whole table once, and "
                       "each chunk is read by a scan of the whole table; an index on ({}) makes both cheap",
                       table_name(table.ref), columns, columns);
  }
  return std::nullopt;
}

Result<TableSplit> split_table(mysql::Connection& connection, const TableKey& table, const ChunkPolicy& policy) {
  TableSplit plan{table.ref.database, table.ref.table, table.key, table.columns, {}, table.identity,
                  table.ref.system_versioned};
  if (table.key.empty()) {
    plan.chunks.push_back(KeyRange{std::nullopt, std::nullopt, table.ref.rows_estimate});
    return plan;
  }
  const std::uint64_t chunk_size = std::max<std::uint64_t>(policy.chunk_size, 1);
  const KeyColumn& first = table.key.front();
  const bool integer = first.kind == KeyKind::signed_integer || first.kind == KeyKind::unsigned_integer;
  if (table.key.size() == 1 && integer) {
    const std::string column = mysql::quote_identifier(first.name);
    auto bounds = connection.query(fmt::format("SELECT MIN({0}), MAX({0}) FROM {1}", column, qualified(table.ref)));
    if (!bounds) return fail(std::move(bounds).error());
    const auto& row = bounds->rows.at(0);
    if (!row.at(0) || !row.at(1)) {  // empty
      plan.chunks.push_back(KeyRange{});
      return plan;
    }
    const bool is_unsigned = first.kind == KeyKind::unsigned_integer;
    const auto min = parse_biased(*row[0], is_unsigned);
    const auto max = parse_biased(*row[1], is_unsigned);
    if (!min || !max)
      return fail(Errc::server, fmt::format("{}: MIN/MAX of {} are not integers: {}, {}", table_name(table.ref),
                                            first.name, *row[0], *row[1]));
    if (auto even = plan_integer_chunks(IntegerKeyRange{is_unsigned, *min, *max}, table.ref.rows_estimate, policy)) {
      plan.chunks = std::move(*even);
      return plan;
    }
  }
  auto boundaries =
      table.index.empty() ? sort_boundaries(connection, table, chunk_size) : walk_index(connection, table, chunk_size);
  if (!boundaries) return fail(std::move(boundaries).error().with_context(table_name(table.ref)));
  plan.chunks = chunks_from_boundaries(std::move(*boundaries), table.ref.rows_estimate, chunk_size);
  return plan;
}

}  // namespace cdc::plan
