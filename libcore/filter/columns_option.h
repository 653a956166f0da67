#pragma once

// --columns 'DB.TABLE:COL,...' (issue 31): capture only these columns of the tables the table
// part selects (the --tables patterns: globs, comma lists; it ends at the first ':'). Every line
// of such a table (table, r, c, u, d) carries only the kept columns: those named, and always
// the key's and identity's, so that rows stay told apart. cdc-plan writes the kept columns
// into the chunk lines, which cdc-snapshot SELECTs; cdc-stream trims each row image.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "filter/expression.h"
#include "util/result.h"
#include "util/table_filter.h"

namespace cdc::filter {

struct ColumnsOption {
  std::string text;                  // as given, for messages
  std::string tables;                // the table part
  TableFilter filter;                // the tables it is for
  std::vector<std::string> columns;  // the column part, split at commas (`quoted` names keep commas)
};

// One --columns; Errc::usage naming the option.
[[nodiscard]] Result<ColumnsOption> parse_columns_option(std::string_view text);

// The --columns for this table, or nullptr; Errc::usage when two select it.
[[nodiscard]] Result<const ColumnsOption*> columns_for(std::span<const ColumnsOption> options, std::string_view db,
                                                       std::string_view table);

// Which of a table's columns (its names, in order) the option keeps: kept[i] for names[i].
// `always` are the key and identity columns (kept whatever the option says). Errc::usage, naming
// the option and the table: a named column the table does not have (names compare as the server
// compares them, without case); a column `where` (the table's --where, or nullptr) reads that
// the option leaves out, since a filtered line could not be checked against it downstream.
[[nodiscard]] Result<std::vector<bool>> kept_columns(const ColumnsOption& option, std::string_view table_name,
                                                     std::span<const std::string> names,
                                                     std::span<const std::string> always,
                                                     const Expression* where);

}  // namespace cdc::filter
