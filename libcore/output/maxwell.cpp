#include "output/maxwell.h"

#include <fmt/format.h>
#include <simdjson.h>

#include "output/maxwell_converter.h"

namespace cdc::output {

namespace maxwell_inside {

Result<void> MaxwellConverter::convert(std::string_view line, ndjson::Writer& out) {
  simdjson::dom::element element;
  if (parser_.parse(line).get(element) != simdjson::SUCCESS)
    return fail(Errc::corrupt_input, "the line is not JSON: the input is not cdc-ndjson(5)");
  simdjson::dom::object record;
  std::string_view op;
  if (element.get_object().get(record) != simdjson::SUCCESS ||
      record[records::field::op].get_string().get(op) != simdjson::SUCCESS)
    return fail(Errc::corrupt_input, "the line has no \"op\": the input is not cdc-ndjson(5)");
  if (op == "table") {
    auto added = catalog_.add(record);
    if (!added) return fail(std::move(added).error());
    verbatim_[*added] = values_verbatim(**added);
    return {};
  }
  if (op == records::op::row) return row(record, line, out);
  end_bootstrap(out);
  if (op == records::op::insert || op == records::op::update || op == records::op::erase)
    return row(record, line, out);
  if (op == records::op::commit) {
    std::uint64_t xid = 0;
    const bool has_xid = record["xid"].get_uint64().get(xid) == simdjson::SUCCESS;
    return write_held(has_xid ? &xid : nullptr, out);
  }
  if (op == records::op::discard) {
    drop_held();
    return {};
  }
  // Nothing is held past the lines that end a stretch of output (high, span_end), nor past
  // a DDL (its own transaction) or an incident; other lines (low, span_start, check, kinds
  // this build does not know) pass without ending a transaction.
  if (op == records::op::ddl || op == records::op::high || op == records::op::span_end ||
      op == records::op::incident)
    if (auto written = write_held(nullptr, out); !written) return written;
  if (op == records::op::ddl && options_.output_ddl) return ddl(record, out);
  return {};
}

Result<void> MaxwellConverter::finish(ndjson::Writer& out) {
  end_bootstrap(out);
  return write_held(nullptr, out);
}

Result<void> MaxwellConverter::convert_row(const RowLine& row, ndjson::Writer& out) {
  return row_change(change_line_of(row), out);
}

Result<void> MaxwellConverter::row(simdjson::dom::object record, std::string_view line, ndjson::Writer& out) {
  auto change = read_change_line(record, line);
  if (!change) return fail(std::move(change).error());
  return row_change(*change, out);
}

Result<void> MaxwellConverter::row_change(const ChangeLine& change, ndjson::Writer& out) {
  auto found = catalog_.find(change.db, change.table);
  if (!found) return fail(std::move(found).error());
  const TableInfo& table = **found;
  const auto convert_value = [this](const ColumnInfo& column, std::string_view raw, std::string& json) {
    return value(column, raw, json);
  };
  // A line from the writer (its images whole and matching the table line) of a table whose
  // values Maxwell writes as they are, NULLs included: "data" is the image's text itself,
  // and an image's values are read only where a member needs them ("old", the keys).
  const auto found_verbatim = verbatim_.find(&table);
  bool copy_image = change.from_writer && options_.output_nulls && found_verbatim != verbatim_.end() &&
                    found_verbatim->second;
  const bool data_values = !copy_image || options_.output_primary_keys || with_key_;
  // BINARY(n) from the binary log as Maxwell has it there (binary_value); snapshot rows as
  // its bootstrap SELECTs them.
  from_binlog_ = change.op != 'r';
  if (change.op == 'u' || (change.op == 'd' && data_values))
    if (auto read = read_image(table, change, true, before_, convert_value); !read) return read;
  if (change.op == 'u' || (change.op != 'd' && data_values))
    if (auto read = read_image(table, change, false, after_, convert_value); !read) return read;
  if (change.op == 'u') {
    // With binlog_row_image=MINIMAL the before image holds the key, the after image the
    // columns set: Maxwell puts a column only the before image has into "data", not "old"
    // (BinlogConnectorEvent.writeOldData), and so do we.
    merge_before_only_ = false;
    for (std::size_t i = 0; i < before_.size() && !merge_before_only_; ++i)
      merge_before_only_ = before_[i].present && !after_[i].present;
    if (merge_before_only_) copy_image = false;
  } else {
    merge_before_only_ = false;
  }
  const std::vector<ValueSlot>& data = change.op == 'd' ? before_ : after_;

  std::string_view type;
  switch (change.op) {
    case 'u': type = "update"; break;
    case 'd': type = "delete"; break;
    case 'r': type = flink_ ? "insert" : "bootstrap-insert"; break;
    default: type = "insert"; break;
  }
  if (change.op == 'r' && !flink_ && bootstrap_table_ != &table) {
    end_bootstrap(out);
    bootstrap_table_ = &table;
    bootstrap_ts_ms_ = change.ts_ms;
    write_marker("bootstrap-start", out);
  }
  if (change.op == 'r') bootstrap_ts_ms_ = change.ts_ms;

  // The message up to "ts", then (split) the members after it: xid, xoffset and commit go
  // in between once the commit line is read.
  // "database", "table", "type" and "ts" are the same for the rows of an event. The
  // statement (--include-query) goes after "table", as output_row_query puts it (RowMap.toJSON),
  // and not at all when the server logged none.
  const std::int64_t ts = change.ts_ms / 1000;
  const bool with_query = !change.query.empty() && change.query != "null";
  if (!with_query && (&table != head_table_ || type != head_type_ || ts != head_ts_)) {
    message_.clear();
    message_.begin_object();
    message_.raw_members(table.db_table_members);
    message_.field("type", type);
    message_.field("ts", ts);
    head_members_.assign(message_.buffered().substr(1));
    head_table_ = &table;
    head_type_ = type;
    head_ts_ = ts;
  }
  message_.clear();
  message_.begin_object();
  if (with_query) {
    message_.raw_members(table.db_table_members);
    message_.raw_key(records::kQueryKey);
    message_.raw_value(change.query);
    message_.field("type", type);
    message_.field("ts", ts);
  } else {
    message_.raw_members(head_members_);
  }
  const std::size_t split = message_.bytes_buffered();
  if (options_.output_binlog_position && change.has_pos) {
    text_.assign(change.file);
    text_.push_back(':');
    text_ += fmt::format_int(change.offset).c_str();
    message_.field("position", text_);
  }
  // Without a position (snapshot rows) Maxwell writes neither position nor gtid.
  if (options_.output_gtid_position && change.has_pos) {
    if (change.gtid.empty()) {
      message_.field_null("gtid");
    } else {
      message_.field("gtid", change.gtid);
    }
  }
  if (options_.output_server_id && change.server_id) message_.field("server_id", *change.server_id);
  if (options_.output_thread_id && change.thread) message_.field("thread_id", *change.thread);
  if (options_.output_primary_keys) {
    message_.key("primary_key");
    message_.begin_array();
    for (const std::size_t at : table.key_columns) {
      const ValueSlot& key_value = data_value(data, at);
      message_.raw_value(key_value.present ? key_value.text : std::string_view("null"));
    }
    message_.end_array();
  }
  if (options_.output_primary_key_columns) {
    message_.key("primary_key_columns");
    message_.begin_array();
    for (const std::size_t at : table.key_columns) message_.string(table.columns[at].name);
    message_.end_array();
  }
  message_.key("data");
  if (copy_image)
    message_.raw_value(change.op == 'd' ? change.before : change.after);
  else
    write_data(table, data, message_);
  if (change.op == 'u') write_old(table);
  message_.end_object();

  start_prefix(table.db, table.table);
  if (with_key_) append_key(table, data, change);
  const std::string_view whole = message_.buffered();
  if (change.op == 'r' || !hold_rows_) {
    const std::string_view parts[] = {prefix_, whole};
    out.raw_value_parts(parts);
    out.end_record();
    return {};
  }
  prefix_ += whole.substr(0, split);
  return held_.add(prefix_, whole.substr(split));
}

Result<void> MaxwellConverter::write_held(const std::uint64_t* xid, ndjson::Writer& out) {
  if (held_.rows() == 0) return {};
  const std::size_t count = held_.rows();
  const bool committed = xid != nullptr;
  const fmt::format_int xid_text(committed ? *xid : 0);
  return held_.drain([&](std::string_view head, std::string_view tail, std::size_t index) {
    std::array<std::string_view, 8> parts;
    std::size_t count_parts = 0;
    parts[count_parts++] = head;
    if (options_.output_commit_info && committed) {
      parts[count_parts++] = ",\"xid\":";
      parts[count_parts++] = std::string_view(xid_text.data(), xid_text.size());
    }
    const bool last = index + 1 == count;
    // Maxwell writes xoffset only with the commit info (RowMap.toJSON).
    const fmt::format_int offset_text(index);
    if (options_.output_commit_info && options_.output_xoffset && !(last && committed)) {
      parts[count_parts++] = ",\"xoffset\":";
      parts[count_parts++] = std::string_view(offset_text.data(), offset_text.size());
    }
    if (options_.output_commit_info && committed && last) parts[count_parts++] = ",\"commit\":true";
    parts[count_parts++] = tail;
    out.raw_value_parts(std::span<const std::string_view>(parts.data(), count_parts));
    out.end_record();
  });
}

void MaxwellConverter::write_data(const TableInfo& table, const std::vector<ValueSlot>& slots, ndjson::Writer& out) const {
  out.begin_object();
  write_columns(table, slots, nullptr, out);
  if (merge_before_only_) write_columns(table, before_, &after_, out);
  out.end_object();
}

void MaxwellConverter::write_columns(const TableInfo& table, const std::vector<ValueSlot>& slots, const std::vector<ValueSlot>* except,
                                     ndjson::Writer& out) const {
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (!slots[i].present || (slots[i].is_null && !options_.output_nulls)) continue;
    if (except != nullptr && (*except)[i].present) continue;
    out.raw_key(table.columns[i].member_key);
    out.raw_value(slots[i].text);
  }
}

void MaxwellConverter::write_old(const TableInfo& table) {
  const auto changed = [this](std::size_t i) {
    return before_[i].present && after_[i].present && before_[i].text != after_[i].text;
  };
  bool any = flink_;
  for (std::size_t i = 0; i < before_.size() && !any; ++i) any = changed(i);
  if (!any) return;
  message_.key("old");
  message_.begin_object();
  for (std::size_t i = 0; i < before_.size(); ++i) {
    if (!changed(i) || (before_[i].is_null && !options_.output_nulls)) continue;
    message_.raw_key(table.columns[i].member_key);
    message_.raw_value(before_[i].text);
  }
  message_.end_object();
}

void MaxwellConverter::append_key(const TableInfo& table, const std::vector<ValueSlot>& data, const ChangeLine& change) {
  begin_key(table.db, table.table);
  if (!table.key_columns.empty()) {
    for (const std::size_t at : table.key_columns) {
      key_.raw_key(table.columns[at].key_member);
      const bool known = data.size() > at && data_value(data, at).present;
      key_.raw_value(known ? data_value(data, at).text : std::string_view("null"));
    }
  } else {
    text_.clear();
    if (change.has_pos) {
      fmt::format_to(std::back_inserter(text_), "{}:{}:{}", change.file, change.offset, change.index);
    } else {
      fmt::format_to(std::back_inserter(text_), "{}.{}:snapshot:{}", table.db, table.table, ++snapshot_rows_);
    }
    uuid_.clear();
    append_uuid_from(text_, uuid_);
    key_.field("_uuid", uuid_);
  }
  end_key();
}

void MaxwellConverter::start_prefix(std::string_view db, std::string_view table) {
  prefix_.clear();
  if (!with_topic_) return;
  append_topic_name(db, table, prefix_);
  prefix_.push_back('\t');
}

void MaxwellConverter::begin_key(std::string_view db, std::string_view table) {
  key_.clear();
  key_.begin_object();
  key_.field("database", db);
  if (!table.empty()) key_.field("table", table);
}

void MaxwellConverter::end_key() {
  key_.end_object();
  prefix_ += key_.buffered();
  prefix_.push_back('\t');
}

void MaxwellConverter::write_prefixed(ndjson::Writer& out) {
  prefix_ += message_.buffered();
  out.raw_value(prefix_);
  out.end_record();
}

void MaxwellConverter::write_marker(std::string_view type, ndjson::Writer& out) {
  const TableInfo& table = *bootstrap_table_;
  message_.clear();
  message_.begin_object();
  message_.field("database", table.db);
  message_.field("table", table.table);
  message_.field("type", type);
  message_.field("ts", bootstrap_ts_ms_ / 1000);
  message_.key("data");
  message_.begin_object();
  message_.end_object();
  message_.end_object();
  start_prefix(table.db, table.table);
  if (with_key_) {
    // As Maxwell's: bootstrap-start carries the key columns (null: no data), bootstrap-complete
    // none, hence a _uuid (here from the table and the marker).
    begin_key(table.db, table.table);
    const bool complete = type == "bootstrap-complete";
    for (const std::size_t at : table.key_columns) {
      if (complete) break;
      key_.raw_key(table.columns[at].key_member);
      key_.null();
    }
    if (complete || table.key_columns.empty()) {
      text_.assign(table.db);
      text_.push_back('.');
      text_ += table.table;
      text_.push_back(':');
      text_ += type;
      uuid_.clear();
      append_uuid_from(text_, uuid_);
      key_.field("_uuid", uuid_);
    }
    end_key();
  }
  write_prefixed(out);
}

void MaxwellConverter::end_bootstrap(ndjson::Writer& out) {
  if (bootstrap_table_ == nullptr) return;
  write_marker("bootstrap-complete", out);
  bootstrap_table_ = nullptr;
}

Result<void> MaxwellConverter::ddl(simdjson::dom::object record, ndjson::Writer& out) {
  std::string_view db;
  std::string_view sql;
  std::int64_t ts_ms = 0;
  if (record[records::field::db].get_string().get(db) != simdjson::SUCCESS ||
      record[records::field::sql].get_string().get(sql) != simdjson::SUCCESS ||
      record[records::field::ts_ms].get_int64().get(ts_ms) != simdjson::SUCCESS)
    return fail(Errc::corrupt_input, "a ddl line without \"db\", \"sql\" or \"ts_ms\": the input is not cdc-ndjson(5)");
  const binlog::DdlTarget target = binlog::ddl_target(sql, db);
  const std::string_view type = maxwell_ddl_type(target.kind);
  if (type.empty()) return {};
  const std::string_view database = target.database;
  const std::string_view table = target.tables.empty() ? std::string_view() : target.tables.front().table;
  message_.clear();
  message_.begin_object();
  message_.field("type", type);
  message_.field("database", database);
  if (!table.empty()) message_.field("table", table);
  message_.field("ts", ts_ms);  // milliseconds in DDL messages, as Maxwell's
  message_.field("sql", sql);
  std::string_view file;
  std::uint64_t offset = 0;
  if (options_.output_binlog_position &&
      record[records::field::pos][records::field::file].get_string().get(file) == simdjson::SUCCESS &&
      record[records::field::pos][records::field::offset].get_uint64().get(offset) == simdjson::SUCCESS)
    message_.field("position", fmt::format("{}:{}", file, offset));
  if (options_.output_gtid_position) {
    std::string_view gtid;
    if (record[records::field::pos][records::field::gtid].get_string().get(gtid) == simdjson::SUCCESS) {
      message_.field("gtid", gtid);
    } else {
      message_.field_null("gtid");
    }
  }
  message_.end_object();
  start_prefix(database, table);
  if (with_key_) {
    begin_key(database, table);
    end_key();
  }
  write_prefixed(out);
  return {};
}

}  // namespace maxwell_inside

using maxwell_inside::BoolOption;
using maxwell_inside::kBoolOptions;
using maxwell_inside::kOptionNames;

std::span<const std::string_view> maxwell_option_names() noexcept { return kOptionNames; }

Result<void> apply_maxwell_option(MaxwellOptions& options, std::string_view name, std::string_view value) {
  for (const BoolOption& option : kBoolOptions) {
    if (option.name != name) continue;
    auto flag = option_flag(name, value);
    if (!flag) return fail(std::move(flag).error());
    options.*option.member = *flag;
    return {};
  }
  // unknown_format_option's wording, for a list that is not an initializer_list.
  return fail(Errc::usage, fmt::format("--format-option {}: not an option of --format maxwell (its options: {})", name,
                                       fmt::join(kOptionNames, ", ")));
}

std::unique_ptr<Converter> make_maxwell_converter(const OutputOptions& options) {
  return std::make_unique<maxwell_inside::MaxwellConverter>(options);
}

}  // namespace cdc::output
