#pragma once

// What cdc-merge reads of a change line of cdc-stream (man/cdc-stream.1, STDOUT): its row
// images and, inside them, the raw values of the table's chunk key and identity columns, its
// ts_ms and its partial flag, in one scan of the raw text, without parsing it (values are
// copied as bytes, so the text is what is needed).
//
// A line read without parsing (the exact form cdc-stream writes) is scanned checked: the scan
// also proves it well formed, as a parse with simdjson would (ndjson/json_check.h), which
// costs less than a second pass over it. A checked scan that cannot prove it (a malformed line,
// or a form the checks leave to the parser) says so, and the caller parses the line, which
// reports what is wrong, then scans it unchecked.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "merge/chunk_input.h"

namespace cdc::merge {

// The raw values of a table's key and identity columns in one row image (empty: absent).
struct ImageValues {
  std::vector<std::string_view> key;
  std::vector<std::string_view> identity;
  std::vector<std::string_view> filtered;  // the --where filter's columns (TableInfo::quoted_filter_columns)
};

struct ChangeText {
  std::string_view before;  // the images' text; empty when absent or not objects
  std::string_view after;
  ImageValues before_values;
  ImageValues after_values;
  std::string_view ts_ms;
  std::optional<std::string_view> partial;
};

enum class ChangeScan : std::uint8_t {
  read,              // out holds what the line says (and, checked, the line is well formed)
  unproven,          // checked only: the line is not shown well formed
  malformed_line,    // the line is not a JSON object
  malformed_image,   // an image is not a JSON object
};

// Scans the change line text of table into out, up to stop (the ',' before the members
// scan_line_pos read; text.size() to read them all). Checked, any fault is unproven, and the scan
// reads the whole line unless end_checked (scan_line_pos found the members from stop on strict:
// records::LineEnd::strict_json), when it must end exactly at stop.
[[nodiscard]] ChangeScan scan_change(std::string_view text, const TableInfo& table, std::size_t stop, bool checked,
                                     bool end_checked, ChangeText& out);

}  // namespace cdc::merge
