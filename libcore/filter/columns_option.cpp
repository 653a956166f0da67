#include "filter/columns_option.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/text.h"

namespace cdc::filter {

namespace {

// COL[,COL...]: plain names, or `quoted` ones (`` for a `), which may hold commas.
Result<std::vector<std::string>> parse_column_list(std::string_view text) {
  std::vector<std::string> names;
  std::size_t at = 0;
  while (true) {
    while (at < text.size() && text[at] == ' ') ++at;
    std::string name;
    if (at < text.size() && text[at] == '`') {
      ++at;
      while (true) {
        if (at >= text.size()) return fail(Errc::usage, "a `quoted` column name has no closing `");
        if (text[at] == '`') {
          if (at + 1 < text.size() && text[at + 1] == '`') {
            name += '`';
            at += 2;
            continue;
          }
          ++at;
          break;
        }
        name += text[at++];
      }
    } else {
      while (at < text.size() && text[at] != ',') name += text[at++];
      while (!name.empty() && name.back() == ' ') name.pop_back();
    }
    while (at < text.size() && text[at] == ' ') ++at;
    if (name.empty()) return fail(Errc::usage, fmt::format("an empty column name at character {}", at + 1));
    names.push_back(std::move(name));
    if (at >= text.size()) break;
    if (text[at] != ',') return fail(Errc::usage, fmt::format("expected ',' at character {}", at + 1));
    ++at;
  }
  return names;
}

void collect_columns(const Expression& expression, std::uint32_t index, std::vector<const Node*>& out) {
  const Node& node = expression.node(index);
  if (node.kind == Node::Kind::column) out.push_back(&node);
  for (const std::uint32_t child : node.children) collect_columns(expression, child, out);
}

}  // namespace

Result<ColumnsOption> parse_columns_option(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0)
    return fail(Errc::usage, fmt::format("--columns '{}': expected DB.TABLE:COL[,COL...] (e.g. 'shop.orders:status,total')"
                                         "; the table part is missing",
                                         text));
  ColumnsOption option;
  option.text = std::string(text);
  option.tables = std::string(text.substr(0, colon));
  auto filter = TableFilter::parse(option.tables);
  if (!filter) return fail(Errc::usage, fmt::format("--columns '{}': {}", text, filter.error().message));
  option.filter = std::move(*filter);
  auto columns = parse_column_list(text.substr(colon + 1));
  if (!columns) return fail(Errc::usage, fmt::format("--columns '{}': {}", text, columns.error().message));
  option.columns = std::move(*columns);
  return option;
}

Result<const ColumnsOption*> columns_for(std::span<const ColumnsOption> options, std::string_view db,
                                         std::string_view table) {
  const ColumnsOption* found = nullptr;
  for (const ColumnsOption& option : options) {
    if (!option.filter.selects(db, table)) continue;
    if (found != nullptr)
      return fail(Errc::usage, fmt::format("{}.{} is selected by two --columns options ('{}' and '{}'): give one per "
                                           "table",
                                           db, table, found->text, option.text));
    found = &option;
  }
  return found;
}

Result<std::vector<bool>> kept_columns(const ColumnsOption& option, std::string_view table_name,
                                       std::span<const std::string> names, std::span<const std::string> always,
                                       const Expression* where) {
  const auto position = [&](std::string_view name) -> std::size_t {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (iequals(names[i], name)) return i;
    return names.size();
  };
  std::vector<bool> kept(names.size(), false);
  for (const std::string& name : option.columns) {
    const std::size_t at = position(name);
    if (at == names.size())
      return fail(Errc::usage, fmt::format("--columns '{}': {} has no column {}", option.text, table_name, name));
    kept[at] = true;
  }
  for (const std::string& name : always)
    if (const std::size_t at = position(name); at < names.size()) kept[at] = true;
  if (where != nullptr) {
    std::vector<const Node*> read;
    collect_columns(*where, where->root, read);
    for (const Node* node : read)
      if (const std::size_t at = position(node->text); at < names.size() && !kept[at])
        return fail(Errc::usage, fmt::format("--columns '{}' leaves out {}.{}, which the --where of the table reads "
                                             "(character {}): add it to --columns",
                                             option.text, table_name, names[at], node->at));
  }
  return kept;
}

}  // namespace cdc::filter
