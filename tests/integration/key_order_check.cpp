// Helpers of the order/key_order.h proofs against the live server (merge_key_order_test.cpp,
// merge_key_order_uca_test.cpp): see key_order_check.h.

#include "key_order_check.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "ndjson/writer.h"
#include "test_server.h"

namespace cdc::test::key_order {

// One database per process: CTest runs the cases of this file side by side.
const std::string kDatabase = fmt::format("key_order_test_{}", ::getpid());

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
    auto done = cdc::order::append_row_sort_key(orders, views, keys.at(i));
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

}  // namespace cdc::test::key_order
