#include "output/debezium.h"

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <simdjson.h>

#include "ndjson/json_scan.h"
#include "ndjson/writer.h"
#include "output/converter.h"
#include "output/debezium_schemas.h"
#include "output/debezium_values.h"
#include "output/format.h"
#include "output/type_text.h"
#include "util/text.h"

namespace cdc::output {

namespace {

// The Debezium release whose events these reproduce (FORMATS: envelope and source of 2.7+).
constexpr std::string_view kVersion = "3.6.1.Final";

struct Table {
  std::string db;
  std::string name;
  std::vector<Column> columns;
  std::vector<std::size_t> key_columns;  // indexes into columns, in key order
  bool has_key = false;
  // Every column's value is the same JSON in Debezium's row struct as in the canonical image
  // (Kind::verbatim): a change line's images and key objects are copied as they are.
  bool verbatim = true;
  std::string topic;
  std::string quoted_db;
  std::string quoted_table;
  // The table line's pos, as JSON: a merged snapshot's source.file and source.pos.
  std::string snapshot_file = "\"\"";
  std::string snapshot_pos = "0";
  std::string value_schema;  // the envelope's Connect schema (schemas.enable)
  std::string key_schema;
};

// The members of one canonical line the converter reads, as raw JSON text; before and after
// of a row line already converted (DebeziumConverter::scan_line).
struct LineParts {
  std::string_view op;
  std::string_view db;
  std::string_view table;
  std::string_view before;
  std::string_view after;
  std::string_view pos;
  std::string_view server_id;
  std::string_view thread;
  std::string_view ts_ms;
  std::string_view sql;
  std::string_view query;  // --include-query's statement, JSON text
  const RowLine* row = nullptr;  // the writer's view of a change line: pos's members known
};

// Topic names: characters outside [A-Za-z0-9._-] become '_' (DefaultTopicNamingStrategy).
std::string topic_name(std::string_view text) {
  std::string topic(text);
  for (char& c : topic) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '.' || c == '_' ||
                         c == '-';
    if (!allowed) c = '_';
  }
  return topic.substr(0, 249);
}

class DebeziumConverter final : public Converter {
 public:
  explicit DebeziumConverter(const OutputOptions& options)
      : options_(options.debezium),
        key_(options.kafka_key),
        topic_(options.topic_field),
        values_(options.debezium, options.flink) {
    source_head_ = fmt::format("\"version\":\"{}\",\"connector\":\"mysql\",\"name\":{}", kVersion,
                               ndjson::quoted(options_.topic_prefix));
    transaction_topic_ = topic_name(options_.topic_prefix + ".transaction");
    schema_topic_ = topic_name(options_.topic_prefix);
  }

  Result<void> convert(std::string_view line, ndjson::Writer& out) override {
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

  // A change line from the tool that wrote it (stream::ChangeWriter): its members need no
  // scan, and a verbatim table's images and keys are copied. The writer's lines are whole and
  // match their table line, which the scanning path checks member by member.
  Result<void> convert_row(const RowLine& row, ndjson::Writer& out) override {
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

  bool uses_before_key() const noexcept override { return true; }

  Result<void> finish(ndjson::Writer& out) override {
    release_held(out, nullptr);
    return {};
  }

  void drop_held() noexcept override {
    held_.clear();
    transaction_.reset();
  }

 private:
  struct Transaction {
    bool open = false;
    std::string id;
    std::string quoted_id;  // id as a JSON string, once per transaction
    std::uint64_t total = 0;
    std::vector<std::pair<std::string, std::uint64_t>> per_table;  // "db.table", count
    void reset() {
      open = false;
      total = 0;
      per_table.clear();
    }
  };

  static bool is_row_op(std::string_view op) noexcept {
    return op == "\"c\"" || op == "\"u\"" || op == "\"d\"" || op == "\"r\"";
  }

  // The members the converter reads. A row line's images are converted as they are met (into
  // before_writer_ and after_writer_, their key columns noted), so that each is scanned once:
  // "op", "db" and "table" come before them (cdc-ndjson(5)).
  Result<void> scan_line(std::string_view line, LineParts& parts) {
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

  // ---- table lines ----

  Result<void> read_table_line(std::string_view line) {
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

  void build_schemas(Table& table) const {
    const std::string name = fmt::format("{}.{}.{}", options_.topic_prefix, table.db, table.name);
    table.value_schema = envelope_schema(name, table.columns);
    table.key_schema = key_schema(name, table.columns, table.key_columns);
  }

  Result<Table*> table_of(const LineParts& parts) {
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

  // One row image as Debezium's row struct; the key columns' converted values are noted in
  // key_spans (offsets into out's buffer) for the key struct.
  // raw starts with the image (the rest of the line may follow); returns the image's length.
  Result<std::size_t> write_image(const Table& table, std::string_view raw, ndjson::Writer& out,
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

  // {"id":7} from the key columns' values in image (a Writer holding one image).
  void write_key(const Table& table, const ndjson::Writer& image,
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

  // ---- the envelope ----

  struct Source {
    std::string_view ts_ms = "0";
    std::string_view server_id = "0";
    std::string_view gtid = "null";
    std::string_view file = "\"\"";
    std::string_view pos = "0";
    std::string_view row = "0";
    std::string_view thread = "null";
    std::string_view table = "null";
    std::string_view db;
    std::string_view query = "null";  // include.query: only with --include-query, never on snapshot rows
  };

  // A change's or DDL's "pos" object: source.file, pos (the event's offset), gtid, row.
  static void read_pos(std::string_view pos, Source& source) {
    if (pos.empty()) return;
    ndjson::MemberScanner scanner(pos);
    std::string_view key;
    std::string_view value;
    while (scanner.next(key, value)) {
      if (key == "\"file\"") source.file = value;
      else if (key == "\"offset\"") source.pos = value;
      else if (key == "\"gtid\"") source.gtid = value;
      else if (key == "\"index\"") source.row = value;
    }
  }

  // source: version, connector, name, ts_ms, snapshot, db, sequence, ts_us, ts_ns, table,
  // server_id, gtid, file, pos, row, thread, query. Returns where the snapshot marker's value
  // begins in out's buffer.
  std::size_t write_source(const Source& source, std::string_view snapshot, ndjson::Writer& out) {
    const auto member = [&out](std::string_view quoted_key, std::string_view value) {
      out.raw_key(quoted_key);
      out.raw_value(value);
    };
    out.begin_object();
    out.raw_members(source_head_);
    member("\"ts_ms\":", source.ts_ms);
    const std::size_t marker_at = out.bytes_buffered() + 12;  // past ',"snapshot":'
    member("\"snapshot\":", snapshot);
    member("\"db\":", source.db);
    member("\"sequence\":", "null");
    write_scaled_times(source.ts_ms, out);
    member("\"table\":", source.table);
    member("\"server_id\":", source.server_id);
    member("\"gtid\":", source.gtid);
    member("\"file\":", source.file);
    member("\"pos\":", source.pos);
    member("\"row\":", source.row);
    member("\"thread\":", source.thread);
    member("\"query\":", source.query);
    out.end_object();
    return marker_at;
  }

  // ts_us and ts_ns from a millisecond count, as Debezium derives them when the source has
  // milliseconds only. Built once per distinct ts_ms: the events of one second share it.
  void write_scaled_times(std::string_view ts_ms, ndjson::Writer& out) {
    if (ts_ms != times_of_) {
      std::int64_t millis = 0;
      (void)parse_number(ts_ms, millis);
      times_of_.assign(ts_ms);
      // Zeros appended to the digits: the same as * 1000 and * 1000000, without overflowing
      // int64 for a ts_ms past the year 2262 (which only a damaged line has).
      const fmt::format_int digits(millis);
      const std::string_view zeros = millis == 0 ? "" : "000000";
      times_.assign("\"ts_us\":").append(digits.c_str()).append(zeros.substr(0, zeros.size() / 2));
      times_.append(",\"ts_ns\":").append(digits.c_str()).append(zeros);
    }
    out.raw_members(times_);
  }

  // The envelope: before, after, source, transaction, op, ts_ms, ts_us, ts_ns. The
  // connector's processing time is the change's own time here, so that the same input gives
  // the same bytes (a rerun cut back to its state writes what the first run wrote).
  std::size_t write_envelope(std::string_view before, std::string_view after, const Source& source,
                             std::string_view snapshot, std::string_view op, const std::string* transaction_block,
                             ndjson::Writer& out) {
    out.begin_object();
    out.raw_key("\"before\":");
    out.raw_value(before);
    out.raw_key("\"after\":");
    out.raw_value(after);
    out.raw_key("\"source\":");
    const std::size_t marker_at = write_source(source, snapshot, out);
    out.raw_key("\"transaction\":");
    if (transaction_block != nullptr) out.raw_value(*transaction_block);
    else out.null();
    out.raw_key("\"op\":");
    out.raw_value(op);
    out.raw_key("\"ts_ms\":");
    out.raw_value(source.ts_ms);
    write_scaled_times(source.ts_ms, out);
    out.end_object();
    return marker_at;
  }

  // One output line: [TOPIC<TAB>][KEY<TAB>]VALUE, or [TOPIC<TAB>]KEY<TAB> for a tombstone
  // (value nullopt). Returns where value begins in line_.
  // key: "" for a table without a key (an empty key: kcat -Z sends it as null).
  std::size_t compose(std::string_view topic, std::string_view key, std::string_view key_schema,
                      std::optional<std::string_view> value, std::string_view value_schema) {
    line_.clear();
    if (topic_) line_.append(topic).push_back('\t');
    if (key_) {
      if (!key.empty()) {
        if (options_.schemas_enable) line_.append("{\"schema\":").append(key_schema).append(",\"payload\":");
        line_.append(key);
        if (options_.schemas_enable) line_.push_back('}');
      }
      line_.push_back('\t');
    }
    if (!value) return line_.size();
    if (options_.schemas_enable) line_.append("{\"schema\":").append(value_schema).append(",\"payload\":");
    const std::size_t at = line_.size();
    line_.append(*value);
    if (options_.schemas_enable) line_.push_back('}');
    return at;
  }

  static void put_line(std::string_view line, ndjson::Writer& out) {
    out.raw_value(line);
    out.end_record();
  }

  // ---- snapshot rows ----

  Result<void> snapshot_row(const LineParts& parts, ndjson::Writer& out) {
    auto table = table_of(parts);
    if (!table) return fail(table.error());
    release_held(out, *table);
    Table& t = **table;
    if (parts.after.empty()) return fail(Errc::corrupt_input, "an r line without after");
    const bool keyed = key_ && t.has_key && !t.key_columns.empty();
    if (keyed) write_key(t, after_writer_, after_key_spans_, key_text_);
    Source source;
    source.ts_ms = parts.ts_ms.empty() ? "0" : parts.ts_ms;
    source.db = parts.db;
    source.table = parts.table;
    source.file = t.snapshot_file;
    source.pos = t.snapshot_pos;
    value_writer_.clear();
    const std::size_t marker = write_envelope("null", parts.after, source, "\"true\"", "\"r\"", nullptr, value_writer_);
    const std::size_t value_at = compose(t.topic, keyed ? std::string_view(key_text_) : std::string_view(),
                                         t.key_schema, value_writer_.buffered(), t.value_schema);
    held_.assign(line_);
    held_marker_at_ = value_at + marker;
    held_table_ = &t;
    held_first_in_table_ = held_table_ != previous_snapshot_table_;
    held_first_ = !snapshot_seen_;
    snapshot_seen_ = true;
    previous_snapshot_table_ = &t;
    return {};
  }

  // The held snapshot row, now that what follows is known: another row of `next` (nullptr:
  // no further row). Markers as RelationalSnapshotChangeEventSource sets them.
  void release_held(ndjson::Writer& out, const Table* next) {
    if (held_.empty()) return;
    const bool last_in_table = next != held_table_;
    std::string_view marker = "\"true\"";
    if (next == nullptr) marker = "\"last\"";
    else if (held_first_) marker = "\"first\"";
    else if (last_in_table) marker = "\"last_in_data_collection\"";
    else if (held_first_in_table_) marker = "\"first_in_data_collection\"";
    line_.assign(std::string_view(held_).substr(0, held_marker_at_));
    line_.append(marker);
    line_.append(std::string_view(held_).substr(held_marker_at_ + 6));  // past "true"
    put_line(line_, out);
    held_.clear();
    if (next == nullptr) previous_snapshot_table_ = nullptr;
  }

  // ---- changes ----

  // keys_given: key_text_ (d, u) and after_key_text_ (c, u) hold the key structs already.
  Result<void> change(const LineParts& parts, ndjson::Writer& out, bool keys_given) {
    auto found = table_of(parts);
    if (!found) return fail(found.error());
    Table& table = **found;
    const std::string_view before = parts.before.empty() ? "null" : parts.before;
    const std::string_view after = parts.after.empty() ? "null" : parts.after;
    if ((parts.op == "\"u\"" || parts.op == "\"d\"") && parts.before.empty())
      return fail(Errc::corrupt_input, fmt::format("a {} line of {}.{} without its before image", parts.op, table.db,
                                                   table.name));
    if (parts.op != "\"d\"" && parts.after.empty())
      return fail(Errc::corrupt_input, fmt::format("a {} line of {}.{} without its after image", parts.op, table.db,
                                                   table.name));
    // The key is worked out without --key too: a primary key change is two events either way.
    const bool has_key = table.has_key && !table.key_columns.empty();
    const bool keyed = key_ && has_key;
    if (has_key && !keys_given) {
      if (parts.op == "\"d\"" || parts.op == "\"u\"") write_key(table, before_writer_, key_spans_, key_text_);
      if (parts.op != "\"d\"") write_key(table, after_writer_, after_key_spans_, after_key_text_);
    }
    Source source;
    source.ts_ms = parts.ts_ms.empty() ? "0" : parts.ts_ms;
    source.db = parts.db;
    source.table = parts.table;
    if (!parts.server_id.empty()) source.server_id = parts.server_id;
    if (!parts.thread.empty()) source.thread = parts.thread;
    if (!parts.query.empty()) source.query = parts.query;
    if (parts.row != nullptr) {
      source.file = parts.row->file;
      source.pos = parts.row->offset;
      source.gtid = parts.row->gtid;
      source.row = parts.row->index;
    } else {
      read_pos(parts.pos, source);
    }
    // The key of a table without one (or without --key) is "".
    const std::string_view old_key = keyed ? std::string_view(key_text_) : std::string_view();
    const std::string_view new_key = keyed ? std::string_view(after_key_text_) : std::string_view();
    const bool key_changed = parts.op == "\"u\"" && has_key && key_text_ != after_key_text_;
    if (parts.op == "\"c\"") {
      emit_change(table, source, "null", after, "\"c\"", new_key, out);
    } else if (parts.op == "\"d\"") {
      emit_change(table, source, before, "null", "\"d\"", old_key, out);
      if (keyed) tombstone(table, key_text_, out);
    } else if (key_changed) {
      // A new primary key: the row leaves its old key and arrives under the new one (FORMATS 2.4).
      emit_change(table, source, before, "null", "\"d\"", old_key, out);
      if (keyed) tombstone(table, key_text_, out);
      emit_change(table, source, "null", after, "\"c\"", new_key, out);
    } else {
      emit_change(table, source, before, after, "\"u\"", new_key, out);
    }
    return {};
  }

  void emit_change(const Table& table, const Source& source, std::string_view before, std::string_view after,
                   std::string_view op, std::string_view key, ndjson::Writer& out) {
    const std::string* block = nullptr;
    if (options_.provide_transaction_metadata) block = &transaction_event(table, source, out);
    if (!topic_ && !key_ && !options_.schemas_enable) {
      // The line is the envelope alone: written in place.
      write_envelope(before, after, source, "\"false\"", op, block, out);
      out.end_record();
      return;
    }
    value_writer_.clear();
    write_envelope(before, after, source, "\"false\"", op, block, value_writer_);
    compose(table.topic, key, table.key_schema, value_writer_.buffered(), table.value_schema);
    put_line(line_, out);
  }

  void tombstone(const Table& table, std::string_view key, ndjson::Writer& out) {
    if (!key_ || !options_.tombstones_on_delete) return;  // a null value needs the KEY<TAB> form
    compose(table.topic, key, table.key_schema, std::nullopt, "");
    put_line(line_, out);
  }

  // ---- transaction metadata ----

  // The data event's transaction block, after the BEGIN event when it is the transaction's
  // first. The id is the GTID, or file=F,pos=N of the first change without GTIDs.
  const std::string& transaction_event(const Table& table, const Source& source, ndjson::Writer& out) {
    if (!transaction_.open) {
      transaction_.open = true;
      if (source.gtid != "null") transaction_.id.assign(plain_string(source.gtid).value_or(source.gtid));
      else
        transaction_.id = fmt::format("file={},pos={}", plain_string(source.file).value_or(source.file), source.pos);
      transaction_.quoted_id = ndjson::quoted(transaction_.id);
      transaction_status(std::string_view("\"BEGIN\""), source.ts_ms, out);
    }
    ++transaction_.total;
    text_.assign(table.db).append(".").append(table.name);
    std::uint64_t in_table = 0;
    for (auto& [name, count] : transaction_.per_table)
      if (name == text_) in_table = ++count;
    if (in_table == 0) {
      transaction_.per_table.emplace_back(text_, 1);
      in_table = 1;
    }
    block_.clear();
    block_.append("{\"id\":").append(transaction_.quoted_id);
    block_.append(",\"total_order\":").append(fmt::format_int(transaction_.total).c_str());
    block_.append(",\"data_collection_order\":").append(fmt::format_int(in_table).c_str()).append("}");
    return block_;
  }

  void transaction_status(std::string_view status, std::string_view ts_ms, ndjson::Writer& out) {
    const std::string& id = transaction_.quoted_id;
    value_writer_.clear();
    value_writer_.begin_object();
    value_writer_.raw_key("\"status\":");
    value_writer_.raw_value(status);
    value_writer_.raw_key("\"id\":");
    value_writer_.raw_value(id);
    if (status == "\"END\"") {
      value_writer_.field("event_count", transaction_.total);
      value_writer_.key("data_collections");
      value_writer_.begin_array();
      for (const auto& [name, count] : transaction_.per_table) {
        value_writer_.begin_object();
        value_writer_.field("data_collection", name);
        value_writer_.field("event_count", count);
        value_writer_.end_object();
      }
      value_writer_.end_array();
    } else {
      value_writer_.field_null("event_count");
      value_writer_.field_null("data_collections");
    }
    value_writer_.raw_key("\"ts_ms\":");
    value_writer_.raw_value(ts_ms);
    value_writer_.end_object();
    key_text_scratch_ = "{\"id\":" + id + "}";
    compose(transaction_topic_, key_text_scratch_, kTransactionKeySchema, value_writer_.buffered(),
            kTransactionValueSchema);
    put_line(line_, out);
  }

  void end_transaction(const LineParts& parts, ndjson::Writer& out) {
    if (transaction_.open) transaction_status("\"END\"", parts.ts_ms.empty() ? "0" : parts.ts_ms, out);
    transaction_.reset();
  }

  // ---- schema changes ----

  // A DDL as Debezium's schema change event on topic <prefix>, keyed by the database.
  // tableChanges is empty: the new description arrives as the table line before the next
  // change, after the DDL (cdc-formats(7) says so).
  Result<void> schema_change(const LineParts& parts, ndjson::Writer& out) {
    if (!options_.include_schema_changes) return {};
    Source source;
    source.ts_ms = parts.ts_ms.empty() ? "0" : parts.ts_ms;
    source.db = parts.db.empty() ? "\"\"" : parts.db;
    if (!parts.server_id.empty()) source.server_id = parts.server_id;
    read_pos(parts.pos, source);
    value_writer_.clear();
    value_writer_.begin_object();
    value_writer_.raw_key("\"source\":");
    write_source(source, "\"false\"", value_writer_);
    value_writer_.raw_key("\"ts_ms\":");
    value_writer_.raw_value(source.ts_ms);
    value_writer_.raw_key("\"databaseName\":");
    value_writer_.raw_value(source.db);
    value_writer_.field_null("schemaName");
    value_writer_.raw_key("\"ddl\":");
    value_writer_.raw_value(parts.sql.empty() ? "null" : parts.sql);
    value_writer_.key("tableChanges");
    value_writer_.begin_array();
    value_writer_.end_array();
    value_writer_.end_object();
    key_text_scratch_ = "{\"databaseName\":" + std::string(source.db) + "}";
    if (schema_change_schema_.empty()) schema_change_schema_ = schema_change_value_schema();
    compose(schema_topic_, key_text_scratch_, kSchemaChangeKeySchema, value_writer_.buffered(), schema_change_schema_);
    put_line(line_, out);
    return {};
  }

  DebeziumOptions options_;
  bool key_;
  bool topic_;
  DebeziumValues values_;
  std::string source_head_;  // "version":..,"connector":"mysql","name":<topic.prefix>
  std::string transaction_topic_;
  std::string schema_topic_;
  std::string schema_change_schema_;
  simdjson::dom::parser parser_;
  std::unordered_map<std::string, Table> tables_;
  Table* last_table_ = nullptr;
  std::string id_;
  // Reused per line.
  ndjson::Writer before_writer_;
  ndjson::Writer after_writer_;
  ndjson::Writer value_writer_;
  ndjson::Writer key_writer_;
  std::vector<std::pair<std::size_t, std::size_t>> key_spans_;
  std::vector<std::pair<std::size_t, std::size_t>> after_key_spans_;
  std::string key_text_;
  std::string after_key_text_;
  std::string key_text_scratch_;
  std::string times_of_;  // the ts_ms that times_ holds "ts_us":..,"ts_ns":.. of
  std::string times_;
  std::string line_;
  std::string text_;
  std::string block_;
  // The snapshot row held back until the next line tells its marker.
  std::string held_;
  std::size_t held_marker_at_ = 0;
  const Table* held_table_ = nullptr;
  const Table* previous_snapshot_table_ = nullptr;
  bool held_first_ = false;
  bool held_first_in_table_ = false;
  bool snapshot_seen_ = false;
  Transaction transaction_;
};

}  // namespace

std::unique_ptr<Converter> make_debezium_converter(const OutputOptions& options) {
  return std::make_unique<DebeziumConverter>(options);
}

}  // namespace cdc::output
