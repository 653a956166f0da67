#include "util/table_filter.h"

#include <fmt/format.h>

namespace cdc {

bool glob_match(std::string_view pattern, std::string_view text) noexcept {
  // Iterative matching with one backtrack point for the last `*`: linear in practice and
  // never recursive, whatever the pattern.
  std::size_t p = 0;
  std::size_t t = 0;
  std::size_t star = std::string_view::npos;
  std::size_t star_text = 0;
  while (t < text.size()) {
    if (p < pattern.size()) {
      const char c = pattern[p];
      if (c == '*') {
        star = p++;
        star_text = t;
        continue;
      }
      if (c == '?') {
        ++p;
        ++t;
        continue;
      }
      const bool escaped = c == '\\' && p + 1 < pattern.size();
      const char literal = escaped ? pattern[p + 1] : c;
      if (literal == text[t]) {
        p += escaped ? 2U : 1U;
        ++t;
        continue;
      }
    }
    if (star == std::string_view::npos) return false;
    p = star + 1;
    t = ++star_text;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

Result<std::vector<TableFilter::Pattern>> TableFilter::parse_list(std::string_view text, std::string_view option) {
  std::vector<Pattern> patterns;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = start;
    while (end < text.size() && text[end] != ',') end += text[end] == '\\' && end + 1 < text.size() ? 2U : 1U;
    std::string_view item = text.substr(start, end - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) {
      if (text.empty()) break;
      return fail(Errc::usage, fmt::format("{}: empty pattern in '{}' (a stray comma?)", option, text));
    }
    std::size_t dot = 0;
    while (dot < item.size() && item[dot] != '.') dot += item[dot] == '\\' && dot + 1 < item.size() ? 2U : 1U;
    Pattern pattern;
    pattern.database = std::string(item.substr(0, dot));
    pattern.table = dot < item.size() ? std::string(item.substr(dot + 1)) : std::string("*");
    if (pattern.database.empty() || pattern.table.empty())
      return fail(Errc::usage, fmt::format("{}: '{}' needs the form DB.TABLE (globs * and ? allowed)", option, item));
    patterns.push_back(std::move(pattern));
    start = end + 1;
  }
  return patterns;
}

Result<TableFilter> TableFilter::parse(std::string_view include, std::string_view exclude) {
  TableFilter filter;
  auto includes = parse_list(include, "--tables");
  if (!includes) return fail(std::move(includes).error());
  auto excludes = parse_list(exclude, "--exclude");
  if (!excludes) return fail(std::move(excludes).error());
  filter.includes_ = std::move(*includes);
  filter.excludes_ = std::move(*excludes);
  return filter;
}

bool TableFilter::selects(std::string_view database, std::string_view table) const {
  for (const Pattern& pattern : excludes_)
    if (glob_match(pattern.database, database) && glob_match(pattern.table, table)) return false;
  if (includes_.empty()) return true;
  for (const Pattern& pattern : includes_)
    if (glob_match(pattern.database, database) && glob_match(pattern.table, table)) return true;
  return false;
}

bool TableFilter::selects_database(std::string_view database) const {
  if (includes_.empty()) return true;
  for (const Pattern& pattern : includes_)
    if (glob_match(pattern.database, database)) return true;
  return false;
}

}  // namespace cdc
