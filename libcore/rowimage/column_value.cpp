#include "rowimage/column_value.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "ndjson/utf8.h"
#include "rowimage/fixed_binary_values.h"
#include "rowimage/json_binary.h"
#include "rowimage/scalar_values.h"
#include "util/bits.h"

namespace cdc::rowimage {

namespace {

constexpr std::size_t kNoSize = static_cast<std::size_t>(-1);

std::size_t decimal_size(std::uint8_t precision, std::uint8_t scale) {
  return scale > precision ? kNoSize : decimal_binary_size(precision, scale);
}

std::size_t fraction_size(std::uint16_t fsp) { return (fsp + 1U) / 2U; }

// Length-prefixed values: the prefix width and the length it holds.
std::size_t prefixed_size(const ByteReader& in, std::size_t prefix_width) {
  ByteReader peek(in.peek_rest(), in.offset());
  const std::uint64_t length = peek.uint_le(prefix_width);
  if (!peek.ok()) return kNoSize;
  return prefix_width + static_cast<std::size_t>(length);
}

std::string_view as_chars(std::span<const std::uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

void write_string_value(std::span<const std::uint8_t> raw, const Column& column, Charset charset, ndjson::Writer& out,
                        RowScratch& scratch, std::size_t pad_to = 0) {
  // Without charset metadata (servers before MySQL 8 / MariaDB 10.5, or binlog_row_metadata
  // off) TEXT and BLOB, CHAR and BINARY look alike: the value is written as text, and a value
  // that is not UTF-8 is noted so the run can say it was not lossless.
  if (column.collation == 0 && !scratch.lossy_text && !ndjson::is_valid_utf8(as_chars(raw))) scratch.lossy_text = true;
  if (is_binary_collation(column.collation)) {
    if (pad_to > raw.size()) {
      // BINARY(n) is stored without its trailing 0x00 padding; SELECT returns all n bytes.
      scratch.name.assign(as_chars(raw));
      scratch.name.resize(pad_to, '\0');
      out.string_base64(std::string_view(scratch.name));
      return;
    }
    out.string_base64(as_chars(raw));
    return;
  }
  std::string_view text = as_chars(raw);
  if (column.type == ColumnType::string) text = trim_char_padding(text, charset);
  write_text(text, charset, out, scratch.text);
}

// ENUM and SET labels are stored in the column's charset, like its values would be.
void write_label(std::string_view label, std::uint16_t collation, Charset charset, ndjson::Writer& out,
                 RowScratch& scratch) {
  out.string(is_binary_collation(collation) ? label : to_utf8(label, charset, scratch.text));
}

void write_enum(std::uint64_t index, const binlog::TableMap& map, std::size_t column, Charset charset,
                ndjson::Writer& out, RowScratch& scratch) {
  if (column < map.enum_values.size() && !map.enum_values[column].empty()) {
    const auto& values = map.enum_values[column];
    // Index 0 is the empty string MySQL stores for an invalid value in non-strict mode.
    if (index == 0) {
      out.string("");
    } else if (index <= values.size()) {
      write_label(values[index - 1], map.columns[column].collation, charset, out, scratch);
    } else {
      out.unsigned_integer(index);
    }
    return;
  }
  out.unsigned_integer(index);  // no ENUM strings in the binlog: the 1-based index
}

void write_set(std::uint64_t bits, const binlog::TableMap& map, std::size_t column, Charset charset,
               ndjson::Writer& out, RowScratch& scratch) {
  if (column < map.set_values.size() && !map.set_values[column].empty()) {
    const auto& values = map.set_values[column];
    scratch.name.clear();
    for (std::size_t i = 0; i < values.size() && i < 64; ++i) {
      if (((bits >> i) & 1U) == 0) continue;
      if (!scratch.name.empty()) scratch.name.push_back(',');
      scratch.name.append(values[i]);
    }
    write_label(scratch.name, map.columns[column].collation, charset, out, scratch);
    return;
  }
  out.unsigned_integer(bits);  // no SET strings in the binlog: the bitmask
}

void write_vector(std::span<const std::uint8_t> raw, ByteReader& in, ndjson::Writer& out) {
  if (raw.size() % 4 != 0) {
    in.fail(fmt::format("VECTOR value of {} bytes is not a whole number of float32", raw.size()));
    return;
  }
  out.begin_array();
  for (std::size_t i = 0; i < raw.size(); i += 4) {
    const std::uint32_t bits = static_cast<std::uint32_t>(raw[i]) | static_cast<std::uint32_t>(raw[i + 1]) << 8 |
                               static_cast<std::uint32_t>(raw[i + 2]) << 16 |
                               static_cast<std::uint32_t>(raw[i + 3]) << 24;
    float value = 0;
    std::memcpy(&value, &bits, sizeof value);
    out.floating(value);
  }
  out.end_array();
}

}  // namespace

std::string_view column_name(const binlog::TableMap& map, std::size_t index, std::string& scratch) {
  if (index < map.column_names.size()) return map.column_names[index];
  scratch.clear();
  fmt::format_to(std::back_inserter(scratch), "@{}", index + 1);
  return scratch;
}

std::size_t value_size(const ByteReader& in, const Column& column) {
  switch (column.type) {
    case ColumnType::tiny:
    case ColumnType::year:
      return 1;
    case ColumnType::short_int:
      return 2;
    case ColumnType::int24:
    case ColumnType::date:
    case ColumnType::time:
      return 3;
    case ColumnType::long_int:
    case ColumnType::float_type:
    case ColumnType::timestamp:
      return 4;
    case ColumnType::longlong:
    case ColumnType::double_type:
    case ColumnType::datetime:
      return 8;
    case ColumnType::null_type:
      return 0;
    case ColumnType::time2:
      return 3 + fraction_size(column.meta);
    case ColumnType::datetime2:
      return 5 + fraction_size(column.meta);
    case ColumnType::timestamp2:
      return 4 + fraction_size(column.meta);
    case ColumnType::newdecimal:
      return decimal_size(static_cast<std::uint8_t>(column.meta >> 8), static_cast<std::uint8_t>(column.meta & 0xff));
    case ColumnType::bit:
      return (column.meta >> 8) + ((column.meta & 0xff) != 0 ? 1U : 0U);
    case ColumnType::enum_type:
    case ColumnType::set:
      return column.meta;
    case ColumnType::string:
    case ColumnType::varchar:
    case ColumnType::var_string:
      return prefixed_size(in, column.meta < 256 ? 1 : 2);
    case ColumnType::blob:
    case ColumnType::tiny_blob:
    case ColumnType::medium_blob:
    case ColumnType::long_blob:
    case ColumnType::json:
    case ColumnType::geometry:
    case ColumnType::vector:
      if (column.meta < 1 || column.meta > 4) return kNoSize;
      return prefixed_size(in, column.meta);
    default:
      return kNoSize;
  }
}

void decode_value_as(ByteReader& in, const binlog::TableMap& map, std::size_t index, Charset charset,
                     ndjson::Writer& out, RowScratch& scratch) {
  const Column& column = map.columns[index];
  const auto fsp = static_cast<std::uint8_t>(column.meta);
  switch (column.type) {
    case ColumnType::tiny:
    case ColumnType::short_int:
    case ColumnType::int24:
    case ColumnType::long_int:
    case ColumnType::longlong:
      decode_integer(in, column.type, column.is_unsigned, out);
      return;
    case ColumnType::float_type: decode_float(in, out); return;
    case ColumnType::double_type: decode_double(in, out); return;
    case ColumnType::newdecimal:
      decode_newdecimal(in, static_cast<std::uint8_t>(column.meta >> 8), static_cast<std::uint8_t>(column.meta & 0xff),
                        out);
      return;
    case ColumnType::decimal: decode_old_decimal(in, column.meta, out); return;
    case ColumnType::year: decode_year(in, out); return;
    case ColumnType::date: decode_date(in, out); return;
    case ColumnType::time: decode_time(in, out); return;
    case ColumnType::time2: decode_time2(in, fsp, out); return;
    case ColumnType::datetime: decode_datetime(in, out); return;
    case ColumnType::datetime2: decode_datetime2(in, fsp, out); return;
    case ColumnType::timestamp: decode_timestamp(in, out); return;
    case ColumnType::timestamp2: decode_timestamp2(in, fsp, out); return;
    case ColumnType::bit: decode_bit(in, column.meta, out); return;
    case ColumnType::null_type: out.null(); return;
    case ColumnType::enum_type: write_enum(in.uint_le(column.meta, "ENUM value"), map, index, charset, out, scratch); return;
    case ColumnType::set: write_set(in.uint_le(column.meta, "SET value"), map, index, charset, out, scratch); return;
    case ColumnType::string:
    case ColumnType::varchar:
    case ColumnType::var_string: {
      const std::uint64_t value_offset = in.offset();
      const std::size_t length = in.uint_le(column.meta < 256 ? 1 : 2, "string length");
      const auto raw = in.bytes(length, "string value");
      if (!in.ok()) return;
      if (column.fixed_binary != FixedBinaryType::none) {
        write_fixed_binary(column.fixed_binary, raw, value_offset, in, out);
        return;
      }
      write_string_value(raw, column, charset, out, scratch, column.type == ColumnType::string ? column.meta : 0);
      return;
    }
    case ColumnType::blob:
    case ColumnType::tiny_blob:
    case ColumnType::medium_blob:
    case ColumnType::long_blob: {
      const std::size_t length = in.uint_le(column.meta, "BLOB length");
      const auto raw = in.bytes(length, "BLOB value");
      if (!in.ok()) return;
      write_string_value(raw, column, charset, out, scratch);
      return;
    }
    case ColumnType::geometry: {
      // SRID (4 bytes little-endian) + WKB, as the server stores it and SELECT returns it.
      const std::size_t length = in.uint_le(column.meta, "GEOMETRY length");
      out.string_base64(as_chars(in.bytes(length, "GEOMETRY value")));
      return;
    }
    case ColumnType::vector: {
      const std::size_t length = in.uint_le(column.meta, "VECTOR length");
      const auto raw = in.bytes(length, "VECTOR value");
      if (in.ok()) write_vector(raw, in, out);
      return;
    }
    case ColumnType::json: {
      const std::size_t length = in.uint_le(column.meta, "JSON length");
      auto decoded = decode_json_binary(in, length, out);
      if (!decoded && in.ok()) in.fail(decoded.error().message);
      return;
    }
    default:
      in.fail(fmt::format("column type {} ({}) cannot appear in a row image",
                          static_cast<unsigned>(column.type), column_type_name(column.type)));
      return;
  }
}

void decode_value(ByteReader& in, const binlog::TableMap& map, std::size_t index, ndjson::Writer& out,
                  RowScratch& scratch) {
  decode_value_as(in, map, index, charset_of(map.columns[index].collation), out, scratch);
}

}  // namespace cdc::rowimage
