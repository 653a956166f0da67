#include "snapshot/chunk.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "mysql/sql_text.h"

namespace cdc::snapshot {

namespace {

Unexpected bad(std::string message) { return fail(Errc::corrupt_input, std::move(message)); }

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool is_binary_type(std::string_view type) {
  const std::string t = lower(type);
  return t.starts_with("binary") || t.starts_with("varbinary") || contains(t, "blob");
}

bool is_numeric_type(std::string_view type) {
  const std::string t = lower(type);
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


Result<std::string> get_string(simdjson::dom::object record, std::string_view field) {
  std::string_view text;
  if (record[field].get_string().get(text) != simdjson::SUCCESS)
    return bad(fmt::format("chunk field \"{}\" must be a string", field));
  return std::string(text);
}

Result<std::uint64_t> get_count(simdjson::dom::object record, std::string_view field) {
  std::uint64_t value = 0;
  if (record[field].get_uint64().get(value) != simdjson::SUCCESS)
    return bad(fmt::format("chunk field \"{}\" must be a non-negative integer", field));
  return value;
}

Result<std::vector<std::string>> get_strings(simdjson::dom::object record, std::string_view field) {
  simdjson::dom::array array;
  if (record[field].get_array().get(array) != simdjson::SUCCESS)
    return bad(fmt::format("chunk field \"{}\" must be an array of strings", field));
  std::vector<std::string> out;
  for (const auto element : array) {
    std::string_view text;
    if (element.get_string().get(text) != simdjson::SUCCESS)
      return bad(fmt::format("chunk field \"{}\" must be an array of strings", field));
    out.emplace_back(text);
  }
  return out;
}

Result<std::optional<std::vector<std::string>>> get_bound(simdjson::dom::object record, std::string_view field,
                                                         const std::vector<std::string>& key_types) {
  simdjson::dom::element element;
  if (record[field].get(element) != simdjson::SUCCESS)
    return bad(fmt::format("chunk field \"{}\" is missing (null for an open end)", field));
  if (element.is_null()) return std::optional<std::vector<std::string>>{};
  simdjson::dom::array array;
  if (element.get_array().get(array) != simdjson::SUCCESS)
    return bad(fmt::format("chunk field \"{}\" must be an array or null", field));
  std::vector<std::string> literals;
  std::size_t i = 0;
  for (const auto value : array) {
    if (i >= key_types.size())
      return bad(fmt::format("chunk field \"{}\" has more values than the key has columns ({})", field,
                             key_types.size()));
    auto literal = bound_literal(value, key_types[i]);
    if (!literal) return fail(literal.error().with_context(fmt::format("chunk field \"{}\" value {}", field, i + 1)));
    literals.push_back(std::move(*literal));
    ++i;
  }
  if (i != key_types.size())
    return bad(fmt::format("chunk field \"{}\" has {} values for {} key columns", field, i, key_types.size()));
  return std::optional<std::vector<std::string>>(std::move(literals));
}

}  // namespace

std::string Chunk::describe() const { return fmt::format("{}.{} chunk {}/{}", db, table, index, count); }

std::optional<std::string> decode_base64(std::string_view text) {
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  std::size_t padding = 0;
  for (const char c : text) {
    unsigned value = 0;
    if (c >= 'A' && c <= 'Z') {
      value = static_cast<unsigned>(c - 'A');
    } else if (c >= 'a' && c <= 'z') {
      value = static_cast<unsigned>(c - 'a' + 26);
    } else if (c >= '0' && c <= '9') {
      value = static_cast<unsigned>(c - '0' + 52);
    } else if (c == '+') {
      value = 62;
    } else if (c == '/') {
      value = 63;
    } else if (c == '=') {
      ++padding;
      continue;
    } else {
      return std::nullopt;
    }
    if (padding != 0) return std::nullopt;  // data after '='
    buffer = (buffer << 6 | value) & 0xFFFFFFU;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xFFU));
    }
  }
  if (padding > 2 || bits >= 6) return std::nullopt;
  return out;
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
        return "X'" + mysql::hex_digits(*bytes) + "'";
      }
      if (is_numeric_type(key_type)) {
        if (!is_decimal_text(text)) return bad(fmt::format("key type {} needs a number, got \"{}\"", key_type, text));
        return std::string(text);
      }
      std::string_view literal = text;
      if (lower(key_type).starts_with("timestamp") && literal.ends_with('Z')) literal.remove_suffix(1);
      return "_utf8mb4 X'" + mysql::hex_digits(literal) + "'";
    }
    default:
      return bad(fmt::format("a key bound must be a number or a string (key type {})", key_type));
  }
}

Result<Chunk> parse_chunk(simdjson::dom::object record) {
  Chunk chunk;
  auto op = get_string(record, "op");
  if (!op) return fail(op.error());
  if (*op != "chunk") return bad(fmt::format("expected an op:\"chunk\" line, got op \"{}\"", *op));
  auto db = get_string(record, "db");
  if (!db) return fail(db.error());
  chunk.db = std::move(*db);
  auto table = get_string(record, "table");
  if (!table) return fail(table.error());
  chunk.table = std::move(*table);
  auto key = get_strings(record, "key");
  if (!key) return fail(key.error());
  chunk.key = std::move(*key);
  auto key_types = get_strings(record, "key_types");
  if (!key_types) return fail(key_types.error());
  chunk.key_types = std::move(*key_types);
  if (chunk.key.empty()) return bad("chunk field \"key\" is empty");
  if (chunk.key.size() != chunk.key_types.size())
    return bad(fmt::format("chunk has {} key columns but {} key_types", chunk.key.size(), chunk.key_types.size()));
  auto index = get_count(record, "index");
  if (!index) return fail(index.error());
  chunk.index = *index;
  auto count = get_count(record, "count");
  if (!count) return fail(count.error());
  chunk.count = *count;
  if (chunk.index >= chunk.count)
    return bad(fmt::format("chunk index {} is not below its count {}", chunk.index, chunk.count));
  std::uint64_t estimate = 0;
  if (record["rows_estimate"].get_uint64().get(estimate) == simdjson::SUCCESS) chunk.rows_estimate = estimate;
  simdjson::dom::array columns;
  if (record["columns"].get_array().get(columns) != simdjson::SUCCESS)
    return bad("chunk field \"columns\" must be an array of {\"name\",\"type\",\"collation_id\"}");
  for (const auto element : columns) {
    simdjson::dom::object column;
    ChunkColumn out;
    std::string_view name;
    std::string_view type;
    std::uint64_t collation = 0;
    if (element.get_object().get(column) != simdjson::SUCCESS || column["name"].get_string().get(name) != simdjson::SUCCESS)
      return bad("chunk field \"columns\" must be an array of {\"name\",\"type\",\"collation_id\"}");
    if (column["type"].get_string().get(type) == simdjson::SUCCESS) out.type = type;
    if (column["collation_id"].get_uint64().get(collation) == simdjson::SUCCESS)
      out.collation_id = static_cast<std::uint16_t>(collation);
    out.name = name;
    chunk.columns.push_back(std::move(out));
  }
  if (chunk.columns.empty()) return bad("chunk field \"columns\" is empty");
  auto start = get_bound(record, "start", chunk.key_types);
  if (!start) return fail(start.error());
  chunk.start = std::move(*start);
  auto end = get_bound(record, "end", chunk.key_types);
  if (!end) return fail(end.error());
  chunk.end = std::move(*end);
  simdjson::dom::element bound;
  if (record["start"].get(bound) == simdjson::SUCCESS) chunk.start_json = simdjson::minify(bound);
  if (record["end"].get(bound) == simdjson::SUCCESS) chunk.end_json = simdjson::minify(bound);
  simdjson::dom::element identity;
  if (record["identity"].get(identity) == simdjson::SUCCESS && !identity.is_null()) {
    simdjson::dom::array names;
    if (identity.get_array().get(names) != simdjson::SUCCESS || names.size() == 0)
      return bad("chunk field \"identity\" must be null or a non-empty array of column names");
    for (const auto name : names) {
      std::string_view text;
      if (name.get_string().get(text) != simdjson::SUCCESS ||
          std::none_of(chunk.columns.begin(), chunk.columns.end(),
                       [&](const ChunkColumn& column) { return column.name == text; }))
        return bad("chunk field \"identity\" must name columns of \"columns\"");
    }
    chunk.identity_json = simdjson::minify(identity);
  }
  return chunk;
}

std::string select_sql(const Chunk& chunk) {
  std::string sql = "SELECT ";
  for (std::size_t i = 0; i < chunk.columns.size(); ++i) {
    if (i != 0) sql += ',';
    const std::string name = mysql::quote_identifier(chunk.columns[i].name);
    // MariaDB's INET6/UUID (and 11.3's INET4) are sent as text, but the binlog has their
    // bytes, in the order CAST AS BINARY gives them (checked against cdc-stream on 10.11).
    const std::string type = lower(chunk.columns[i].type);
    if (type == "inet6" || type == "uuid") {
      sql += "CAST(" + name + " AS BINARY(16))";
    } else if (type == "inet4") {
      sql += "CAST(" + name + " AS BINARY(4))";
    } else {
      sql += name;
    }
  }
  sql += " FROM " + mysql::quote_identifier(chunk.db) + "." + mysql::quote_identifier(chunk.table);
  std::string key_list;
  for (std::size_t i = 0; i < chunk.key.size(); ++i) {
    if (i != 0) key_list += ',';
    key_list += mysql::quote_identifier(chunk.key[i]);
  }
  const bool composite = chunk.key.size() > 1;
  const auto tuple = [&](const std::vector<std::string>& values) {
    std::string out = composite ? "(" : "";
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i != 0) out += ',';
      out += values[i];
    }
    return out + (composite ? ")" : "");
  };
  const std::string keys = composite ? "(" + key_list + ")" : key_list;
  std::string where;
  if (chunk.start) where += keys + " >= " + tuple(*chunk.start);
  if (chunk.end) where += (where.empty() ? "" : " AND ") + keys + " < " + tuple(*chunk.end);
  if (!where.empty()) sql += " WHERE " + where;
  sql += " ORDER BY " + key_list;
  return sql;
}

}  // namespace cdc::snapshot
