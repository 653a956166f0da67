// Reading a table's schema from the server (schema/table_schema.h): the information_schema
// queries read_table_schema() runs, ENUM/SET labels back in their column's charset, and the
// cache of schemas by table.
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

Result<mysql::QueryResult> run(mysql::Connection& connection, const std::string& sql) {
  auto result = connection.query(sql);
  if (!result) return fail(std::move(result).error().with_context("reading information_schema"));
  return result;
}

// Keeps the rows whose TABLE_SCHEMA and TABLE_NAME are exactly these bytes: information_schema
// compares names with a case-insensitive collation on some servers.
void keep_exact(mysql::QueryResult& result, std::string_view database, std::string_view table) {
  const std::size_t db = header(result, "TABLE_SCHEMA");
  const std::size_t name = header(result, "TABLE_NAME");
  if (db == kAbsent || name == kAbsent) return;
  std::erase_if(result.rows, [&](const auto& row) {
    return text_or_empty(row, db) != database || text_or_empty(row, name) != table;
  });
}

std::string in_list(const std::set<std::string, std::less<>>& names) {
  std::string out;
  for (const auto& name : names) {
    if (!out.empty()) out += ',';
    out += sql_string_literal(name);
  }
  return out;
}

bool is_plain_identifier(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// COLUMN_TYPE holds the labels in utf8mb3, the binlog in the column's charset: let the server
// convert them back (one query for all such labels), so the bytes are exactly the stored ones.
Result<void> labels_to_column_charsets(mysql::Connection& connection, TableSchema& schema) {
  std::vector<std::string*> labels;
  std::string select;
  for (auto& column : schema.columns) {
    const auto charset = rowimage::charset_of(static_cast<std::uint16_t>(column.collation_id));
    if (column.charset.empty() || charset == rowimage::Charset::utf8mb3 || charset == rowimage::Charset::utf8mb4 ||
        charset == rowimage::Charset::binary || !is_plain_identifier(column.charset))
      continue;
    for (auto* values : {&column.enum_values, &column.set_values})
      for (auto& label : *values) {
        if (rowimage::is_ascii_compatible(charset) && is_ascii(label)) continue;
        select += select.empty() ? "SELECT " : ", ";
        select += fmt::format("HEX(CONVERT({} USING {}))", mysql::text_literal(label), column.charset);
        labels.push_back(&label);
      }
  }
  if (labels.empty()) return {};
  auto result = run(connection, select);
  if (!result) return fail(std::move(result).error());
  if (result->rows.size() != 1 || result->rows[0].size() != labels.size())
    return fail(Errc::server, "converting ENUM/SET labels returned an unexpected result");
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::string_view hex = text_or_empty(result->rows[0], i);
    std::string bytes;
    for (std::size_t k = 0; k + 1 < hex.size(); k += 2)
      bytes += static_cast<char>(hex_digit(hex[k]) << 4 | hex_digit(hex[k + 1]));
    *labels[i] = std::move(bytes);
  }
  return {};
}

}  // namespace

Result<std::optional<TableSchema>> read_table_schema(mysql::Connection& connection, std::string_view database,
                                                     std::string_view table) {
  const std::string where =
      fmt::format(" WHERE TABLE_SCHEMA = {} AND TABLE_NAME = {}", sql_string_literal(database), sql_string_literal(table));
  InformationSchemaRows rows;
  auto tables = run(connection, "SELECT * FROM information_schema.TABLES" + where);
  if (!tables) return fail(std::move(tables).error());
  rows.tables = std::move(*tables);
  keep_exact(rows.tables, database, table);
  if (rows.tables.rows.empty()) return std::optional<TableSchema>();
  auto columns = run(connection, "SELECT * FROM information_schema.COLUMNS" + where);
  if (!columns) return fail(std::move(columns).error());
  rows.columns = std::move(*columns);
  keep_exact(rows.columns, database, table);
  // Dropped between the two queries.
  if (rows.columns.rows.empty()) return std::optional<TableSchema>();
  auto statistics = run(connection, "SELECT * FROM information_schema.STATISTICS" + where);
  if (!statistics) return fail(std::move(statistics).error());
  rows.statistics = std::move(*statistics);
  keep_exact(rows.statistics, database, table);

  std::set<std::string, std::less<>> collations;
  const std::size_t collation = header(rows.columns, "COLLATION_NAME");
  for (const auto& row : rows.columns.rows)
    if (const std::string_view name = text_or_empty(row, collation); !name.empty()) collations.emplace(name);
  if (!collations.empty()) {
    // MariaDB 10.10+ names UCA-14.0 collations per charset only here (COLLATIONS has
    // uca1400_ai_ci without an id); older servers and MySQL lack FULL_COLLATION_NAME.
    auto found = connection.query(
        "SELECT FULL_COLLATION_NAME, ID FROM information_schema.COLLATION_CHARACTER_SET_APPLICABILITY "
        "WHERE FULL_COLLATION_NAME IN (" +
        in_list(collations) + ")");
    rows.collation_ids_from_mariadb = found.has_value();
    if (!found)
      found = run(connection, "SELECT COLLATION_NAME, ID FROM information_schema.COLLATIONS WHERE COLLATION_NAME IN (" +
                                  in_list(collations) + ")");
    if (!found) return fail(std::move(found).error());
    rows.collations = std::move(*found);
  }
  auto schema = table_schema_from_rows(rows);
  if (!schema) return fail(std::move(schema).error().with_context(fmt::format("{}.{}", database, table)));
  if (auto converted = labels_to_column_charsets(connection, *schema); !converted)
    return fail(std::move(converted).error().with_context(fmt::format("{}.{}", database, table)));
  return std::optional<TableSchema>(std::move(*schema));
}

Result<const TableSchema*> SchemaCache::get(std::string_view database, std::string_view table) {
  std::string key;
  key.reserve(database.size() + 1 + table.size());
  key.append(database).append(1, '\0').append(table);
  auto found = schemas_.find(key);
  if (found == schemas_.end()) {
    auto schema = read_table_schema(*connection_, database, table);
    if (!schema) return fail(std::move(schema).error());
    found = schemas_.emplace(std::move(key), std::move(*schema)).first;
  }
  return found->second ? &*found->second : nullptr;
}

void SchemaCache::invalidate(std::string_view database, std::string_view table) {
  std::string key;
  key.append(database).append(1, '\0').append(table);
  schemas_.erase(key);
}

void SchemaCache::invalidate_database(std::string_view database) {
  std::string prefix(database);
  prefix += '\0';
  auto it = schemas_.lower_bound(prefix);
  while (it != schemas_.end() && it->first.starts_with(prefix)) it = schemas_.erase(it);
}

}  // namespace cdc::schema
