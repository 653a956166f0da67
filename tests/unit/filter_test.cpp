// The --where filter (libcore/filter): the parser's subset, its errors with their positions,
// the SQL it writes back, and the evaluator's three-valued logic and orders on hand-made rows.
// What each comparison means against a real server is tests/integration/filter_differential.sh.

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "filter/evaluate.h"
#include "filter/expression.h"

using cdc::filter::BoundFilter;
using cdc::filter::parse_expression;
using cdc::filter::to_sql;
using cdc::filter::Truth;

namespace {

std::string sql_of(std::string_view text) {
  auto parsed = parse_expression(text);
  REQUIRE_MESSAGE(parsed.has_value(), (parsed ? std::string() : parsed.error().message));
  return to_sql(*parsed);
}

std::string error_of(std::string_view text) {
  auto parsed = parse_expression(text);
  REQUIRE_FALSE(parsed.has_value());
  CHECK(parsed.error().code == cdc::Errc::usage);
  return parsed.error().message;
}

std::vector<cdc::records::TableColumn> table() {
  std::vector<cdc::records::TableColumn> columns(9);
  columns[0] = {"id", "int(11)", false, {}, {}, {}};
  columns[1] = {"n", "bigint(20) unsigned", true, {}, {}, {}};
  columns[2] = {"price", "decimal(8,2)", true, {}, {}, {}};
  columns[3] = {"name", "varchar(20)", true, "utf8mb4", "utf8mb4_general_ci", {}};
  columns[4] = {"code", "varchar(20)", true, "utf8mb4", "utf8mb4_bin", {}};
  columns[5] = {"raw", "varbinary(8)", true, {}, {}, {}};
  columns[6] = {"at", "datetime(3)", true, {}, {}, {}};
  columns[7] = {"ratio", "double", true, {}, {}, {}};
  columns[8] = {"doc", "json", true, {}, {}, {}};
  return columns;
}

// The filter's verdict on one row: values by column name, raw JSON text.
struct Row {
  std::vector<std::pair<std::string, std::string>> values;
};

Truth verdict(std::string_view text, const Row& row) {
  auto parsed = parse_expression(text);
  REQUIRE(parsed.has_value());
  const auto columns = table();
  auto bound = BoundFilter::bind(*parsed, columns);
  REQUIRE_MESSAGE(bound.has_value(), (bound ? std::string() : bound.error().message));
  std::vector<std::string_view> values;
  for (const std::size_t column : bound->columns()) {
    std::string_view value = "null";
    for (const auto& [name, text_value] : row.values)
      if (name == columns[column].name) value = text_value;
    values.push_back(value);
  }
  auto truth = bound->evaluate(values);
  REQUIRE_MESSAGE(truth.has_value(), (truth ? std::string() : truth.error().message));
  return *truth;
}

std::string bind_error(std::string_view text) {
  auto parsed = parse_expression(text);
  REQUIRE(parsed.has_value());
  auto bound = BoundFilter::bind(*parsed, table());
  REQUIRE_FALSE(bound.has_value());
  CHECK(bound.error().code == cdc::Errc::usage);
  return bound.error().message;
}

}  // namespace

TEST_CASE("filter: the subset parses, and goes back to SQL the server reads the same way") {
  CHECK(sql_of("id = 1") == "(`id` = 1)");
  CHECK(sql_of("a<>-2.50 or not b >= +007") == "((`a` <> -2.50) OR (NOT (`b` >= 7)))");
  CHECK(sql_of("x between 1 and 5 AND y NOT IN ('a', NULL)") ==
        "((`x` BETWEEN 1 AND 5) AND (`y` NOT IN ('a', NULL)))");
  CHECK(sql_of("`we``ird` IS NOT NULL OR z is null") == "((`we``ird` IS NOT NULL) OR (`z` IS NULL))");
  CHECK(sql_of("s = 'it''s' AND t != \"q\\\"\"") == "((`s` = 'it''s') AND (`t` <> 'q\"'))");
  // A backslash or a NUL goes as hex, which no sql_mode reads otherwise.
  CHECK(sql_of("s = 'a\\\\b'") == "(`s` = _utf8mb4 X'615C62')");
  CHECK(sql_of("s = 'nul\\0'") == "(`s` = _utf8mb4 X'6E756C00')");
  // AND binds tighter than OR; NOT tighter than AND; parentheses as written.
  CHECK(sql_of("a=1 OR b=2 AND c=3") == "((`a` = 1) OR ((`b` = 2) AND (`c` = 3)))");
  CHECK(sql_of("(a=1 OR b=2) AND NOT c=3") == "(((`a` = 1) OR (`b` = 2)) AND (NOT (`c` = 3)))");
  CHECK(sql_of(".5 < a") == "(0.5 < `a`)");
}

TEST_CASE("filter: an expression outside the subset names the character where it stops") {
  CHECK(error_of("") == "the expression is empty");
  CHECK(error_of("id = ") == "at character 6: expected a column, a literal or (, found the end of the expression");
  CHECK(error_of("id == 1") == "at character 5: expected a column, a literal or (, found '='");
  CHECK(error_of("id = 1e5") == "at character 6: expected a column, a literal or (, found the number '1e5' (the subset "
                                "takes digits with an optional . and digits)");
  CHECK(error_of("name LIKE 'a%'") ==
        "at character 6: expected an operator (AND, OR, =, <, BETWEEN, IN, IS ...) or the end, found 'LIKE'");
  CHECK(error_of("name = 'open") == "at character 8: expected a column, a literal or (, found a string without its "
                                    "closing '");
  CHECK(error_of("a BETWEEN 1 OR 2") == "at character 13: expected AND (BETWEEN low AND high), found 'OR'");
  CHECK(error_of("a IN 1") == "at character 6: expected ( after IN, found the number 1");
  CHECK(error_of("a IS 5") == "at character 6: expected NULL or NOT NULL after IS, found the number 5");
  CHECK(error_of("(a = 1") == "at character 7: expected ), found the end of the expression");
  CHECK(error_of("a = 1;") == "at character 6: expected an operator (AND, OR, =, <, BETWEEN, IN, IS ...) or the end, "
                              "found the character ';'");
  CHECK(error_of("a NOT LIKE 'x'") == "at character 7: expected BETWEEN or IN after NOT, found 'LIKE'");
  std::string deep(100, '(');
  CHECK(error_of(deep + "a=1" + std::string(100, ')')).find("levels of nesting") != std::string::npos);
}

TEST_CASE("filter: binding names the column, the literal and what would fit") {
  CHECK(bind_error("nope = 1") ==
        "at character 1: no column `nope` in the table (its columns: id, n, price, name, code, raw, at, ratio, doc)");
  CHECK(bind_error("id = '1'") == "at character 6: column `id` is int(11): compare it with a number, without quotes");
  CHECK(bind_error("name = 1") == "at character 8: column `name` is varchar(20): compare it with a string in quotes");
  CHECK(bind_error("at > '2024-13-01'").starts_with("at character 6: '2024-13-01' is not a value of column `at`"));
  CHECK(bind_error("at < '2024-02-29 10:00:00.2500001'").find("is not a value of column `at`") != std::string::npos);
  CHECK(bind_error("doc = 'x'").starts_with("at character 1: column `doc` is json, which --where cannot compare"));
  CHECK(bind_error("id = price").starts_with("at character 6: expected a literal"));
  CHECK(bind_error("1 = 1").starts_with("at character 1: a condition compares a column with literals"));
  CHECK(bind_error("id").starts_with("at character 1: expected a condition"));
  CHECK(bind_error("id = 1 AND 'x'").starts_with("at character 12: expected a condition"));
}

TEST_CASE("filter: three-valued logic, as SQL's") {
  const Row nulls{{{"id", "1"}}};  // name, price: NULL
  CHECK(verdict("price = 1", nulls) == Truth::unknown);
  CHECK(verdict("NOT price = 1", nulls) == Truth::unknown);
  CHECK(verdict("price = 1 AND id = 2", nulls) == Truth::is_false);
  CHECK(verdict("price = 1 OR id = 1", nulls) == Truth::is_true);
  CHECK(verdict("price = 1 OR id = 2", nulls) == Truth::unknown);
  CHECK(verdict("price IS NULL", nulls) == Truth::is_true);
  CHECK(verdict("id IS NOT NULL", nulls) == Truth::is_true);
  CHECK(verdict("id = NULL", nulls) == Truth::unknown);
  CHECK(verdict("id IN (2, NULL)", nulls) == Truth::unknown);
  CHECK(verdict("id IN (1, NULL)", nulls) == Truth::is_true);
  CHECK(verdict("id NOT IN (2, NULL)", nulls) == Truth::unknown);
  CHECK(verdict("id NOT IN (2, 3)", nulls) == Truth::is_true);
  CHECK(verdict("price BETWEEN 1 AND 2", nulls) == Truth::unknown);
  CHECK(verdict("id BETWEEN NULL AND 0", nulls) == Truth::is_false);  // 1 <= 0 is false whatever the other
  CHECK(verdict("id NOT BETWEEN 0 AND NULL", nulls) == Truth::unknown);
}

TEST_CASE("filter: each type compared as the server compares it") {
  const Row row{{{"id", "7"},
                 {"n", "18446744073709551615"},
                 {"price", "\"12.50\""},
                 {"name", "\"Ärger \""},
                 {"code", "\"abc\""},
                 {"raw", "\"AAE=\""},
                 {"at", "\"2024-02-29 10:00:00.250\""},
                 {"ratio", "0.1"}}};
  // integers against integers, decimals and numbers beyond 64 bits, by value
  CHECK(verdict("id > 6.5", row) == Truth::is_true);
  CHECK(verdict("id = 7.0", row) == Truth::is_true);
  CHECK(verdict("id < 99999999999999999999", row) == Truth::is_true);
  CHECK(verdict("n = 18446744073709551615", row) == Truth::is_true);
  CHECK(verdict("n > -1", row) == Truth::is_true);
  // DECIMAL exactly, whatever the scale written
  CHECK(verdict("price = 12.5", row) == Truth::is_true);
  CHECK(verdict("price < 12.501", row) == Truth::is_true);
  CHECK(verdict("price BETWEEN 12 AND 12.50", row) == Truth::is_true);
  // text under its collation: general_ci ignores case, accents of Ä, and PAD SPACE the
  // trailing space; _bin does not ignore case
  CHECK(verdict("name = 'arger'", row) == Truth::is_true);
  CHECK(verdict("name > 'ARG'", row) == Truth::is_true);
  CHECK(verdict("code = 'ABC'", row) == Truth::is_false);
  CHECK(verdict("code IN ('x', 'abc')", row) == Truth::is_true);
  // binary strings byte by byte (the value is base64: 00 01)
  CHECK(verdict("raw = '\\0\x01'", row) == Truth::is_true);
  CHECK(verdict("raw > '\\0'", row) == Truth::is_true);
  // temporal values as instants
  CHECK(verdict("at > '2024-02-29'", row) == Truth::is_true);
  CHECK(verdict("at = '2024-02-29 10:00:00.25'", row) == Truth::is_true);
  // doubles as doubles
  CHECK(verdict("ratio = 0.1", row) == Truth::is_true);
  CHECK(verdict("ratio > 0.09999", row) == Truth::is_true);
}

TEST_CASE("filter: doubles order as numbers, negative and positive, with -0 equal to 0") {
  std::string a, b, c, d;
  cdc::filter::append_double_key(-2.5, a);
  cdc::filter::append_double_key(-0.0, b);
  cdc::filter::append_double_key(0.0, c);
  cdc::filter::append_double_key(1e-300, d);
  CHECK(a < b);
  CHECK(b == c);
  CHECK(c < d);
}

TEST_CASE("filter: an integer given from its bytes has the verdict of its text") {
  // cdc-stream gives TINYINT..BIGINT values as numbers (give_integer); cdc-snapshot's lines
  // give them as text. Every width and signedness, at its limits and around the literals.
  struct Width {
    const char* type;
    bool is_unsigned;
    std::int64_t low;
    std::uint64_t high;
  };
  const Width widths[] = {
      {"tinyint(4)", false, -128, 127},
      {"tinyint(3) unsigned", true, 0, 255},
      {"smallint(6)", false, -32768, 32767},
      {"mediumint(9)", false, -8388608, 8388607},
      {"mediumint(8) unsigned", true, 0, 16777215},
      {"int(11)", false, INT32_MIN, INT32_MAX},
      {"int(10) unsigned", true, 0, UINT32_MAX},
      {"bigint(20)", false, INT64_MIN, INT64_MAX},
      {"bigint(20) unsigned", true, 0, UINT64_MAX},
  };
  const char* expressions[] = {"v = 0",        "v < -1",          "v >= 127",       "v BETWEEN -5 AND 200",
                               "v IN (1, 255)", "v <> 8388607",    "NOT v > 65535",  "v <= 4294967295",
                               "v IS NULL",    "v > -2147483648", "v IN (NULL, 3)", "v BETWEEN 0 AND 9223372036854775807"};
  for (const Width& width : widths) {
    std::vector<cdc::records::TableColumn> columns(1);
    columns[0] = {"v", width.type, true, {}, {}, {}};
    std::vector<std::string> samples;
    if (width.is_unsigned) {
      for (const std::uint64_t v : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{127},
                                    std::uint64_t{255}, std::uint64_t{65535}, std::uint64_t{65536}, width.high,
                                    width.high / 2, width.high / 2 + 1})
        if (v <= width.high) samples.push_back(std::to_string(v));
    } else {
      const auto high = static_cast<std::int64_t>(width.high);
      for (const std::int64_t v : {width.low, width.low + 1, std::int64_t{-5}, std::int64_t{-1}, std::int64_t{0},
                                   std::int64_t{1}, std::int64_t{3}, std::int64_t{127}, high - 1, high})
        if (v >= width.low && v <= high) samples.push_back(std::to_string(v));
    }
    for (const char* text : expressions) {
      auto parsed = parse_expression(text);
      REQUIRE(parsed.has_value());
      auto bound = BoundFilter::bind(*parsed, columns);
      REQUIRE(bound.has_value());
      if (!bound->takes_integer(0, width.is_unsigned)) continue;  // compared by DECIMAL value: text only
      CHECK_FALSE(bound->takes_integer(0, !width.is_unsigned));
      for (const std::string& sample : samples) {
        const std::vector<std::string_view> as_text{sample};
        auto from_text = bound->evaluate(as_text);
        REQUIRE(from_text.has_value());
        const std::uint64_t bits = width.is_unsigned ? std::stoull(sample)
                                                     : static_cast<std::uint64_t>(std::stoll(sample));
        bound->give_integer(0, bits);
        const std::vector<std::string_view> ignored{"\"not read\""};
        auto given = bound->evaluate(ignored);
        REQUIRE(given.has_value());
        CHECK_MESSAGE(*given == *from_text, width.type << " " << text << " on " << sample);
      }
    }
  }
}
