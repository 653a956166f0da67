#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace cdc {

// The table patterns every tool takes (--tables, --exclude): comma-separated `db.table`
// globs where `*` matches any run of characters and `?` one character; `\` escapes the
// next character, so `shop\.eu.*` names a database called "shop.eu". The first unescaped
// dot splits database from table; a pattern without one means "db.*". Matching is
// case-sensitive, as table names are on Linux servers (lower_case_table_names=0).
class TableFilter {
 public:
  // An empty include list selects every table; excludes win over includes.
  [[nodiscard]] static Result<TableFilter> parse(std::string_view include, std::string_view exclude = {});

  [[nodiscard]] bool selects(std::string_view database, std::string_view table) const;
  [[nodiscard]] bool selects_database(std::string_view database) const;
  [[nodiscard]] bool selects_everything() const noexcept { return includes_.empty() && excludes_.empty(); }

  // One pattern of a list, split at its first unescaped dot ("shop" is shop.*), escapes kept.
  struct Pattern {
    std::string database;
    std::string table;
    friend bool operator==(const Pattern&, const Pattern&) = default;
  };
  // The patterns of one list as parse reads them; option names the list in errors.
  [[nodiscard]] static Result<std::vector<Pattern>> parse_list(std::string_view text, std::string_view option);

 private:
  std::vector<Pattern> includes_;
  std::vector<Pattern> excludes_;
};

// Glob match with `*`, `?` and `\` escapes; no character classes.
[[nodiscard]] bool glob_match(std::string_view pattern, std::string_view text) noexcept;

}  // namespace cdc
