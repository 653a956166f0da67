// Each value as Maxwell writes it (output/maxwell_converter.h): numbers in Java's text, dates,
// binary strings, ENUM members, SET arrays and GEOMETRY as WKT.
#include <fmt/format.h>

#include "output/maxwell_converter.h"

namespace cdc::output::maxwell_inside {

const ValueSlot& MaxwellConverter::data_value(const std::vector<ValueSlot>& data, std::size_t at) const {
  if (merge_before_only_ && &data == &after_ && !after_[at].present) return before_[at];
  return data[at];
}

bool MaxwellConverter::values_verbatim(const TableInfo& table) const {
  for (const ColumnInfo& column : table.columns) {
    switch (column.kind) {
      case ValueKind::integer:
      case ValueKind::bit:
      case ValueKind::year:
      case ValueKind::time:
      case ValueKind::text:
      case ValueKind::json:
      case ValueKind::vector:
      case ValueKind::other:
        break;
      case ValueKind::binary:
        if (column.base_type == "binary") return false;  // binary_value()
        break;
      default:  // DATE and DATETIME too: a zero year, month or day makes the zero date
        return false;
    }
  }
  return true;
}

bool MaxwellConverter::value(const ColumnInfo& column, std::string_view raw, std::string& json) {
  if (raw.empty()) return false;
  if (raw == "null") {
    json = "null";
    return true;
  }
  const bool is_string = raw.front() == '"';
  switch (column.kind) {
    case ValueKind::float32:
      if (is_string) break;
      return append_java_float(raw, json);
    case ValueKind::float64:
      if (is_string) break;
      return append_java_double(raw, json);
    case ValueKind::decimal:
      if (!is_string) break;
      return append_java_big_decimal(raw.substr(1, raw.size() - 2), json);
    case ValueKind::date:
    case ValueKind::datetime:
    case ValueKind::timestamp: {
      if (!is_string) break;
      // Maxwell's binary log reader takes a DATE or DATETIME with a zero year, month or day
      // (MariaDB stores them unless NO_ZERO_IN_DATE) for the invalid date, which it writes as
      // the zero date, or null with output_null_zerodates.
      const bool zero_date = has_zero_date_part(raw.substr(1));
      if (zero_date && options_.output_null_zerodates) {
        json = "null";
        return true;
      }
      json += raw;
      if (zero_date)
        for (char& c : json)
          if (c >= '1' && c <= '9') c = '0';
      // TIMESTAMP: Maxwell writes UTC without a zone.
      if (column.kind == ValueKind::timestamp && json.size() >= 2 && json[json.size() - 2] == 'Z')
        json.erase(json.size() - 2, 1);
      return true;
    }
    case ValueKind::binary:
      if (!is_string || column.base_type != "binary") break;
      return binary_value(raw, json);
    case ValueKind::enumeration:
      return enumeration(column, raw, is_string, json);
    case ValueKind::set:
      return set(column, raw, is_string, json);
    case ValueKind::geometry: {
      if (!is_string) break;
      const auto bytes = decode_base64(raw.substr(1, raw.size() - 2));
      text_.clear();
      if (!bytes || !append_wkt(*bytes, text_)) break;  // not one of the OGC types: base64 as it is
      scratch_.clear();
      scratch_.string(text_);
      json += scratch_.buffered();
      return true;
    }
    default:
      break;
  }
  // Integers, BIT, YEAR, text, base64 of binary strings, TIME, JSON values, VECTOR: as they
  // are (json left empty: the slot takes the raw text).
  return true;
}

bool MaxwellConverter::binary_value(std::string_view raw, std::string& json) {
  // A last byte of zero makes the last base64 digit before the padding an 'A'; without one
  // the value stays as it is, not decoded.
  const std::string_view digits = raw.substr(1, raw.find_first_of("=\"", 1) - 1);
  if (!from_binlog_ || digits.empty() || digits.back() != 'A') return true;
  if (!decode_base64_into(raw.substr(1, raw.size() - 2), bytes_)) return false;
  while (!bytes_.empty() && bytes_.back() == '\0') bytes_.pop_back();
  scratch_.clear();
  scratch_.string_base64(bytes_);
  json += scratch_.buffered();
  return true;
}

bool MaxwellConverter::enumeration(const ColumnInfo& column, std::string_view raw, bool is_string, std::string& json) {
  if (is_string) {
    json += raw == "\"\"" ? std::string_view("null") : raw;
    return true;
  }
  std::uint64_t index = 0;
  std::from_chars(raw.data(), raw.data() + raw.size(), index);
  if (index >= 1 && index <= column.values.size()) {
    scratch_.clear();
    scratch_.string(column.values[index - 1]);
    json += scratch_.buffered();
  } else if (index == 0 && !column.values.empty()) {
    json += "null";
  } else {
    json += raw;  // the members are not known
  }
  return true;
}

bool MaxwellConverter::set(const ColumnInfo& column, std::string_view raw, bool is_string, std::string& json) {
  scratch_.clear();
  if (is_string) {
    if (!unescape_json_string(raw, text_)) return false;
    scratch_.begin_array();
    std::string_view members = text_;
    while (!members.empty()) {
      const std::size_t comma = members.find(',');
      scratch_.string(members.substr(0, comma));
      if (comma == std::string_view::npos) break;
      members.remove_prefix(comma + 1);
    }
    scratch_.end_array();
    json += scratch_.buffered();
    return true;
  }
  if (column.values.empty()) {
    json += raw;  // the members are not known: the bitmask
    return true;
  }
  std::uint64_t mask = 0;
  std::from_chars(raw.data(), raw.data() + raw.size(), mask);
  scratch_.begin_array();
  for (std::size_t i = 0; i < column.values.size() && i < 64; ++i)
    if ((mask & (std::uint64_t{1} << i)) != 0) scratch_.string(column.values[i]);
  scratch_.end_array();
  json += scratch_.buffered();
  return true;
}

}  // namespace cdc::output::maxwell_inside
