#include "snapshot/chunk.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "filter/where_option.h"
#include "mysql/sql_text.h"
#include "ndjson/writer.h"
#include "rowimage/fixed_binary_values.h"
#include "util/base64.h"
#include "util/text.h"

namespace cdc::snapshot {

namespace {

Unexpected bad(std::string message) { return fail(Errc::corrupt_input, std::move(message)); }

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

bool is_binary_type(std::string_view type) {
  const std::string t = to_lower(type);
  return t.starts_with("binary") || t.starts_with("varbinary") || contains(t, "blob");
}

bool is_numeric_type(std::string_view type) {
  const std::string t = to_lower(type);
  return contains(t, "int") || t.starts_with("decimal") || t.starts_with("numeric") || t.starts_with("float") ||
         t.starts_with("double") || t.starts_with("real") || t.starts_with("bit") || t.starts_with("year");
}

// A decimal number as text: [-]digits[.digits].
bool is_decimal_text(std::string_view text) {
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  bool digits = false;
  bool dot = false;
  for (; i < text.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
      digits = true;
    } else if (text[i] == '.' && !dot) {
      dot = true;
    } else {
      return false;
    }
  }
  return digits;
}


// The SQL literals of a bound, one per key column; nullopt for an open end.
Result<std::optional<std::vector<std::string>>> bound_literals(const records::Bound& bound, std::string_view field,
                                                              const std::vector<std::string>& key_types) {
  if (!bound) return std::optional<std::vector<std::string>>{};
  simdjson::dom::parser parser;
  std::vector<std::string> literals;
  for (std::size_t i = 0; i < bound->size(); ++i) {
    const std::string& text = (*bound)[i];
    simdjson::dom::element value;
    if (parser.parse(text).get(value) != simdjson::SUCCESS)
      return bad(fmt::format("chunk field \"{}\" value {} is not JSON", field, i + 1));
    auto literal = bound_literal(value, i < key_types.size() ? key_types[i] : std::string_view());
    if (!literal) return fail(literal.error().with_context(fmt::format("chunk field \"{}\" value {}", field, i + 1)));
    literals.push_back(std::move(*literal));
  }
  return std::optional<std::vector<std::string>>(std::move(literals));
}

}  // namespace

Result<void> check_table_name(const records::Chunk& chunk) {
  // The server's own rules (MariaDB's check_db_name/check_table_name, MySQL's alike).
  static constexpr std::size_t kMaxNameCharacters = 64;
  const auto why_not = [](std::string_view name, std::string_view what) -> std::optional<std::string> {
    if (name.empty()) return fmt::format("the {} name is empty", what);
    if (name.find('\0') != std::string_view::npos) return fmt::format("the {} name contains U+0000", what);
    // Characters, not bytes: the names are UTF-8 (the JSON reader checked them).
    const auto characters = static_cast<std::size_t>(std::count_if(
        name.begin(), name.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0U) != 0x80U; }));
    if (characters > kMaxNameCharacters)
      return fmt::format("the {} name has {} characters, more than the {} a name can have", what, characters,
                         kMaxNameCharacters);
    if (name.back() == ' ') return fmt::format("the {} name ends with a space", what);
    return std::nullopt;
  };
  std::optional<std::string> reason = why_not(chunk.db, "database");
  if (!reason) reason = why_not(chunk.table, "table");
  if (!reason) return {};
  return bad(fmt::format("no table can be named {}.{}: {}", ndjson::quoted(chunk.db), ndjson::quoted(chunk.table),
                         *reason));
}

Result<void> check_bounds(const records::Chunk& chunk) {
  for (const auto& [field, bound] : {std::pair{"start", &chunk.start}, std::pair{"end", &chunk.end}})
    if (auto literals = bound_literals(*bound, field, chunk.key_types); !literals) return fail(literals.error());
  return {};
}

Result<std::string> bound_literal(simdjson::dom::element value, std::string_view key_type) {
  switch (value.type()) {
    case simdjson::dom::element_type::INT64:
      return fmt::format("{}", value.get_int64().value());
    case simdjson::dom::element_type::UINT64:
      return fmt::format("{}", value.get_uint64().value());
    case simdjson::dom::element_type::DOUBLE:
      return fmt::format("{}", value.get_double().value());
    case simdjson::dom::element_type::STRING: {
      const std::string_view text = value.get_string().value();
      if (is_binary_type(key_type)) {
        const auto bytes = decode_base64(text);
        if (!bytes) return bad(fmt::format("key type {} needs base64, got \"{}\"", key_type, text));
        return mysql::bytes_literal(*bytes);
      }
      if (const FixedBinaryType fixed = rowimage::fixed_binary_type_named(key_type); fixed != FixedBinaryType::none) {
        // The server reads its own text back as the type and compares in the type's order.
        rowimage::FixedBinaryBytes bytes;
        if (!rowimage::parse_fixed_binary_text(fixed, text, bytes))
          return bad(fmt::format("key type {} needs the server's text of a value, got \"{}\"", key_type, text));
        return fmt::format("'{}'", text);
      }
      if (is_numeric_type(key_type)) {
        if (!is_decimal_text(text)) return bad(fmt::format("key type {} needs a number, got \"{}\"", key_type, text));
        return std::string(text);
      }
      std::string_view literal = text;
      if (to_lower(key_type).starts_with("timestamp") && literal.ends_with('Z')) literal.remove_suffix(1);
      return mysql::text_literal(literal);
    }
    default:
      return bad(fmt::format("a key bound must be a number or a string (key type {})", key_type));
  }
}

Result<std::string> condition_sql(const records::Chunk& chunk) {
  auto start = bound_literals(chunk.start, "start", chunk.key_types);
  if (!start) return fail(start.error());
  auto end = bound_literals(chunk.end, "end", chunk.key_types);
  if (!end) return fail(end.error());
  // Written out, not as (k1, k2) >= (s1, s2): MariaDB reads a range of the index only for the
  // former (mysql::row_comparison).
  std::vector<std::string> keys;
  for (const std::string& name : chunk.key) keys.push_back(mysql::quote_identifier(name));
  std::string where;
  if (*start) where += mysql::row_comparison(keys, **start, ">=");
  if (*end) where += (where.empty() ? "" : " AND ") + mysql::row_comparison(keys, **end, "<");
  // cdc-plan --where: the rows it is TRUE on, as the server evaluates it (filter/).
  auto filtered = filter::chunk_where_sql(chunk);
  if (!filtered) return fail(filtered.error());
  if (!filtered->empty()) where += (where.empty() ? "" : " AND ") + *filtered;
  return where;
}

Result<std::string> select_sql(const records::Chunk& chunk) {
  auto where = condition_sql(chunk);
  if (!where) return fail(where.error());
  std::string sql = "SELECT ";
  for (std::size_t i = 0; i < chunk.columns.size(); ++i) {
    if (i != 0) sql += ',';
    sql += mysql::quote_identifier(chunk.columns[i].name);
  }
  sql += " FROM " + mysql::quote_identifier(chunk.db) + "." + mysql::quote_identifier(chunk.table);
  if (chunk.all_versions) sql += " FOR SYSTEM_TIME ALL";
  if (!where->empty()) sql += " WHERE " + *where;
  std::string key_list;
  for (std::size_t i = 0; i < chunk.key.size(); ++i) {
    if (i != 0) key_list += ',';
    key_list += mysql::quote_identifier(chunk.key[i]);
  }
  if (!key_list.empty()) sql += " ORDER BY " + key_list;
  return sql;
}

}  // namespace cdc::snapshot
