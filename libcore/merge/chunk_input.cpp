#include "merge/chunk_input.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "ndjson/json_scan.h"
#include "ndjson/line_reader.h"
#include "merge/positions.h"
#include "ndjson/writer.h"

namespace cdc::merge {

namespace {

// cdc-snapshot writes "r" lines with this prefix; anything else is parsed.
constexpr std::string_view kRowPrefix = R"({"op":"r",)";

bool is_blank(std::string_view line) { return ndjson::trim_json_space(line).empty(); }

Result<std::string> get_string(simdjson::dom::object record, std::string_view field) {
  std::string_view value;
  if (record[field].get_string().get(value) != simdjson::SUCCESS)
    return fail(Errc::corrupt_input, fmt::format("\"{}\" is missing or not a string", field));
  return std::string(value);
}

Result<std::uint64_t> get_uint(simdjson::dom::object record, std::string_view field) {
  std::uint64_t value = 0;
  if (record[field].get_uint64().get(value) != simdjson::SUCCESS)
    return fail(Errc::corrupt_input, fmt::format("\"{}\" is missing or not a non-negative integer", field));
  return value;
}

Result<std::vector<std::string>> get_string_array(simdjson::dom::object record, std::string_view field) {
  simdjson::dom::array array;
  if (record[field].get_array().get(array) != simdjson::SUCCESS)
    return fail(Errc::corrupt_input, fmt::format("\"{}\" is missing or not an array", field));
  std::vector<std::string> out;
  for (simdjson::dom::element item : array) {
    std::string_view text;
    if (item.get_string().get(text) != simdjson::SUCCESS)
      return fail(Errc::corrupt_input, fmt::format("\"{}\" holds a value that is not a string", field));
    out.emplace_back(text);
  }
  return out;
}

// A bound ("start"/"end") as raw JSON text per key column, from the line's own bytes.
Result<std::optional<std::vector<std::string>>> get_bound(std::string_view line, std::string_view quoted_field,
                                                          std::size_t columns) {
  const auto raw = ndjson::find_member(line, quoted_field);
  if (!raw) return fail(Errc::corrupt_input, fmt::format("{} is missing", quoted_field));
  if (*raw == "null") return std::optional<std::vector<std::string>>{};
  if (raw->empty() || raw->front() != '[')
    return fail(Errc::corrupt_input, fmt::format("{} is not an array or null", quoted_field));
  std::vector<std::string> values;
  std::size_t pos = 1;
  const std::string_view text = raw->substr(0, raw->size() - 1);  // without ']'
  while (true) {
    const std::string_view rest = ndjson::trim_json_space(text.substr(pos));
    if (rest.empty()) break;
    const std::size_t start = text.size() - rest.size();
    std::size_t end = start;
    if (!ndjson::skip_json_value(text, end))
      return fail(Errc::corrupt_input, fmt::format("{} is not a JSON array", quoted_field));
    values.emplace_back(text.substr(start, end - start));
    pos = end;
    const std::string_view after = ndjson::trim_json_space(text.substr(pos));
    if (after.empty()) break;
    if (after.front() != ',') return fail(Errc::corrupt_input, fmt::format("{} is not a JSON array", quoted_field));
    pos = text.size() - after.size() + 1;
  }
  if (values.size() != columns)
    return fail(Errc::corrupt_input,
                fmt::format("{} has {} values for {} key columns", quoted_field, values.size(), columns));
  return std::optional<std::vector<std::string>>{std::move(values)};
}

Result<gtid::Position> get_position(simdjson::dom::object record) {
  auto text = get_string(record, "position");
  if (!text) return fail(text.error());
  auto position = gtid::Position::parse(*text);
  if (!position) return fail(Errc::corrupt_input, fmt::format("\"position\": {}", position.error().message));
  return position;
}

Result<void> read_low(simdjson::dom::object record, std::string_view line, ChunkInfo& chunk) {
  auto db = get_string(record, "db");
  if (!db) return fail(db.error());
  auto table = get_string(record, "table");
  if (!table) return fail(table.error());
  auto index = get_uint(record, "index");
  if (!index) return fail(index.error());
  auto count = get_uint(record, "count");
  if (!count) return fail(count.error());
  if (*count == 0 || *index >= *count)
    return fail(Errc::corrupt_input, fmt::format("chunk index {} is not below its count {}", *index, *count));
  auto low = get_position(record);
  if (!low) return fail(low.error());
  auto key = get_string_array(record, "key");
  if (!key) return fail(key.error());
  if (key->empty()) return fail(Errc::corrupt_input, "\"key\" is empty");
  auto key_types = get_string_array(record, "key_types");
  if (!key_types) return fail(key_types.error());
  if (key_types->size() != key->size())
    return fail(Errc::corrupt_input, "\"key_types\" does not have one type per key column");
  simdjson::dom::array collations;
  if (record["key_collations"].get_array().get(collations) != simdjson::SUCCESS)
    return fail(Errc::corrupt_input, "\"key_collations\" is missing or not an array");
  for (simdjson::dom::element item : collations) {
    std::uint64_t id = 0;
    if (item.get_uint64().get(id) != simdjson::SUCCESS || id > UINT32_MAX)
      return fail(Errc::corrupt_input, "\"key_collations\" holds a value that is not a collation id");
    chunk.key_collations.push_back(static_cast<std::uint32_t>(id));
  }
  if (chunk.key_collations.size() != key->size())
    return fail(Errc::corrupt_input, "\"key_collations\" does not have one id per key column");
  auto start = get_bound(line, "\"start\"", key->size());
  if (!start) return fail(start.error());
  auto end = get_bound(line, "\"end\"", key->size());
  if (!end) return fail(end.error());
  simdjson::dom::element identity;
  if (record["identity"].get(identity) != simdjson::SUCCESS)
    return fail(Errc::corrupt_input, "\"identity\" is missing");
  if (!identity.is_null()) {
    auto names = get_string_array(record, "identity");
    if (!names) return fail(names.error());
    if (names->empty()) return fail(Errc::corrupt_input, "\"identity\" is empty");
    chunk.identity = std::move(*names);
  }
  std::string_view file;
  if (record["file"].get_string().get(file) == simdjson::SUCCESS) chunk.low_file = std::string(file);
  std::uint64_t offset = 0;
  if (record["offset"].get_uint64().get(offset) == simdjson::SUCCESS) chunk.low_offset = offset;
  chunk.db = std::move(*db);
  chunk.table = std::move(*table);
  chunk.index = *index;
  chunk.count = *count;
  chunk.low = std::move(*low);
  chunk.key = std::move(*key);
  chunk.key_types = std::move(*key_types);
  chunk.start = std::move(*start);
  chunk.end = std::move(*end);
  return {};
}

Result<void> read_high(simdjson::dom::object record, ChunkInfo& chunk) {
  auto db = get_string(record, "db");
  if (!db) return fail(db.error());
  auto table = get_string(record, "table");
  if (!table) return fail(table.error());
  auto index = get_uint(record, "index");
  if (!index) return fail(index.error());
  if (*db != chunk.db || *table != chunk.table || *index != chunk.index)
    return fail(Errc::corrupt_input,
                fmt::format("high line of {}.{} chunk {} while {} is open (its low is at line {}): the input "
                            "mixes chunks; give each chunk's lines together, as cdc-snapshot writes them",
                            *db, *table, *index, chunk.describe(), chunk.low_line));
  auto high = get_position(record);
  if (!high) return fail(high.error());
  if (high->kind != chunk.low.kind)
    return fail(Errc::corrupt_input, fmt::format("{}: the low watermark is {} but the high is {}", chunk.describe(),
                                                 kind_name(chunk.low.kind), kind_name(high->kind)));
  auto rows = get_uint(record, "rows");
  if (!rows) return fail(rows.error());
  std::string_view file;
  if (record["file"].get_string().get(file) == simdjson::SUCCESS) chunk.high_file = std::string(file);
  std::uint64_t offset = 0;
  if (record["offset"].get_uint64().get(offset) == simdjson::SUCCESS) chunk.high_offset = offset;
  chunk.high = std::move(*high);
  chunk.rows = *rows;
  return {};
}

Error unfinished(const InputFile& input, const ChunkInfo& chunk, std::string_view why) {
  return Error{Errc::corrupt_input,
               fmt::format("{}:{}: {} has no high line ({}): it was not finished; rerun cdc-snapshot for it",
                           input.name, chunk.low_line, chunk.describe(), why)};
}

}  // namespace

std::string ChunkInfo::describe() const { return fmt::format("{}.{} chunk {}/{}", db, table, index, count); }

Result<std::vector<ChunkInfo>> scan_chunk_outputs(std::span<const InputFile> inputs) {
  std::vector<ChunkInfo> chunks;
  simdjson::dom::parser parser;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    ndjson::LineReader reader(inputs[i].fd, inputs[i].name);
    std::optional<ChunkInfo> open;
    for (;;) {
      auto more = reader.next();
      if (!more) return fail(more.error());
      if (!*more) break;
      const std::string_view line = reader.line();
      if (ndjson::starts_with_bytes(line, kRowPrefix)) {
        if (!open)
          return fail(reader.error_here(
              "op:\"r\" line outside a chunk (no low line before it): give whole cdc-snapshot outputs"));
        continue;
      }
      if (is_blank(line)) continue;
      simdjson::dom::object record;
      if (const auto error = parser.parse(line.data(), line.size(), true).get_object().get(record); error) {
        if (!reader.terminated())
          return fail(reader.error_here("torn last line: the input ends mid-record (the writer was probably interrupted)"));
        return fail(reader.error_here(fmt::format("malformed JSON: {}", simdjson::error_message(error))));
      }
      std::string_view op;
      if (record["op"].get_string().get(op) != simdjson::SUCCESS)
        return fail(reader.error_here("no \"op\" string: not a cdc-snapshot output line"));
      if (op == "r") {
        if (!open)
          return fail(reader.error_here(
              "op:\"r\" line outside a chunk (no low line before it): give whole cdc-snapshot outputs"));
        continue;
      }
      if (op == "low") {
        if (open) return fail(unfinished(inputs[i], *open, fmt::format("line {} starts another chunk", reader.line_number())));
        ChunkInfo chunk;
        chunk.input = i;
        chunk.low_line = reader.line_number();
        if (auto read = read_low(record, line, chunk); !read) return fail(reader.error_here(read.error().message));
        chunk.rows_begin = reader.next_offset();
        open = std::move(chunk);
        continue;
      }
      if (op == "high") {
        if (!open)
          return fail(reader.error_here("high line without its low line: give whole cdc-snapshot outputs"));
        if (auto read = read_high(record, *open); !read) return fail(reader.error_here(read.error().message));
        open->rows_end = reader.line_offset();
        chunks.push_back(std::move(*open));
        open.reset();
        continue;
      }
      if (op == "discard") {
        // cdc-snapshot lost its connection during this chunk and reads it again: the lines
        // since the low line are void, and a new low line follows.
        if (!open)
          return fail(reader.error_here("discard line without its chunk's low line: give whole cdc-snapshot outputs"));
        auto db = get_string(record, "db");
        auto table = get_string(record, "table");
        auto index = get_uint(record, "index");
        if (!db || !table || !index || *db != open->db || *table != open->table || *index != open->index)
          return fail(reader.error_here(fmt::format(
              "discard line that does not name {}, the chunk open since line {}: the input mixes chunks; give each "
              "chunk's lines together, as cdc-snapshot writes them",
              open->describe(), open->low_line)));
        open.reset();
        continue;
      }
      return fail(reader.error_here(fmt::format(
          "unexpected op \"{}\" in a chunk output (expected low, r, discard or high lines of cdc-snapshot)", op)));
    }
    if (open) return fail(unfinished(inputs[i], *open, "the input ends before it"));
  }
  return chunks;
}

Result<std::vector<TableInfo>> group_tables(std::span<const ChunkInfo> chunks, std::span<const InputFile> inputs,
                                            bool subset) {
  std::vector<TableInfo> tables;
  std::map<std::pair<std::string, std::string>, std::size_t> by_name;
  std::map<std::tuple<std::string, std::string, std::uint64_t>, std::size_t> seen;
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    const ChunkInfo& chunk = chunks[c];
    const auto where = [&](const ChunkInfo& ch) { return fmt::format("{}:{}", inputs[ch.input].name, ch.low_line); };
    auto [dup, fresh] = seen.emplace(std::tuple{chunk.db, chunk.table, chunk.index}, c);
    if (!fresh)
      return fail(Errc::corrupt_input, fmt::format("{}: {} is also at {}: give each chunk once", where(chunk),
                                                   chunk.describe(), where(chunks[dup->second])));
    auto [it, added] = by_name.emplace(std::pair{chunk.db, chunk.table}, tables.size());
    if (added) {
      TableInfo table;
      table.db = chunk.db;
      table.table = chunk.table;
      table.quoted_db = ndjson::quoted(chunk.db);
      table.quoted_table = ndjson::quoted(chunk.table);
      table.key = chunk.key;
      for (const std::string& name : chunk.key) table.quoted_key.push_back(ndjson::quoted(name));
      table.identity = chunk.identity;
      if (chunk.identity)
        for (const std::string& name : *chunk.identity) table.quoted_identity.push_back(ndjson::quoted(name));
      table.identity_is_key = chunk.identity && *chunk.identity == chunk.key;
      table.min_low = chunk.low;
      tables.push_back(std::move(table));
    }
    TableInfo& table = tables[it->second];
    const ChunkInfo& first = chunks[table.chunks.empty() ? c : table.chunks.front()];
    if (chunk.key != first.key || chunk.key_types != first.key_types || chunk.key_collations != first.key_collations ||
        chunk.identity != first.identity || chunk.count != first.count)
      return fail(Errc::corrupt_input,
                  fmt::format("{}: {} has another key, identity or chunk count than {} at {}: the chunks come from "
                              "different plans; plan and snapshot the table again",
                              where(chunk), chunk.describe(), first.describe(), where(first)));
    if (chunk.low.kind != first.low.kind)
      return fail(Errc::corrupt_input, fmt::format("{}: {} has {} watermarks but {} has {}", where(chunk),
                                                   chunk.describe(), kind_name(chunk.low.kind), first.describe(),
                                                   kind_name(first.low.kind)));
    if (!table.chunks.empty()) {
      if (!(chunk.low.to_string() == first.low.to_string())) table.same_lows = false;
      const gtid::Position pair[] = {table.min_low, chunk.low};
      table.min_low = lowest(pair);
    }
    table.chunks.push_back(c);
  }
  for (TableInfo& table : tables) {
    const ChunkInfo& first = chunks[table.chunks.front()];
    if (!subset && table.chunks.size() != first.count) {
      // The gaps between the indexes given (count comes from the input: never allocate by it).
      std::vector<std::uint64_t> have;
      for (const std::size_t c : table.chunks) have.push_back(chunks[c].index);
      std::sort(have.begin(), have.end());
      have.push_back(first.count);
      std::string missing;
      std::uint64_t total = 0;
      std::uint64_t shown = 0;
      std::uint64_t expected = 0;
      for (const std::uint64_t index : have) {
        for (std::uint64_t i = expected; i < index && shown < 20; ++i, ++shown)
          missing += fmt::format("{}{}", missing.empty() ? "" : ", ", i);
        total += index - expected;  // sorted, distinct (no chunk twice) and below count
        expected = index + 1;
      }
      if (total > shown) missing += fmt::format(" and {} more", total - shown);
      return fail(Errc::corrupt_input,
                  fmt::format("{}.{}: chunk{} {} of {} missing: give every chunk of the table, or --subset to "
                              "merge only the given ones",
                              table.db, table.table, total == 1 ? "" : "s", missing, first.count));
    }
    // Key order per column.
    std::optional<Error> unsupported;
    for (std::size_t k = 0; k < first.key.size(); ++k) {
      auto order = KeyColumnOrder::make(first.key_types[k], first.key_collations[k]);
      if (!order) {
        unsupported = order.error();
        break;
      }
      table.order.push_back(*order);
    }
    if (unsupported) {
      table.order.clear();
      if (!table.same_lows || subset)
        return fail(unsupported->with_context(
            fmt::format("{}.{}: cannot tell which chunk a change belongs to (chunk key {}){}", table.db, table.table,
                        fmt::join(first.key, ","),
                        subset ? "; --subset needs that" : "; the chunks have different low watermarks")));
      // All lows equal: a change applies to every chunk or none; no ordering needed.
      std::sort(table.chunks.begin(), table.chunks.end(),
                [&](std::size_t a, std::size_t b) { return chunks[a].index < chunks[b].index; });
      table.ranges.assign(table.chunks.size(), KeyRange{});
      continue;
    }
    table.ordered = true;
    std::vector<std::pair<KeyRange, std::size_t>> ranged;
    std::string scratch;
    for (const std::size_t c : table.chunks) {
      const ChunkInfo& chunk = chunks[c];
      KeyRange range;
      for (int side = 0; side < 2; ++side) {
        const auto& bound = side == 0 ? chunk.start : chunk.end;
        if (!bound) continue;
        std::vector<std::string_view> values(bound->begin(), bound->end());
        scratch.clear();
        if (auto made = append_row_sort_key(table.order, values, scratch); !made)
          return fail(made.error().with_context(
              fmt::format("{}:{}: {} {}", inputs[chunk.input].name, chunk.low_line, chunk.describe(),
                          side == 0 ? "start" : "end")));
        (side == 0 ? range.start : range.end) = scratch;
      }
      ranged.emplace_back(std::move(range), c);
    }
    std::sort(ranged.begin(), ranged.end(), [](const auto& a, const auto& b) {
      if (!a.first.start) return b.first.start.has_value();
      if (!b.first.start) return false;
      return *a.first.start < *b.first.start;
    });
    table.chunks.clear();
    for (auto& [range, c] : ranged) {
      table.ranges.push_back(std::move(range));
      table.chunks.push_back(c);
    }
  }
  return tables;
}

Result<std::optional<std::size_t>> find_chunk(const TableInfo& table, std::span<const std::string_view> key_values,
                                              std::string& scratch) {
  if (!table.ordered) return std::optional<std::size_t>{table.chunks.front()};
  for (const std::string_view value : key_values) {
    if (value == "null") {
      // A NULL key value is in no key range; only a chunk without bounds (the whole table) reads it.
      for (std::size_t i = 0; i < table.ranges.size(); ++i)
        if (!table.ranges[i].start && !table.ranges[i].end) return std::optional<std::size_t>{table.chunks[i]};
      return std::optional<std::size_t>{};
    }
  }
  scratch.clear();
  if (auto made = append_row_sort_key(table.order, key_values, scratch); !made) return fail(made.error());
  // The last chunk whose start is <= the key (an open start sorts first).
  const auto& ranges = table.ranges;
  std::size_t lo = 0;
  std::size_t hi = ranges.size();
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (!ranges[mid].start || *ranges[mid].start <= scratch)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0) return std::optional<std::size_t>{};
  if (!ranges[lo - 1].contains(scratch)) return std::optional<std::size_t>{};
  return std::optional<std::size_t>{table.chunks[lo - 1]};
}

}  // namespace cdc::merge
