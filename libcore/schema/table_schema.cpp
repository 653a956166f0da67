#include "schema/table_schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <utility>

#include "mysql/sql_text.h"
#include "rowimage/charset.h"
#include "rowimage/fixed_binary_values.h"
#include "schema/result_cells.h"
#include "util/text.h"

namespace cdc::schema {

namespace {

using cells::header;
using cells::kAbsent;
using cells::text_or_empty;
using cells::cell;
using cells::number;
using cells::required_header;


bool is_numeric_type(std::string_view data_type) {
  static const std::set<std::string_view> kNumeric = {"tinyint", "smallint", "mediumint", "int",     "integer",
                                                      "bigint",  "decimal",  "numeric",   "float",   "double",
                                                      "real",    "double precision"};
  return kNumeric.contains(data_type);
}

// Columns stored as binary strings, whose NULL COLLATION_NAME means binary (63) in the
// binlog's charset metadata; GEOMETRY is a BLOB underneath and has a slot there too, and
// MariaDB's INET4/INET6/UUID are logged as BINARY(n).
bool is_binary_string_type(std::string_view data_type) {
  static const std::set<std::string_view> kBinary = {
      "binary",     "varbinary",       "tinyblob",     "blob",       "mediumblob",         "longblob",
      "geometry",   "point",           "linestring",   "polygon",    "multipoint",         "multilinestring",
      "multipolygon", "geometrycollection", "inet4",      "inet6",           "uuid"};
  return kBinary.contains(data_type);
}

// The TABLE_MAP types a DATA_TYPE can be logged as; nullopt for types we cannot judge
// (a newer server's type), which then match anything.
std::optional<std::vector<ColumnType>> binlog_types(std::string_view data_type) {
  using T = ColumnType;
  static const std::map<std::string_view, std::vector<ColumnType>, std::less<>> kTypes = {
      {"tinyint", {T::tiny}},
      {"smallint", {T::short_int}},
      {"mediumint", {T::int24}},
      {"int", {T::long_int}},
      {"integer", {T::long_int}},
      {"bigint", {T::longlong}},
      {"decimal", {T::newdecimal, T::decimal}},
      {"numeric", {T::newdecimal, T::decimal}},
      {"float", {T::float_type}},
      {"double", {T::double_type}},
      {"real", {T::double_type}},
      {"double precision", {T::double_type}},
      {"bit", {T::bit}},
      {"date", {T::date, T::newdate}},
      {"time", {T::time2, T::time}},
      {"datetime", {T::datetime2, T::datetime}},
      {"timestamp", {T::timestamp2, T::timestamp}},
      {"year", {T::year}},
      {"char", {T::string, T::var_string}},
      {"binary", {T::string, T::var_string}},
      {"varchar", {T::varchar, T::var_string}},
      {"varbinary", {T::varchar, T::var_string}},
      {"tinytext", {T::blob, T::tiny_blob}},
      {"text", {T::blob}},
      {"mediumtext", {T::blob, T::medium_blob}},
      {"longtext", {T::blob, T::long_blob}},  // MariaDB's JSON too
      {"tinyblob", {T::blob, T::tiny_blob}},
      {"blob", {T::blob}},
      {"mediumblob", {T::blob, T::medium_blob}},
      {"longblob", {T::blob, T::long_blob}},
      {"enum", {T::enum_type}},
      {"set", {T::set}},
      {"json", {T::json, T::blob}},
      {"geometry", {T::geometry}},
      {"point", {T::geometry}},
      {"linestring", {T::geometry}},
      {"polygon", {T::geometry}},
      {"multipoint", {T::geometry}},
      {"multilinestring", {T::geometry}},
      {"multipolygon", {T::geometry}},
      {"geometrycollection", {T::geometry}},
      {"geomcollection", {T::geometry}},
      {"inet4", {T::string}},  // MariaDB's fixed-size binary types
      {"inet6", {T::string}},
      {"uuid", {T::string}},
      {"vector", {T::vector, T::varchar, T::string, T::blob}},
  };
  const auto found = kTypes.find(data_type);
  if (found == kTypes.end()) return std::nullopt;
  return found->second;
}

// The map columns the charset fields cover, and those with a signedness bit (MariaDB's list,
// which adds YEAR: the catalog does not know the flavor, and YEAR decodes the same either way).
bool takes_collation(ColumnType type) { return binlog::is_character(type) || binlog::is_enum_or_set(type); }
bool takes_signedness(ColumnType type) { return binlog::has_signedness_bit(type, binlog::ServerFlavor::mariadb); }

// Field_enum::pack_length() / get_set_pack_length(), what TABLE_MAP's metadata holds for them.
std::uint16_t enum_pack_length(std::size_t labels) { return labels < 256 ? 1 : 2; }
std::uint16_t set_pack_length(std::size_t labels) {
  const std::size_t bytes = (labels + 7) / 8;
  return static_cast<std::uint16_t>(bytes > 4 ? 8 : bytes);
}

// Why column `index` of the map cannot be this schema column, or "" when it can.
std::string column_mismatch(const ColumnSchema& column, const Column& logged, std::size_t index) {
  const auto allowed = binlog_types(column.data_type);
  const auto describe = [&] {
    return fmt::format("column {} ({}) is {} in information_schema but {} in the TABLE_MAP", index + 1, column.name,
                       column.data_type, column_type_name(logged.type));
  };
  if (allowed && std::find(allowed->begin(), allowed->end(), logged.type) == allowed->end()) return describe();
  const auto differs = [&](std::string_view what, std::uint64_t schema_value, std::uint64_t map_value) {
    return fmt::format("column {} ({}) has {} {} in information_schema but {} in the TABLE_MAP", index + 1,
                       column.name, what, schema_value, map_value);
  };
  switch (logged.type) {
    case ColumnType::string:
    case ColumnType::varchar: {
      // Both hold the maximum length in bytes (Field_string/Field_varchar::save_field_metadata);
      // INET4/INET6/UUID have no CHARACTER_OCTET_LENGTH, but a size of their own.
      const std::size_t fixed_size = rowimage::fixed_binary_size(rowimage::fixed_binary_type_named(column.data_type));
      const std::uint64_t length = fixed_size != 0 ? fixed_size : column.octet_length;
      if (length != 0 && length != logged.meta) return differs("a byte length of", length, logged.meta);
      break;
    }
    case ColumnType::newdecimal: {
      const std::uint64_t packed = std::uint64_t{column.precision} << 8 | column.scale;
      if (column.precision != 0 && packed != logged.meta)
        return fmt::format("column {} ({}) is DECIMAL({},{}) in information_schema but DECIMAL({},{}) in the TABLE_MAP",
                           index + 1, column.name, column.precision, column.scale, logged.meta >> 8,
                           logged.meta & 0xff);
      break;
    }
    case ColumnType::enum_type:
      if (!column.enum_values.empty() && enum_pack_length(column.enum_values.size()) != logged.meta)
        return differs("an ENUM pack length of", enum_pack_length(column.enum_values.size()), logged.meta);
      break;
    case ColumnType::set:
      if (!column.set_values.empty() && set_pack_length(column.set_values.size()) != logged.meta)
        return differs("a SET pack length of", set_pack_length(column.set_values.size()), logged.meta);
      break;
    default:
      break;
  }
  return {};
}

// A versioned table's implicit period columns: TIMESTAMP(6) NOT NULL, named so in the binlog.
ColumnSchema hidden_timestamp(std::string name) {
  ColumnSchema column;
  column.name = std::move(name);
  column.data_type = "timestamp";
  column.column_type = "timestamp(6)";
  column.is_nullable = false;
  column.hidden = true;
  column.period = true;
  return column;
}


}  // namespace

std::string sql_string_literal(std::string_view text) {
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (plain) return fmt::format("'{}'", text);
  return mysql::bytes_literal(text);
}

std::optional<std::vector<std::string>> parse_enum_set_labels(std::string_view column_type) {
  std::string_view rest;
  if (to_lower(column_type.substr(0, 5)) == "enum(")
    rest = column_type.substr(5);
  else if (to_lower(column_type.substr(0, 4)) == "set(")
    rest = column_type.substr(4);
  else
    return std::nullopt;
  std::vector<std::string> labels;
  if (!rest.empty() && rest.front() == ')') return labels;
  std::size_t i = 0;
  for (;;) {
    if (i >= rest.size() || rest[i] != '\'') return std::nullopt;
    ++i;
    std::string label;
    for (;;) {
      if (i >= rest.size()) return std::nullopt;
      const char c = rest[i++];
      if (c == '\'') {
        if (i < rest.size() && rest[i] == '\'') {
          label += '\'';
          ++i;
          continue;
        }
        break;
      }
      if (c != '\\') {
        label += c;
        continue;
      }
      if (i >= rest.size()) return std::nullopt;
      // sql/sql_show.cc append_unescaped() writes \0 \n \r \\; the rest are the SQL
      // string escapes, for a server that writes more of them.
      switch (const char escaped = rest[i++]) {
        case '0': label += '\0'; break;
        case 'n': label += '\n'; break;
        case 'r': label += '\r'; break;
        case 't': label += '\t'; break;
        case 'b': label += '\b'; break;
        case 'Z': label += '\x1a'; break;
        default: label += escaped; break;
      }
    }
    labels.push_back(std::move(label));
    if (i >= rest.size()) return std::nullopt;
    if (rest[i] == ')') return labels;
    if (rest[i] != ',') return std::nullopt;
    ++i;
  }
}

Result<TableSchema> table_schema_from_rows(const InformationSchemaRows& rows) {
  const auto& columns = rows.columns;
  std::size_t col_name = 0, col_position = 0, col_data_type = 0, col_column_type = 0, col_collation = 0;
  for (const auto& [name, slot] : {std::pair<std::string_view, std::size_t*>{"COLUMN_NAME", &col_name},
                                   {"ORDINAL_POSITION", &col_position},
                                   {"DATA_TYPE", &col_data_type},
                                   {"COLUMN_TYPE", &col_column_type},
                                   {"COLLATION_NAME", &col_collation}}) {
    auto index = required_header(columns, "COLUMNS", name);
    if (!index) return fail(std::move(index).error());
    *slot = *index;
  }
  const std::size_t col_charset = header(columns, "CHARACTER_SET_NAME");
  const std::size_t col_octets = header(columns, "CHARACTER_OCTET_LENGTH");
  const std::size_t col_precision = header(columns, "NUMERIC_PRECISION");
  const std::size_t col_scale = header(columns, "NUMERIC_SCALE");
  const std::size_t col_generation = header(columns, "GENERATION_EXPRESSION");
  const std::size_t col_nullable = header(columns, "IS_NULLABLE");

  std::map<std::string, std::uint32_t, std::less<>> collation_ids;
  for (const auto& row : rows.collations.rows) {
    const auto id = number(row, 1);
    if (row.empty() || !row[0].has_value() || !id || *id > 0xffff) continue;
    std::uint32_t collation_id = static_cast<std::uint32_t>(*id);
    if (rows.collation_ids_from_mariadb)
      if (const auto aliased = rowimage::mariadb_0900_alias_target(static_cast<std::uint16_t>(*id)))
        collation_id = *aliased;
    collation_ids.emplace(*row[0], collation_id);
  }

  std::vector<std::pair<std::uint64_t, ColumnSchema>> ordered;
  std::optional<std::string> row_start, row_end;  // names of an explicit period's columns
  for (const auto& row : columns.rows) {
    const auto position = number(row, col_position);
    const auto* name = cell(row, col_name);
    if (!position || name == nullptr || !name->has_value())
      return fail(Errc::server, "information_schema.COLUMNS row without COLUMN_NAME or ORDINAL_POSITION");
    ColumnSchema column;
    column.name = **name;
    column.data_type = to_lower(text_or_empty(row, col_data_type));
    const std::string column_type = to_lower(text_or_empty(row, col_column_type));
    column.charset = std::string(text_or_empty(row, col_charset));
    column.column_type = std::string(text_or_empty(row, col_column_type));
    column.is_nullable = !iequals(text_or_empty(row, col_nullable), "NO");
    if (is_numeric_type(column.data_type)) column.is_unsigned = column_type.find(" unsigned") != std::string::npos;
    // MariaDB's YEAR is an unsigned one-byte field and logs a signedness bit saying so (MySQL
    // logs none for it); the value decodes the same either way.
    if (column.data_type == "year") column.is_unsigned = true;
    const std::string_view collation = text_or_empty(row, col_collation);
    if (!collation.empty()) {
      if (const auto found = collation_ids.find(collation); found != collation_ids.end())
        column.collation_id = found->second;
    } else if (is_binary_string_type(column.data_type)) {
      column.collation_id = rowimage::kBinaryCollationId;
    }
    if (column.data_type == "enum" || column.data_type == "set") {
      // The original text, not lowered: labels are case-sensitive.
      auto labels = parse_enum_set_labels(text_or_empty(row, col_column_type));
      if (!labels)
        return fail(Errc::server, fmt::format("cannot read the labels of column {}: {}", column.name,
                                              text_or_empty(row, col_column_type)));
      (column.data_type == "enum" ? column.enum_values : column.set_values) = std::move(*labels);
    }
    if (column.data_type == "char" || column.data_type == "varchar" || column.data_type == "binary" ||
        column.data_type == "varbinary")
      column.octet_length = number(row, col_octets).value_or(0);
    if (column.data_type == "decimal" || column.data_type == "numeric") {
      column.precision = static_cast<std::uint32_t>(number(row, col_precision).value_or(0));
      column.scale = static_cast<std::uint32_t>(number(row, col_scale).value_or(0));
    }
    // MariaDB names an explicit period's columns by this pseudo-expression.
    const std::string_view generation = text_or_empty(row, col_generation);
    if (iequals(generation, "ROW START")) row_start = column.name;
    if (iequals(generation, "ROW END")) row_end = column.name;
    ordered.emplace_back(*position, std::move(column));
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  TableSchema schema;
  for (auto& entry : ordered) schema.columns.push_back(std::move(entry.second));
  const auto index_of_name = [&](std::string_view name) -> std::optional<std::uint32_t> {
    for (std::size_t i = 0; i < schema.columns.size(); ++i)
      if (schema.columns[i].name == name) return static_cast<std::uint32_t>(i);
    return std::nullopt;
  };

  const std::size_t tab_type = header(rows.tables, "TABLE_TYPE");
  const std::size_t tab_engine = header(rows.tables, "ENGINE");
  const bool versioned = !rows.tables.rows.empty() &&
                         iequals(text_or_empty(rows.tables.rows.front(), tab_type), "SYSTEM VERSIONED");
  const bool memory = !rows.tables.rows.empty() && iequals(text_or_empty(rows.tables.rows.front(), tab_engine), "MEMORY");
  std::optional<std::uint32_t> row_end_index;
  if (versioned && !row_start) {
    // Implicit period columns: not in COLUMNS, logged after every listed column.
    schema.columns.push_back(hidden_timestamp("row_start"));
    schema.columns.push_back(hidden_timestamp("row_end"));
    row_end_index = static_cast<std::uint32_t>(schema.columns.size() - 1);
  } else if (versioned && row_end) {
    row_end_index = index_of_name(*row_end);
  }

  // Primary key, and MariaDB's long UNIQUE keys, each backed by a hidden hash column
  // (sql/sql_table.cc add_hash_field) that STATISTICS shows as INDEX_TYPE HASH. MEMORY
  // tables have real HASH indexes without one.
  const auto& stats = rows.statistics;
  const std::size_t st_index = header(stats, "INDEX_NAME");
  const std::size_t st_seq = header(stats, "SEQ_IN_INDEX");
  const std::size_t st_column = header(stats, "COLUMN_NAME");
  const std::size_t st_sub_part = header(stats, "SUB_PART");
  const std::size_t st_type = header(stats, "INDEX_TYPE");
  const std::size_t st_non_unique = header(stats, "NON_UNIQUE");
  if (!stats.rows.empty() && (st_index == kAbsent || st_seq == kAbsent || st_column == kAbsent))
    return fail(Errc::server, "information_schema.STATISTICS lacks INDEX_NAME, SEQ_IN_INDEX or COLUMN_NAME");
  std::vector<std::pair<std::uint64_t, std::pair<std::uint32_t, std::uint32_t>>> key_parts;
  std::vector<std::string> hash_keys;
  for (const auto& row : stats.rows) {
    const std::string_view index_name = text_or_empty(row, st_index);
    if (index_name == "PRIMARY") {
      const std::string_view column_name = text_or_empty(row, st_column);
      const auto column = index_of_name(column_name);
      if (!column)
        return fail(Errc::server, fmt::format("primary key column {} is not in information_schema.COLUMNS",
                                              column_name));
      const auto prefix = number(row, st_sub_part).value_or(0);
      key_parts.push_back({number(row, st_seq).value_or(0), {*column, static_cast<std::uint32_t>(prefix)}});
    } else if (!memory && iequals(text_or_empty(row, st_type), "HASH") && text_or_empty(row, st_non_unique) == "0" &&
               std::find(hash_keys.begin(), hash_keys.end(), index_name) == hash_keys.end()) {
      hash_keys.emplace_back(index_name);
    }
  }
  std::stable_sort(key_parts.begin(), key_parts.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [seq, part] : key_parts) {
    schema.primary_key.push_back(part.first);
    schema.primary_key_prefix.push_back(part.second);
  }
  // The server appends the row end column to a versioned table's primary key, and the binlog's
  // PRIMARY_KEY field lists it (MariaDB 10.11), while STATISTICS does not.
  if (!schema.primary_key.empty() && row_end_index &&
      std::find(schema.primary_key.begin(), schema.primary_key.end(), *row_end_index) == schema.primary_key.end()) {
    schema.primary_key.push_back(*row_end_index);
    schema.primary_key_prefix.push_back(0);
  }
  for (std::size_t i = 0; i < hash_keys.size(); ++i) {
    ColumnSchema column;
    column.name = fmt::format("DB_ROW_HASH_{}", i + 1);
    column.data_type = "bigint";
    column.is_unsigned = true;
    column.hidden = true;
    schema.columns.push_back(std::move(column));
  }
  return schema;
}

bool apply_table_schema(const TableSchema& schema, binlog::TableMap& map, std::string& mismatch) {
  if (schema.columns.size() != map.columns.size()) {
    mismatch = fmt::format("information_schema describes {} columns, the TABLE_MAP of {}.{} has {}",
                           schema.columns.size(), map.database, map.table, map.columns.size());
    return false;
  }
  for (std::size_t i = 0; i < map.columns.size(); ++i) {
    std::string why = column_mismatch(schema.columns[i], map.columns[i], i);
    if (!why.empty()) {
      mismatch = fmt::format("{}.{}: {}", map.database, map.table, why);
      return false;
    }
  }
  mismatch.clear();
  map.column_types.clear();
  for (const auto& column : schema.columns) map.column_types.push_back(column.column_type);
  // Nothing in the binlog tells these from BINARY(n): the catalog alone can.
  for (std::size_t i = 0; i < map.columns.size(); ++i)
    map.columns[i].fixed_binary = map.columns[i].type == ColumnType::string
                                      ? rowimage::fixed_binary_type_named(schema.columns[i].data_type)
                                      : FixedBinaryType::none;
  const bool full = map.has_column_names();
  if (!full) {
    map.column_names.clear();
    for (const auto& column : schema.columns) map.column_names.push_back(column.name);
    // Checked against the column count: the decoder guarantees that for binlog keys.
    if (std::all_of(schema.primary_key.begin(), schema.primary_key.end(),
                    [&](std::uint32_t index) { return index < map.columns.size(); }) &&
        map.primary_key.empty()) {
      map.primary_key = schema.primary_key;
      map.primary_key_prefix = schema.primary_key_prefix;
      map.primary_key_prefix.resize(map.primary_key.size(), 0);
    }
  }
  if (!map.has_signedness) {
    for (std::size_t i = 0; i < map.columns.size(); ++i)
      if (takes_signedness(map.columns[i].type)) map.columns[i].is_unsigned = schema.columns[i].is_unsigned;
    map.has_signedness = true;
  }
  bool filled_charset = false;
  for (std::size_t i = 0; i < map.columns.size(); ++i) {
    auto& column = map.columns[i];
    if (column.collation != 0 || !takes_collation(column.type) || schema.columns[i].collation_id == 0) continue;
    column.collation = static_cast<std::uint16_t>(schema.columns[i].collation_id);
    filled_charset = true;
  }
  if (filled_charset) map.has_charsets = true;
  if (!map.has_enum_set_strings) {
    bool any = false;
    map.enum_values.assign(map.columns.size(), {});
    map.set_values.assign(map.columns.size(), {});
    for (std::size_t i = 0; i < map.columns.size(); ++i) {
      if (map.columns[i].type == ColumnType::enum_type) map.enum_values[i] = schema.columns[i].enum_values;
      if (map.columns[i].type == ColumnType::set) map.set_values[i] = schema.columns[i].set_values;
      any = any || !map.enum_values[i].empty() || !map.set_values[i].empty();
    }
    if (any) {
      map.has_enum_set_strings = true;
    } else {
      map.enum_values.clear();
      map.set_values.clear();
    }
  }
  return true;
}

}  // namespace cdc::schema
