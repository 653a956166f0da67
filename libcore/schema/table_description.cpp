#include "schema/table_description.h"

#include <fmt/format.h>

#include <iterator>

#include "rowimage/charset.h"
#include "util/text.h"

namespace cdc::schema {

namespace {

// An ENUM/SET label quoted as COLUMN_TYPE quotes it (the server's append_unescaped()).
void append_label(std::string_view label, std::string& out) {
  out += '\'';
  for (const char c : label) {
    switch (c) {
      case '\0': out += "\\0"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\\': out += "\\\\"; break;
      case '\'': out += "''"; break;
      default: out += c; break;
    }
  }
  out += '\'';
}

// Labels are stored in the column's charset, like its values; the line has them in UTF-8.
std::vector<std::string> labels_in_utf8(const std::vector<std::string>& labels, std::uint16_t collation) {
  std::vector<std::string> out;
  out.reserve(labels.size());
  rowimage::TextScratch scratch;
  const rowimage::Charset charset = rowimage::charset_of(collation);
  for (const std::string& label : labels)
    out.emplace_back(rowimage::is_binary_collation(collation) ? std::string_view(label)
                                                              : rowimage::to_utf8(label, charset, scratch));
  return out;
}

const std::vector<std::string>* logged_labels(const binlog::TableMap& map, std::size_t index) {
  const auto& lists = map.columns[index].type == ColumnType::enum_type ? map.enum_values : map.set_values;
  return index < lists.size() && !lists[index].empty() ? &lists[index] : nullptr;
}

std::string with_fraction(std::string_view name, std::uint16_t fsp) {
  return fsp == 0 ? std::string(name) : fmt::format("{}({})", name, fsp);
}

// CHAR/VARCHAR/BINARY/VARBINARY: the length in characters (bytes for binary ones).
std::string string_type(std::string_view text_name, std::string_view binary_name, std::uint32_t bytes,
                        std::uint16_t collation) {
  if (rowimage::is_binary_collation(collation)) return fmt::format("{}({})", binary_name, bytes);
  const std::uint8_t per_char = rowimage::max_bytes_per_char(rowimage::charset_of(collation));
  if (per_char == 0) return std::string(text_name);
  return fmt::format("{}({})", text_name, bytes / per_char);
}

std::string blob_type(std::uint16_t length_bytes, std::uint16_t collation) {
  static constexpr std::string_view kSizes[] = {"tiny", "", "medium", "long"};
  const std::string_view size = length_bytes >= 1 && length_bytes <= 4 ? kSizes[length_bytes - 1] : "";
  return fmt::format("{}{}", size, rowimage::is_binary_collation(collation) ? "blob" : "text");
}

std::string geometry_type(const binlog::TableMap& map, std::size_t index) {
  static constexpr std::string_view kGeometries[] = {"geometry",        "point",        "linestring",
                                                     "polygon",         "multipoint",   "multilinestring",
                                                     "multipolygon",    "geometrycollection"};
  const std::uint32_t kind = index < map.geometry_types.size() ? map.geometry_types[index] : 0;
  return std::string(kind < std::size(kGeometries) ? kGeometries[kind] : kGeometries[0]);
}

void set_charset(std::uint16_t collation, records::TableColumn& out) {
  if (collation == 0 || rowimage::is_binary_collation(collation)) return;
  if (const auto info = rowimage::collation_info(collation)) {
    out.charset = std::string(info->charset_name);
    out.collation = std::string(info->collation_name);
    return;
  }
  const rowimage::Charset charset = rowimage::charset_of(collation);
  if (charset != rowimage::Charset::unknown) out.charset = std::string(rowimage::charset_name(charset));
}

}  // namespace

std::string column_type_text(const binlog::TableMap& map, std::size_t index) {
  const Column& column = map.columns[index];
  const auto integer = [&](std::string_view name) {
    return map.has_signedness && column.is_unsigned ? fmt::format("{} unsigned", name) : std::string(name);
  };
  switch (column.type) {
    case ColumnType::tiny: return integer("tinyint");
    case ColumnType::short_int: return integer("smallint");
    case ColumnType::int24: return integer("mediumint");
    case ColumnType::long_int: return integer("int");
    case ColumnType::longlong: return integer("bigint");
    case ColumnType::float_type: return integer("float");
    case ColumnType::double_type: return integer("double");
    case ColumnType::newdecimal: return integer(fmt::format("decimal({},{})", column.meta >> 8, column.meta & 0xff));
    case ColumnType::decimal: return integer("decimal");
    case ColumnType::year: return "year";
    case ColumnType::date:
    case ColumnType::newdate: return "date";
    case ColumnType::time: return "time";
    case ColumnType::time2: return with_fraction("time", column.meta);
    case ColumnType::datetime: return "datetime";
    case ColumnType::datetime2: return with_fraction("datetime", column.meta);
    case ColumnType::timestamp: return "timestamp";
    case ColumnType::timestamp2: return with_fraction("timestamp", column.meta);
    case ColumnType::bit: return fmt::format("bit({})", (column.meta >> 8) * 8U + (column.meta & 0xffU));
    case ColumnType::varchar:
    case ColumnType::var_string: return string_type("varchar", "varbinary", column.meta, column.collation);
    case ColumnType::string: return string_type("char", "binary", column.meta, column.collation);
    case ColumnType::tiny_blob: return blob_type(1, column.collation);
    case ColumnType::blob: return blob_type(column.meta, column.collation);
    case ColumnType::medium_blob: return blob_type(3, column.collation);
    case ColumnType::long_blob: return blob_type(4, column.collation);
    case ColumnType::json: return "json";
    case ColumnType::geometry: return geometry_type(map, index);
    case ColumnType::vector: {
      const std::uint32_t dimensions = index < map.vector_dimensions.size() ? map.vector_dimensions[index] : 0;
      return dimensions == 0 ? std::string("vector") : fmt::format("vector({})", dimensions);
    }
    case ColumnType::enum_type:
    case ColumnType::set: {
      std::string text(column.type == ColumnType::enum_type ? "enum" : "set");
      const auto* labels = logged_labels(map, index);
      if (labels == nullptr) return text;
      text += '(';
      for (const std::string& label : labels_in_utf8(*labels, column.collation)) {
        if (text.back() != '(') text += ',';
        append_label(label, text);
      }
      text += ')';
      return text;
    }
    default: return to_lower(column_type_name(column.type));
  }
}

records::TableLine describe_table_map(const binlog::TableMap& map) {
  records::TableLine line;
  line.db = map.database;
  line.table = map.table;
  line.columns.reserve(map.columns.size());
  for (std::size_t i = 0; i < map.columns.size(); ++i) {
    const Column& column = map.columns[i];
    records::TableColumn& out = line.columns.emplace_back();
    out.name = i < map.column_names.size() ? map.column_names[i] : fmt::format("@{}", i + 1);
    out.type = i < map.column_types.size() && !map.column_types[i].empty() ? map.column_types[i]
                                                                            : column_type_text(map, i);
    out.nullable = column.nullable;
    set_charset(column.collation, out);
    if (column.type == ColumnType::enum_type || column.type == ColumnType::set)
      if (const auto* labels = logged_labels(map, i)) out.values = labels_in_utf8(*labels, column.collation);
  }
  if (map.has_column_names() && !map.primary_key.empty()) {
    std::vector<std::string> key;
    for (const std::uint32_t index : map.primary_key) key.push_back(line.columns[index].name);
    line.key = std::move(key);
  }
  return line;
}

records::TableLine describe_table_schema(std::string_view database, std::string_view table,
                                         const TableSchema& schema) {
  records::TableLine line;
  line.db = std::string(database);
  line.table = std::string(table);
  for (const ColumnSchema& column : schema.columns) {
    if (column.hidden && !column.period) continue;
    records::TableColumn& out = line.columns.emplace_back();
    out.name = column.name;
    out.type = column.column_type;
    out.nullable = column.is_nullable;
    const auto collation = static_cast<std::uint16_t>(column.collation_id);
    set_charset(collation, out);
    if (collation == 0 && !column.charset.empty()) out.charset = column.charset;
    const auto& labels = column.data_type == "enum" ? column.enum_values : column.set_values;
    if (!labels.empty()) out.values = labels_in_utf8(labels, collation);
  }
  if (!schema.primary_key.empty()) {
    std::vector<std::string> key;
    for (const std::uint32_t index : schema.primary_key)
      if (!schema.columns[index].hidden || schema.columns[index].period) key.push_back(schema.columns[index].name);
    line.key = std::move(key);
  }
  return line;
}

}  // namespace cdc::schema
