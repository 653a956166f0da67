#include "merge/change_scan.h"

#include <algorithm>

#include "ndjson/json_check.h"
#include "ndjson/json_scan.h"

namespace cdc::merge {

namespace {

// The image at the start of text, its key and identity values into values: its text, or
// nothing when it is not an object (checked: not shown well formed).
std::optional<std::string_view> scan_image(std::string_view text, const TableInfo& table, bool checked,
                                           ImageValues& values) {
  values.key.assign(table.quoted_key.size(), {});
  values.identity.assign(table.quoted_identity.size(), {});
  values.filtered.assign(table.quoted_filter_columns.size(), {});
  ndjson::MemberScanner scanner(text, checked);
  std::string_view key;
  std::string_view value;
  while (scanner.next(key, value)) {
    for (std::size_t i = 0; i < table.quoted_key.size(); ++i)
      if (ndjson::equal_bytes(key, table.quoted_key[i])) values.key[i] = value;
    for (std::size_t i = 0; i < table.quoted_identity.size(); ++i)
      if (ndjson::equal_bytes(key, table.quoted_identity[i])) values.identity[i] = value;
    for (std::size_t i = 0; i < table.quoted_filter_columns.size(); ++i)
      if (ndjson::equal_bytes(key, table.quoted_filter_columns[i])) values.filtered[i] = value;
  }
  if (scanner.failed()) return std::nullopt;
  return text.substr(0, scanner.consumed());
}

bool is_json_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

ChangeScan scan_change(std::string_view text, const TableInfo& table, std::size_t stop, bool checked,
                       bool end_checked, ChangeText& out) {
  out.before = {};
  out.after = {};
  out.ts_ms = {};
  out.partial.reset();
  if (checked && (!end_checked || stop >= text.size())) {
    stop = text.size();
    end_checked = false;
  }
  ndjson::MemberScanner scanner(text, checked);
  std::string_view key;
  std::size_t members = 0;
  for (; scanner.offset() < stop && scanner.next_key(key); ++members) {
    const bool is_before = key == "\"before\"";
    if ((is_before || key == "\"after\"") && scanner.value_text().substr(0, 1) == "{") {
      const auto image = scan_image(scanner.value_text(), table, checked,
                                    is_before ? out.before_values : out.after_values);
      if (!image) return checked ? ChangeScan::unproven : ChangeScan::malformed_image;
      (is_before ? out.before : out.after) = *image;
      scanner.value_done(image->size());
      continue;
    }
    std::string_view value;
    if (!scanner.take_value(value)) break;
    if (key == "\"ts_ms\"") out.ts_ms = value;
    if (key == "\"partial\"" && !out.partial) out.partial = value;
  }
  if (scanner.failed()) return checked ? ChangeScan::unproven : ChangeScan::malformed_line;
  if (checked && end_checked) {
    // The members read up to the ',' before the checked end, and all of the line UTF-8.
    if (members == 0 || scanner.offset() != stop || text[stop] != ',' || !ndjson::is_valid_utf8(text))
      return ChangeScan::unproven;
  } else if (checked) {
    // The object read to its '}', only whitespace after it, and all of it UTF-8.
    const std::string_view rest = text.substr(std::min(scanner.consumed(), text.size()));
    if (scanner.consumed() > text.size() || !std::all_of(rest.begin(), rest.end(), is_json_space) ||
        !ndjson::is_valid_utf8(text))
      return ChangeScan::unproven;
  }
  return ChangeScan::read;
}

}  // namespace cdc::merge
