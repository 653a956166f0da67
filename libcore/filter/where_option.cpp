#include "filter/where_option.h"

#include <fmt/format.h>

#include "filter/evaluate.h"
#include "rowimage/charset.h"

namespace cdc::filter {

Result<WhereOption> parse_where_option(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0)
    return fail(Errc::usage, fmt::format("--where '{}': expected DB.TABLE:EXPR (e.g. 'shop.orders:status = 'open''); "
                                         "the table part is missing",
                                         text));
  WhereOption option;
  option.text = std::string(text);
  option.tables = std::string(text.substr(0, colon));
  auto filter = TableFilter::parse(option.tables);
  if (!filter) return fail(Errc::usage, fmt::format("--where '{}': {}", text, filter.error().message));
  option.filter = std::move(*filter);
  auto expression = parse_expression(text.substr(colon + 1));
  if (!expression) return fail(Errc::usage, fmt::format("--where '{}': {}", text, expression.error().message));
  option.expression = std::move(*expression);
  return option;
}

Result<const WhereOption*> where_for(std::span<const WhereOption> options, std::string_view db,
                                     std::string_view table) {
  const WhereOption* found = nullptr;
  for (const WhereOption& option : options) {
    if (!option.filter.selects(db, table)) continue;
    if (found != nullptr)
      return fail(Errc::usage, fmt::format("{}.{} is selected by two --where options ('{}' and '{}'): give one per "
                                           "table (AND joins conditions)",
                                           db, table, found->text, option.text));
    found = &option;
  }
  return found;
}

std::vector<records::TableColumn> table_columns(std::span<const records::ChunkColumn> columns) {
  std::vector<records::TableColumn> out;
  out.reserve(columns.size());
  for (const records::ChunkColumn& column : columns) {
    records::TableColumn described;
    described.name = column.name;
    described.type = column.type;
    if (column.collation_id != 0 && column.collation_id != rowimage::kBinaryCollationId)
      if (const auto info = rowimage::collation_info(static_cast<std::uint16_t>(column.collation_id))) {
        described.charset = std::string(info->charset_name);
        described.collation = std::string(info->collation_name);
      }
    out.push_back(std::move(described));
  }
  return out;
}

Result<std::string> chunk_where_sql(const records::Chunk& chunk) {
  if (!chunk.where) return std::string();
  auto expression = parse_expression(*chunk.where);
  if (!expression)
    return fail(Errc::corrupt_input, fmt::format("{}: \"where\": {}", chunk.describe(), expression.error().message));
  const auto columns = table_columns(chunk.columns);
  if (auto bound = BoundFilter::bind(*expression, columns); !bound)
    return fail(Errc::corrupt_input, fmt::format("{}: \"where\": {}", chunk.describe(), bound.error().message));
  return to_sql(*expression);
}

}  // namespace cdc::filter
