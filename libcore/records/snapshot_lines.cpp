#include "records/snapshot_lines.h"

#include <fmt/format.h>

#include "ndjson/json_scan.h"
#include "ndjson/writer.h"
#include "records/kinds.h"
#include "records/members.h"

namespace cdc::records {

namespace {

// A bound ("start"/"end") as raw JSON text per key column, from the line's own bytes.
Result<Bound> get_raw_bound(std::string_view line, std::string_view name, std::size_t columns) {
  const std::string quoted = fmt::format("\"{}\"", name);
  const auto raw = ndjson::find_member(line, quoted);
  if (!raw) return corrupt_line(fmt::format("{} is missing", quoted));
  if (*raw == "null") return Bound{};
  if (raw->empty() || raw->front() != '[') return corrupt_line(fmt::format("{} is not an array or null", quoted));
  std::vector<std::string> values;
  std::size_t pos = 1;
  const std::string_view text = raw->substr(0, raw->size() - 1);  // without ']'
  while (true) {
    const std::string_view rest = ndjson::trim_json_space(text.substr(pos));
    if (rest.empty()) break;
    const std::size_t start = text.size() - rest.size();
    std::size_t end = start;
    if (!ndjson::skip_json_value(text, end)) return corrupt_line(fmt::format("{} is not a JSON array", quoted));
    values.emplace_back(text.substr(start, end - start));
    pos = end;
    const std::string_view after = ndjson::trim_json_space(text.substr(pos));
    if (after.empty()) break;
    if (after.front() != ',') return corrupt_line(fmt::format("{} is not a JSON array", quoted));
    pos = text.size() - after.size() + 1;
  }
  if (values.size() != columns)
    return corrupt_line(fmt::format("{} has {} values for {} key columns", quoted, values.size(), columns));
  return Bound(std::move(values));
}

// "file" and "offset" where the line has them.
void get_coordinates(simdjson::dom::object record, Watermark& mark) {
  std::string_view file;
  if (record[field::file].get_string().get(file) == simdjson::SUCCESS) mark.file = std::string(file);
  std::uint64_t offset = 0;
  if (record[field::offset].get_uint64().get(offset) == simdjson::SUCCESS) mark.offset = offset;
}

void write_chunk_ref(std::string_view kind, const ChunkRef& chunk, ndjson::Writer& out) {
  begin_line(kind, out);
  out.field(field::db, chunk.db);
  out.field(field::table, chunk.table);
  out.field(field::index, chunk.index);
  out.field(field::count, chunk.count);
}

void write_mark_position(const Watermark& mark, ndjson::Writer& out) {
  out.field(field::position, mark.position);
  out.field(field::file, mark.file);
  out.field(field::offset, mark.offset);
}

}  // namespace

std::string ChunkRef::describe() const { return describe_chunk(db, table, index, count); }

ChunkRef chunk_ref(const Chunk& chunk) { return ChunkRef{chunk.db, chunk.table, chunk.index, chunk.count}; }

Low low_of(const Chunk& chunk, Watermark mark) {
  Low low{chunk_ref(chunk), std::move(mark), chunk.key, chunk.key_types, {}, chunk.start, chunk.end, chunk.identity,
          chunk.where};
  for (const std::string& column : chunk.key)
    for (const ChunkColumn& described : chunk.columns)
      if (described.name == column) low.key_collations.push_back(described.collation_id);
  return low;
}

void write_low(const Low& low, ndjson::Writer& out) {
  write_chunk_ref(op::low, low.chunk, out);
  write_mark_position(low.mark, out);
  write_strings(field::key, low.key, out);
  write_strings(field::key_types, low.key_types, out);
  out.key(field::key_collations);
  out.begin_array();
  for (const std::uint32_t id : low.key_collations) out.unsigned_integer(id);
  out.end_array();
  out.key(field::start);
  write_bound(low.start, out);
  out.key(field::end);
  write_bound(low.end, out);
  if (low.identity)
    write_strings(field::identity, *low.identity, out);
  else
    out.field_null(field::identity);
  if (low.where) out.field(field::where, *low.where);
  out.field(field::ts_ms, low.mark.ts_ms);
  end_line(out);
}

void write_high(const High& high, ndjson::Writer& out) {
  write_chunk_ref(op::high, high.chunk, out);
  write_mark_position(high.mark, out);
  out.field(field::rows, high.rows);
  if (high.rows_bytes) out.field(field::rows_bytes, *high.rows_bytes);
  out.field(field::ts_ms, high.mark.ts_ms);
  end_line(out);
}

void write_snapshot_discard(const SnapshotDiscard& discard, ndjson::Writer& out) {
  write_chunk_ref(op::discard, discard.chunk, out);
  out.field(field::reason, discard.reason);
  out.field(field::ts_ms, discard.ts_ms);
  end_line(out);
}

void write_merged_high(const MergedHigh& high, ndjson::Writer& out) {
  begin_line(op::high, out);
  out.field(field::position, high.position);
  if (high.at) {
    out.field(field::file, high.at->file);
    out.field(field::offset, high.at->offset);
  } else {
    out.field_null(field::file);
    out.field_null(field::offset);
  }
  out.field(field::chunks, high.chunks);
  out.field(field::rows, high.rows);
  out.field(field::ts_ms, high.ts_ms);
  end_line(out);
}

Result<ChunkRef> parse_chunk_ref(simdjson::dom::object record) {
  if (auto version = check_version(record); !version) return fail(version.error());
  auto db = required_string(record, field::db);
  if (!db) return fail(db.error());
  auto table = required_string(record, field::table);
  if (!table) return fail(table.error());
  auto index = required_uint(record, field::index);
  if (!index) return fail(index.error());
  std::uint64_t count = 0;  // checked where it matters (parse_low)
  if (record[field::count].get_uint64().get(count) != simdjson::SUCCESS) count = 0;
  return ChunkRef{std::move(*db), std::move(*table), *index, count};
}

Result<Low> parse_low(simdjson::dom::object record, std::string_view line) {
  Low low;
  auto chunk = parse_chunk_ref(record);
  if (!chunk) return fail(chunk.error());
  auto count = required_uint(record, field::count);
  if (!count) return fail(count.error());
  if (*count == 0 || chunk->index >= *count)
    return corrupt_line(fmt::format("chunk index {} is not below its count {}", chunk->index, *count));
  low.chunk = std::move(*chunk);
  auto position = required_string(record, field::position);
  if (!position) return fail(position.error());
  low.mark.position = std::move(*position);
  auto key = required_strings(record, field::key);
  if (!key) return fail(key.error());
  low.key = std::move(*key);
  auto key_types = required_strings(record, field::key_types);
  if (!key_types) return fail(key_types.error());
  if (key_types->size() != low.key.size()) return corrupt_line("\"key_types\" does not have one type per key column");
  low.key_types = std::move(*key_types);
  simdjson::dom::array collations;
  if (record[field::key_collations].get_array().get(collations) != simdjson::SUCCESS)
    return corrupt_line("\"key_collations\" is missing or not an array");
  for (simdjson::dom::element item : collations) {
    std::uint64_t id = 0;
    if (item.get_uint64().get(id) != simdjson::SUCCESS || id > UINT32_MAX)
      return corrupt_line("\"key_collations\" holds a value that is not a collation id");
    low.key_collations.push_back(static_cast<std::uint32_t>(id));
  }
  if (low.key_collations.size() != low.key.size())
    return corrupt_line("\"key_collations\" does not have one id per key column");
  auto start = get_raw_bound(line, field::start, low.key.size());
  if (!start) return fail(start.error());
  low.start = std::move(*start);
  auto end = get_raw_bound(line, field::end, low.key.size());
  if (!end) return fail(end.error());
  low.end = std::move(*end);
  if (low.key.empty() && (*count != 1 || low.start || low.end))
    return corrupt_line("a chunk without \"key\" columns must be its table's only chunk (count 1, start and end null)");
  simdjson::dom::element identity;
  if (record[field::identity].get(identity) != simdjson::SUCCESS) return corrupt_line("\"identity\" is missing");
  if (!identity.is_null()) {
    auto names = required_strings(record, field::identity);
    if (!names) return fail(names.error());
    if (names->empty()) return corrupt_line("\"identity\" is empty");
    low.identity = std::move(*names);
  }
  simdjson::dom::element where;
  if (record[field::where].get(where) == simdjson::SUCCESS && !where.is_null()) {
    std::string_view text;
    if (where.get_string().get(text) != simdjson::SUCCESS || text.empty())
      return corrupt_line("\"where\" must be a non-empty string (a --where expression)");
    low.where = std::string(text);
  }
  get_coordinates(record, low.mark);
  std::int64_t ts_ms = 0;
  if (record[field::ts_ms].get_int64().get(ts_ms) == simdjson::SUCCESS) low.mark.ts_ms = ts_ms;
  return low;
}

Result<High> parse_high(simdjson::dom::object record) {
  High high;
  auto chunk = parse_chunk_ref(record);
  if (!chunk) return fail(chunk.error());
  high.chunk = std::move(*chunk);
  auto position = required_string(record, field::position);
  if (!position) return fail(position.error());
  high.mark.position = std::move(*position);
  auto rows = required_uint(record, field::rows);
  if (!rows) return fail(rows.error());
  high.rows = *rows;
  if (!record[field::rows_bytes].error()) {
    std::uint64_t bytes = 0;
    if (record[field::rows_bytes].get_uint64().get(bytes) != simdjson::SUCCESS)
      return corrupt_line("\"rows_bytes\" is not a non-negative integer");
    high.rows_bytes = bytes;
  }
  get_coordinates(record, high.mark);
  std::int64_t ts_ms = 0;
  if (record[field::ts_ms].get_int64().get(ts_ms) == simdjson::SUCCESS) high.mark.ts_ms = ts_ms;
  return high;
}

Result<MergedHigh> parse_merged_high(simdjson::dom::object record) {
  MergedHigh high;
  std::string_view kind;
  if (record[field::op].get_string().get(kind) != simdjson::SUCCESS || kind != op::high)
    return corrupt_line("not an op:\"high\" line");
  if (auto version = check_version(record); !version) return fail(version.error());
  auto position = required_string(record, field::position);
  if (!position) return fail(position.error());
  high.position = std::move(*position);
  const auto file = string_member(record, field::file);
  const auto offset = uint_member(record, field::offset);
  if (file && offset) high.at = gtid::FilePosition{*file, *offset};
  high.chunks = uint_member(record, field::chunks).value_or(0);
  auto rows = required_uint(record, field::rows);
  if (!rows) return fail(rows.error());
  high.rows = *rows;
  std::int64_t ts_ms = 0;
  if (record[field::ts_ms].get_int64().get(ts_ms) == simdjson::SUCCESS) high.ts_ms = ts_ms;
  return high;
}

}  // namespace cdc::records
