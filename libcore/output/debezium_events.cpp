// Debezium's events (output/debezium_converter.h): the envelope and its source block, snapshot
// rows with their markers, changes and tombstones, transaction metadata and schema changes.
#include <fmt/format.h>

#include "output/debezium_converter.h"

namespace cdc::output::debezium_inside {

void DebeziumConverter::read_pos(std::string_view pos, Source& source) {
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

std::size_t DebeziumConverter::write_source(const Source& source, std::string_view snapshot, ndjson::Writer& out) {
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

void DebeziumConverter::write_scaled_times(std::string_view ts_ms, ndjson::Writer& out) {
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

std::size_t DebeziumConverter::write_envelope(std::string_view before, std::string_view after, const Source& source,
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

std::size_t DebeziumConverter::compose(std::string_view topic, std::string_view key, std::string_view key_schema,
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

void DebeziumConverter::put_line(std::string_view line, ndjson::Writer& out) {
  out.raw_value(line);
  out.end_record();
}

Result<void> DebeziumConverter::snapshot_row(const LineParts& parts, ndjson::Writer& out) {
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

void DebeziumConverter::release_held(ndjson::Writer& out, const Table* next) {
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

Result<void> DebeziumConverter::change(const LineParts& parts, ndjson::Writer& out, bool keys_given) {
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

void DebeziumConverter::emit_change(const Table& table, const Source& source, std::string_view before, std::string_view after,
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

void DebeziumConverter::tombstone(const Table& table, std::string_view key, ndjson::Writer& out) {
  if (!key_ || !options_.tombstones_on_delete) return;  // a null value needs the KEY<TAB> form
  compose(table.topic, key, table.key_schema, std::nullopt, "");
  put_line(line_, out);
}

const std::string& DebeziumConverter::transaction_event(const Table& table, const Source& source, ndjson::Writer& out) {
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

void DebeziumConverter::transaction_status(std::string_view status, std::string_view ts_ms, ndjson::Writer& out) {
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

void DebeziumConverter::end_transaction(const LineParts& parts, ndjson::Writer& out) {
  if (transaction_.open) transaction_status("\"END\"", parts.ts_ms.empty() ? "0" : parts.ts_ms, out);
  transaction_.reset();
}

Result<void> DebeziumConverter::schema_change(const LineParts& parts, ndjson::Writer& out) {
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

}  // namespace cdc::output::debezium_inside
