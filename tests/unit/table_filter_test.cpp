#include <doctest/doctest.h>

#include <string>

#include "util/table_filter.h"

TEST_CASE("table filter: globs over db.table") {
  struct Case {
    std::string include;
    std::string exclude;
    std::string database;
    std::string table;
    bool selected;
  };
  const Case cases[] = {
      {"", "", "any", "thing", true},
      {"shop.*", "", "shop", "orders", true},
      {"shop.*", "", "shop2", "orders", false},
      {"shop", "", "shop", "orders", true},  // a bare database means db.*
      {"shop.ord?rs", "", "shop", "orders", true},
      {"shop.ord?rs", "", "shop", "ordrs", false},
      {"shop.*,crm.users", "", "crm", "users", true},
      {"shop.*, crm.users", "", "crm", "groups", false},
      {"*.*", "shop.secret*", "shop", "secrets", false},
      {"*.*", "shop.secret*", "shop", "orders", true},
      {"", "mysql.*", "mysql", "user", false},
      {"shop\\.eu.*", "", "shop.eu", "t", true},
      {"shop\\.eu.*", "", "shop", "eu", false},
      {"Shop.*", "", "shop", "t", false},  // case-sensitive
      {"a*b*c.*", "", "aXXbYYc", "t", true},
      {"a*b*c.*", "", "aXXbYY", "t", false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.include);
    CAPTURE(c.exclude);
    CAPTURE(c.database);
    CAPTURE(c.table);
    auto filter = cdc::TableFilter::parse(c.include, c.exclude);
    REQUIRE(filter.has_value());
    CHECK(filter->selects(c.database, c.table) == c.selected);
  }
}

TEST_CASE("table filter: malformed patterns are usage errors that name the option") {
  struct Case {
    std::string include;
    std::string exclude;
    std::string message;
  };
  const Case cases[] = {
      {"shop.*,", "", "--tables: empty pattern in 'shop.*,' (a stray comma?)"},
      {".t", "", "--tables: '.t' needs the form DB.TABLE (globs * and ? allowed)"},
      {"db.", "", "--tables: 'db.' needs the form DB.TABLE (globs * and ? allowed)"},
      {"", ",x.y", "--exclude: empty pattern in ',x.y' (a stray comma?)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.include);
    auto filter = cdc::TableFilter::parse(c.include, c.exclude);
    REQUIRE_FALSE(filter.has_value());
    CHECK(filter.error().code == cdc::Errc::usage);
    CHECK(filter.error().message == c.message);
  }
}

TEST_CASE("table filter: glob matching never backtracks badly") {
  const std::string text(5000, 'a');
  CHECK_FALSE(cdc::glob_match("*a*a*a*a*a*a*a*a*a*b", text));
  CHECK(cdc::glob_match("*a*a*a*a*a*a*a*a*a*", text));
}
