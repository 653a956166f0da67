#include "output/change_rows.h"

#include "output/value_text.h"
#include "records/kinds.h"

namespace cdc::output {

namespace {

Unexpected missing(std::string_view member) {
  return fail(Errc::corrupt_input,
              fmt::format("a change line has no valid \"{}\" member: the input is not cdc-ndjson(5)", member));
}

}  // namespace

Result<ChangeLine> read_change_line(simdjson::dom::object record, std::string_view line) {
  namespace field = records::field;
  ChangeLine change;
  std::string_view op;
  if (record[field::op].get_string().get(op) != simdjson::SUCCESS || op.size() != 1) return missing(field::op);
  change.op = op[0];
  if (record[field::db].get_string().get(change.db) != simdjson::SUCCESS) return missing(field::db);
  if (record[field::table].get_string().get(change.table) != simdjson::SUCCESS) return missing(field::table);
  if (record[field::ts_ms].get_int64().get(change.ts_ms) != simdjson::SUCCESS) return missing(field::ts_ms);
  const auto before = ndjson::find_member(line, "\"before\"");
  const auto after = ndjson::find_member(line, "\"after\"");
  if (!before) return missing(field::before);
  if (!after) return missing(field::after);
  change.before = *before;
  change.after = *after;
  simdjson::dom::object pos;
  if (record[field::pos].get_object().get(pos) == simdjson::SUCCESS) {
    change.has_pos = true;
    if (pos[field::file].get_string().get(change.file) != simdjson::SUCCESS) return missing("pos.file");
    if (pos[field::offset].get_uint64().get(change.offset) != simdjson::SUCCESS) return missing("pos.offset");
    if (pos[field::index].get_uint64().get(change.index) != simdjson::SUCCESS) change.index = 0;
    if (pos[field::gtid].get_string().get(change.gtid) != simdjson::SUCCESS) change.gtid = {};  // null
  } else if (change.op != 'r') {
    return missing(field::pos);
  }
  std::uint64_t number = 0;
  if (record[field::server_id].get_uint64().get(number) == simdjson::SUCCESS) change.server_id = number;
  if (record["thread"].get_uint64().get(number) == simdjson::SUCCESS) change.thread = number;
  // The raw text, escaped as it is, for the formats to copy; looked for only when there.
  if (simdjson::dom::element query; record[field::query].get(query) == simdjson::SUCCESS)
    change.query = ndjson::find_member(line, "\"query\"").value_or(std::string_view());
  return change;
}

ChangeLine change_line_of(const RowLine& row) {
  ChangeLine change;
  change.op = row.op.size() == 3 ? row.op[1] : 0;
  change.db = row.values.db;
  change.table = row.values.table;
  change.file = row.values.file;
  change.gtid = row.values.gtid;
  change.offset = row.values.offset;
  change.index = row.values.index;
  change.ts_ms = row.values.ts_ms;
  change.server_id = row.values.server_id;
  change.thread = row.values.thread;
  change.query = row.query;
  change.has_pos = true;
  change.from_writer = true;
  change.before = row.before;
  change.after = row.after;
  change.values_known = row.values_known;
  change.before_values = row.before_values;
  change.after_values = row.after_values;
  return change;
}

void write_message(std::string_view topic, bool with_key, std::string_view key, std::string_view value,
                   std::string& line, ndjson::Writer& out) {
  if (topic.empty() && !with_key) {
    out.raw_value(value);
    out.end_record();
    return;
  }
  line.clear();
  if (!topic.empty()) {
    line += topic;
    line.push_back('\t');
  }
  if (with_key) {
    line += key;
    line.push_back('\t');
  }
  line += value;
  out.raw_value(line);
  out.end_record();
}

}  // namespace cdc::output
