// libFuzzer entry point for --where (libcore/filter): the expression parser, the SQL it writes
// back, the binding to a table and the evaluation of rows.
//
// The input up to its first NUL is an expression; whatever follows, split at NULs, are the raw
// JSON values of one row of a fixed table. Whatever parses must write SQL that parses again to
// the same SQL (strings with a backslash or a NUL aside: to_sql writes those as _utf8mb4 X'..',
// which the subset does not read); binding and evaluating either succeed or fail cleanly, with
// Errc::usage and Errc::corrupt_input only. The same text is also read as a --columns option
// ('DB.TABLE:COL,...', filter/columns_option.h) and applied to the table's column names: it
// parses or fails with Errc::usage, and what it keeps always includes the key.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "filter/columns_option.h"
#include "filter/evaluate.h"
#include "filter/expression.h"

namespace {

void require(bool condition) {
  if (!condition) __builtin_trap();
}

std::vector<cdc::records::TableColumn> columns() {
  std::vector<cdc::records::TableColumn> out(8);
  out[0] = {"id", "int(11)", false, {}, {}, {}};
  out[1] = {"n", "bigint(20) unsigned", true, {}, {}, {}};
  out[2] = {"price", "decimal(8,2)", true, {}, {}, {}};
  out[3] = {"name", "varchar(20)", true, "utf8mb4", "utf8mb4_unicode_ci", {}};
  out[4] = {"raw", "varbinary(8)", true, {}, {}, {}};
  out[5] = {"at", "timestamp(3)", true, {}, {}, {}};
  out[6] = {"ratio", "float", true, {}, {}, {}};
  out[7] = {"t", "time", true, {}, {}, {}};
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find('\0');
  const std::string_view text = input.substr(0, split);
  static const auto table = columns();
  if (auto chosen = cdc::filter::parse_columns_option(text); !chosen) {
    require(chosen.error().code == cdc::Errc::usage);
  } else {
    std::vector<std::string> names;
    for (const auto& column : table) names.push_back(column.name);
    const std::vector<std::string> key{"id"};
    auto kept = cdc::filter::kept_columns(*chosen, "s.t", names, key, nullptr);
    if (!kept) require(kept.error().code == cdc::Errc::usage);
    else require(kept->size() == names.size() && (*kept)[0]);
  }
  auto parsed = cdc::filter::parse_expression(text);
  if (!parsed) {
    require(parsed.error().code == cdc::Errc::usage);
    return 0;
  }
  const std::string sql = cdc::filter::to_sql(*parsed);
  if (sql.find("_utf8mb4 X'") == std::string::npos) {
    auto again = cdc::filter::parse_expression(sql);
    require(again.has_value() && cdc::filter::to_sql(*again) == sql);
  }
  auto bound = cdc::filter::BoundFilter::bind(*parsed, table);
  if (!bound) {
    require(bound.error().code == cdc::Errc::usage);
    return 0;
  }
  std::vector<std::string_view> row;
  std::string_view rest = split == std::string_view::npos ? std::string_view() : input.substr(split + 1);
  std::vector<std::string_view> values;
  while (!rest.empty()) {
    const std::size_t end = rest.find('\0');
    values.push_back(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  }
  for (std::size_t i = 0; i < bound->columns().size(); ++i) row.push_back(i < values.size() ? values[i] : "null");
  auto truth = bound->evaluate(row);
  if (!truth) require(truth.error().code == cdc::Errc::corrupt_input);
  return 0;
}
