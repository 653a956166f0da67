#include "apply/pg_value.h"

#include <charconv>
#include <cstdint>

#include <fmt/format.h>

#include "util/base64.h"

namespace cdc::apply {

namespace {

using output::ValueKind;

// "YYYY-MM-DD..." with a zero year, month or day: PostgreSQL has no year 0 and no zero parts.
bool has_zero_date_part(std::string_view text) noexcept {
  if (text.size() < 10 || text[4] != '-' || text[7] != '-') return false;  // the server's input function decides
  return text.substr(0, 4) == "0000" || text.substr(5, 2) == "00" || text.substr(8, 2) == "00";
}

Result<std::string_view> text_of(const ColumnSql& column, simdjson::dom::element value) {
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) return bad_value(column, "expected a string");
  if (text.find('\0') != std::string_view::npos)
    return bad_value(column, "the text holds the NUL character (U+0000), which PostgreSQL's text types cannot hold");
  return text;
}

}  // namespace

void append_pg_quoted(std::string& out, std::string_view text) {
  out.push_back('\'');
  std::size_t plain = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\'') continue;
    out.append(text.data() + plain, i + 1 - plain);
    out.push_back('\'');
    plain = i + 1;
  }
  out.append(text.data() + plain, text.size() - plain);
  out.push_back('\'');
}

Result<void> append_pg_literal(std::string& out, const ColumnSql& column, simdjson::dom::element value,
                               std::string& scratch) {
  if (value.is_null()) {
    out.append("NULL");
    return {};
  }
  switch (column.kind) {
    case ValueKind::integer:
    case ValueKind::year:
      if (!value.is_int64() && !value.is_uint64()) return bad_value(column, "expected an integer");
      (void)append_json_number(out, value);
      return {};
    case ValueKind::bit: {
      // bit varying(n) of exactly n digits, the most significant first.
      std::uint64_t bits = 0;
      if (value.get_uint64().get(bits) != simdjson::SUCCESS) return bad_value(column, "expected an unsigned integer");
      const unsigned width = column.bits > 0 ? column.bits : 64;
      if (width < 64 && (bits >> width) != 0)
        return bad_value(column, fmt::format("{} has more than the column's {} bits", bits, width));
      out.append("B'");
      for (unsigned bit = width; bit-- > 0;) out.push_back(((bits >> bit) & 1U) != 0 ? '1' : '0');
      out.push_back('\'');
      return {};
    }
    case ValueKind::float32:
    case ValueKind::float64:
      // Quoted: real and double precision read the shortest text as the same float or double.
      out.push_back('\'');
      if (!append_json_number(out, value)) return bad_value(column, "expected a number");
      out.push_back('\'');
      return {};
    case ValueKind::decimal: {
      std::string_view text;
      if (value.get_string().get(text) != simdjson::SUCCESS) return bad_value(column, "expected a string");
      if (!is_decimal_text(text)) return bad_value(column, fmt::format("\"{}\" is not a DECIMAL value", text));
      out.append(text);
      return {};
    }
    case ValueKind::date:
    case ValueKind::datetime:
    case ValueKind::timestamp: {
      auto text = text_of(column, value);
      if (!text) return fail(text.error());
      if (has_zero_date_part(*text))
        return bad_value(column, fmt::format("\"{}\" has a zero year, month or day, which PostgreSQL's {} cannot hold",
                                             *text, column.kind == ValueKind::date ? "date" : "timestamp"));
      // A TIMESTAMP's UTC text keeps its Z: timestamptz reads it as UTC whatever the session.
      append_pg_quoted(out, *text);
      return {};
    }
    case ValueKind::time:
    case ValueKind::text: {
      auto text = text_of(column, value);
      if (!text) return fail(text.error());
      append_pg_quoted(out, *text);
      return {};
    }
    case ValueKind::enumeration:
    case ValueKind::set: {
      if (!value.is_string())
        return bad_value(column, "an ENUM or SET number without its labels (the source's binlog_row_metadata is not "
                                 "FULL): the label cannot be written");
      auto text = text_of(column, value);
      if (!text) return fail(text.error());
      append_pg_quoted(out, *text);
      return {};
    }
    case ValueKind::binary:
    case ValueKind::geometry: {
      std::string_view text;
      if (value.get_string().get(text) != simdjson::SUCCESS) return bad_value(column, "expected a string");
      if (!decode_base64_into(text, scratch)) return bad_value(column, "expected base64");
      static constexpr char kDigits[] = "0123456789abcdef";
      out.append("'\\x");
      const std::size_t at = out.size();
      out.resize(at + scratch.size() * 2);
      char* cursor = out.data() + at;
      for (const char c : scratch) {
        const auto byte = static_cast<unsigned char>(c);
        *cursor++ = kDigits[byte >> 4];
        *cursor++ = kDigits[byte & 0x0F];
      }
      out.push_back('\'');
      return {};
    }
    case ValueKind::json:
      scratch = simdjson::minify(value);
      if (scratch.find("\\u0000") != std::string::npos)
        return bad_value(column, "the JSON holds \\u0000, which PostgreSQL's jsonb cannot hold");
      append_pg_quoted(out, scratch);
      return {};
    case ValueKind::vector: {
      // real[]: the array's numbers between braces.
      if (!value.is_array()) return bad_value(column, "expected an array of numbers");
      scratch = simdjson::minify(value);
      scratch.front() = '{';
      scratch.back() = '}';
      append_pg_quoted(out, scratch);
      return {};
    }
    case ValueKind::other:
      break;
  }
  // MariaDB's INET4, INET6 and UUID, and types this build does not name: their text, which
  // inet and uuid read; a number; JSON as its text.
  if (value.is_string()) {
    auto text = text_of(column, value);
    if (!text) return fail(text.error());
    append_pg_quoted(out, *text);
    return {};
  }
  if (append_json_number(out, value)) return {};
  if (value.is_bool()) {
    out.append(value.get_bool().value_unsafe() ? "true" : "false");
    return {};
  }
  scratch = simdjson::minify(value);
  append_pg_quoted(out, scratch);
  return {};
}

}  // namespace cdc::apply
