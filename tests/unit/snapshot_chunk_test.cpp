// cdc-snapshot's chunk lines: parsing, bound literals and the SELECT text, without a server.

#include <doctest/doctest.h>
#include <simdjson.h>

#include <string>
#include <utility>
#include <vector>

#include "snapshot/chunk.h"
#include "snapshot/run_snapshot.h"
#include "snapshot/table_definitions.h"
#include "util/base64.h"

namespace {

// The chunk line as cdc-snapshot reads it: the record, then its bounds against the key types.
cdc::Result<cdc::records::Chunk> parse(const std::string& line) {
  static simdjson::dom::parser parser;
  simdjson::dom::object record;
  REQUIRE(parser.parse(line).get_object().get(record) == simdjson::SUCCESS);
  auto chunk = cdc::records::parse_chunk(record);
  if (!chunk) return chunk;
  if (auto named = cdc::snapshot::check_table_name(*chunk); !named) return cdc::fail(named.error());
  if (auto checked = cdc::snapshot::check_bounds(*chunk); !checked) return cdc::fail(checked.error());
  return chunk;
}

std::string literal(const std::string& json, const std::string& type) {
  simdjson::dom::parser parser;
  simdjson::dom::element element;
  REQUIRE(parser.parse(json).get(element) == simdjson::SUCCESS);
  auto result = cdc::snapshot::bound_literal(element, type);
  REQUIRE_MESSAGE(result.has_value(), result.error().message);
  return *result;
}

const std::string kLine =
    R"J({"op":"chunk","v":1,"db":"shop","table":"or`ders","key":["id","k"],"key_types":["int(10) unsigned","varbinary(16)"],)J"
    R"J("start":[1000,"AAE="],"end":null,"index":3,"count":12,)J"
    R"J("columns":[{"name":"id","type":"int(10) unsigned","collation_id":0},{"name":"k","type":"varbinary(16)","collation_id":63}],)J"
    R"J("rows_estimate":8096})J";

}  // namespace

TEST_CASE("snapshot chunk: a planned line parses and gives its SELECT") {
  auto chunk = parse(kLine);
  REQUIRE_MESSAGE(chunk.has_value(), chunk.error().message);
  CHECK(chunk->db == "shop");
  CHECK(chunk->index == 3);
  CHECK(chunk->count == 12);
  CHECK(chunk->rows_estimate == 8096);
  CHECK(chunk->columns.size() == 2);
  CHECK(chunk->columns[1].collation_id == 63);
  CHECK(chunk->describe() == "shop.or`ders chunk 3/12");
  CHECK(*cdc::snapshot::select_sql(*chunk) ==
        "SELECT `id`,`k` FROM `shop`.`or``ders` WHERE ((`id` > 1000) OR (`id` = 1000 AND `k` >= X'0001')) "
        "ORDER BY `id`,`k`");
  CHECK(cdc::snapshot::chunk_file_name(*chunk) == "shop.or`ders.3.ndjson");
}

TEST_CASE("snapshot chunk: single-column keys, both ends and open ends") {
  std::string line = kLine;
  line.replace(line.find(R"J("key":["id","k"])J"), 16, R"J("key":["id"])J");
  line.replace(line.find(R"J("key_types":["int(10) unsigned","varbinary(16)"])J"), 48,
               R"J("key_types":["int(10) unsigned"])J");
  line.replace(line.find(R"J("start":[1000,"AAE="],"end":null)J"), 32, R"J("start":[5],"end":[18446744073709551615])J");
  auto chunk = parse(line);
  REQUIRE_MESSAGE(chunk.has_value(), chunk.error().message);
  CHECK(*cdc::snapshot::select_sql(*chunk) ==
        "SELECT `id`,`k` FROM `shop`.`or``ders` WHERE (`id` >= 5) AND (`id` < 18446744073709551615) ORDER BY `id`");
  line.replace(line.find(R"J("start":[5],"end":[18446744073709551615])J"), 40, R"J("start":null,"end":null)J");
  chunk = parse(line);
  REQUIRE_MESSAGE(chunk.has_value(), chunk.error().message);
  CHECK(*cdc::snapshot::select_sql(*chunk) == "SELECT `id`,`k` FROM `shop`.`or``ders` ORDER BY `id`");
}

TEST_CASE("snapshot chunk: a table without a key is one chunk, read whole and in no order") {
  std::string line = kLine;
  line.replace(line.find(R"J("key":["id","k"])J"), 16, R"J("key":[])J");
  line.replace(line.find(R"J("key_types":["int(10) unsigned","varbinary(16)"])J"), 48, R"J("key_types":[])J");
  const std::string bounds = R"J("start":[1000,"AAE="],"end":null,"index":3,"count":12)J";
  line.replace(line.find(bounds), bounds.size(), R"J("start":null,"end":null,"index":0,"count":1)J");
  auto chunk = parse(line);
  REQUIRE_MESSAGE(chunk.has_value(), chunk.error().message);
  CHECK(chunk->key.empty());
  CHECK(*cdc::snapshot::select_sql(*chunk) == "SELECT `id`,`k` FROM `shop`.`or``ders`");
  // Without a key there is nothing to split by: one chunk, open at both ends.
  for (const auto& swap : std::vector<std::pair<std::string, std::string>>{
           {R"J("index":0,"count":1)J", R"J("index":0,"count":2)J"},
           {R"J("start":null)J", R"J("start":[])J"},
           {R"J("end":null)J", R"J("end":[])J"}}) {
    const std::string& from = swap.first;
    std::string bad = line;
    bad.replace(bad.find(from), from.size(), swap.second);
    CAPTURE(bad);
    auto refused = parse(bad);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message.find("only chunk") != std::string::npos);
  }
}

TEST_CASE("snapshot chunk: MariaDB INET6 and UUID columns are read as they are, for the server's text") {
  std::string line = kLine;
  const std::string id_column = R"J({"name":"id","type":"int(10) unsigned","collation_id":0})J";
  line.replace(line.find(id_column), id_column.size(),
               R"J({"name":"id","type":"int(10) unsigned","collation_id":0},{"name":"a","type":"inet6"},{"name":"u","type":"UUID"})J");
  auto chunk = parse(line);
  REQUIRE_MESSAGE(chunk.has_value(), chunk.error().message);
  CHECK(cdc::snapshot::select_sql(*chunk)->starts_with(
      "SELECT `id`,`a`,`u`,`k` FROM"));
}

TEST_CASE("snapshot chunk: bound literals by key type") {
  CHECK(literal("-5", "bigint(20)") == "-5");
  CHECK(literal("18446744073709551615", "bigint(20) unsigned") == "18446744073709551615");
  CHECK(literal(R"J("12.50")J", "decimal(10,2)") == "12.50");
  CHECK(literal(R"J("/w==")J", "varbinary(16)") == "X'FF'");
  CHECK(literal(R"J("AAAAAA==")J", "binary(4)") == "X'00000000'");
  CHECK(literal(R"J("")J", "blob") == "X''");
  CHECK(literal(R"J("caf\u00e9")J", "varchar(10)") == "_utf8mb4 X'636166C3A9'");
  // MariaDB's INET4/INET6/UUID: their text, which the server reads back as the type.
  CHECK(literal(R"J("::ffff:10.0.0.1")J", "inet6") == "'::ffff:10.0.0.1'");
  CHECK(literal(R"J("123e4567-e89b-12d3-a456-426614174000")J", "UUID") ==
        "'123e4567-e89b-12d3-a456-426614174000'");
  CHECK(literal(R"J("10.0.0.1")J", "inet4") == "'10.0.0.1'");
  {
    simdjson::dom::parser parser;
    simdjson::dom::element base64;
    const std::string json = R"J("AAAAAAAAAAAAAAAAAAAAAQ==")J";
    REQUIRE(parser.parse(json).get(base64) == simdjson::SUCCESS);
    auto refused = cdc::snapshot::bound_literal(base64, "inet6");
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message ==
          "key type inet6 needs the server's text of a value, got \"AAAAAAAAAAAAAAAAAAAAAQ==\"");
  }
  CHECK(literal(R"J("2024-01-02 03:04:05Z")J", "timestamp") == "_utf8mb4 X'323032342D30312D30322030333A30343A3035'");
  CHECK(literal(R"J("2024-01-02")J", "date") == "_utf8mb4 X'323032342D30312D3032'");
}

TEST_CASE("snapshot chunk: malformed lines name the field") {
  const auto error_of = [](const std::string& line) {
    auto chunk = parse(line);
    REQUIRE_FALSE(chunk.has_value());
    CHECK(chunk.error().code == cdc::Errc::corrupt_input);
    return chunk.error().message;
  };
  CHECK(error_of(R"J({"op":"r"})J") == "expected an op:\"chunk\" line, got op \"r\"");
  CHECK(error_of(R"J({"op":"chunk","db":1})J") == "chunk field \"db\" must be a string");
  std::string line = kLine;
  line.replace(line.find(R"J("index":3)J"), 9, R"J("index":12)J");
  CHECK(error_of(line) == "chunk index 12 is not below its count 12");
  line = kLine;
  line.replace(line.find(R"J("AAE=")J"), 6, R"J("%%")J");
  CHECK(error_of(line) == "chunk field \"start\" value 2: key type varbinary(16) needs base64, got \"%%\"");
  line = kLine;
  line.replace(line.find(R"J([1000,"AAE="])J"), 13, "[1000]");
  CHECK(error_of(line) == "chunk field \"start\" has 1 values for 2 key columns");
  line = kLine;
  line.replace(line.find(R"J("end":null)J"), 10, R"J("end":[true,"AA=="])J");
  CHECK(error_of(line) ==
        "chunk field \"end\" value 1: a key bound must be a number or a string (key type int(10) unsigned)");
}

TEST_CASE("snapshot chunk: a database or table no table can be named is bad input, found without a server") {
  const auto with_names = [](const std::string& db, const std::string& table) {
    const std::string planned = R"J("db":"shop","table":"or`ders")J";
    std::string line = kLine;
    line.replace(line.find(planned), planned.size(), "\"db\":\"" + db + "\",\"table\":\"" + table + "\"");
    return parse(line);
  };
  const auto error_of = [&](const std::string& db, const std::string& table) {
    auto chunk = with_names(db, table);
    REQUIRE_FALSE(chunk.has_value());
    CHECK(chunk.error().code == cdc::Errc::corrupt_input);
    return chunk.error().message;
  };
  const std::string long_name(65, 'a');
  CHECK(error_of("shop", long_name) ==
        "no table can be named \"shop\".\"" + long_name + "\": the table name has 65 characters, more than the 64 a "
        "name can have");
  CHECK(error_of(long_name, "t") == "no table can be named \"" + long_name + "\".\"t\": the database name has 65 "
                                    "characters, more than the 64 a name can have");
  CHECK(error_of("shop", "") == "no table can be named \"shop\".\"\": the table name is empty");
  CHECK(error_of("", "t") == "no table can be named \"\".\"t\": the database name is empty");
  CHECK(error_of("shop", "a\\u0000b") ==
        "no table can be named \"shop\".\"a\\u0000b\": the table name contains U+0000");
  CHECK(error_of("shop", "orders ") ==
        "no table can be named \"shop\".\"orders \": the table name ends with a space");
  CHECK(error_of("shop ", "t") == "no table can be named \"shop \".\"t\": the database name ends with a space");
  // Characters, not bytes: 64 two-byte characters are a name; a leading space is too.
  std::string accents;
  for (int i = 0; i < 64; ++i) accents += "\xC3\xA9";  // é
  CHECK(with_names("shop", accents).has_value());
  CHECK(with_names(" shop", "or/ders.x").has_value());
  CHECK(error_of("shop", accents + "e")
            .ends_with("the table name has 65 characters, more than the 64 a name can have"));
}

TEST_CASE("snapshot chunk: a name the server rejects is bad input, a table gone too, other errors as they are") {
  using cdc::snapshot::TableDefinitions;
  auto chunk = parse(kLine);
  REQUIRE(chunk.has_value());
  const auto seen = [&](std::string message, cdc::Errc code = cdc::Errc::server) {
    return TableDefinitions::gone_when_missing(cdc::Error{code, std::move(message)}, *chunk);
  };
  const std::string query = "127.0.0.1:3306: query 'SHOW CREATE TABLE `shop`.`or``ders`' failed: ";
  CHECK(seen(query + "Table 'shop.or`ders' doesn't exist [1146]").message ==
        "table shop.or`ders no longer exists; plan again with cdc-plan");
  for (const char* rejected : {"Incorrect table name 'x' [1103]", "Incorrect database name 'x' [1102]",
                               "Identifier name 'x' is too long [1059]",
                               "Invalid utf8mb4 character string: 'x' [1300]"}) {
    const cdc::Error error = seen(query + rejected);
    CHECK(error.code == cdc::Errc::corrupt_input);
    CHECK(error.message ==
          "no table can be named \"shop\".\"or`ders\": the server rejects the name: " + query + rejected);
  }
  CHECK(seen(query + "SHOW VIEW command denied [1142]").code == cdc::Errc::server);
  CHECK(seen(query + "Lost connection [2013]", cdc::Errc::unavailable).code == cdc::Errc::unavailable);
}

TEST_CASE("snapshot chunk: base64") {
  CHECK(cdc::decode_base64("") == std::string());
  CHECK(cdc::decode_base64("YWJj") == std::string("abc"));
  CHECK(cdc::decode_base64("YQ==") == std::string("a"));
  CHECK(cdc::decode_base64("YQ") == std::string("a"));
  CHECK_FALSE(cdc::decode_base64("Y").has_value());
  CHECK_FALSE(cdc::decode_base64("YQ==YQ").has_value());
  CHECK_FALSE(cdc::decode_base64("Y Q").has_value());
}

TEST_CASE("table definitions: SHOW CREATE TABLE's text without the AUTO_INCREMENT counter") {
  using cdc::snapshot::definition_without_counter;
  const std::string column_part =
      "CREATE TABLE `t` (\n  `id` int(11) NOT NULL AUTO_INCREMENT,\n  `note` varchar(20) DEFAULT ' AUTO_INCREMENT=5',\n"
      "  PRIMARY KEY (`id`)\n)";
  // The counter goes; the column attribute and a default that looks like the option stay.
  CHECK(definition_without_counter(column_part + " ENGINE=InnoDB AUTO_INCREMENT=1234 DEFAULT CHARSET=utf8mb4") ==
        column_part + " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4");
  CHECK(definition_without_counter(column_part + " ENGINE=InnoDB AUTO_INCREMENT=7") == column_part + " ENGINE=InnoDB");
  CHECK(definition_without_counter(column_part + " ENGINE=InnoDB DEFAULT CHARSET=latin1") ==
        column_part + " ENGINE=InnoDB DEFAULT CHARSET=latin1");
  // Two counters' values, one definition; two definitions stay two.
  CHECK(definition_without_counter(column_part + " ENGINE=InnoDB AUTO_INCREMENT=2") ==
        definition_without_counter(column_part + " ENGINE=InnoDB AUTO_INCREMENT=99999"));
  CHECK(definition_without_counter(column_part + " ENGINE=InnoDB AUTO_INCREMENT=2") !=
        definition_without_counter(column_part + " ENGINE=Aria AUTO_INCREMENT=2"));
  CHECK(definition_without_counter("no closing line") == "no closing line");
}
