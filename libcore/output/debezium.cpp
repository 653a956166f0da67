#include "output/debezium.h"

#include <fmt/format.h>
#include <simdjson.h>

#include "output/debezium_converter.h"

namespace cdc::output {

namespace debezium_inside {

Result<void> DebeziumConverter::convert(std::string_view line, ndjson::Writer& out) {
  LineParts parts;
  if (auto scanned = scan_line(line, parts); !scanned) return scanned;
  const std::string_view op = parts.op;
  if (op == "\"table\"") return read_table_line(line);
  if (op == "\"r\"") return snapshot_row(parts, out);
  release_held(out, /*followed_by_row_of=*/nullptr);
  if (op == "\"c\"" || op == "\"u\"" || op == "\"d\"") return change(parts, out, /*keys_given=*/false);
  if (op == "\"commit\"") {
    end_transaction(parts, out);
    return {};
  }
  if (op == "\"ddl\"") return schema_change(parts, out);
  if (op == "\"discard\"") transaction_.reset();
  return {};  // low, high, span_*, check, incident: control lines, not Debezium events
}

Result<void> DebeziumConverter::convert_row(const RowLine& row, ndjson::Writer& out) {
  LineParts parts;
  parts.op = row.op;
  parts.db = row.db;
  parts.table = row.table;
  parts.pos = row.pos;
  parts.server_id = row.server_id;
  parts.thread = row.thread;
  parts.ts_ms = row.ts_ms;
  parts.query = row.query;
  parts.row = &row;
  auto found = table_of(parts);
  if (!found) return fail(found.error());
  Table& table = **found;
  release_held(out, /*followed_by_row_of=*/nullptr);
  if (!table.verbatim) {
    key_spans_.clear();
    after_key_spans_.clear();
    for (const bool before : {true, false}) {
      ndjson::Writer& image = before ? before_writer_ : after_writer_;
      image.clear();
      auto written = write_image(table, before ? row.before : row.after, image, before ? key_spans_ : after_key_spans_);
      if (!written) return fail(written.error());
      (before ? parts.before : parts.after) = image.buffered();
    }
    return change(parts, out, /*keys_given=*/false);
  }
  parts.before = row.before;
  parts.after = row.after;
  // The canonical key objects are Debezium's key structs: the key columns in key order.
  if (row.op == "\"d\"") {
    key_text_.assign(row.key);
  } else {
    after_key_text_.assign(row.key);
    if (row.op == "\"u\"") key_text_.assign(row.before_key.empty() ? row.key : row.before_key);
  }
  return change(parts, out, /*keys_given=*/true);
}

Result<void> DebeziumConverter::finish(ndjson::Writer& out) {
  release_held(out, nullptr);
  return {};
}

void DebeziumConverter::drop_held() noexcept {
  held_.clear();
  transaction_.reset();
}

bool DebeziumConverter::is_row_op(std::string_view op) noexcept {
  return op == "\"c\"" || op == "\"u\"" || op == "\"d\"" || op == "\"r\"";
}

Result<void> DebeziumConverter::scan_line(std::string_view line, LineParts& parts) {
  // The key spans point into this line's images only: a line without an image must not find
  // the previous line's (of another table, with other key columns).
  key_spans_.clear();
  after_key_spans_.clear();
  ndjson::MemberScanner scanner(ndjson::trim_json_space(line));
  std::string_view key;
  std::string_view value;
  while (scanner.next_key(key)) {
    const bool before = key == "\"before\"";
    if ((before || key == "\"after\"") && is_row_op(parts.op)) {
      auto table = table_of(parts);
      if (!table) return fail(table.error());
      ndjson::Writer& image = before ? before_writer_ : after_writer_;
      image.clear();
      auto consumed = write_image(**table, scanner.value_text(), image, before ? key_spans_ : after_key_spans_);
      if (!consumed) return fail(consumed.error());
      scanner.value_done(*consumed);
      (before ? parts.before : parts.after) = image.buffered();
      continue;
    }
    if (!scanner.take_value(value)) break;
    if (key == "\"op\"") parts.op = value;
    else if (key == "\"db\"") parts.db = value;
    else if (key == "\"table\"") parts.table = value;
    else if (key == "\"pos\"") parts.pos = value;
    else if (key == "\"server_id\"") parts.server_id = value;
    else if (key == "\"thread\"") parts.thread = value;
    else if (key == "\"ts_ms\"") parts.ts_ms = value;
    else if (key == "\"sql\"") parts.sql = value;
    else if (key == "\"query\"") parts.query = value;
  }
  if (scanner.failed() || parts.op.empty()) return fail(Errc::corrupt_input, "not a JSON object of cdc-ndjson(5)");
  return {};
}

Result<void> DebeziumConverter::read_table_line(std::string_view line) {
  auto parsed = parser_.parse(line.data(), line.size());
  simdjson::dom::object record;
  if (parsed.get(record) != simdjson::SUCCESS) return fail(Errc::corrupt_input, "a table line that is not JSON");
  std::string_view db;
  std::string_view name;
  simdjson::dom::array columns;
  if (record["db"].get(db) != simdjson::SUCCESS || record["table"].get(name) != simdjson::SUCCESS ||
      record["columns"].get(columns) != simdjson::SUCCESS)
    return fail(Errc::corrupt_input, "a table line without db, table or columns");
  Table table;
  table.db = db;
  table.name = name;
  table.quoted_db = ndjson::quoted(db);
  table.quoted_table = ndjson::quoted(name);
  table.topic = topic_name(fmt::format("{}.{}.{}", options_.topic_prefix, db, name));
  for (simdjson::dom::element element : columns) {
    Column column;
    std::string_view column_name;
    std::string_view type;
    if (element["name"].get(column_name) != simdjson::SUCCESS || element["type"].get(type) != simdjson::SUCCESS)
      return fail(Errc::corrupt_input, fmt::format("table line of {}.{}: a column without name or type", db, name));
    column.name = column_name;
    column.quoted_key = ndjson::quoted(column_name) + ":";
    bool nullable = true;
    if (element["nullable"].get(nullable) == simdjson::SUCCESS) column.nullable = nullable;
    simdjson::dom::array values;
    if (element["values"].get(values) == simdjson::SUCCESS)
      for (simdjson::dom::element value : values) {
        std::string_view label;
        if (value.get(label) == simdjson::SUCCESS) column.labels.emplace_back(label);
      }
    values_.describe_column(parse_type_text(type), column);
    table.verbatim = table.verbatim && column.kind == Kind::verbatim;
    table.columns.push_back(std::move(column));
  }
  simdjson::dom::array key;
  if (record["key"].get(key) == simdjson::SUCCESS) {
    table.has_key = true;
    for (simdjson::dom::element element : key) {
      std::string_view key_name;
      if (element.get(key_name) != simdjson::SUCCESS) continue;
      for (std::size_t i = 0; i < table.columns.size(); ++i)
        if (table.columns[i].name == key_name) table.key_columns.push_back(i);
    }
  }
  simdjson::dom::object pos;
  if (record["pos"].get(pos) == simdjson::SUCCESS) {
    std::string_view file;
    if (pos["file"].get(file) == simdjson::SUCCESS) table.snapshot_file = ndjson::quoted(file);
    std::uint64_t offset = 0;
    if (pos["offset"].get(offset) == simdjson::SUCCESS) table.snapshot_pos = fmt::format_int(offset).str();
  }
  if (options_.schemas_enable) build_schemas(table);
  std::string id = table.quoted_db + table.quoted_table;
  // A held snapshot row keeps pointing at its table: a repeated description replaces the
  // entry's contents only after the row is out (release_held runs first for other tables).
  tables_.insert_or_assign(std::move(id), std::move(table));
  last_table_ = nullptr;
  return {};
}

void DebeziumConverter::build_schemas(Table& table) const {
  const std::string name = fmt::format("{}.{}.{}", options_.topic_prefix, table.db, table.name);
  table.value_schema = envelope_schema(name, table.columns);
  table.key_schema = key_schema(name, table.columns, table.key_columns);
}

Result<Table*> DebeziumConverter::table_of(const LineParts& parts) {
  if (last_table_ != nullptr && last_table_->quoted_db == parts.db && last_table_->quoted_table == parts.table)
    return last_table_;
  id_.assign(parts.db).append(parts.table);
  const auto found = tables_.find(id_);
  if (found == tables_.end())
    return fail(Errc::corrupt_input, fmt::format("no table line for {}.{} before its first change: the input is not "
                                                 "a whole cdc output",
                                                 plain_string(parts.db).value_or(parts.db),
                                                 plain_string(parts.table).value_or(parts.table)));
  last_table_ = &found->second;
  return last_table_;
}

Result<std::size_t> DebeziumConverter::write_image(const Table& table, std::string_view raw, ndjson::Writer& out,
                                                   std::vector<std::pair<std::size_t, std::size_t>>& key_spans) {
  key_spans.assign(table.key_columns.size(), {0, 0});
  if (raw.starts_with("null")) {
    out.null();
    return std::size_t{4};
  }
  ndjson::MemberScanner scanner(raw);
  std::string_view quoted_name;
  std::string_view value;
  std::size_t next = 0;
  out.begin_object();
  while (scanner.next(quoted_name, value)) {
    std::size_t index = next;
    const auto matches = [&](std::size_t i) {
      const std::string& key = table.columns[i].quoted_key;
      return key.size() == quoted_name.size() + 1 && std::string_view(key).starts_with(quoted_name);
    };
    if (index >= table.columns.size() || !matches(index)) {
      index = 0;
      while (index < table.columns.size() && !matches(index)) ++index;
      if (index == table.columns.size())
        return fail(Errc::corrupt_input, fmt::format("column {} of {}.{} is not in its table line", quoted_name,
                                                     table.db, table.name));
    }
    next = index + 1;
    const Column& column = table.columns[index];
    out.raw_key(column.quoted_key);
    const std::size_t start = out.bytes_buffered();
    if (auto written = values_.write_value(column, value, out); !written)
      return fail(written.error().with_context(fmt::format("{}.{}", table.db, table.name)));
    for (std::size_t k = 0; k < table.key_columns.size(); ++k)
      if (table.key_columns[k] == index) key_spans[k] = {start, out.bytes_buffered() - start};
  }
  if (scanner.failed() || !raw.starts_with("{"))
    return fail(Errc::corrupt_input, "a row image that is not a JSON object");
  out.end_object();
  return scanner.consumed();
}

void DebeziumConverter::write_key(const Table& table, const ndjson::Writer& image,
                                  const std::vector<std::pair<std::size_t, std::size_t>>& spans, std::string& key) {
  key_writer_.clear();
  key_writer_.begin_object();
  for (std::size_t k = 0; k < table.key_columns.size(); ++k) {
    key_writer_.raw_key(table.columns[table.key_columns[k]].quoted_key);
    if (k >= spans.size() || spans[k].second == 0) key_writer_.null();
    else key_writer_.raw_value(image.buffered().substr(spans[k].first, spans[k].second));
  }
  key_writer_.end_object();
  key.assign(key_writer_.buffered());
}

}  // namespace debezium_inside

std::unique_ptr<Converter> make_debezium_converter(const OutputOptions& options) {
  return std::make_unique<debezium_inside::DebeziumConverter>(options);
}

}  // namespace cdc::output
