// ChangeWriter's tables (stream/change_writer.h): the entry of each TABLE_MAP (its row plan and
// table line), its --where bound and its columns chosen (--columns, and never the server's
// internal ones), and which description of each table the output has.
#include "stream/change_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "records/table_line.h"
#include "schema/table_description.h"

namespace cdc::stream {

namespace {

std::string described_key(std::string_view database, std::string_view table) {
  std::string key;
  key.reserve(database.size() + 1 + table.size());
  key.append(database).append(1, '\0').append(table);
  return key;
}

}  // namespace

Result<ChangeWriter::TableEntry*> ChangeWriter::table_entry(const binlog::TableMap& map,
                                                            const ChangePosition& position) {
  for (TableEntry& entry : tables_)
    if (entry.plan.built_for(map)) return &entry;
  TableEntry* entry = nullptr;
  if (tables_.size() < kCachedTables) {
    entry = &tables_.emplace_back();
  } else {
    entry = &tables_[next_table_slot_];
    next_table_slot_ = (next_table_slot_ + 1) % kCachedTables;
  }
  entry->plan.build(map);
  entry->rows_table.reset();
  entry->table_members = records::table_members(map.database, map.table);
  entry->quoted_db = ndjson::quoted(map.database);
  entry->quoted_table = ndjson::quoted(map.table);
  entry->line = schema::describe_table_map(map);
  pieces_.clear();
  records::write_table_line(entry->line, pieces_);
  entry->description.assign(pieces_.buffered());
  pieces_.clear();
  entry->filter.reset();
  if (row_filters_) {
    // Bound to every column of the map: the filter reads the images before any is trimmed.
    auto filter = row_filters_->for_table(entry->line, entry->description,
                                          fmt::format("{}:{}", position.file, position.offset));
    if (!filter) {
      entry->plan = rowimage::TablePlan{};  // not built for the map: the next event tries again
      return fail(std::move(filter).error());
    }
    entry->filter = std::move(*filter);
  }
  if (auto kept = keep_chosen_columns(*entry, map, position); !kept) {
    entry->plan = rowimage::TablePlan{};
    return fail(std::move(kept).error());
  }
  const auto last = described_.find(described_key(map.database, map.table));
  entry->described = last != described_.end() && last->second == entry->description;
  return entry;
}

namespace {

// MariaDB's DB_ROW_HASH_<n>: one hidden column per long UNIQUE key (a HASH index), which the
// binary log carries after the table's own columns but no SELECT can read; a snapshot has no
// such column, so neither do the lines. Known from the catalog where it completed the map (a
// column information_schema does not list, other than a versioned table's row_start/row_end),
// else by the name the server gives it on a trailing BIGINT.
std::vector<bool> server_internal_columns(const binlog::TableMap& map, const records::TableLine& line) {
  std::vector<bool> internal(line.columns.size(), false);
  if (!map.column_types.empty()) {
    for (std::size_t i = 0; i < internal.size() && i < map.column_types.size(); ++i)
      internal[i] = map.column_types[i].empty();
    return internal;
  }
  for (std::size_t i = internal.size(); i-- > 0;) {
    const std::string_view name = line.columns[i].name;
    const bool hash = name.starts_with("DB_ROW_HASH_") && name.size() > 12 &&
                      name.find_first_not_of("0123456789", 12) == std::string_view::npos &&
                      i < map.columns.size() && map.columns[i].type == ColumnType::longlong;
    if (!hash) break;
    internal[i] = true;
  }
  return internal;
}

}  // namespace

Result<void> ChangeWriter::keep_chosen_columns(TableEntry& entry, const binlog::TableMap& map,
                                               const ChangePosition& position) {
  records::TableLine& line = entry.line;
  std::vector<bool> kept = server_internal_columns(map, line);
  const bool any_internal = std::find(kept.begin(), kept.end(), true) != kept.end();
  kept.flip();
  const auto chosen = column_choices_.empty() ? Result<const filter::ColumnsOption*>(nullptr)
                                              : filter::columns_for(column_choices_, line.db, line.table);
  if (!chosen) return fail(chosen.error());
  if (*chosen == nullptr) {
    if (any_internal) keep_only(entry, kept);
    return {};
  }
  const std::string name = fmt::format("{}.{}", line.db, line.table);
  const auto at = [&] { return fmt::format("{}:{}: {}", position.file, position.offset, name); };
  if (!line.key || line.key->empty())
    return fail(Errc::usage, fmt::format("{}: --columns '{}': the table has no primary key in the binary log, so only "
                                         "its whole row tells rows apart: capture all its columns",
                                         at(), (*chosen)->text));
  const filter::WhereOption* where = nullptr;
  if (row_filters_) {
    auto found = filter::where_for(row_filters_->options(), line.db, line.table);
    if (!found) return fail(found.error());
    where = *found;
  }
  std::vector<std::string> names;
  for (const records::TableColumn& column : line.columns) names.push_back(column.name);
  auto chosen_kept = filter::kept_columns(**chosen, name, names, *line.key, where ? &where->expression : nullptr);
  if (!chosen_kept)
    return fail(Errc::usage, fmt::format("{}:{}: {}", position.file, position.offset, chosen_kept.error().message));
  for (std::size_t i = 0; i < kept.size(); ++i) kept[i] = kept[i] && (*chosen_kept)[i];
  keep_only(entry, kept);
  return {};
}

void ChangeWriter::keep_only(TableEntry& entry, const std::vector<bool>& kept) {
  records::TableLine& line = entry.line;
  entry.plan.keep_columns(kept);
  std::vector<records::TableColumn> columns;
  for (std::size_t i = 0; i < line.columns.size(); ++i)
    if (kept[i]) columns.push_back(std::move(line.columns[i]));
  line.columns = std::move(columns);
  pieces_.clear();
  records::write_table_line(line, pieces_);
  entry.description.assign(pieces_.buffered());
  pieces_.clear();
}

void ChangeWriter::describe(TableEntry& table, const ChangePosition& position, std::uint32_t timestamp) {
  if (table.described) return;
  table.line.pos = records::TablePos{std::string(position.file), position.offset, std::string(position.gtid)};
  table.line.ts_ms = std::int64_t{timestamp} * 1000;
  records::write_table_line(table.line, out_);
  table.line.pos.reset();
  table.line.ts_ms = 0;
  described_[described_key(table.line.db, table.line.table)] = table.description;
  // Another cached map of the table holds another description, which the output no longer has.
  for (TableEntry& entry : tables_)
    if (&entry != &table && entry.line.db == table.line.db && entry.line.table == table.line.table)
      entry.described = false;
  table.described = true;
}

void ChangeWriter::forget_described() noexcept {
  described_.clear();
  for (TableEntry& entry : tables_) entry.described = false;
}

}  // namespace cdc::stream
