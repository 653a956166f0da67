// merge/key_order.h against the live server: for each key type and collation it supports, a few
// hundred random values go into a table with that column, come back through a SELECT and are
// written as JSON the way the tools write them (ndjson::Writer), and then every ordered pair of
// rows is compared twice: by the server (x.v < y.v, x.v = y.v under the column's type and
// collation, in one self-join) and by memcmp of the two sort keys. Every pair must agree.

#include <doctest/doctest.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "merge/collation_weights.h"
#include "merge/key_order.h"
#include "mysql/connection.h"
#include "ndjson/writer.h"
#include "test_server.h"

namespace {

using cdc::merge::KeyColumnOrder;

// One database per process: CTest runs the cases of this file side by side.
const std::string kDatabase = fmt::format("key_order_test_{}", ::getpid());
constexpr std::size_t kRows = 300;  // 90,000 ordered pairs per column definition

cdc::mysql::Connection connect() {
  auto connection = cdc::mysql::Connection::open(cdc::test::root_account());
  REQUIRE_MESSAGE(connection.has_value(), connection.error().message);
  for (const char* sql : {"SET NAMES utf8mb4", "SET time_zone = '+00:00'", "SET sql_mode = ''"}) {
    auto done = connection->query(sql);
    REQUIRE_MESSAGE(done.has_value(), done.error().message);
  }
  return std::move(*connection);
}

cdc::mysql::QueryResult query(cdc::mysql::Connection& connection, const std::string& sql) {
  auto result = connection.query(sql);
  REQUIRE_MESSAGE(result.has_value(), sql, ": ", result.error().message);
  return std::move(*result);
}

std::string hex(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) out += fmt::format("{:02X}", static_cast<unsigned char>(c));
  return out;
}

// How a selected value becomes the JSON text the tools write for it.
enum class Json { number, string, timestamp, base64 };

std::string to_json(std::string_view selected, Json json) {
  cdc::ndjson::Writer writer;
  switch (json) {
    case Json::number: {  // YEAR selects as "0000"; the tools write the number 0
      const auto digits = selected.find_first_not_of("-0");
      if (digits == std::string_view::npos) return "0";
      return (selected.front() == '-' ? "-" : "") + std::string(selected.substr(digits));
    }
    case Json::string:
      writer.string(selected);
      break;
    case Json::timestamp:
      writer.string(std::string(selected) + "Z");
      break;
    case Json::base64:
      writer.string_base64(selected);
      break;
  }
  return std::string(writer.buffered());
}

// One column definition under test. literals are SQL expressions for INSERT.
struct Column {
  std::string definition;  // "varchar(20) COLLATE utf8mb4_bin"
  std::string key_type;    // COLUMN_TYPE, as cdc-plan writes it
  std::uint32_t collation_id;
  Json json;
};

struct Outcome {
  std::size_t pairs = 0;
  std::size_t equal_pairs = 0;
  std::size_t distinct_values = 0;
};

// Fills the table, reads it back, and checks every ordered pair. `columns` > 1 compares rows
// (v1, v2, ...) with the row constructor, as the chunk ranges do.
Outcome check_columns(cdc::mysql::Connection& connection, const std::vector<Column>& columns,
                      const std::vector<std::vector<std::string>>& literal_rows) {
  std::string definition = "(i INT PRIMARY KEY";
  std::string names;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    definition += fmt::format(", v{} {} NOT NULL", c, columns[c].definition);
    names += fmt::format("{}v{}", c == 0 ? "" : ", ", c);
  }
  definition += ")";
  query(connection, fmt::format("CREATE DATABASE IF NOT EXISTS {}", kDatabase));
  query(connection, fmt::format("DROP TABLE IF EXISTS {}.t", kDatabase));
  query(connection, fmt::format("CREATE TABLE {}.t {}", kDatabase, definition));
  std::string insert = fmt::format("INSERT INTO {}.t VALUES ", kDatabase);
  for (std::size_t r = 0; r < literal_rows.size(); ++r) {
    insert += fmt::format("{}({}", r == 0 ? "" : ",", r);
    for (const std::string& literal : literal_rows[r]) insert += "," + literal;
    insert += ")";
  }
  query(connection, insert);
  auto warnings = query(connection, "SHOW WARNINGS");
  for (const auto& row : warnings.rows) MESSAGE("warning: ", row.at(2).value_or(""));
  CHECK(warnings.rows.empty());

  std::vector<KeyColumnOrder> orders;
  for (const Column& column : columns) {
    auto order = KeyColumnOrder::make(column.key_type, column.collation_id);
    REQUIRE_MESSAGE(order.has_value(), order.error().message);
    orders.push_back(*order);
  }
  auto selected = query(connection, fmt::format("SELECT i, {} FROM {}.t ORDER BY i", names, kDatabase));
  std::vector<std::string> keys(selected.rows.size());
  std::vector<std::string> shown(selected.rows.size());
  for (const auto& row : selected.rows) {
    const auto i = std::stoul(*row.at(0));
    std::vector<std::string> json;
    for (std::size_t c = 0; c < columns.size(); ++c) json.push_back(to_json(*row.at(c + 1), columns[c].json));
    std::vector<std::string_view> views(json.begin(), json.end());
    auto done = cdc::merge::append_row_sort_key(orders, views, keys.at(i));
    REQUIRE_MESSAGE(done.has_value(), done.error().message);
    for (const auto& text : json) shown.at(i) += text + " ";
  }

  std::string x_row = "(x.v0", y_row = "(y.v0";
  for (std::size_t c = 1; c < columns.size(); ++c) {
    x_row += fmt::format(", x.v{}", c);
    y_row += fmt::format(", y.v{}", c);
  }
  x_row += ")", y_row += ")";
  auto pairs = query(connection, fmt::format("SELECT x.i, y.i, {0} < {1}, {0} = {1} FROM {2}.t x JOIN {2}.t y", x_row,
                                             y_row, kDatabase));
  Outcome outcome;
  std::size_t mismatches = 0;
  for (const auto& row : pairs.rows) {
    const auto x = std::stoul(*row.at(0));
    const auto y = std::stoul(*row.at(1));
    const bool server_less = *row.at(2) == "1";
    const bool server_equal = *row.at(3) == "1";
    const bool less = keys[x] < keys[y];
    const bool equal = keys[x] == keys[y];
    ++outcome.pairs;
    if (server_equal && x != y) ++outcome.equal_pairs;
    if (less != server_less || equal != server_equal) {
      if (++mismatches <= 10)
        FAIL_CHECK("server says ", shown[x],
                   (server_less    ? "<"
                    : server_equal ? "="
                                   : ">"),
                   " ", shown[y], "; sort keys ", hex(keys[x]), " vs ", hex(keys[y]));
    }
  }
  CHECK(mismatches == 0);
  CHECK(outcome.pairs == literal_rows.size() * literal_rows.size());
  std::vector<std::string> distinct = keys;
  std::sort(distinct.begin(), distinct.end());
  outcome.distinct_values = static_cast<std::size_t>(std::unique(distinct.begin(), distinct.end()) - distinct.begin());
  return outcome;
}

Outcome check_column(cdc::mysql::Connection& connection, const Column& column,
                     const std::vector<std::string>& literals) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& literal : literals) rows.push_back({literal});
  return check_columns(connection, {column}, rows);
}

std::vector<std::string> generate(std::size_t count, const std::vector<std::string>& fixed,
                                  const std::function<std::string()>& random) {
  std::vector<std::string> out = fixed;
  while (out.size() < count) out.push_back(random());
  out.resize(count);
  return out;
}

void report(std::string_view what, const Outcome& outcome) {
  MESSAGE(what, ": ", outcome.pairs, " pairs, ", outcome.equal_pairs, " equal pairs of distinct rows, ",
          outcome.distinct_values, " distinct sort keys");
}

// Random text from pieces that stress the collations: both cases, spaces at the ends, accents,
// ß, CJK, emoji, digits and characters around the space.
std::string random_text(std::mt19937_64& rng, const std::vector<std::string>& pieces, std::size_t max_length) {
  std::string out;
  const auto length = std::uniform_int_distribution<std::size_t>(0, max_length)(rng);
  for (std::size_t i = 0; i < length; ++i)
    out += pieces[std::uniform_int_distribution<std::size_t>(0, pieces.size() - 1)(rng)];
  return out;
}

std::string text_literal(std::string_view utf8) { return fmt::format("_utf8mb4 X'{}'", hex(utf8)); }

const std::vector<std::string> kUnicodePieces = {"a",
                                                 "A",
                                                 "b",
                                                 "B",
                                                 "e",
                                                 "E",
                                                 "s",
                                                 "S",
                                                 "z",
                                                 "Z",
                                                 " ",
                                                 " ",
                                                 " ",
                                                 "\t",
                                                 "!",
                                                 "0",
                                                 "9",
                                                 "_",
                                                 "\xC3\xA9" /* é */,
                                                 "\xC3\x89" /* É */,
                                                 "\xC3\xA8" /* è */,
                                                 "\xC3\xAA" /* ê */,
                                                 "\xC3\x9F" /* ß */,
                                                 "\xC3\xA5" /* å */,
                                                 "\xC3\x85" /* Å */,
                                                 "\xC3\xB6" /* ö */,
                                                 "\xE6\x97\xA5" /* 日 */,
                                                 "\xE6\x9C\xAC" /* 本 */,
                                                 "\xF0\x9F\x98\x80" /* 😀 */,
                                                 "\xF0\x9F\x8E\x89" /* 🎉 */,
                                                 "\xEF\xBF\xBD" /* U+FFFD */,
                                                 "\xE2\x82\xAC" /* € */,
                                                 "\xC5\x92" /* Œ */,
                                                 "\xC2\xA0" /* nbsp */};

std::vector<std::string> without_supplementary(std::vector<std::string> pieces) {
  std::erase_if(pieces, [](const std::string& piece) { return static_cast<unsigned char>(piece[0]) >= 0xF0; });
  return pieces;
}

std::vector<std::string> latin1_pieces() {
  std::vector<std::string> pieces = without_supplementary(kUnicodePieces);
  std::erase_if(pieces, [](const std::string& piece) {
    return piece == "\xE6\x97\xA5" || piece == "\xE6\x9C\xAC" || piece == "\xEF\xBF\xBD";
  });
  pieces.push_back("\xC2\x81");  // U+0081: latin1 byte 81
  pieces.push_back("\xC3\xBF");  // ÿ
  return pieces;
}

std::vector<std::string> ascii_pieces() {
  std::vector<std::string> pieces = kUnicodePieces;
  std::erase_if(pieces, [](const std::string& piece) { return static_cast<unsigned char>(piece[0]) >= 0x80; });
  pieces.push_back("\x01");
  pieces.push_back("~");
  return pieces;
}

std::vector<std::string> text_values(std::uint64_t seed, const std::vector<std::string>& pieces) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> fixed = {"", " ", "a", "A", "a ", "A  ", " a", "a\t", "a b", "a  b", "ab", "aB", "b"};
  for (const auto& piece : pieces) fixed.push_back(piece);
  std::vector<std::string> literals;
  for (const auto& value : generate(kRows, fixed, [&] { return random_text(rng, pieces, 6); }))
    literals.push_back(text_literal(value));
  return literals;
}

// A whole character repertoire at once: `fill` inserts the rows (i, v) with SQL; they are
// sorted by their sort keys here, and the server compares each row with the next one in that
// order (a.v < b.v, a.v = b.v). Where the keys are equal the server must say equal, where
// they rise it must say less: then, by transitivity, every pair of rows agrees, without a
// self-join of 65,536 rows. (Not the server's ORDER BY: filesort sorts by strnxfrm(), which
// for latin1_swedish_nopad_ci puts 'x\0' before 'x' though 'x' < 'x\0' by comparison, and
// range conditions, which decide what a chunk holds, compare.)
std::size_t check_sorted_neighbours(cdc::mysql::Connection& connection, const Column& column, const std::string& fill) {
  query(connection, fmt::format("CREATE DATABASE IF NOT EXISTS {}", kDatabase));
  query(connection, fmt::format("DROP TABLE IF EXISTS {}.t", kDatabase));
  query(connection, fmt::format("DROP TABLE IF EXISTS {}.p", kDatabase));
  query(connection, fmt::format("CREATE TABLE {}.t (i INT PRIMARY KEY, v {} NOT NULL)", kDatabase, column.definition));
  query(connection, fmt::format("CREATE TABLE {}.p (x INT NOT NULL, y INT NOT NULL)", kDatabase));
  query(connection, fmt::format("INSERT INTO {}.t {}", kDatabase, fill));
  auto order = KeyColumnOrder::make(column.key_type, column.collation_id);
  REQUIRE_MESSAGE(order.has_value(), order.error().message);
  auto rows = query(connection, fmt::format("SELECT i, v FROM {}.t", kDatabase));
  struct Row {
    std::string key;
    std::string json;
    std::string id;
  };
  std::vector<Row> sorted;
  for (const auto& row : rows.rows) {
    Row r{{}, to_json(*row.at(1), column.json), *row.at(0)};
    auto done = order->append_sort_key(r.json, r.key);
    REQUIRE_MESSAGE(done.has_value(), done.error().message);
    sorted.push_back(std::move(r));
  }
  std::sort(sorted.begin(), sorted.end(), [](const Row& a, const Row& b) { return a.key < b.key; });
  std::map<std::string, std::size_t> position;
  for (std::size_t k = 0; k < sorted.size(); ++k) position[sorted[k].id] = k;
  for (std::size_t from = 1; from < sorted.size(); from += 10000) {
    std::string insert = fmt::format("INSERT INTO {}.p VALUES ", kDatabase);
    for (std::size_t k = from; k < std::min(sorted.size(), from + 10000); ++k)
      insert += fmt::format("{}({},{})", k == from ? "" : ",", sorted[k - 1].id, sorted[k].id);
    query(connection, insert);
  }
  auto verdicts = query(connection, fmt::format("SELECT p.y, a.v < b.v, a.v = b.v FROM {0}.p p JOIN {0}.t a ON a.i = "
                                                "p.x JOIN {0}.t b ON b.i = p.y",
                                                kDatabase));
  CHECK(verdicts.rows.size() + 1 == sorted.size());
  std::size_t mismatches = 0;
  for (const auto& verdict : verdicts.rows) {
    const std::size_t k = position.at(*verdict.at(0));
    const Row& a = sorted.at(k - 1);
    const Row& b = sorted.at(k);
    const bool equal = a.key == b.key;
    const bool server_less = *verdict.at(1) == "1";
    const bool server_equal = *verdict.at(2) == "1";
    if ((equal ? !server_equal || server_less : !server_less || server_equal) && ++mismatches <= 10)
      FAIL_CHECK("sort keys say ", a.json, (equal ? " = " : " < "), b.json, " (", hex(a.key), " vs ", hex(b.key),
                 "), the server says ",
                 server_less    ? "<"
                 : server_equal ? "="
                                : ">");
  }
  CHECK(mismatches == 0);
  return sorted.size();
}

}  // namespace

TEST_CASE("merge key order live: every BMP character and every latin1 byte pair compare as on the server") {
  if (!cdc::merge::detail::have_collation_weights()) {
    MESSAGE("collation_weights.cpp has no generated tables; skipped");
    return;
  }
  auto connection = connect();
  // A code point's character; surrogates are not characters.
  const std::string character = "CONVERT(UNHEX(LPAD(HEX(seq), 8, '0')) USING utf32)";
  const std::string bmp = fmt::format("FROM {}.seq_0_to_65535 WHERE seq NOT BETWEEN 55296 AND 57343", kDatabase);
  query(connection, fmt::format("CREATE DATABASE IF NOT EXISTS {}", kDatabase));
  // Plain variables, not structured bindings: clang 14 lets no lambda (CAPTURE's) capture one.
  for (const auto& column : std::vector<std::pair<std::string, std::uint32_t>>{
           {"varchar(4) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci", 45},
           {"varchar(4) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_nopad_ci", 1069},
           {"varchar(4) CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci", 33},
           {"varchar(4) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", 46}}) {
    const std::string& definition = column.first;
    const std::uint32_t id = column.second;
    CAPTURE(definition);
    // Each character alone, then after 'a' and before a space or a tab for a third of them.
    const std::string fill = fmt::format(
        "SELECT seq, {0} {1} UNION ALL SELECT 100000 + seq, CONCAT('a', {0}, IF(seq % 2, ' ', '\t')) {1} AND seq % 3 = "
        "0",
        character, bmp);
    const auto rows = check_sorted_neighbours(connection, Column{definition, "varchar(4)", id, Json::string}, fill);
    MESSAGE(definition, ": ", rows, " values, each compared by the server with its neighbour in sort-key order");
  }
  // latin1: every string of up to two bytes.
  const std::string bytes = "CONVERT(UNHEX(LPAD(HEX(seq), {}, '0')) USING latin1)";
  for (const auto& column : std::vector<std::pair<std::string, std::uint32_t>>{
           {"varchar(4) CHARACTER SET latin1 COLLATE latin1_swedish_ci", 8},
           {"varchar(4) CHARACTER SET latin1 COLLATE latin1_swedish_nopad_ci", 1032},
           {"varchar(4) CHARACTER SET latin1 COLLATE latin1_bin", 47}}) {
    const std::string& definition = column.first;
    const std::uint32_t id = column.second;
    CAPTURE(definition);
    const std::string fill = fmt::format(
        "SELECT seq, {0} FROM {2}.seq_0_to_65535 UNION ALL SELECT 100000 + seq, {1} FROM "
        "{2}.seq_0_to_255 UNION ALL SELECT 200000, ''",
        fmt::format(fmt::runtime(bytes), 4), fmt::format(fmt::runtime(bytes), 2), kDatabase);
    const auto rows = check_sorted_neighbours(connection, Column{definition, "varchar(4)", id, Json::string}, fill);
    MESSAGE(definition, ": ", rows, " values, each compared by the server with its neighbour in sort-key order");
  }
}

TEST_CASE("merge key order live: integers agree with the server") {
  auto connection = connect();
  std::mt19937_64 rng(1);
  struct Case {
    std::string type;
    std::int64_t min;
    std::uint64_t max;  // as unsigned, for the unsigned types
    bool is_unsigned;
  };
  const std::vector<Case> cases = {
      {"tinyint(4)", -128, 127, false},
      {"tinyint(3) unsigned", 0, 255, true},
      {"int(11)", -2147483648LL, 2147483647, false},
      {"bigint(20)", INT64_MIN, INT64_MAX, false},
      {"bigint(20) unsigned", 0, UINT64_MAX, true},
      {"year(4)", 1901, 2155, false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.type);
    std::vector<std::string> fixed;
    if (c.is_unsigned) {
      fixed = {"0",
               "1",
               std::to_string(c.max),
               std::to_string(c.max - 1),
               std::to_string(c.max / 2),
               std::to_string(c.max / 2 + 1)};
    } else if (c.type.starts_with("year")) {
      fixed = {"0", "1901", "2155", "2000"};
    } else {
      fixed = {std::to_string(c.min), std::to_string(c.min + 1), "-1", "0", "1", std::to_string(c.max)};
    }
    const auto values = generate(kRows, fixed, [&] {
      if (c.type.starts_with("year")) return std::to_string(1901 + rng() % 255);
      if (c.is_unsigned) return std::to_string(c.max == UINT64_MAX ? rng() >> (rng() % 64) : rng() % (c.max + 1));
      if (c.min == INT64_MIN) return std::to_string(static_cast<std::int64_t>(rng()) >> (rng() % 64));
      const auto span = static_cast<std::uint64_t>(static_cast<std::int64_t>(c.max) - c.min) + 1;
      return std::to_string(c.min + static_cast<std::int64_t>(rng() % span));
    });
    report(c.type, check_column(connection, Column{c.type, c.type, 0, Json::number}, values));
  }
}

TEST_CASE("merge key order live: decimals agree with the server") {
  auto connection = connect();
  std::mt19937_64 rng(2);
  for (const auto& column : std::vector<std::tuple<std::string, int, int>>{
           {"decimal(10,2)", 8, 2}, {"decimal(30,12)", 18, 12}, {"decimal(65,0)", 65, 0}, {"decimal(5,5)", 0, 5}}) {
    const std::string& type = std::get<0>(column);
    const int integer_digits = std::get<1>(column);
    const int scale = std::get<2>(column);
    CAPTURE(type);
    const auto digits = [&](int n) {
      std::string out;
      // Few distinct digits and short runs, so equal and near-equal values are common.
      const int length = n == 0 ? 0 : static_cast<int>(rng() % static_cast<unsigned>(n + 1));
      for (int i = 0; i < length; ++i) out.push_back("0019"[rng() % 4]);
      return out;
    };
    const auto values = generate(kRows, {"'0'", "'-0'", "'0.0'", "'-0.00'"}, [&] {
      std::string integer = digits(integer_digits);
      std::string fraction = digits(scale);
      if (integer.empty()) integer = "0";
      return fmt::format("'{}{}{}{}'", rng() % 2 ? "-" : "", integer, fraction.empty() ? "" : ".", fraction);
    });
    report(type, check_column(connection, Column{type, type, 0, Json::string}, values));
  }
}

TEST_CASE("merge key order live: dates times and timestamps agree with the server") {
  auto connection = connect();
  std::mt19937_64 rng(3);
  const auto pick = [&](unsigned from, unsigned to) { return from + static_cast<unsigned>(rng() % (to - from + 1)); };
  const auto date = [&] {
    if (rng() % 20 == 0) return std::string("0000-00-00");
    return fmt::format("{:04}-{:02}-{:02}", pick(1000, 1003) + 340 * pick(0, 2), pick(1, 12), pick(1, 28));
  };
  const auto clock = [&] { return fmt::format("{:02}:{:02}:{:02}", pick(0, 23), pick(0, 2) * 29, pick(0, 2) * 29); };
  const auto fraction = [&](unsigned fsp) {
    std::string out = ".";
    for (unsigned i = 0; i < fsp; ++i) out.push_back("059"[rng() % 3]);
    return fsp == 0 ? std::string() : out;
  };
  {
    const auto values =
        generate(kRows, {"'0000-00-00'", "'9999-12-31'", "'1000-01-01'"}, [&] { return "'" + date() + "'"; });
    report("date", check_column(connection, Column{"date", "date", 0, Json::string}, values));
  }
  for (const unsigned fsp : {0U, 3U, 6U}) {
    const std::string type = fsp == 0 ? "datetime" : fmt::format("datetime({})", fsp);
    CAPTURE(type);
    const auto values = generate(kRows, {"'0000-00-00 00:00:00'", "'9999-12-31 23:59:59.999999'"},
                                 [&] { return fmt::format("'{} {}{}'", date(), clock(), fraction(fsp)); });
    report(type, check_column(connection, Column{type, type, 0, Json::string}, values));
  }
  for (const unsigned fsp : {0U, 3U, 6U}) {
    const std::string type = fsp == 0 ? "timestamp" : fmt::format("timestamp({})", fsp);
    CAPTURE(type);
    const auto values =
        generate(kRows, {"'0000-00-00 00:00:00'", "'1970-01-01 00:00:01'", "'2038-01-19 03:14:07'"}, [&] {
          return fmt::format("'{:04}-{:02}-{:02} {}{}'", pick(1971, 2037), pick(1, 12), pick(1, 28), clock(),
                             fraction(fsp));
        });
    report(type, check_column(connection, Column{type, type, 0, Json::timestamp}, values));
  }
  for (const unsigned fsp : {0U, 2U, 6U}) {
    const std::string type = fsp == 0 ? "time" : fmt::format("time({})", fsp);
    CAPTURE(type);
    const auto values = generate(kRows, {"'-838:59:59'", "'838:59:59'", "'00:00:00'", "'-00:00:01'"}, [&] {
      const unsigned hours = rng() % 3 == 0 ? pick(0, 838) : pick(0, 2);
      return fmt::format("'{}{:02}:{:02}:{:02}{}'", rng() % 2 ? "-" : "", hours, pick(0, 1) * 59, pick(0, 1) * 59,
                         fraction(fsp));
    });
    report(type, check_column(connection, Column{type, type, 0, Json::string}, values));
  }
}

TEST_CASE("merge key order live: binary strings agree with the server") {
  auto connection = connect();
  std::mt19937_64 rng(4);
  const char alphabet[] = {'\x00', '\x01', ' ', 'a', 'b', '\x7F', '\x80', '\xFF'};
  const auto bytes = [&](std::size_t max) {
    std::string out;
    const std::size_t length = rng() % (max + 1);
    for (std::size_t i = 0; i < length; ++i) out.push_back(alphabet[rng() % sizeof alphabet]);
    return out;
  };
  for (const auto& column : std::vector<std::pair<std::string, std::size_t>>{
           {"varbinary(12)", 6}, {"blob", 6}, {"binary(4)", 4}, {"varchar(12) CHARACTER SET binary", 6}}) {
    const std::string& definition = column.first;
    const std::size_t max = column.second;
    CAPTURE(definition);
    const auto values = generate(kRows, {"X''", "X'00'", "X'0000'", "X'61'", "X'6100'", "X'6120'", "X'20'"},
                                 [&] { return "X'" + hex(bytes(max)) + "'"; });
    // COLUMN_TYPE of a CHARACTER SET binary varchar is varbinary already.
    const std::string key_type = definition.starts_with("varchar") ? "varbinary(12)" : definition;
    report(definition, check_column(connection, Column{definition, key_type, 63, Json::base64}, values));
  }
}

TEST_CASE("merge key order live: binary-ordered text collations agree with the server") {
  auto connection = connect();
  struct Case {
    std::string definition;
    std::uint32_t collation_id;
    std::vector<std::string> pieces;
  };
  const std::vector<Case> cases = {
      {"varchar(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", 46, kUnicodePieces},
      {"char(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", 46, kUnicodePieces},
      {"text CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", 46, kUnicodePieces},
      {"varchar(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin", 1070, kUnicodePieces},
      {"varchar(20) CHARACTER SET utf8mb3 COLLATE utf8mb3_bin", 83, without_supplementary(kUnicodePieces)},
      {"varchar(20) CHARACTER SET utf8mb3 COLLATE utf8mb3_nopad_bin", 1107, without_supplementary(kUnicodePieces)},
      {"varchar(20) CHARACTER SET latin1 COLLATE latin1_bin", 47, latin1_pieces()},
      {"varchar(20) CHARACTER SET latin1 COLLATE latin1_nopad_bin", 1071, latin1_pieces()},
      {"varchar(20) CHARACTER SET ascii COLLATE ascii_bin", 65, ascii_pieces()},
      {"varchar(20) CHARACTER SET ascii COLLATE ascii_nopad_bin", 1089, ascii_pieces()},
  };
  std::uint64_t seed = 5;
  for (const Case& c : cases) {
    CAPTURE(c.definition);
    const std::string key_type = c.definition.substr(0, c.definition.find(' '));
    report(c.definition, check_column(connection, Column{c.definition, key_type, c.collation_id, Json::string},
                                      text_values(seed++, c.pieces)));
  }
}

TEST_CASE("merge key order live: case-insensitive collations agree with the server") {
  if (!cdc::merge::detail::have_collation_weights()) {
    MESSAGE("collation_weights.cpp has no generated tables; skipped");
    return;
  }
  auto connection = connect();
  struct Case {
    std::string definition;
    std::uint32_t collation_id;
    std::vector<std::string> pieces;
  };
  const std::vector<Case> cases = {
      {"varchar(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci", 45, kUnicodePieces},
      {"char(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci", 45, kUnicodePieces},
      {"varchar(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_nopad_ci", 1069, kUnicodePieces},
      {"varchar(20) CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci", 33, without_supplementary(kUnicodePieces)},
      {"varchar(20) CHARACTER SET utf8mb3 COLLATE utf8mb3_general_nopad_ci", 1057,
       without_supplementary(kUnicodePieces)},
      {"varchar(20) CHARACTER SET latin1 COLLATE latin1_swedish_ci", 8, latin1_pieces()},
      {"varchar(20) CHARACTER SET latin1 COLLATE latin1_swedish_nopad_ci", 1032, latin1_pieces()},
  };
  std::uint64_t seed = 50;
  for (const Case& c : cases) {
    CAPTURE(c.definition);
    const std::string key_type = c.definition.substr(0, c.definition.find(' '));
    report(c.definition, check_column(connection, Column{c.definition, key_type, c.collation_id, Json::string},
                                      text_values(seed++, c.pieces)));
  }
}

TEST_CASE("merge key order live: composite keys compare as row constructors") {
  auto connection = connect();
  std::mt19937_64 rng(6);
  const std::vector<Column> columns = {
      Column{"varbinary(4)", "varbinary(4)", 63, Json::base64},
      Column{"varchar(6) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", "varchar(6)", 46, Json::string},
      Column{"decimal(4,1)", "decimal(4,1)", 0, Json::string},
      Column{"int(11)", "int(11)", 0, Json::number},
  };
  const std::vector<std::string> bytes = {"", "00", "61", "6100", "6161", "20"};
  const std::vector<std::string> texts = {"", "a", "a ", "a\t", "ab", "A"};
  std::vector<std::vector<std::string>> rows;
  for (std::size_t r = 0; r < kRows; ++r) {
    rows.push_back({"X'" + bytes[rng() % bytes.size()] + "'", text_literal(texts[rng() % texts.size()]),
                    fmt::format("'{}{}.{}'", rng() % 2 ? "-" : "", rng() % 3, rng() % 2 * 5),
                    std::to_string(static_cast<int>(rng() % 5) - 2)});
  }
  report("(varbinary, utf8mb4_bin, decimal, int)", check_columns(connection, columns, rows));
}
