#include "output/table_columns.h"

#include <fmt/format.h>

#include "ndjson/writer.h"
#include "output/type_text.h"
#include "records/table_line.h"
#include "util/text.h"

namespace cdc::output {

namespace {

struct BaseKind {
  std::string_view base;
  ValueKind kind;
  int integer_bits;
};

constexpr BaseKind kBaseKinds[] = {
    {"tinyint", ValueKind::integer, 8},
    {"bool", ValueKind::integer, 8},
    {"boolean", ValueKind::integer, 8},
    {"smallint", ValueKind::integer, 16},
    {"mediumint", ValueKind::integer, 24},
    {"int", ValueKind::integer, 32},
    {"integer", ValueKind::integer, 32},
    {"bigint", ValueKind::integer, 64},
    {"float", ValueKind::float32, 0},
    {"double", ValueKind::float64, 0},
    {"real", ValueKind::float64, 0},
    {"decimal", ValueKind::decimal, 0},
    {"numeric", ValueKind::decimal, 0},
    {"dec", ValueKind::decimal, 0},
    {"fixed", ValueKind::decimal, 0},
    {"bit", ValueKind::bit, 0},
    {"year", ValueKind::year, 0},
    {"date", ValueKind::date, 0},
    {"time", ValueKind::time, 0},
    {"datetime", ValueKind::datetime, 0},
    {"timestamp", ValueKind::timestamp, 0},
    {"char", ValueKind::text, 0},
    {"varchar", ValueKind::text, 0},
    {"tinytext", ValueKind::text, 0},
    {"text", ValueKind::text, 0},
    {"mediumtext", ValueKind::text, 0},
    {"longtext", ValueKind::text, 0},
    {"binary", ValueKind::binary, 0},
    {"varbinary", ValueKind::binary, 0},
    {"tinyblob", ValueKind::binary, 0},
    {"blob", ValueKind::binary, 0},
    {"mediumblob", ValueKind::binary, 0},
    {"longblob", ValueKind::binary, 0},
    {"enum", ValueKind::enumeration, 0},
    {"set", ValueKind::set, 0},
    {"json", ValueKind::json, 0},
    {"geometry", ValueKind::geometry, 0},
    {"point", ValueKind::geometry, 0},
    {"linestring", ValueKind::geometry, 0},
    {"polygon", ValueKind::geometry, 0},
    {"multipoint", ValueKind::geometry, 0},
    {"multilinestring", ValueKind::geometry, 0},
    {"multipolygon", ValueKind::geometry, 0},
    {"geometrycollection", ValueKind::geometry, 0},
    {"geomcollection", ValueKind::geometry, 0},
    {"vector", ValueKind::vector, 0},
};

}  // namespace

void classify_column(ColumnInfo& column, const std::optional<std::string>& charset) {
  const std::string type = to_lower(column.type);
  const TypeText parsed = parse_type_text(type);
  column.base_type = std::string(parsed.base);
  column.kind = ValueKind::other;
  column.integer_bits = 0;
  for (const BaseKind& known : kBaseKinds) {
    if (known.base == column.base_type) {
      column.kind = known.kind;
      column.integer_bits = known.integer_bits;
      break;
    }
  }
  column.is_unsigned = parsed.is_unsigned;
  // A text type in the binary charset holds bytes (and is written as base64 like BINARY).
  if (column.kind == ValueKind::text && charset && *charset == "binary") column.kind = ValueKind::binary;
}

std::optional<std::size_t> TableInfo::find(std::string_view quoted_name, std::size_t hint) const noexcept {
  if (hint < columns.size() && columns[hint].quoted_name == quoted_name) return hint;
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i].quoted_name == quoted_name) return i;
  return std::nullopt;
}

Result<const TableInfo*> TableCatalog::add(simdjson::dom::object table_line) {
  auto parsed = records::parse_table_line(table_line);
  if (!parsed) return fail(std::move(parsed).error());
  records::TableLine& line = *parsed;
  TableInfo info;
  info.db = std::move(line.db);
  info.table = std::move(line.table);
  info.db_table_members = "\"database\":" + ndjson::quoted(info.db) + ",\"table\":" + ndjson::quoted(info.table);
  info.columns.reserve(line.columns.size());
  for (records::TableColumn& source : line.columns) {
    ColumnInfo column;
    column.name = std::move(source.name);
    column.quoted_name = ndjson::quoted(column.name);
    column.member_key = column.quoted_name + ":";
    column.key_member = ndjson::quoted("pk." + to_lower(column.name)) + ":";
    column.type = std::move(source.type);
    column.values = std::move(source.values);
    classify_column(column, source.charset);
    info.columns.push_back(std::move(column));
  }
  info.key = std::move(line.key);
  if (info.key) {
    for (const std::string& name : *info.key) {
      const auto at = info.find(ndjson::quoted(name), 0);
      if (!at)
        return fail(Errc::corrupt_input,
                    fmt::format("the table line of {}.{} names key column \"{}\", which is not among its columns",
                                info.db, info.table, name));
      info.key_columns.push_back(*at);
    }
  }
  std::string map_key = info.db;
  map_key.push_back('\0');
  map_key += info.table;
  auto [it, inserted] = tables_.insert_or_assign(std::move(map_key), std::move(info));
  (void)inserted;
  return &it->second;
}

Result<const TableInfo*> TableCatalog::find(std::string_view db, std::string_view table) const {
  lookup_key_.assign(db);
  lookup_key_.push_back('\0');
  lookup_key_.append(table);
  const auto it = tables_.find(lookup_key_);
  if (it == tables_.end())
    return fail(Errc::corrupt_input,
                fmt::format("no table line for {}.{} before its first change: the input is not a whole cdc output "
                            "(convert the output of cdc-stream, cdc-merge or cdc-sync, which describe each table first)",
                            db, table));
  return &it->second;
}

}  // namespace cdc::output
