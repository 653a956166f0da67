#include "binlog/events/table_map_event.h"

#include <fmt/format.h>

#include "util/bits.h"

namespace cdc::binlog {

// Which columns the signedness bitmap has a bit for. MySQL: its is_numeric_type list. MariaDB
// asks each field (binlog_type_info), and YEAR, a Field_tiny there, answers too (seen with
// mariadb-binlog --print-table-metadata on 10.11: a YEAR column shifts the bits after it).
bool has_signedness_bit(ColumnType type, ServerFlavor flavor) {
  switch (type) {
    case ColumnType::year:
      return flavor == ServerFlavor::mariadb;
    case ColumnType::tiny:
    case ColumnType::short_int:
    case ColumnType::int24:
    case ColumnType::long_int:
    case ColumnType::longlong:
    case ColumnType::newdecimal:
    case ColumnType::float_type:
    case ColumnType::double_type:
      return true;
    default:
      return false;
  }
}

// Columns that take part in DEFAULT_CHARSET / COLUMN_CHARSET (log_event.cc is_character_type):
// CHAR, VARCHAR, the BLOB/TEXT family, GEOMETRY (a BLOB underneath) and (MySQL 9) VECTOR, which is stored as a binary
// string; ENUM and SET have their own charset fields.
bool is_character(ColumnType type) {
  switch (type) {
    case ColumnType::geometry:  // "Base class is blob for geom type" (log_event.cc): it takes a charset slot
    case ColumnType::vector:
    case ColumnType::string:
    case ColumnType::var_string:
    case ColumnType::varchar:
    case ColumnType::blob:
    case ColumnType::tiny_blob:
    case ColumnType::medium_blob:
    case ColumnType::long_blob:
      return true;
    default:
      return false;
  }
}

bool is_enum_or_set(ColumnType type) { return type == ColumnType::enum_type || type == ColumnType::set; }

namespace {

// Optional metadata field types (Table_map_log_event::Optional_metadata_field_type).
enum class OptionalField : std::uint8_t {
  signedness = 1,
  default_charset = 2,
  column_charset = 3,
  column_name = 4,
  set_str_value = 5,
  enum_str_value = 6,
  geometry_type = 7,
  simple_primary_key = 8,
  primary_key_with_prefix = 9,
  enum_and_set_default_charset = 10,
  enum_and_set_column_charset = 11,
  column_visibility = 12,
  vector_dimensionality = 13,
};

// Type metadata (sql/field.cc save_field_metadata / log_event.cc read): how many bytes each
// type has in TABLE_MAP and how they combine into Column::meta.
void read_type_metadata(ByteReader& in, Column& column) {
  switch (column.type) {
    case ColumnType::float_type:
    case ColumnType::double_type:
    case ColumnType::blob:
    case ColumnType::tiny_blob:
    case ColumnType::medium_blob:
    case ColumnType::long_blob:
    case ColumnType::geometry:
    case ColumnType::json:
    case ColumnType::vector:
    case ColumnType::timestamp2:
    case ColumnType::datetime2:
    case ColumnType::time2:
      column.meta = in.u8();
      break;
    case ColumnType::varchar:
    case ColumnType::var_string:
      column.meta = in.u16();
      break;
    case ColumnType::bit:
      column.meta = in.u16();  // low byte: bits % 8, high byte: whole bytes
      break;
    case ColumnType::newdecimal:
    case ColumnType::decimal:
    case ColumnType::set:
    case ColumnType::enum_type:
    case ColumnType::string: {
      const std::uint16_t first = in.u8();
      const std::uint16_t second = in.u8();
      column.meta = static_cast<std::uint16_t>(first << 8 | second);
      break;
    }
    default:
      column.meta = 0;
      break;
  }
  if (column.type != ColumnType::string) return;
  // CHAR, ENUM and SET are all logged as MYSQL_TYPE_STRING; the metadata's first byte holds
  // the real type, with bits 4-5 of a CHAR's length (over 255 bytes) folded in by XOR
  // (Field_string::do_save_field_metadata, bug #37426).
  const std::uint8_t first = static_cast<std::uint8_t>(column.meta >> 8);
  const std::uint8_t second = static_cast<std::uint8_t>(column.meta & 0xff);
  if ((first & 0x30) != 0x30) {
    column.meta = static_cast<std::uint16_t>(second | (((first & 0x30) ^ 0x30) << 4));
    return;
  }
  if (first == static_cast<std::uint8_t>(ColumnType::enum_type) || first == static_cast<std::uint8_t>(ColumnType::set))
    column.type = static_cast<ColumnType>(first);
  column.meta = second;
}




// Applies a DEFAULT_CHARSET-style field: a default collation, then (index, collation) pairs
// for the columns (counted among the selected ones) that differ.
template <typename Selected>
void apply_default_charset(ByteReader& in, TableMap& map, Selected selected) {
  const auto default_collation = static_cast<std::uint16_t>(in.packed_integer("default charset"));
  std::vector<std::size_t> chosen;
  for (std::size_t i = 0; i < map.columns.size(); ++i)
    if (selected(map.columns[i].type)) {
      map.columns[i].collation = default_collation;
      chosen.push_back(i);
    }
  while (!in.empty() && in.ok()) {
    const std::uint64_t index = in.packed_integer("charset column index");
    const auto collation = static_cast<std::uint16_t>(in.packed_integer("charset collation"));
    if (index >= chosen.size()) {
      in.fail(fmt::format("charset entry for character column {} of {}", index, chosen.size()));
      return;
    }
    map.columns[chosen[index]].collation = collation;
  }
}

template <typename Selected>
void apply_column_charsets(ByteReader& in, TableMap& map, Selected selected) {
  for (auto& column : map.columns) {
    if (!selected(column.type)) continue;
    if (in.empty()) return;
    column.collation = static_cast<std::uint16_t>(in.packed_integer("column charset"));
  }
}

void read_strings_per_column(ByteReader& in, TableMap& map, ColumnType type,
                             std::vector<std::vector<std::string>>& out) {
  out.assign(map.columns.size(), {});
  for (std::size_t i = 0; i < map.columns.size() && in.ok(); ++i) {
    if (map.columns[i].type != type) continue;
    if (in.empty()) return;
    const std::uint64_t count = in.packed_integer("value count");
    if (count > in.remaining()) {
      in.fail("ENUM/SET value count exceeds the metadata");
      return;
    }
    out[i].reserve(count);
    for (std::uint64_t v = 0; v < count && in.ok(); ++v) {
      const std::uint64_t length = in.packed_integer("value length");
      out[i].emplace_back(in.chars(length, "ENUM/SET value"));
    }
  }
}

// Bitmaps in optional metadata are MSB-first (Table_map_log_event: "the first bit is the
// most significant bit of the first byte"): cdc::msb_bit.

void read_optional_metadata(ByteReader& in, TableMap& map, ServerFlavor flavor) {
  while (!in.empty() && in.ok()) {
    const auto field = static_cast<OptionalField>(in.u8());
    const std::uint64_t length = in.packed_integer("optional metadata length");
    ByteReader value = in.sub(length, "optional metadata field");
    switch (field) {
      case OptionalField::signedness: {
        const auto bits = value.rest();
        std::size_t numeric = 0;
        for (auto& column : map.columns) {
          if (!has_signedness_bit(column.type, flavor)) continue;
          if (numeric / 8 >= bits.size()) break;
          column.is_unsigned = msb_bit(bits, numeric++);
        }
        map.has_signedness = true;
        break;
      }
      case OptionalField::default_charset:
        apply_default_charset(value, map, is_character);
        map.has_charsets = true;
        break;
      case OptionalField::column_charset:
        apply_column_charsets(value, map, is_character);
        map.has_charsets = true;
        break;
      case OptionalField::enum_and_set_default_charset:
        apply_default_charset(value, map, is_enum_or_set);
        break;
      case OptionalField::enum_and_set_column_charset:
        apply_column_charsets(value, map, is_enum_or_set);
        break;
      case OptionalField::column_name:
        map.column_names.clear();
        map.column_names.reserve(map.columns.size());
        while (!value.empty() && value.ok() && map.column_names.size() < map.columns.size()) {
          const std::uint64_t name_length = value.packed_integer("column name length");
          map.column_names.emplace_back(value.chars(name_length, "column name"));
        }
        if (map.column_names.size() != map.columns.size()) map.column_names.clear();
        break;
      case OptionalField::set_str_value:
        read_strings_per_column(value, map, ColumnType::set, map.set_values);
        map.has_enum_set_strings = true;
        break;
      case OptionalField::enum_str_value:
        read_strings_per_column(value, map, ColumnType::enum_type, map.enum_values);
        map.has_enum_set_strings = true;
        break;
      case OptionalField::geometry_type:
        map.geometry_types.assign(map.columns.size(), 0);
        for (std::size_t i = 0; i < map.columns.size() && !value.empty(); ++i)
          if (map.columns[i].type == ColumnType::geometry)
            map.geometry_types[i] = static_cast<std::uint32_t>(value.packed_integer("geometry type"));
        break;
      case OptionalField::simple_primary_key:
        map.primary_key.clear();
        map.primary_key_prefix.clear();
        while (!value.empty() && value.ok()) {
          map.primary_key.push_back(static_cast<std::uint32_t>(value.packed_integer("primary key column")));
          map.primary_key_prefix.push_back(0);
        }
        break;
      case OptionalField::primary_key_with_prefix:
        map.primary_key.clear();
        map.primary_key_prefix.clear();
        while (!value.empty() && value.ok()) {
          map.primary_key.push_back(static_cast<std::uint32_t>(value.packed_integer("primary key column")));
          map.primary_key_prefix.push_back(static_cast<std::uint32_t>(value.packed_integer("primary key prefix")));
        }
        break;
      case OptionalField::column_visibility: {
        const auto bits = value.rest();
        map.visible.assign(map.columns.size(), true);
        for (std::size_t i = 0; i < map.columns.size() && i / 8 < bits.size(); ++i) map.visible[i] = msb_bit(bits, i);
        break;
      }
      case OptionalField::vector_dimensionality:
        map.vector_dimensions.assign(map.columns.size(), 0);
        for (std::size_t i = 0; i < map.columns.size() && !value.empty(); ++i)
          if (map.columns[i].type == ColumnType::vector)
            map.vector_dimensions[i] = static_cast<std::uint32_t>(value.packed_integer("vector dimension"));
        break;
      default:
        break;  // a field a newer server added
    }
    in.adopt_failure(value);
  }
  for (const std::uint32_t index : map.primary_key)
    if (index >= map.columns.size()) {
      in.fail(fmt::format("primary key names column {} of {}", index, map.columns.size()));
      return;
    }
}

std::uint64_t read_table_id(ByteReader& in, const FormatDescription& format, EventType type) {
  return in.uint_le(format.table_id_size(type), "table id");
}

}  // namespace

std::uint64_t peek_table_id(ByteReader body, const FormatDescription& format, EventType type) {
  return read_table_id(body, format, type);
}

void decode_table_map(ByteReader& body, const FormatDescription& format, TableMap& out) {
  out.table_id = read_table_id(body, format, EventType::table_map);
  out.flags = body.u16();
  const std::uint8_t database_length = body.u8();
  out.database.assign(body.chars(database_length, "database name"));
  body.skip(1, "database name terminator");
  const std::uint8_t table_length = body.u8();
  out.table.assign(body.chars(table_length, "table name"));
  body.skip(1, "table name terminator");
  const std::uint64_t column_count = body.packed_integer("column count");
  if (!body.ok()) return;
  if (column_count > body.remaining() || column_count > 4096) {
    body.fail(fmt::format("column count {} is impossible", column_count));
    return;
  }
  const auto types = body.bytes(column_count, "column types");
  out.columns.assign(column_count, Column{});
  for (std::size_t i = 0; i < types.size(); ++i) out.columns[i].type = static_cast<ColumnType>(types[i]);
  const std::uint64_t metadata_length = body.packed_integer("type metadata length");
  ByteReader metadata = body.sub(metadata_length, "type metadata");
  for (auto& column : out.columns) read_type_metadata(metadata, column);
  body.adopt_failure(metadata);
  const auto nullable = body.bytes((column_count + 7) / 8, "nullable bitmap");
  for (std::size_t i = 0; i < nullable.size() * 8 && i < out.columns.size(); ++i)
    out.columns[i].nullable = lsb_bit(nullable, i);
  out.column_names.clear();
  out.enum_values.clear();
  out.set_values.clear();
  out.primary_key.clear();
  out.primary_key_prefix.clear();
  out.geometry_types.clear();
  out.vector_dimensions.clear();
  out.visible.clear();
  out.column_types.clear();
  out.has_signedness = out.has_charsets = out.has_enum_set_strings = false;
  if (body.ok()) read_optional_metadata(body, out, format.flavor);
}

}  // namespace cdc::binlog
