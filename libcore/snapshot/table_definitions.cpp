#include "snapshot/table_definitions.h"

#include <fmt/format.h>

#include <algorithm>

#include "mysql/sql_text.h"
#include "ndjson/writer.h"
#include "schema/table_description.h"

namespace cdc::snapshot {

namespace {

Error table_gone(const records::Chunk& chunk) {
  return Error{Errc::corrupt_input,
               fmt::format("table {}.{} no longer exists; plan again with cdc-plan", chunk.db, chunk.table)};
}

// The key columns still there, with the types the plan saw.
Result<void> check_key(const schema::TableSchema& schema, const records::Chunk& chunk) {
  for (std::size_t i = 0; i < chunk.key.size(); ++i) {
    const auto found = std::find_if(schema.columns.begin(), schema.columns.end(), [&](const schema::ColumnSchema& column) {
      return (!column.hidden || column.period) && column.name == chunk.key[i];
    });
    if (found == schema.columns.end())
      return fail(Errc::corrupt_input,
                  fmt::format("key column {} no longer exists; plan again with cdc-plan", chunk.key[i]));
    if (i >= chunk.key_types.size() || found->column_type != chunk.key_types[i])
      return fail(Errc::corrupt_input,
                  fmt::format("key column {} is now {}, planned as {}; plan again with cdc-plan", chunk.key[i],
                              found->column_type, i < chunk.key_types.size() ? chunk.key_types[i] : "?"));
  }
  return {};
}

}  // namespace

std::string definition_without_counter(std::string_view create_table) {
  std::string text(create_table);
  // The table options follow the column list's closing parenthesis, on its last line; a
  // column's AUTO_INCREMENT attribute has no '='.
  const std::size_t options = text.rfind("\n)");
  if (options == std::string::npos) return text;
  constexpr std::string_view kCounter = " AUTO_INCREMENT=";
  const std::size_t at = text.find(kCounter, options);
  if (at == std::string::npos) return text;
  std::size_t end = at + kCounter.size();
  while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
  text.erase(at, end - at);
  return text;
}

std::string TableDefinitions::show_create(const records::Chunk& chunk) {
  return "SHOW CREATE TABLE " + mysql::quote_identifier(chunk.db) + "." + mysql::quote_identifier(chunk.table);
}

Error TableDefinitions::gone_when_missing(Error error, const records::Chunk& chunk) {
  // Connection errors carry the server's number at the end: "... [1146]".
  if (error.code != Errc::server) return error;
  if (error.message.ends_with("[1146]")) return table_gone(chunk);
  // ER_TOO_LONG_IDENT, ER_WRONG_DB_NAME, ER_WRONG_TABLE_NAME, ER_INVALID_CHARACTER_STRING (a
  // character outside the BMP, which identifiers in utf8mb3 cannot hold).
  for (const std::string_view rejected : {"[1059]", "[1102]", "[1103]", "[1300]"})
    if (error.message.ends_with(rejected))
      return Error{Errc::corrupt_input,
                   fmt::format("no table can be named {}.{}: the server rejects the name: {}", ndjson::quoted(chunk.db),
                               ndjson::quoted(chunk.table), error.message)};
  return error;
}

Result<records::TableLine> TableDefinitions::describe(mysql::Connection& connection, const records::Chunk& chunk,
                                                      const mysql::QueryResult& shown) {
  if (shown.rows.empty() || shown.rows[0].size() < 2 || !shown.rows[0][1])
    return fail(Errc::server, fmt::format("SHOW CREATE TABLE {}.{} returned no definition", chunk.db, chunk.table));
  std::string definition = definition_without_counter(*shown.rows[0][1]);

  std::string key;
  key.reserve(chunk.db.size() + 1 + chunk.table.size());
  key.append(chunk.db).append(1, '\0').append(chunk.table);
  auto found = known_.find(key);
  if (found == known_.end() || found->second.definition != definition) {
    auto schema = schema::read_table_schema(connection, chunk.db, chunk.table);
    if (!schema) return fail(std::move(schema).error());
    if (!*schema) return fail(table_gone(chunk));
    ++reads_;
    if (found == known_.end())
      found = known_.emplace(std::move(key), Known{std::move(definition), std::move(**schema)}).first;
    else
      found->second = Known{std::move(definition), std::move(**schema)};
  }
  if (auto checked = check_key(found->second.schema, chunk); !checked) return fail(std::move(checked).error());
  records::TableLine line = schema::describe_table_schema(chunk.db, chunk.table, found->second.schema);
  // The chunk's columns are those the rows carry: the table's, or the ones cdc-plan --columns
  // kept. The table line says which.
  std::erase_if(line.columns, [&](const records::TableColumn& column) {
    return std::none_of(chunk.columns.begin(), chunk.columns.end(),
                        [&](const records::ChunkColumn& planned) { return planned.name == column.name; });
  });
  return line;
}

}  // namespace cdc::snapshot
