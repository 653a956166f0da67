#include "apply/sql_value.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "apply/pg_value.h"
#include "mysql/sql_text.h"
#include "util/base64.h"

namespace cdc::apply {

namespace {

using output::ValueKind;

template <typename Number>
void append_number(std::string& out, Number number) {
  char digits[24];
  const auto [end, error] = std::to_chars(digits, digits + sizeof digits, number);
  (void)error;  // 24 bytes hold every 64-bit integer
  out.append(digits, end);
}

// A number the column's literal is: as append_json_number() writes it, else the row's error.
Result<void> append_number_literal(std::string& out, const ColumnSql& column, simdjson::dom::element value) {
  if (append_json_number(out, value)) return {};
  return bad_value(column, "expected a number");
}


Result<std::string_view> string_of(const ColumnSql& column, simdjson::dom::element value) {
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) return bad_value(column, "expected a string");
  return text;
}

// MariaDB's UUID keeps a time-based UUID (version 1 to 5, RFC 4122 variant) with its segments
// swapped in the record, and reads a record whose byte 6 has its high bit set and whose byte 8
// is 0x01 to 0x80 as a swapped one (plugin/type_uuid/sql_type_uuid.h, mem_need_swap and
// rec_need_swap). A value read from such a record can have those bytes itself: 0x80 and 0x80,
// as '978c1b0c-7366-8076-80bb-f52adcbc83b4' has. Its text the server refuses ("Incorrect uuid
// value"; older versions store a record that reads back as another value). Whether text is
// such a UUID; its 16 bytes in bytes.
bool uuid_of_swapped_record(std::string_view text, std::string& bytes) {
  if (text.size() != 36 || text[8] != '-' || text[13] != '-' || text[18] != '-' || text[23] != '-') return false;
  bytes.clear();
  for (std::size_t i = 0; i < text.size(); i += 2) {
    if (text[i] == '-') ++i;
    unsigned byte = 0;
    const auto [end, error] = std::from_chars(text.data() + i, text.data() + i + 2, byte, 16);
    if (error != std::errc{} || end != text.data() + i + 2) return false;
    bytes.push_back(static_cast<char>(byte));
  }
  const auto at = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
  return (at(6) & 0x80U) != 0 && at(8) >= 0x01 && at(8) <= 0x80;
}

// The record of such a UUID, which the server takes as a value of its own (it is no
// time-based UUID) and stores as it is: the segments of the text in reverse order, which the
// server reads back swapped, as the text.
std::string uuid_record(std::string_view bytes) {
  std::string record;
  record.append(bytes.substr(10, 6)).append(bytes.substr(8, 2)).append(bytes.substr(6, 2));
  record.append(bytes.substr(4, 2)).append(bytes.substr(0, 4));
  return record;
}

}  // namespace

Unexpected bad_value(const ColumnSql& column, std::string_view why) {
  return fail(Errc::corrupt_input, fmt::format("column {} ({}): {}", column.quoted, column.type, why));
}

bool append_json_number(std::string& out, simdjson::dom::element value) {
  switch (value.type()) {
    case simdjson::dom::element_type::INT64: append_number(out, value.get_int64().value_unsafe()); return true;
    case simdjson::dom::element_type::UINT64: append_number(out, value.get_uint64().value_unsafe()); return true;
    case simdjson::dom::element_type::DOUBLE:
      // fmt's "{}" is the shortest text that reads back as the same double ("1e+300", "0.1").
      fmt::format_to(std::back_inserter(out), "{}", value.get_double().value_unsafe());
      return true;
    default: return false;
  }
}

bool is_decimal_text(std::string_view text) noexcept {
  if (!text.empty() && text.front() == '-') text.remove_prefix(1);
  if (text.empty()) return false;
  bool point = false;
  bool digit = false;
  for (const char c : text) {
    if (c == '.') {
      if (point) return false;
      point = true;
    } else if (c >= '0' && c <= '9') {
      digit = true;
    } else {
      return false;
    }
  }
  return digit;
}

ColumnSql column_sql(const records::TableColumn& column, Dialect dialect) {
  output::ColumnInfo info;
  info.type = column.type;
  output::classify_column(info, column.charset);
  ColumnSql sql{column.name, quote_name(dialect, column.name), column.type, info.kind, info.is_unsigned, 0, dialect};
  if (info.kind == ValueKind::bit) {
    // "bit(10)"; a bare "bit" is BIT(1).
    const std::size_t open = column.type.find('(');
    sql.bits = 1;
    if (open != std::string::npos)
      (void)std::from_chars(column.type.data() + open + 1, column.type.data() + column.type.size(), sql.bits);
  }
  return sql;
}

void append_quoted(std::string& out, std::string_view text) {
  out.push_back('\'');
  std::size_t plain = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c != '\'' && c != '\\' && c != '\0') continue;
    out.append(text.data() + plain, i - plain);
    out.push_back('\\');
    out.push_back(c == '\0' ? '0' : c);
    plain = i + 1;
  }
  out.append(text.data() + plain, text.size() - plain);
  out.push_back('\'');
}

void append_hex_literal(std::string& out, std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  out.append("X'");
  const std::size_t at = out.size();
  out.resize(at + bytes.size() * 2);
  char* cursor = out.data() + at;
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    *cursor++ = kDigits[byte >> 4];
    *cursor++ = kDigits[byte & 0x0F];
  }
  out.push_back('\'');
}

Result<void> append_literal(std::string& out, const ColumnSql& column, simdjson::dom::element value, LiteralUse use,
                            std::string& scratch) {
  if (column.dialect == Dialect::postgres) return append_pg_literal(out, column, value, scratch);
  if (value.is_null()) {
    out.append("NULL");
    return {};
  }
  switch (column.kind) {
    case ValueKind::integer:
    case ValueKind::bit:
    case ValueKind::year:
      if (!value.is_int64() && !value.is_uint64()) return bad_value(column, "expected an integer");
      return append_number_literal(out, column, value);
    case ValueKind::float32:
    case ValueKind::float64: {
      if (!value.is_number()) return bad_value(column, "expected a number");
      // A FLOAT column holds a float: its shortest text, compared as the double it reads as,
      // is another number, so the comparison casts the text back to FLOAT first.
      const bool cast = use == LiteralUse::comparison && column.kind == ValueKind::float32;
      if (cast) out.append("CAST(");
      double number = 0;
      if (column.kind == ValueKind::float32 && value.get_double().get(number) == simdjson::SUCCESS &&
          std::fabs(number) > std::numeric_limits<float>::max() && std::isfinite(number)) {
        // The largest FLOATs' shortest text (3.4028235e+38) is past FLT_MAX read as a DOUBLE,
        // which the server does, and strict mode refuses it as out of range: the float's own
        // value, 3.4028234663852886e+38, is the same FLOAT.
        fmt::format_to(std::back_inserter(out), "{}", static_cast<double>(static_cast<float>(number)));
      } else if (auto done = append_number_literal(out, column, value); !done) {
        return done;
      }
      if (cast) out.append(" AS FLOAT)");
      return {};
    }
    case ValueKind::decimal: {
      auto text = string_of(column, value);
      if (!text) return fail(text.error());
      if (!is_decimal_text(*text)) return bad_value(column, fmt::format("\"{}\" is not a DECIMAL value", *text));
      out.append(*text);
      return {};
    }
    case ValueKind::timestamp: {
      auto text = string_of(column, value);
      if (!text) return fail(text.error());
      // UTC with a Z; the session's time_zone is '+00:00'. The zero timestamp has no Z.
      std::string_view utc = *text;
      if (!utc.empty() && utc.back() == 'Z') utc.remove_suffix(1);
      append_quoted(out, utc);
      return {};
    }
    case ValueKind::date:
    case ValueKind::time:
    case ValueKind::datetime:
    case ValueKind::text: {
      auto text = string_of(column, value);
      if (!text) return fail(text.error());
      append_quoted(out, *text);
      return {};
    }
    case ValueKind::enumeration:
    case ValueKind::set:
      // Without the labels in the binlog, the member's index or the set's bitmask: the
      // server takes those numbers too.
      if (value.is_int64() || value.is_uint64()) return append_number_literal(out, column, value);
      {
        auto text = string_of(column, value);
        if (!text) return fail(text.error());
        append_quoted(out, *text);
      }
      return {};
    case ValueKind::binary:
    case ValueKind::geometry: {
      auto text = string_of(column, value);
      if (!text) return fail(text.error());
      if (!decode_base64_into(*text, scratch)) return bad_value(column, "expected base64");
      append_hex_literal(out, scratch);
      return {};
    }
    case ValueKind::json: {
      // MySQL's JSON is the value itself; a string literal of its text is what the column
      // parses, and in a comparison it is cast so that the two compare as JSON.
      scratch = simdjson::minify(value);
      if (use == LiteralUse::comparison) out.append("CAST(");
      append_quoted(out, scratch);
      if (use == LiteralUse::comparison) out.append(" AS JSON)");
      return {};
    }
    case ValueKind::vector: {
      if (!value.is_array()) return bad_value(column, "expected an array of numbers");
      scratch = simdjson::minify(value);
      out.append("STRING_TO_VECTOR(");
      append_quoted(out, scratch);
      out.push_back(')');
      return {};
    }
    case ValueKind::other:
      break;
  }
  // A type this build does not name (MariaDB's INET4, INET6, UUID are among them): its text,
  // its number, or its JSON, which the server reads as it reads its own text.
  if (value.is_string()) {
    const std::string_view text = value.get_string().value_unsafe();
    if (column.type.starts_with("uuid") && uuid_of_swapped_record(text, scratch)) {
      append_hex_literal(out, use == LiteralUse::value ? uuid_record(scratch) : scratch);
      return {};
    }
    append_quoted(out, text);
    return {};
  }
  if (value.is_number()) return append_number_literal(out, column, value);
  if (value.is_bool()) {
    out.push_back(value.get_bool().value_unsafe() ? '1' : '0');
    return {};
  }
  scratch = simdjson::minify(value);
  append_quoted(out, scratch);
  return {};
}

}  // namespace cdc::apply
