#include "records/chunk.h"

#include <fmt/format.h>

#include <algorithm>

#include "ndjson/writer.h"
#include "records/kinds.h"
#include "records/members.h"

namespace cdc::records {

namespace {

Unexpected bad(std::string message) { return fail(Errc::corrupt_input, std::move(message)); }

Result<std::string> get_string(simdjson::dom::object record, std::string_view name) {
  auto value = string_member(record, name);
  if (!value) return bad(fmt::format("chunk field \"{}\" must be a string", name));
  return std::move(*value);
}

Result<std::uint64_t> get_count(simdjson::dom::object record, std::string_view name) {
  const auto value = uint_member(record, name);
  if (!value) return bad(fmt::format("chunk field \"{}\" must be a non-negative integer", name));
  return *value;
}

Result<std::vector<std::string>> get_strings(simdjson::dom::object record, std::string_view name) {
  auto values = strings_member(record, name);
  if (!values) return bad(fmt::format("chunk field \"{}\" must be an array of strings", name));
  return std::move(*values);
}

Result<Bound> get_bound(simdjson::dom::object record, std::string_view name, std::size_t key_columns) {
  simdjson::dom::element element;
  if (record[name].get(element) != simdjson::SUCCESS)
    return bad(fmt::format("chunk field \"{}\" is missing (null for an open end)", name));
  if (element.is_null()) return Bound{};
  simdjson::dom::array array;
  if (element.get_array().get(array) != simdjson::SUCCESS)
    return bad(fmt::format("chunk field \"{}\" must be an array or null", name));
  std::vector<std::string> values;
  for (const auto value : array) {
    if (values.size() >= key_columns)
      return bad(fmt::format("chunk field \"{}\" has more values than the key has columns ({})", name, key_columns));
    values.push_back(simdjson::minify(value));
  }
  if (values.size() != key_columns)
    return bad(fmt::format("chunk field \"{}\" has {} values for {} key columns", name, values.size(), key_columns));
  return Bound(std::move(values));
}

}  // namespace

std::string describe_chunk(std::string_view db, std::string_view table, std::uint64_t index, std::uint64_t count) {
  return fmt::format("{}.{} chunk {}/{}", db, table, index, count);
}

std::string Chunk::describe() const { return describe_chunk(db, table, index, count); }

void write_bound(const Bound& bound, ndjson::Writer& out) {
  if (!bound) {
    out.null();
    return;
  }
  out.begin_array();
  for (const std::string& value : *bound) out.raw_value(value);
  out.end_array();
}

void write_chunk(const Chunk& chunk, ndjson::Writer& out) {
  begin_line(op::chunk, out);
  out.field(field::db, chunk.db);
  out.field(field::table, chunk.table);
  write_strings(field::key, chunk.key, out);
  write_strings(field::key_types, chunk.key_types, out);
  out.key(field::start);
  write_bound(chunk.start, out);
  out.key(field::end);
  write_bound(chunk.end, out);
  out.field(field::index, chunk.index);
  out.field(field::count, chunk.count);
  out.key(field::columns);
  out.begin_array();
  for (const ChunkColumn& column : chunk.columns) {
    out.begin_object();
    out.field(field::name, column.name);
    out.field(field::type, column.type);
    out.field(field::collation_id, column.collation_id);
    out.end_object();
  }
  out.end_array();
  if (chunk.identity)
    write_strings(field::identity, *chunk.identity, out);
  else
    out.field_null(field::identity);
  out.field(field::rows_estimate, chunk.rows_estimate);
  if (chunk.where) out.field(field::where, *chunk.where);
  if (chunk.all_versions) out.field(field::all_versions, true);
  end_line(out);
}

Result<Chunk> parse_chunk(simdjson::dom::object record) {
  Chunk chunk;
  std::string_view kind;
  if (record[field::op].get_string().get(kind) != simdjson::SUCCESS)
    return bad(fmt::format("chunk field \"{}\" must be a string", field::op));
  if (kind != op::chunk) return bad(fmt::format("expected an op:\"chunk\" line, got op \"{}\"", kind));
  if (auto version = check_version(record); !version) return fail(version.error());
  auto db = get_string(record, field::db);
  if (!db) return fail(db.error());
  chunk.db = std::move(*db);
  auto table = get_string(record, field::table);
  if (!table) return fail(table.error());
  chunk.table = std::move(*table);
  auto key = get_strings(record, field::key);
  if (!key) return fail(key.error());
  chunk.key = std::move(*key);
  auto key_types = get_strings(record, field::key_types);
  if (!key_types) return fail(key_types.error());
  chunk.key_types = std::move(*key_types);
  if (chunk.key.size() != chunk.key_types.size())
    return bad(fmt::format("chunk has {} key columns but {} key_types", chunk.key.size(), chunk.key_types.size()));
  auto index = get_count(record, field::index);
  if (!index) return fail(index.error());
  chunk.index = *index;
  auto count = get_count(record, field::count);
  if (!count) return fail(count.error());
  chunk.count = *count;
  if (chunk.index >= chunk.count)
    return bad(fmt::format("chunk index {} is not below its count {}", chunk.index, chunk.count));
  std::uint64_t estimate = 0;
  if (record[field::rows_estimate].get_uint64().get(estimate) == simdjson::SUCCESS) chunk.rows_estimate = estimate;
  simdjson::dom::array columns;
  if (record[field::columns].get_array().get(columns) != simdjson::SUCCESS)
    return bad("chunk field \"columns\" must be an array of {\"name\",\"type\",\"collation_id\"}");
  for (const auto element : columns) {
    simdjson::dom::object column;
    ChunkColumn out;
    std::string_view name;
    std::string_view type;
    std::uint64_t collation = 0;
    if (element.get_object().get(column) != simdjson::SUCCESS ||
        column[field::name].get_string().get(name) != simdjson::SUCCESS)
      return bad("chunk field \"columns\" must be an array of {\"name\",\"type\",\"collation_id\"}");
    if (column[field::type].get_string().get(type) == simdjson::SUCCESS) out.type = type;
    // Collation ids are 16-bit in the server; a larger number is cut, as it always was.
    if (column[field::collation_id].get_uint64().get(collation) == simdjson::SUCCESS)
      out.collation_id = static_cast<std::uint16_t>(collation);
    out.name = name;
    chunk.columns.push_back(std::move(out));
  }
  if (chunk.columns.empty()) return bad("chunk field \"columns\" is empty");
  auto start = get_bound(record, field::start, chunk.key.size());
  if (!start) return fail(start.error());
  chunk.start = std::move(*start);
  auto end = get_bound(record, field::end, chunk.key.size());
  if (!end) return fail(end.error());
  chunk.end = std::move(*end);
  // A table without a chunk key (no primary key, no --chunk-key) is read whole, as one chunk.
  if (chunk.key.empty() && (chunk.count != 1 || chunk.start || chunk.end))
    return bad("a chunk without \"key\" columns must be its table's only chunk (count 1, start and end null)");
  simdjson::dom::element identity;
  if (record[field::identity].get(identity) == simdjson::SUCCESS && !identity.is_null()) {
    simdjson::dom::array names;
    if (identity.get_array().get(names) != simdjson::SUCCESS || names.size() == 0)
      return bad("chunk field \"identity\" must be null or a non-empty array of column names");
    std::vector<std::string> identity_names;
    for (const auto name : names) {
      std::string_view text;
      if (name.get_string().get(text) != simdjson::SUCCESS ||
          std::none_of(chunk.columns.begin(), chunk.columns.end(),
                       [&](const ChunkColumn& column) { return column.name == text; }))
        return bad("chunk field \"identity\" must name columns of \"columns\"");
      identity_names.emplace_back(text);
    }
    chunk.identity = std::move(identity_names);
  }
  simdjson::dom::element where;
  if (record[field::where].get(where) == simdjson::SUCCESS && !where.is_null()) {
    std::string_view text;
    if (where.get_string().get(text) != simdjson::SUCCESS || text.empty())
      return bad("chunk field \"where\" must be a non-empty string (a --where expression)");
    chunk.where = std::string(text);
  }
  simdjson::dom::element all_versions;
  if (record[field::all_versions].get(all_versions) == simdjson::SUCCESS &&
      all_versions.get_bool().get(chunk.all_versions) != simdjson::SUCCESS)
    return bad("chunk field \"all_versions\" must be true or false");
  return chunk;
}

}  // namespace cdc::records
