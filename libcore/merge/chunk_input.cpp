#include "merge/chunk_input.h"

#include <fmt/format.h>
#include <simdjson.h>
#include <sys/stat.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <thread>
#include <tuple>

#include "filter/evaluate.h"
#include "merge/positions.h"
#include "ndjson/json_scan.h"
#include "ndjson/line_reader.h"
#include "ndjson/writer.h"
#include "records/kinds.h"
#include "records/position.h"
#include "records/row.h"
#include "util/fd_io.h"

namespace cdc::merge {

namespace {

// cdc-snapshot writes "r" lines with this prefix; anything else is parsed.

bool is_blank(std::string_view line) { return ndjson::trim_json_space(line).empty(); }

Result<void> read_low(simdjson::dom::object record, std::string_view line, ChunkInfo& chunk) {
  auto low = records::parse_low(record, line);
  if (!low) return fail(low.error());
  auto position = records::parse_position(low->mark.position);
  if (!position) return fail(position.error());
  chunk.opened = std::move(*low);
  chunk.low = std::move(*position);
  return {};
}

Result<void> read_high(simdjson::dom::object record, ChunkInfo& chunk) {
  auto high = records::parse_high(record);
  if (!high) return fail(high.error());
  const records::ChunkRef& named = high->chunk;
  const records::ChunkRef& open = chunk.opened.chunk;
  if (named.db != open.db || named.table != open.table || named.index != open.index)
    return fail(Errc::corrupt_input,
                fmt::format("high line of {}.{} chunk {} while {} is open (its low is at line {}): the input "
                            "mixes chunks; give each chunk's lines together, as cdc-snapshot writes them",
                            named.db, named.table, named.index, chunk.describe(), chunk.low_line));
  auto position = records::parse_position(high->mark.position);
  if (!position) return fail(position.error());
  if (position->kind != chunk.low.kind)
    return fail(Errc::corrupt_input, fmt::format("{}: the low watermark is {} but the high is {}", chunk.describe(),
                                                 kind_name(chunk.low.kind), kind_name(position->kind)));
  chunk.closed = std::move(*high);
  chunk.high = std::move(*position);
  return {};
}

// An input's last line, when it is a high line with "rows_bytes" (read once per input, when
// its first chunk's rows begin).
struct TailHigh {
  std::uint64_t offset = 0;  // where the line starts
  simdjson::dom::element record;
};

// The last line of the input, parsed, when it is a whole JSON object within the last 64 KiB
// that has "rows_bytes"; nullopt otherwise (the lines are then read one by one, which reports
// what is wrong with them).
Result<std::optional<TailHigh>> read_tail_high(const InputFile& input, simdjson::dom::parser& parser,
                                               std::string& buffer) {
  struct stat st {};
  if (::fstat(input.fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 2) return std::optional<TailHigh>{};
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t from = size - std::min<std::uint64_t>(size, std::uint64_t{64} << 10);
  buffer.resize(static_cast<std::size_t>(size - from));
  std::size_t filled = 0;
  while (filled < buffer.size()) {
    auto got = read_some_at(input.fd, buffer.data() + filled, buffer.size() - filled, from + filled, input.name);
    if (!got) return fail(got.error());
    if (*got == 0) return std::optional<TailHigh>{};  // shorter than it was a moment ago
    filled += *got;
  }
  if (buffer.back() != '\n') return std::optional<TailHigh>{};
  const std::size_t previous = buffer.rfind('\n', buffer.size() - 2);
  if (previous == std::string::npos && from > 0) return std::optional<TailHigh>{};
  const std::size_t start = previous == std::string::npos ? 0 : previous + 1;
  const std::string_view line(buffer.data() + start, buffer.size() - 1 - start);
  if (line.find(records::field::rows_bytes) == std::string_view::npos) return std::optional<TailHigh>{};
  simdjson::dom::element record;
  if (parser.parse(line.data(), line.size(), true).get(record) != simdjson::SUCCESS)
    return std::optional<TailHigh>{};
  return std::optional<TailHigh>{TailHigh{from + start, record}};
}

// Whether tail is the high line that ends chunk and everything between its rows' start and
// tail is its rows: then its rows need not be read here. cdc-snapshot writes the bytes of the
// rows of a chunk's last attempt in "rows_bytes", so this holds for its outputs only when the
// low line the rows follow is that attempt's own (a discarded attempt before it would put its
// low line, rows and discard line in between). A high line that does not check out is read
// again in order, which reports it.
bool ends_chunk(const TailHigh& tail, ChunkInfo& chunk) {
  simdjson::dom::object record;
  std::string_view op;
  std::uint64_t rows_bytes = 0;
  if (tail.record.get_object().get(record) != simdjson::SUCCESS ||
      record[records::field::op].get_string().get(op) != simdjson::SUCCESS || op != records::op::high ||
      record[records::field::rows_bytes].get_uint64().get(rows_bytes) != simdjson::SUCCESS)
    return false;
  if (rows_bytes > tail.offset || tail.offset - rows_bytes != chunk.rows_begin) return false;
  if (!read_high(record, chunk)) return false;  // it changes the chunk only when the line is right
  chunk.rows_end = tail.offset;
  chunk.rows_unread = true;
  return true;
}

Error unfinished(const InputFile& input, const ChunkInfo& chunk, std::string_view why) {
  return Error{Errc::corrupt_input,
               fmt::format("{}:{}: {} has no high line ({}): it was not finished; rerun cdc-snapshot for it",
                           input.name, chunk.low_line, chunk.describe(), why)};
}

}  // namespace

namespace {

// The chunks of inputs [first, last), in order.
Result<std::vector<ChunkInfo>> scan_inputs(std::span<const InputFile> inputs, std::size_t first, std::size_t last) {
  std::vector<ChunkInfo> chunks;
  simdjson::dom::parser parser;
  simdjson::dom::parser tail_parser;
  std::string tail_buffer;
  for (std::size_t i = first; i < last; ++i) {
    ndjson::LineReader reader(inputs[i].fd, inputs[i].name);
    std::optional<ChunkInfo> open;
    std::optional<std::optional<TailHigh>> tail;  // read when the first chunk's rows begin
    for (;;) {
      auto more = reader.next();
      if (!more) return fail(more.error());
      if (!*more) break;
      const std::string_view line = reader.line();
      if (ndjson::starts_with_bytes(line, records::kRowLineStart)) {
        if (!open)
          return fail(reader.error_here(
              "op:\"r\" line outside a chunk (no low line before it): give whole cdc-snapshot outputs"));
        // The first row of a chunk: when the input's last line is its high line, with the
        // bytes of its rows, the rows are left to the output pass (which reads them anyway).
        if (reader.line_offset() == open->rows_begin) {
          if (!tail) {
            auto read = read_tail_high(inputs[i], tail_parser, tail_buffer);
            if (!read) return fail(read.error());
            tail = std::move(*read);
          }
          if (*tail && ends_chunk(**tail, *open)) {
            chunks.push_back(std::move(*open));
            open.reset();
            break;
          }
        }
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
      if (record[records::field::op].get_string().get(op) != simdjson::SUCCESS)
        return fail(reader.error_here("no \"op\" string: not a cdc-snapshot output line"));
      if (op == records::op::row) {
        if (!open)
          return fail(reader.error_here(
              "op:\"r\" line outside a chunk (no low line before it): give whole cdc-snapshot outputs"));
        continue;
      }
      if (op == records::op::low) {
        if (open) return fail(unfinished(inputs[i], *open, fmt::format("line {} starts another chunk", reader.line_number())));
        ChunkInfo chunk;
        chunk.input = i;
        chunk.low_line = reader.line_number();
        if (auto read = read_low(record, line, chunk); !read) return fail(reader.error_here(read.error().message));
        chunk.rows_begin = reader.next_offset();
        chunk.rows_first_line = reader.line_number() + 1;
        open = std::move(chunk);
        continue;
      }
      if (op == records::op::table) {
        // Right after the low line, so that the chunk's rows stay one run of "r" lines.
        if (!open || open->described || open->rows_begin != reader.line_offset())
          return fail(reader.error_here("table line that does not follow a low line: give whole cdc-snapshot outputs"));
        auto described = records::parse_table_line(record);
        if (!described) return fail(reader.error_here(described.error().message));
        open->described = std::move(*described);
        open->rows_begin = reader.next_offset();
        open->rows_first_line = reader.line_number() + 1;
        continue;
      }
      if (op == records::op::high) {
        if (!open)
          return fail(reader.error_here("high line without its low line: give whole cdc-snapshot outputs"));
        if (auto read = read_high(record, *open); !read) return fail(reader.error_here(read.error().message));
        open->rows_end = reader.line_offset();
        chunks.push_back(std::move(*open));
        open.reset();
        continue;
      }
      if (op == records::op::discard) {
        // cdc-snapshot lost its connection during this chunk and reads it again: the lines
        // since the low line are void, and a new low line follows.
        if (!open)
          return fail(reader.error_here("discard line without its chunk's low line: give whole cdc-snapshot outputs"));
        const auto named = records::parse_chunk_ref(record);
        const records::ChunkRef& opened = open->opened.chunk;
        if (!named || named->db != opened.db || named->table != opened.table || named->index != opened.index)
          return fail(reader.error_here(fmt::format(
              "discard line that does not name {}, the chunk open since line {}: the input mixes chunks; give each "
              "chunk's lines together, as cdc-snapshot writes them",
              open->describe(), open->low_line)));
        open.reset();
        continue;
      }
      return fail(reader.error_here(fmt::format(
          "unexpected op \"{}\" in a chunk output (expected low, table, r, discard or high lines of cdc-snapshot)",
          op)));
    }
    if (open) return fail(unfinished(inputs[i], *open, "the input ends before it"));
  }
  return chunks;
}

}  // namespace

Result<std::vector<ChunkInfo>> scan_chunk_outputs(std::span<const InputFile> inputs, unsigned threads) {
  if (threads <= 1 || inputs.size() < 2) return scan_inputs(inputs, 0, inputs.size());
  // The second half of the inputs on another thread; an error in the first half is the one
  // reading them in order would have stopped at.
  const std::size_t half = inputs.size() / 2;
  Result<std::vector<ChunkInfo>> second = std::vector<ChunkInfo>{};
  std::thread worker([&] { second = scan_inputs(inputs, half, inputs.size()); });
  auto first = scan_inputs(inputs, 0, half);
  worker.join();
  if (!first) return first;
  if (!second) return second;
  first->insert(first->end(), std::make_move_iterator(second->begin()), std::make_move_iterator(second->end()));
  return first;
}

namespace {

// How two descriptions of one table differ, in words ("" when they agree): the columns in
// order with their types, nullability, charsets and members, and the key.
std::string description_difference(const records::TableLine& a, const records::TableLine& b) {
  const std::size_t common = std::min(a.columns.size(), b.columns.size());
  for (std::size_t i = 0; i < common; ++i) {
    const records::TableColumn& x = a.columns[i];
    const records::TableColumn& y = b.columns[i];
    if (x.name != y.name) return fmt::format("column {} is {} there, {} here", i + 1, x.name, y.name);
    if (x.type != y.type) return fmt::format("column {} is {} there, {} here", x.name, x.type, y.type);
    if (x.nullable != y.nullable || x.charset != y.charset || x.collation != y.collation || x.values != y.values)
      return fmt::format("column {} has another nullability, charset, collation or members", x.name);
  }
  if (a.columns.size() != b.columns.size())
    return fmt::format("{} columns there, {} here", a.columns.size(), b.columns.size());
  if (a.key != b.key) return "another primary key";
  return {};
}

}  // namespace

Result<std::vector<TableInfo>> group_tables(std::span<const ChunkInfo> chunks, std::span<const InputFile> inputs,
                                            bool subset) {
  std::vector<TableInfo> tables;
  std::map<std::pair<std::string, std::string>, std::size_t> by_name;
  std::map<std::tuple<std::string, std::string, std::uint64_t>, std::size_t> seen;
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    const ChunkInfo& chunk = chunks[c];
    const auto where = [&](const ChunkInfo& ch) { return fmt::format("{}:{}", inputs[ch.input].name, ch.low_line); };
    auto [dup, fresh] = seen.emplace(std::tuple{chunk.opened.chunk.db, chunk.opened.chunk.table, chunk.opened.chunk.index}, c);
    if (!fresh)
      return fail(Errc::corrupt_input, fmt::format("{}: {} is also at {}: give each chunk once", where(chunk),
                                                   chunk.describe(), where(chunks[dup->second])));
    auto [it, added] = by_name.emplace(std::pair{chunk.opened.chunk.db, chunk.opened.chunk.table}, tables.size());
    if (added) {
      TableInfo table;
      table.db = chunk.opened.chunk.db;
      table.table = chunk.opened.chunk.table;
      table.quoted_db = ndjson::quoted(chunk.opened.chunk.db);
      table.quoted_table = ndjson::quoted(chunk.opened.chunk.table);
      table.row_prefix = records::row_line_prefix(table.quoted_db, table.quoted_table);
      table.key = chunk.opened.key;
      for (const std::string& name : chunk.opened.key) table.quoted_key.push_back(ndjson::quoted(name));
      table.identity = chunk.opened.identity;
      if (chunk.opened.identity)
        for (const std::string& name : *chunk.opened.identity) table.quoted_identity.push_back(ndjson::quoted(name));
      table.identity_is_key = chunk.opened.identity && *chunk.opened.identity == chunk.opened.key;
      if (table.identity_is_key && table.quoted_key.size() == 1)
        table.row_key_start = fmt::format("{}{{{}:", table.row_prefix, table.quoted_key.front());
      table.min_low = chunk.low;
      tables.push_back(std::move(table));
    }
    TableInfo& table = tables[it->second];
    const ChunkInfo& first = chunks[table.chunks.empty() ? c : table.chunks.front()];
    if (chunk.opened.where != first.opened.where)
      return fail(Errc::corrupt_input,
                  fmt::format("{}: {} was read with {}, but {} at {} with {}: the chunks come from different plans; "
                              "plan and snapshot the table again",
                              where(chunk), chunk.describe(),
                              chunk.opened.where ? fmt::format("--where '{}'", *chunk.opened.where) : "no --where",
                              first.describe(), where(first),
                              first.opened.where ? fmt::format("--where '{}'", *first.opened.where) : "no --where"));
    if (chunk.opened.key != first.opened.key || chunk.opened.key_types != first.opened.key_types || chunk.opened.key_collations != first.opened.key_collations ||
        chunk.opened.identity != first.opened.identity || chunk.opened.chunk.count != first.opened.chunk.count)
      return fail(Errc::corrupt_input,
                  fmt::format("{}: {} has another key, identity or chunk count than {} at {}: the chunks come from "
                              "different plans; plan and snapshot the table again",
                              where(chunk), chunk.describe(), first.describe(), where(first)));
    if (chunk.described && first.described)
      if (const std::string difference = description_difference(*first.described, *chunk.described);
          !difference.empty())
        return fail(Errc::corrupt_input,
                    fmt::format("{}: {} was read with another table definition than {} at {} ({}): the table changed "
                                "during the snapshot; remove the chunk outputs and snapshot the table again",
                                where(chunk), chunk.describe(), first.describe(), where(first), difference));
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
    if (first.opened.where) {
      // The chunks hold the rows the filter was true on at their low watermarks; the changes
      // after them go through the same filter (deltas.cpp), for which it is bound here to the
      // columns the chunk's table line describes.
      if (!first.described)
        return fail(Errc::corrupt_input, fmt::format("{}: {} was read with --where but has no table line to check it "
                                                     "against; snapshot it again with this cdc-snapshot",
                                                     inputs[first.input].name, first.describe()));
      auto expression = filter::parse_expression(*first.opened.where);
      if (!expression)
        return fail(Errc::corrupt_input, fmt::format("{}: {}: \"where\": {}", inputs[first.input].name,
                                                     first.describe(), expression.error().message));
      auto bound = filter::BoundFilter::bind(*expression, first.described->columns);
      if (!bound)
        return fail(Errc::corrupt_input, fmt::format("{}: {}: \"where\": {}", inputs[first.input].name,
                                                     first.describe(), bound.error().message));
      for (const std::size_t column : bound->columns())
        table.quoted_filter_columns.push_back(ndjson::quoted(first.described->columns[column].name));
      table.filter = std::make_shared<filter::BoundFilter>(std::move(*bound));
    }
    if (!subset && table.chunks.size() != first.opened.chunk.count) {
      // The gaps between the indexes given (count comes from the input: never allocate by it).
      std::vector<std::uint64_t> have;
      for (const std::size_t c : table.chunks) have.push_back(chunks[c].opened.chunk.index);
      std::sort(have.begin(), have.end());
      have.push_back(first.opened.chunk.count);
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
                              table.db, table.table, total == 1 ? "" : "s", missing, first.opened.chunk.count));
    }
    // Key order per column.
    std::optional<Error> unsupported;
    for (std::size_t k = 0; k < first.opened.key.size(); ++k) {
      auto order = cdc::order::KeyColumnOrder::make(first.opened.key_types[k], first.opened.key_collations[k]);
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
                        fmt::join(first.opened.key, ","),
                        subset ? "; --subset needs that" : "; the chunks have different low watermarks")));
      // All lows equal: a change applies to every chunk or none; no ordering needed.
      std::sort(table.chunks.begin(), table.chunks.end(),
                [&](std::size_t a, std::size_t b) { return chunks[a].opened.chunk.index < chunks[b].opened.chunk.index; });
      table.ranges.assign(table.chunks.size(), cdc::order::KeyRange{});
      continue;
    }
    table.ordered = true;
    std::vector<std::pair<cdc::order::KeyRange, std::size_t>> ranged;
    std::string scratch;
    for (const std::size_t c : table.chunks) {
      const ChunkInfo& chunk = chunks[c];
      cdc::order::KeyRange range;
      for (int side = 0; side < 2; ++side) {
        const auto& bound = side == 0 ? chunk.opened.start : chunk.opened.end;
        if (!bound) continue;
        std::vector<std::string_view> values(bound->begin(), bound->end());
        scratch.clear();
        if (auto made = cdc::order::append_row_sort_key(table.order, values, scratch); !made)
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
                                              std::string& scratch, std::size_t& near) {
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
  if (auto made = cdc::order::append_row_sort_key(table.order, key_values, scratch); !made) return fail(made.error());
  // The last chunk whose start is <= the key (an open start sorts first): near, when its range
  // holds the key and the next one starts after it.
  const auto& ranges = table.ranges;
  if (near < ranges.size() && ranges[near].contains(scratch) &&
      (near + 1 == ranges.size() || (ranges[near + 1].start && *ranges[near + 1].start > scratch)))
    return std::optional<std::size_t>{table.chunks[near]};
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
  near = lo - 1;
  return std::optional<std::size_t>{table.chunks[lo - 1]};
}

}  // namespace cdc::merge
