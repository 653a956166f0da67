#include "check/grants.h"

#include <algorithm>

#include "util/text.h"

namespace cdc::check {

namespace {

// "SELECT (a, b), INSERT" -> {"SELECT", "INSERT"}: column lists hold commas of their own.
std::vector<std::string> split_privileges(std::string_view list) {
  std::vector<std::string> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    const char c = i < list.size() ? list[i] : ',';
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      std::string_view item = trim(list.substr(start, i - start));
      if (const auto paren = item.find('('); paren != std::string_view::npos) item = trim(item.substr(0, paren));
      if (!item.empty()) out.push_back(to_upper(item));
      start = i + 1;
    }
  }
  return out;
}

// Finds " ON " outside backquoted names, so a database called `x ON y` cannot confuse us.
std::size_t find_keyword(std::string_view text, std::string_view keyword) {
  bool quoted = false;
  for (std::size_t i = 0; i + keyword.size() <= text.size(); ++i) {
    if (text[i] == '`') quoted = !quoted;
    if (quoted) continue;
    if (iequals(text.substr(i, keyword.size()), keyword)) return i;
  }
  return std::string_view::npos;
}

}  // namespace

bool Grants::has_global(std::string_view privilege) const {
  return all_global || global.contains(std::string(privilege));
}

Grants parse_grants(const std::vector<std::string>& statements) {
  Grants grants;
  for (const std::string& statement : statements) {
    std::string_view text = trim(statement);
    if (to_upper(text.substr(0, 6)) != "GRANT ") continue;
    text.remove_prefix(6);
    const std::size_t on = find_keyword(text, " ON ");
    const std::size_t to = find_keyword(text, " TO ");
    if (on == std::string_view::npos || (to != std::string_view::npos && to < on)) {
      if (to != std::string_view::npos) grants.roles.emplace_back(trim(text.substr(0, to)));
      continue;
    }
    const std::string_view privileges = text.substr(0, on);
    std::string_view object = text.substr(on + 4);
    if (const std::size_t object_end = find_keyword(object, " TO "); object_end != std::string_view::npos)
      object = object.substr(0, object_end);
    object = trim(object);
    const bool global_object = object == "*.*";
    for (const std::string& privilege : split_privileges(privileges)) {
      if (global_object) {
        if (privilege == "ALL" || privilege == "ALL PRIVILEGES")
          grants.all_global = true;
        else
          grants.global.insert(privilege);
      } else if (privilege == "SELECT" || privilege == "ALL" || privilege == "ALL PRIVILEGES") {
        grants.select_objects.emplace_back(object);
      }
    }
  }
  return grants;
}

}  // namespace cdc::check
