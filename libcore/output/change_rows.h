#pragma once

// What Canal's and Maxwell's converters read of a canonical change line ("c", "u", "d", "r":
// cdc-ndjson(5)): the members they need, and the row images walked as raw text, one value per
// column, converted by the format's own function into a reused slot per column.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "ndjson/json_scan.h"
#include "ndjson/writer.h"
#include "output/converter.h"
#include "output/table_columns.h"
#include "util/result.h"

namespace cdc::output {

struct ChangeLine {
  char op = 0;  // 'c', 'u', 'd' or 'r'
  std::string_view db;
  std::string_view table;
  std::string_view before;  // raw JSON text: an object, or "null"
  std::string_view after;
  bool has_pos = false;  // "r" lines have none
  std::string_view file;
  std::uint64_t offset = 0;
  std::uint64_t index = 0;
  std::string_view gtid;  // "" for null
  std::optional<std::uint64_t> server_id;
  std::optional<std::uint64_t> thread;
  std::int64_t ts_ms = 0;
  // The statement (--include-query) as JSON text: a string, or null; "" when the line has none.
  std::string_view query;
  // From the writer (RowLine): its images are whole and match the table line.
  bool from_writer = false;
  // The images' values as the writer said them (RowLine); else the images are scanned.
  bool values_known = false;
  std::span<const ImageValue> before_values;
  std::span<const ImageValue> after_values;
};

// record is the parsed line, line its text. Errc::corrupt_input naming what is missing.
[[nodiscard]] Result<ChangeLine> read_change_line(simdjson::dom::object record, std::string_view line);
// The same from the writer's view of the line (Converter::convert_row), without parsing it.
[[nodiscard]] ChangeLine change_line_of(const RowLine& row);

// Appends one output message to out: [TOPIC<TAB>][KEY<TAB>]VALUE and its newline (--topic,
// --key: kcat -K '\t' splits at the first TAB, and compact JSON holds no raw TAB). line is a
// reused buffer.
void write_message(std::string_view topic, bool with_key, std::string_view key, std::string_view value,
                   std::string& line, ndjson::Writer& out);

// One column's value in a row image, converted into the format's JSON text.
struct ValueSlot {
  bool present = false;   // the image holds the column
  bool is_null = false;   // the converted value is null
  std::string json;       // the converted value, when it is not the image's value as it is
  std::string_view text;  // the value written: json, or the image's text (valid until the next line)
};

// Fills slots (one per column of table, reused) from a row image's raw text; convert(column,
// raw_value, json_out) -> bool writes one value and says whether it could, leaving json_out
// empty when the value is the raw one as it is (no copy). A member the table does not have, or
// a value convert refuses, is Errc::corrupt_input.
template <typename Convert>
[[nodiscard]] Result<void> read_image(const TableInfo& table, std::string_view object, std::vector<ValueSlot>& slots,
                                      Convert&& convert) {
  slots.resize(table.columns.size());
  for (ValueSlot& slot : slots) slot.present = false;
  ndjson::MemberScanner members(object);
  std::string_view quoted_key;
  std::string_view value;
  std::size_t hint = 0;
  while (members.next(quoted_key, value)) {
    const auto at = table.find(quoted_key, hint);
    if (!at)
      return fail(Errc::corrupt_input,
                  fmt::format("column {} is not in the table line of {}.{}: the table line before the change does "
                              "not describe its table",
                              quoted_key, table.db, table.table));
    hint = *at + 1;
    ValueSlot& slot = slots[*at];
    slot.present = true;
    slot.json.clear();
    const bool converted = convert(table.columns[*at], value, slot.json);
    slot.text = slot.json.empty() ? value : std::string_view(slot.json);
    slot.is_null = slot.text == "null";  // a zero date Maxwell writes as null counts as NULL
    if (!converted)
      return fail(Errc::corrupt_input, fmt::format("column {} of {}.{}: the value {} is not a {} value",
                                                   table.columns[*at].name, table.db, table.table, value,
                                                   table.columns[*at].type));
  }
  if (members.failed()) return fail(Errc::corrupt_input, "a row image is not a JSON object");
  return {};
}

// The same for one image of a change line: from the values the writer said when it did
// (values_known), else by scanning the image's text.
template <typename Convert>
[[nodiscard]] Result<void> read_image(const TableInfo& table, const ChangeLine& change, bool before,
                                      std::vector<ValueSlot>& slots, Convert&& convert) {
  if (!change.values_known) return read_image(table, before ? change.before : change.after, slots, convert);
  slots.resize(table.columns.size());
  for (ValueSlot& slot : slots) slot.present = false;
  for (const ImageValue& value : before ? change.before_values : change.after_values) {
    if (value.column >= table.columns.size())
      return fail(Errc::corrupt_input, fmt::format("column {} is not in the table line of {}.{}: the table line "
                                                   "before the change does not describe its table",
                                                   value.column + 1, table.db, table.table));
    ValueSlot& slot = slots[value.column];
    slot.present = true;
    slot.json.clear();
    const bool converted = convert(table.columns[value.column], value.text, slot.json);
    slot.text = slot.json.empty() ? value.text : std::string_view(slot.json);
    slot.is_null = slot.text == "null";
    if (!converted)
      return fail(Errc::corrupt_input, fmt::format("column {} of {}.{}: the value {} is not a {} value",
                                                   table.columns[value.column].name, table.db, table.table,
                                                   value.text, table.columns[value.column].type));
  }
  return {};
}

}  // namespace cdc::output
