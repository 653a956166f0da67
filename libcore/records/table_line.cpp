#include "records/table_line.h"

#include <fmt/format.h>

#include "ndjson/writer.h"
#include "records/kinds.h"
#include "records/members.h"

namespace cdc::records {

namespace {

void write_column(const TableColumn& column, ndjson::Writer& out) {
  out.begin_object();
  out.field(field::name, column.name);
  out.field(field::type, column.type);
  out.field(field::nullable, column.nullable);
  if (column.charset) out.field(field::charset, *column.charset);
  if (column.collation) out.field(field::collation, *column.collation);
  if (!column.values.empty()) write_strings(field::values, column.values, out);
  out.end_object();
}

// An optional string member: absent is nullopt; present, it must be a string.
Result<std::optional<std::string>> optional_string(simdjson::dom::object object, std::string_view name,
                                                   std::string_view where) {
  simdjson::dom::element element;
  if (object[name].get(element) != simdjson::SUCCESS) return std::optional<std::string>{};
  std::string_view text;
  if (element.get_string().get(text) != simdjson::SUCCESS)
    return corrupt_line(fmt::format("{}: \"{}\" is not a string", where, name));
  return std::optional<std::string>{std::string(text)};
}

Result<TableColumn> parse_column(simdjson::dom::element element, std::size_t index) {
  const std::string where = fmt::format("\"columns\"[{}]", index);
  simdjson::dom::object object;
  if (element.get_object().get(object) != simdjson::SUCCESS)
    return corrupt_line(fmt::format("{} is not an object", where));
  TableColumn column;
  auto name = required_string(object, field::name);
  if (!name) return corrupt_line(fmt::format("{}: {}", where, name.error().message));
  column.name = std::move(*name);
  auto type = required_string(object, field::type);
  if (!type) return corrupt_line(fmt::format("{}: {}", where, type.error().message));
  column.type = std::move(*type);
  if (object[field::nullable].get_bool().get(column.nullable) != simdjson::SUCCESS)
    return corrupt_line(fmt::format("{}: \"{}\" is missing or not true/false", where, field::nullable));
  auto charset = optional_string(object, field::charset, where);
  if (!charset) return fail(charset.error());
  column.charset = std::move(*charset);
  auto collation = optional_string(object, field::collation, where);
  if (!collation) return fail(collation.error());
  column.collation = std::move(*collation);
  if (object[field::values].error() != simdjson::NO_SUCH_FIELD) {
    auto values = required_strings(object, field::values);
    if (!values) return corrupt_line(fmt::format("{}: {}", where, values.error().message));
    column.values = std::move(*values);
  }
  return column;
}

Result<std::optional<TablePos>> parse_pos(simdjson::dom::object record) {
  simdjson::dom::element element;
  if (record[field::pos].get(element) != simdjson::SUCCESS) return corrupt_line("\"pos\" is missing");
  if (element.is_null()) return std::optional<TablePos>{};
  simdjson::dom::object object;
  if (element.get_object().get(object) != simdjson::SUCCESS) return corrupt_line("\"pos\" is not an object or null");
  TablePos pos;
  auto file = required_string(object, field::file);
  if (!file) return corrupt_line(fmt::format("\"pos\": {}", file.error().message));
  pos.file = std::move(*file);
  auto offset = required_uint(object, field::offset);
  if (!offset) return corrupt_line(fmt::format("\"pos\": {}", offset.error().message));
  pos.offset = *offset;
  simdjson::dom::element gtid;
  if (object[field::gtid].get(gtid) == simdjson::SUCCESS && !gtid.is_null()) {
    std::string_view text;
    if (gtid.get_string().get(text) != simdjson::SUCCESS) return corrupt_line("\"pos\": \"gtid\" is not a string or null");
    pos.gtid = std::string(text);
  }
  return std::optional<TablePos>{std::move(pos)};
}

}  // namespace

void write_table_line(const TableLine& line, ndjson::Writer& out) {
  begin_line(op::table, out);
  out.field(field::db, line.db);
  out.field(field::table, line.table);
  out.key(field::columns);
  out.begin_array();
  for (const TableColumn& column : line.columns) write_column(column, out);
  out.end_array();
  if (line.key)
    write_strings(field::key, *line.key, out);
  else
    out.field_null(field::key);
  if (line.pos) {
    out.key(field::pos);
    out.begin_object();
    out.field(field::file, line.pos->file);
    out.field(field::offset, line.pos->offset);
    if (line.pos->gtid.empty())
      out.field_null(field::gtid);
    else
      out.field(field::gtid, line.pos->gtid);
    out.end_object();
  } else {
    out.field_null(field::pos);
  }
  out.field(field::ts_ms, line.ts_ms);
  end_line(out);
}

Result<TableLine> parse_table_line(simdjson::dom::object record) {
  std::string_view kind;
  if (record[field::op].get_string().get(kind) != simdjson::SUCCESS || kind != op::table)
    return corrupt_line("not an op:\"table\" line");
  if (auto version = check_version(record); !version) return fail(version.error());
  TableLine line;
  auto db = required_string(record, field::db);
  if (!db) return fail(db.error());
  line.db = std::move(*db);
  auto table = required_string(record, field::table);
  if (!table) return fail(table.error());
  line.table = std::move(*table);
  simdjson::dom::array columns;
  if (record[field::columns].get_array().get(columns) != simdjson::SUCCESS)
    return corrupt_line("\"columns\" is missing or not an array");
  for (simdjson::dom::element element : columns) {
    auto column = parse_column(element, line.columns.size());
    if (!column) return fail(column.error());
    line.columns.push_back(std::move(*column));
  }
  if (line.columns.empty()) return corrupt_line("\"columns\" is empty: a table has at least one column");
  simdjson::dom::element key;
  if (record[field::key].get(key) != simdjson::SUCCESS) return corrupt_line("\"key\" is missing (null when not known)");
  if (!key.is_null()) {
    auto names = required_strings(record, field::key);
    if (!names) return fail(names.error());
    for (const std::string& name : *names) {
      bool found = false;
      for (const TableColumn& column : line.columns) found = found || column.name == name;
      if (!found) return corrupt_line(fmt::format("\"key\" names \"{}\", which is not in \"columns\"", name));
    }
    line.key = std::move(*names);
  }
  auto pos = parse_pos(record);
  if (!pos) return fail(pos.error());
  line.pos = std::move(*pos);
  if (record[field::ts_ms].get_int64().get(line.ts_ms) != simdjson::SUCCESS)
    return corrupt_line("\"ts_ms\" is missing or not an integer");
  return line;
}

}  // namespace cdc::records
