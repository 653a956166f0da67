#include "output/canal.h"

#include <array>
#include <charconv>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "binlog/ddl_target.h"
#include "ndjson/writer.h"
#include "output/change_rows.h"
#include "output/converter.h"
#include "output/format.h"
#include "output/table_columns.h"
#include "output/value_text.h"
#include "records/kinds.h"
#include "util/base64.h"

namespace cdc::output {

namespace {

constexpr std::array<std::string_view, 1> kCanalOptionNames = {"message"};

// java.sql.Types codes, as Canal's LogEventConvert gives them (FORMATS 4.3).
namespace sql_type {
constexpr int bit = -7;
constexpr int tinyint = -6;
constexpr int bigint = -5;
constexpr int character = 1;
constexpr int decimal = 3;
constexpr int integer = 4;
constexpr int smallint = 5;
constexpr int real = 7;
constexpr int double_type = 8;
constexpr int varchar = 12;
constexpr int date = 91;
constexpr int time = 92;
constexpr int timestamp = 93;
constexpr int blob = 2004;
constexpr int clob = 2005;
constexpr int other = 1111;
}  // namespace sql_type

// The digits of a value Canal writes as a quoted number ("\"255\"").
std::uint64_t quoted_unsigned(std::string_view json) {
  std::uint64_t value = 0;
  if (json.size() > 2) std::from_chars(json.data() + 1, json.data() + json.size() - 1, value);
  return value;
}

// Canal decides an unsigned integer's code per value: one size up when the value does not
// fit the signed type (LogEventConvert), so a column's code can change between messages.
int canal_sql_type(const ColumnInfo& column, const ValueSlot& slot) {
  // A NULL takes the code RowsLogBuffer.mysqlToJavaType gives its binlog type: for SET that is
  // BINARY, which LogEventConvert makes BLOB; for JSON none (OTHER).
  if (slot.is_null && column.kind == ValueKind::set) return sql_type::blob;
  if (slot.is_null && column.kind == ValueKind::json) return sql_type::other;
  switch (column.kind) {
    case ValueKind::integer: {
      const bool bumped = column.is_unsigned && !slot.is_null && column.integer_bits > 0 &&
                          quoted_unsigned(slot.text) >= (std::uint64_t{1} << (column.integer_bits - 1));
      switch (column.integer_bits) {
        case 8: return bumped ? sql_type::smallint : sql_type::tinyint;
        case 16: return bumped ? sql_type::integer : sql_type::smallint;
        case 24: return sql_type::integer;
        case 32: return bumped ? sql_type::bigint : sql_type::integer;
        default: return bumped ? sql_type::decimal : sql_type::bigint;
      }
    }
    case ValueKind::float32: return sql_type::real;
    case ValueKind::float64: return sql_type::double_type;
    case ValueKind::decimal: return sql_type::decimal;
    case ValueKind::bit: return sql_type::bit;
    case ValueKind::year: return sql_type::varchar;
    case ValueKind::date: return sql_type::date;
    case ValueKind::time: return sql_type::time;
    case ValueKind::datetime:
    case ValueKind::timestamp: return sql_type::timestamp;
    case ValueKind::text:
      if (column.base_type == "char") return sql_type::character;
      if (column.base_type == "varchar") return sql_type::varchar;
      return sql_type::clob;
    case ValueKind::binary:
    case ValueKind::geometry: return sql_type::blob;
    case ValueKind::enumeration: return sql_type::integer;
    case ValueKind::set: return sql_type::bit;
    case ValueKind::json:
    case ValueKind::vector:
    case ValueKind::other: return sql_type::varchar;
  }
  return sql_type::varchar;
}

// Canal's DruidDdlParser: the type of the statement's first result (an ALTER TABLE's by its
// first action); database statements and the rest are QUERY.
std::string_view canal_ddl_type(const binlog::DdlTarget& target) {
  using Kind = binlog::DdlTarget::Kind;
  using Action = binlog::DdlTarget::AlterAction;
  switch (target.kind) {
    case Kind::create_table: return "CREATE";
    case Kind::alter_table:
      switch (target.alter_action) {
        case Action::add_index: return "CINDEX";
        case Action::drop_index: return "DINDEX";
        case Action::rename: return "RENAME";
        case Action::other: break;
      }
      return "ALTER";
    case Kind::drop_table: return "ERASE";
    case Kind::rename_table: return "RENAME";
    case Kind::truncate_table: return "TRUNCATE";
    case Kind::create_index: return "CINDEX";
    case Kind::drop_index: return "DINDEX";
    default: return "QUERY";
  }
}

std::string_view canal_row_type(char op) {
  switch (op) {
    case 'u': return "UPDATE";
    case 'd': return "DELETE";
    default: return "INSERT";  // "c", and "r": Canal has no snapshot rows
  }
}

class CanalConverter final : public Converter {
 public:
  explicit CanalConverter(const OutputOptions& options)
      : flink_(options.flink),
        with_key_(options.kafka_key),
        with_topic_(options.topic_field),
        // --flink: Flink's canal-json rebuilds a row's before image from old by looking the
        // column names up in every element of old, so a column changed in one row of a
        // message reads as NULL in the other rows' before images: one row per message.
        per_row_(options.kafka_key || options.flink || options.canal.message == CanalOptions::Message::row) {}

  Result<void> convert(std::string_view line, ndjson::Writer& out) override {
    simdjson::dom::element element;
    if (parser_.parse(line).get(element) != simdjson::SUCCESS)
      return fail(Errc::corrupt_input, "the line is not JSON: the input is not cdc-ndjson(5)");
    simdjson::dom::object record;
    std::string_view op;
    if (element.get_object().get(record) != simdjson::SUCCESS ||
        record[records::field::op].get_string().get(op) != simdjson::SUCCESS)
      return fail(Errc::corrupt_input, "the line has no \"op\": the input is not cdc-ndjson(5)");
    if (op == records::op::insert || op == records::op::update || op == records::op::erase ||
        op == records::op::row)
      return row(record, line, out);
    flush(out);
    if (op == "table") {
      auto added = catalog_.add(record);
      if (!added) return fail(std::move(added).error());
      return {};
    }
    if (op == records::op::ddl) return ddl(record, out);
    if (op == records::op::discard) drop_held();
    // Control lines (low, high, commit, span_*, check...) end a message and are not written.
    return {};
  }

  Result<void> finish(ndjson::Writer& out) override {
    flush(out);
    return {};
  }

  void drop_held() noexcept override { pending_ = false; }

 private:
  bool uses_image_values(char /*op*/) const noexcept override { return true; }

  // A change line from the tool that wrote it: read from its members, not parsed.
  Result<void> convert_row(const RowLine& row, ndjson::Writer& out) override {
    return row_change(change_line_of(row), out);
  }

  Result<void> row(simdjson::dom::object record, std::string_view line, ndjson::Writer& out) {
    auto change = read_change_line(record, line);
    if (!change) return fail(std::move(change).error());
    return row_change(*change, out);
  }

  Result<void> row_change(const ChangeLine& change, ndjson::Writer& out) {
    auto found = catalog_.find(change.db, change.table);
    if (!found) return fail(std::move(found).error());
    const TableInfo& table = **found;
    const bool same_event = pending_ && !per_row_ && change.has_pos && &table == table_ && change.op == op_ &&
                            change.offset == offset_ && change.file == file_;
    if (!same_event) flush(out);
    const auto convert_value = [this](const ColumnInfo& column, std::string_view raw, std::string& json) {
      return value(column, raw, json);
    };
    if (change.op == 'u' || change.op == 'd')
      if (auto read = read_image(table, change, true, before_, convert_value); !read) return read;
    if (change.op != 'd')
      if (auto read = read_image(table, change, false, after_, convert_value); !read) return read;
    if (!pending_) start(table, change);
    const std::vector<ValueSlot>& data = change.op == 'd' ? before_ : after_;
    append_row(table, data, data_);
    for (std::size_t i = 0; i < data.size(); ++i) {
      if (!data[i].present) continue;
      sql_types_[i] = canal_sql_type(table.columns[i], data[i]);
      typed_[i] = true;
    }
    if (change.op == 'u') append_old(table);
    if (with_key_) {
      key_.assign("{");
      for (const std::size_t at : table.key_columns) {
        if (key_.size() > 1) key_.push_back(',');
        key_ += table.columns[at].member_key;
        key_ += data[at].present ? data[at].text : std::string_view("null");
      }
      key_.push_back('}');
      if (table.key_columns.empty()) key_.clear();  // a table without a key: no Kafka key
    }
    ++rows_;
    return {};
  }

  void start(const TableInfo& table, const ChangeLine& change) {
    pending_ = true;
    table_ = &table;
    op_ = change.op;
    file_.assign(change.file);
    offset_ = change.offset;
    gtid_.assign(change.gtid);
    // --include-query: the statement of the event's rows; Canal's own row messages carry ""
    // and send the statement in a QUERY message of its own (cdc-formats(7) says why not here).
    sql_.assign(change.query.empty() || change.query == "null" ? std::string_view("\"\"") : change.query);
    ts_ms_ = change.ts_ms;
    rows_ = 0;
    data_.assign("[");
    old_.assign("[");
    key_.clear();
    updated_.assign(table.columns.size(), false);
    typed_.assign(table.columns.size(), false);
    sql_types_.assign(table.columns.size(), 0);
  }

  static void append_row(const TableInfo& table, const std::vector<ValueSlot>& slots, std::string& out) {
    if (out.size() > 1) out.push_back(',');  // after the '['
    out.push_back('{');
    bool first = true;
    for (std::size_t i = 0; i < slots.size(); ++i) {
      if (!slots[i].present) continue;
      if (!first) out.push_back(',');
      first = false;
      out += table.columns[i].member_key;
      out += slots[i].text;
    }
    out.push_back('}');
  }

  // Canal flags a column "updated" when its before and after text differ (NULL-ness included),
  // and collects the flagged names across the rows of one event: old[i] holds row i's
  // before-values of every column flagged so far (MQMessageUtils.messageConverter).
  void append_old(const TableInfo& table) {
    for (std::size_t i = 0; i < before_.size(); ++i) {
      if (!before_[i].present || !after_[i].present) continue;
      if (before_[i].text != after_[i].text) updated_[i] = true;
    }
    if (old_.size() > 1) old_.push_back(',');
    old_.push_back('{');
    bool first = true;
    for (std::size_t i = 0; i < before_.size(); ++i) {
      if (!before_[i].present || !updated_[i]) continue;
      if (!first) old_.push_back(',');
      first = false;
      old_ += table.columns[i].member_key;
      old_ += before_[i].text;
    }
    old_.push_back('}');
  }

  void flush(ndjson::Writer& out) {
    if (!pending_) return;
    pending_ = false;
    const TableInfo& table = *table_;
    message_.clear();
    message_.begin_object();
    message_.key("data");
    data_.push_back(']');
    message_.raw_value(data_);
    message_.field("database", table.db);
    message_.field("es", ts_ms_);
    message_.field("gtid", gtid_);
    message_.field("id", ++id_);
    message_.field("isDdl", false);
    message_.key("mysqlType");
    message_.begin_object();
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      if (!typed_[i]) continue;
      message_.raw_key(table.columns[i].member_key);
      message_.string(table.columns[i].type);
    }
    message_.end_object();
    message_.key("old");
    if (op_ == 'u') {
      old_.push_back(']');
      message_.raw_value(old_);
    } else {
      message_.null();
    }
    message_.key("pkNames");
    if (table.key && !table.key->empty()) {
      message_.begin_array();
      for (const std::string& name : *table.key) message_.string(name);
      message_.end_array();
    } else {
      message_.null();
    }
    message_.key("sql");
    message_.raw_value(sql_);
    message_.key("sqlType");
    message_.begin_object();
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      if (!typed_[i]) continue;
      message_.raw_key(table.columns[i].member_key);
      message_.integer(sql_types_[i]);
    }
    message_.end_object();
    message_.field("table", table.table);
    message_.field("ts", ts_ms_);
    message_.field("type", canal_row_type(op_));
    message_.end_object();
    topic_.clear();
    if (with_topic_) append_topic_name(table.db, table.table, topic_);
    write_message(topic_, with_key_, key_, message_.buffered(), line_, out);
  }

  Result<void> ddl(simdjson::dom::object record, ndjson::Writer& out) {
    std::string_view db;
    std::string_view sql;
    std::int64_t ts_ms = 0;
    if (record[records::field::db].get_string().get(db) != simdjson::SUCCESS ||
        record[records::field::sql].get_string().get(sql) != simdjson::SUCCESS ||
        record[records::field::ts_ms].get_int64().get(ts_ms) != simdjson::SUCCESS)
      return fail(Errc::corrupt_input, "a ddl line without \"db\", \"sql\" or \"ts_ms\": the input is not cdc-ndjson(5)");
    std::string_view gtid;
    if (record[records::field::pos][records::field::gtid].get_string().get(gtid) != simdjson::SUCCESS) gtid = {};
    const binlog::DdlTarget target = binlog::ddl_target(sql, db);
    const std::string_view table = target.tables.empty() ? std::string_view() : target.tables.front().table;
    message_.clear();
    message_.begin_object();
    message_.field_null("data");
    message_.field("database", db);
    message_.field("es", ts_ms);
    message_.field("gtid", gtid);
    message_.field("id", ++id_);
    message_.field("isDdl", true);
    message_.field_null("mysqlType");
    message_.field_null("old");
    message_.field_null("pkNames");
    message_.field("sql", sql);
    message_.field_null("sqlType");
    message_.field("table", table);
    message_.field("ts", ts_ms);
    message_.field("type", canal_ddl_type(target));
    message_.end_object();
    topic_.clear();
    if (with_topic_) append_topic_name(db, table, topic_);
    write_message(topic_, with_key_, "", message_.buffered(), line_, out);
    return {};
  }

  // json = the text Canal writes for the canonical value raw (cdc-formats(7), CANAL).
  bool value(const ColumnInfo& column, std::string_view raw, std::string& json) {
    if (raw.empty()) return false;
    if (raw == "null") {
      json = "null";
      return true;
    }
    const bool is_string = raw.front() == '"';
    const auto quote_number = [&json](std::string_view digits) {
      json.push_back('"');
      json += digits;
      json.push_back('"');
    };
    const auto string = [this, &json](std::string_view text) {
      scratch_.clear();
      scratch_.string(text);
      json += scratch_.buffered();
    };
    if (is_string && column.kind != ValueKind::enumeration && column.kind != ValueKind::set &&
        column.kind != ValueKind::binary && column.kind != ValueKind::geometry && column.kind != ValueKind::json) {
      // TIMESTAMP: Canal prints the wall clock without a zone; ours is UTC.
      if (column.kind == ValueKind::timestamp && raw.size() >= 2 && raw[raw.size() - 2] == 'Z') {
        json += raw;
        json.erase(json.size() - 2, 1);
      }
      return true;  // else the text as it is
    }
    switch (column.kind) {
      case ValueKind::integer:
      case ValueKind::bit:
      case ValueKind::decimal:
        quote_number(raw);
        return true;
      case ValueKind::year:
        quote_number(raw == "0" ? std::string_view("0000") : raw);
        return true;
      case ValueKind::float32:
      case ValueKind::float64: {
        json.push_back('"');
        const bool ok = column.kind == ValueKind::float32 ? append_java_float(raw, json) : append_java_double(raw, json);
        json.push_back('"');
        return ok;
      }
      case ValueKind::binary:
      case ValueKind::geometry: {
        if (flink_ || !is_string) {
          json += raw;
          return true;
        }
        const auto bytes = decode_base64(raw.substr(1, raw.size() - 2));
        if (!bytes) return false;
        text_.clear();
        append_latin1_as_utf8(*bytes, text_);
        string(text_);
        return true;
      }
      case ValueKind::enumeration:
        return enumeration(column, raw, is_string, json);
      case ValueKind::set:
        return set(column, raw, is_string, json);
      case ValueKind::json:
        text_.clear();
        if (!append_mysql_json_text(raw, text_)) return false;
        string(text_);
        return true;
      default:
        // Numbers and arrays of a type this build does not know, and VECTOR: as text.
        string(raw);
        return true;
    }
  }

  // Canal writes an ENUM as its 1-based index and a SET as its bitmask; --flink as the labels.
  bool enumeration(const ColumnInfo& column, std::string_view raw, bool is_string, std::string& json) {
    if (!is_string) {
      // The binlog did not name the members: the canonical value is the index already.
      std::uint64_t index = 0;
      std::from_chars(raw.data(), raw.data() + raw.size(), index);
      if (flink_ && index >= 1 && index <= column.values.size()) {
        scratch_.clear();
        scratch_.string(column.values[index - 1]);
        json += scratch_.buffered();
      } else if (flink_ && index == 0) {
        json += "\"\"";
      } else {
        json.push_back('"');
        json += raw;
        json.push_back('"');
      }
      return true;
    }
    if (flink_) {
      json += raw;
      return true;
    }
    if (!unescape_json_string(raw, text_)) return false;
    if (const auto index = enum_index(column, text_)) {
      json.push_back('"');
      json += fmt::format_int(*index).c_str();
      json.push_back('"');
    } else {
      json += raw;  // the members are not known: the label as it is
    }
    return true;
  }

  bool set(const ColumnInfo& column, std::string_view raw, bool is_string, std::string& json) {
    if (!is_string) {
      std::uint64_t mask = 0;
      std::from_chars(raw.data(), raw.data() + raw.size(), mask);
      if (!flink_ || column.values.empty()) {
        json.push_back('"');
        json += raw;
        json.push_back('"');
        return true;
      }
      text_.clear();
      for (std::size_t i = 0; i < column.values.size() && i < 64; ++i) {
        if ((mask & (std::uint64_t{1} << i)) == 0) continue;
        if (!text_.empty()) text_.push_back(',');
        text_ += column.values[i];
      }
      scratch_.clear();
      scratch_.string(text_);
      json += scratch_.buffered();
      return true;
    }
    if (flink_) {
      json += raw;
      return true;
    }
    if (!unescape_json_string(raw, text_)) return false;
    if (const auto mask = set_mask(column, text_)) {
      json.push_back('"');
      json += fmt::format_int(*mask).c_str();
      json.push_back('"');
    } else {
      json += raw;
    }
    return true;
  }

  const bool flink_;
  const bool with_key_;
  const bool with_topic_;
  const bool per_row_;
  simdjson::dom::parser parser_;
  TableCatalog catalog_;
  std::int64_t id_ = 0;

  // The message being gathered: the rows of one rows event (or one row).
  bool pending_ = false;
  const TableInfo* table_ = nullptr;
  char op_ = 0;
  std::string file_;
  std::uint64_t offset_ = 0;
  std::string gtid_;
  std::string sql_;  // JSON text: the statement, or ""
  std::int64_t ts_ms_ = 0;
  std::size_t rows_ = 0;
  std::string data_;  // the rows' objects, comma separated
  std::string old_;
  std::string key_;
  std::vector<bool> updated_;
  std::vector<bool> typed_;  // the column is in the data rows: it goes in mysqlType and sqlType
  std::vector<int> sql_types_;

  std::vector<ValueSlot> before_;
  std::vector<ValueSlot> after_;
  ndjson::Writer message_;
  ndjson::Writer scratch_;
  std::string text_;
  std::string topic_;
  std::string line_;
};

}  // namespace

std::span<const std::string_view> canal_option_names() noexcept { return kCanalOptionNames; }

Result<void> apply_canal_option(CanalOptions& options, std::string_view name, std::string_view value) {
  if (name != "message") return unknown_format_option(name, Format::canal, {"message"});
  auto choice = option_choice(name, value, {"event", "row"});
  if (!choice) return fail(std::move(choice).error());
  options.message = *choice == 0 ? CanalOptions::Message::event : CanalOptions::Message::row;
  return {};
}

std::unique_ptr<Converter> make_canal_converter(const OutputOptions& options) {
  return std::make_unique<CanalConverter>(options);
}

}  // namespace cdc::output
