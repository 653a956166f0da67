// --columns (filter/columns_option.h): the option's syntax, which option is a table's, and
// which columns it keeps.
#include <doctest/doctest.h>

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "filter/columns_option.h"

namespace {

using cdc::filter::ColumnsOption;

std::vector<bool> kept(const ColumnsOption& option, const std::vector<std::string>& names,
                       const std::vector<std::string>& always, const char* where = nullptr) {
  std::optional<cdc::filter::Expression> expression;
  if (where != nullptr) expression = *cdc::filter::parse_expression(where);
  auto result = cdc::filter::kept_columns(option, "s.t", names, always, expression ? &*expression : nullptr);
  REQUIRE_MESSAGE(result.has_value(), result.error().message);
  return *result;
}

}  // namespace

TEST_CASE("filter columns: the option names tables and columns, quoted names may hold commas") {
  auto option = cdc::filter::parse_columns_option("s.t,s.u*:a, b ,`c,d`,`e``f`");
  REQUIRE(option.has_value());
  CHECK(option->columns == std::vector<std::string>{"a", "b", "c,d", "e`f"});
  CHECK(option->filter.selects("s", "t"));
  CHECK(option->filter.selects("s", "u2"));
  CHECK_FALSE(option->filter.selects("s", "v"));
  for (const char* bad : {"a,b", ":a", "s.t:", "s.t:a,,b", "s.t:`a", "s.t:`a`b"}) {
    CAPTURE(std::string(bad));
    CHECK_FALSE(cdc::filter::parse_columns_option(bad).has_value());
  }
  CHECK(cdc::filter::parse_columns_option("s.t:a,,b").error().message.find("character 3") != std::string::npos);
}

TEST_CASE("filter columns: one option per table") {
  std::vector<ColumnsOption> options{*cdc::filter::parse_columns_option("s.*:a"),
                                     *cdc::filter::parse_columns_option("s.t:b")};
  CHECK(*cdc::filter::columns_for(std::span(options).first(1), "s", "t") == &options[0]);
  CHECK(*cdc::filter::columns_for(options, "x", "t") == nullptr);
  CHECK_FALSE(cdc::filter::columns_for(options, "s", "t").has_value());
}

TEST_CASE("filter columns: the named, key and identity columns stay, in the table's order") {
  const auto option = *cdc::filter::parse_columns_option("s.t:C,a");
  const std::vector<std::string> names{"id", "a", "b", "c", "u"};
  CHECK(kept(option, names, {"id"}) == std::vector<bool>{true, true, false, true, false});
  CHECK(kept(option, names, {"id", "u"}) == std::vector<bool>{true, true, false, true, true});
  CHECK(kept(option, names, {"id"}, "a > 1 AND c IS NULL") == std::vector<bool>{true, true, false, true, false});
  const auto unknown = cdc::filter::kept_columns(*cdc::filter::parse_columns_option("s.t:zz"), "s.t", names, {}, nullptr);
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().message.find("s.t has no column zz") != std::string::npos);
  const auto expression = *cdc::filter::parse_expression("a = 1 OR b = 2");
  const std::vector<std::string> key{"id"};
  const auto left_out = cdc::filter::kept_columns(option, "s.t", names, key, &expression);
  REQUIRE_FALSE(left_out.has_value());
  CHECK(left_out.error().message.find("leaves out s.t.b") != std::string::npos);
  CHECK(left_out.error().message.find("character 10") != std::string::npos);
}
