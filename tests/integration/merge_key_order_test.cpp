// order/key_order.h against the live server: for each key type and collation it supports, a few
// hundred random values go into a table with that column, come back through a SELECT and are
// written as JSON the way the tools write them (ndjson::Writer), and then every ordered pair of
// rows is compared twice: by the server (x.v < y.v, x.v = y.v under the column's type and
// collation, in one self-join) and by memcmp of the two sort keys. Every pair must agree.

#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "key_order_check.h"
#include "order/collation_weights.h"

using namespace cdc::test::key_order;


TEST_CASE("merge key order live: every BMP character and every latin1 byte pair compare as on the server") {
  if (!cdc::order::detail::have_collation_weights()) {
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

TEST_CASE("merge key order live: MariaDB INET4, INET6 and UUID agree with the server") {
  auto connection = connect();
  std::mt19937_64 rng(12);
  const auto hex_digits = [&](std::size_t count, std::string_view alphabet = "0123456789abcdef") {
    std::string out;
    for (std::size_t i = 0; i < count; ++i) out.push_back(alphabet[rng() % alphabet.size()]);
    return out;
  };
  const auto quoted = [](std::string_view text) { return fmt::format("'{}'", text); };
  // INET4: any four bytes, as text.
  const auto inet4 =
      generate(kRows, {"'0.0.0.0'", "'0.0.0.1'", "'255.255.255.255'", "'10.0.0.0'", "'9.255.255.255'"},
               [&] { return fmt::format("'{}.{}.{}.{}'", rng() % 256, rng() % 256, rng() % 256, rng() % 256); });
  report("inet4", check_column(connection, Column{"inet4", "inet4", 0, Json::string}, inet4));
  // INET6: groups that are often zero, and the IPv4-compatible and -mapped forms.
  const auto inet6 = generate(
      kRows, {"'::'", "'::1'", "'::ffff:0.0.0.0'", "'::1.2.3.4'", "'1::'", "'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'"},
      [&] {
        std::string address;
        const std::uint64_t form = rng() % 4;
        for (int group = 0; group < 8; ++group) {
          const bool zero = form == 0 ? group < 6 : form == 1 ? group < 5 : rng() % 2 == 0;
          std::string value = zero ? "0" : hex_digits(1 + rng() % 4);
          if (form == 1 && group == 5) value = "ffff";
          address += (group == 0 ? "" : ":") + value;
        }
        return quoted(address);
      });
  report("inet6", check_column(connection, Column{"inet6", "inet6", 63, Json::string}, inet6));
  // UUID: every version with every variant the server takes as text (not versions 8 to f with
  // variant bits 0 to 8, which it refuses), so that both of its orders meet in each pair.
  const auto uuid = generate(
      kRows,
      {"'00000000-0000-0000-0000-000000000000'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'",
       "'123e4567-e89b-12d3-a456-426614174000'", "'11111111-2222-0333-8444-555555555555'",
       "'11111111-2222-1333-8444-555555555555'", "'11111111-2222-7333-c444-555555555555'", "UUID()"},
      [&] {
        const char version = "0123456789abcdef"[rng() % 16];
        const char variant = version >= '8' ? "9abcdef"[rng() % 7] : "0123456789abcdef"[rng() % 16];
        return quoted(fmt::format("{}-{}-{}{}-{}{}-{}", hex_digits(8), hex_digits(4), version, hex_digits(3), variant,
                                  hex_digits(3), hex_digits(12)));
      });
  report("uuid", check_column(connection, Column{"uuid", "uuid", 63, Json::string}, uuid));
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
  if (!cdc::order::detail::have_collation_weights()) {
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
