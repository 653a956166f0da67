// cdc-apply's value -> SQL literal conversion (libcore/apply/sql_value.h): every type of
// cdc-ndjson(5) VALUES, by the column's type text as a table line gives it.

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "apply/sql_value.h"
#include "apply/target_table.h"

namespace {

using cdc::apply::LiteralUse;

cdc::apply::ColumnSql column_of(std::string_view type, std::optional<std::string> charset = std::nullopt) {
  cdc::records::TableColumn column;
  column.name = "c";
  column.type = std::string(type);
  column.charset = std::move(charset);
  return cdc::apply::column_sql(column);
}

// The literal of a JSON value (its text) in a column of that type; "ERROR: ..." on failure.
std::string literal(std::string_view type, std::string_view json, LiteralUse use = LiteralUse::value,
                    std::optional<std::string> charset = std::nullopt) {
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(json);
  simdjson::dom::element value;
  REQUIRE(parser.parse(padded).get(value) == simdjson::SUCCESS);
  std::string out;
  std::string scratch;
  auto done = cdc::apply::append_literal(out, column_of(type, std::move(charset)), value, use, scratch);
  if (!done) return "ERROR: " + done.error().message;
  return out;
}

}  // namespace

TEST_CASE("apply values: integers, BIT and YEAR are numbers with every digit") {
  CHECK(literal("tinyint(4)", "-128") == "-128");
  CHECK(literal("int(10) unsigned", "4294967295") == "4294967295");
  CHECK(literal("bigint(20)", "-9223372036854775808") == "-9223372036854775808");
  CHECK(literal("bigint(20) unsigned", "18446744073709551615") == "18446744073709551615");
  CHECK(literal("bit(64)", "18446744073709551615") == "18446744073709551615");
  CHECK(literal("bit(1)", "0") == "0");
  CHECK(literal("year(4)", "2155") == "2155");
  CHECK(literal("year", "0") == "0");
  CHECK(literal("int(11)", "\"5\"").starts_with("ERROR: column `c` (int(11)): expected an integer"));
  CHECK(literal("int(11)", "1.5").starts_with("ERROR: "));
}

TEST_CASE("apply values: FLOAT and DOUBLE in their shortest text, FLOAT cast back in comparisons") {
  CHECK(literal("double", "0.1") == "0.1");
  CHECK(literal("double", "-1.7976931348623157e308") == "-1.7976931348623157e+308");
  CHECK(literal("double", "5e-324") == "5e-324");
  CHECK(literal("double", "3") == "3");
  CHECK(literal("float", "1.1") == "1.1");
  CHECK(literal("float", "1.1", LiteralUse::comparison) == "CAST(1.1 AS FLOAT)");
  CHECK(literal("double", "1.1", LiteralUse::comparison) == "1.1");
  CHECK(literal("double", "null") == "NULL");  // NaN and infinity are written as null
  CHECK(literal("float", "\"x\"").starts_with("ERROR: "));
}

// Found by tests/integration/apply_types.sh: type_differential.py's FLOAT edge -3.4028234e38,
// which cdc-stream writes as its shortest text -3.4028235e+38, was "Out of range value for
// column 'f'" on a MariaDB target (exit 65): the server reads the literal as a DOUBLE, past FLT_MAX.
TEST_CASE("apply values: the largest FLOATs as the float's own value, which the server reads in range") {
  CHECK(literal("float", "3.4028235e+38") == "3.4028234663852886e+38");
  CHECK(literal("float", "-3.4028235e+38") == "-3.4028234663852886e+38");
  CHECK(literal("float", "-3.4028235e+38", LiteralUse::comparison) == "CAST(-3.4028234663852886e+38 AS FLOAT)");
  CHECK(literal("float", "3.4028233e+38") == "3.4028233e+38");  // in range: the shortest text still
  CHECK(literal("float", "1e-45") == "1e-45");
  CHECK(literal("double", "3.4028235e+38") == "3.4028235e+38");
}

TEST_CASE("apply values: DECIMAL strings are exact numeric literals, and nothing else passes") {
  CHECK(literal("decimal(8,2)", "\"12.50\"") == "12.50");
  CHECK(literal("decimal(8,2)", "\"-0.50\"") == "-0.50");
  CHECK(literal("decimal(65,30)", "\"99999999999999999999999999999999999.999999999999999999999999999999\"") ==
        "99999999999999999999999999999999999.999999999999999999999999999999");
  CHECK(literal("decimal(10,0)", "\"7\"") == "7");
  CHECK(literal("decimal(8,2)", "\"1;DROP TABLE t\"").starts_with("ERROR: "));
  CHECK(literal("decimal(8,2)", "\"1.2.3\"").starts_with("ERROR: "));
  CHECK(literal("decimal(8,2)", "\"-\"").starts_with("ERROR: "));
  CHECK(literal("decimal(8,2)", "12.5").starts_with("ERROR: "));
}

TEST_CASE("apply values: dates and times quoted as written, zero dates too") {
  CHECK(literal("date", "\"2024-02-29\"") == "'2024-02-29'");
  CHECK(literal("date", "\"0000-00-00\"") == "'0000-00-00'");
  CHECK(literal("time(3)", "\"-838:59:59.000\"") == "'-838:59:59.000'");
  CHECK(literal("datetime(6)", "\"9999-12-31 23:59:59.999999\"") == "'9999-12-31 23:59:59.999999'");
  CHECK(literal("datetime", "\"0000-00-00 00:00:00\"") == "'0000-00-00 00:00:00'");
}

TEST_CASE("apply values: a TIMESTAMP's UTC text loses its Z (the session is at +00:00), the zero one has none") {
  CHECK(literal("timestamp(3)", "\"2024-09-04 10:52:12.189Z\"") == "'2024-09-04 10:52:12.189'");
  CHECK(literal("timestamp", "\"1970-01-01 00:00:01Z\"") == "'1970-01-01 00:00:01'");
  CHECK(literal("timestamp(2)", "\"0000-00-00 00:00:00.00\"") == "'0000-00-00 00:00:00.00'");
}

TEST_CASE("apply values: text, ENUM and SET quoted with quote, backslash and NUL escaped") {
  CHECK(literal("varchar(32)", "\"plain\"") == "'plain'");
  CHECK(literal("varchar(32)", R"("it's")") == R"('it\'s')");
  CHECK(literal("text", R"("a\\b")") == R"('a\\b')");
  CHECK(literal("text", R"("nul\u0000byte")") == std::string("'nul\\0byte'"));
  CHECK(literal("char(4)", R"("été ☃")") == "'été ☃'");
  CHECK(literal("longtext", R"("{\"a\":1}")") == R"('{"a":1}')");  // MariaDB's JSON
  CHECK(literal("enum('s','m')", "\"m\"") == "'m'");
  CHECK(literal("enum('s','m')", "\"\"") == "''");
  CHECK(literal("enum('s','m')", "2") == "2");  // the index, without labels in the binlog
  CHECK(literal("set('a','b','c')", "\"a,c\"") == "'a,c'");
  CHECK(literal("set('a','b','c')", "5") == "5");
  CHECK(literal("varchar(3)", "7").starts_with("ERROR: "));
}

TEST_CASE("apply values: BINARY, VARBINARY, BLOB and GEOMETRY from base64 to X'..'") {
  CHECK(literal("binary(4)", "\"AAECAw==\"") == "X'00010203'");
  CHECK(literal("varbinary(8)", "\"\"") == "X''");
  CHECK(literal("blob", "\"/w==\"") == "X'FF'");
  CHECK(literal("varchar(8)", "\"/w==\"", LiteralUse::value, "binary") == "X'FF'");  // a text type in binary
  CHECK(literal("point", "\"AAAAAAEBAAAAAAAAAAAA8D8AAAAAAAAAQA==\"") ==
        "X'000000000101000000000000000000F03F0000000000000040'");
  CHECK(literal("blob", "\"not base64!\"").starts_with("ERROR: column `c` (blob): expected base64"));
}

TEST_CASE("apply values: MySQL JSON as its text, cast to JSON in comparisons, VECTOR through STRING_TO_VECTOR") {
  CHECK(literal("json", R"({"a":[1,2.5,"x'y"],"b":null})") == R"('{"a":[1,2.5,"x\'y"],"b":null}')");
  CHECK(literal("json", R"("text")") == R"('"text"')");
  CHECK(literal("json", "3", LiteralUse::comparison) == "CAST('3' AS JSON)");
  CHECK(literal("json", "null") == "NULL");  // an empty document
  CHECK(literal("vector(3)", "[1.1,2.2,3.3]") == "STRING_TO_VECTOR('[1.1,2.2,3.3]')");
}

TEST_CASE("apply values: MariaDB's INET4, INET6 and UUID as the text the server reads back") {
  CHECK(literal("inet4", "\"10.0.0.1\"") == "'10.0.0.1'");
  CHECK(literal("inet6", "\"::ffff:10.0.0.1\"") == "'::ffff:10.0.0.1'");
  CHECK(literal("uuid", "\"123e4567-e89b-12d3-a456-426614174000\"") == "'123e4567-e89b-12d3-a456-426614174000'");
  CHECK(literal("binary(16)", "\"EjRWeJCrze8SNFZ4kKvN7w==\"") == "X'1234567890ABCDEF1234567890ABCDEF'");
}

// Found by tests/integration/apply_types.sh (about one run in twenty of 600 rows): the source
// held the UUID 978c1b0c-7366-8076-80bb-f52adcbc83b4, stored from random bytes, whose text the
// target refused, "Incorrect uuid value" (exit 65). Its record's bytes write it; a comparison
// reads values, which are its own bytes. The SQL that showed both, on MariaDB 10.11:
//   INSERT INTO t (u) VALUES (X'F52ADCBC83B480BB80767366978C1B0C');   -- reads back as the text
//   SELECT ... WHERE u <=> X'978C1B0C7366807680BBF52ADCBC83B4';         -- finds it
TEST_CASE("apply values: a UUID only a swapped record holds, as that record, and compared as its bytes") {
  CHECK(literal("uuid", "\"978c1b0c-7366-8076-80bb-f52adcbc83b4\"") == "X'F52ADCBC83B480BB80767366978C1B0C'");
  CHECK(literal("uuid", "\"978c1b0c-7366-8076-80bb-f52adcbc83b4\"", LiteralUse::comparison) ==
        "X'978C1B0C7366807680BBF52ADCBC83B4'");
  // byte 8 past 0x80, or byte 6 without its high bit: the text, which the server takes
  CHECK(literal("uuid", "\"978c1b0c-7366-8076-c0bb-f52adcbc83b4\"") == "'978c1b0c-7366-8076-c0bb-f52adcbc83b4'");
  CHECK(literal("uuid", "\"978c1b0c-7366-7076-80bb-f52adcbc83b4\"") == "'978c1b0c-7366-7076-80bb-f52adcbc83b4'");
  CHECK(literal("uuid", "\"978c1b0c-7366-8076-00bb-f52adcbc83b4\"") == "'978c1b0c-7366-8076-00bb-f52adcbc83b4'");
  CHECK(literal("uuid", "\"not a uuid\"") == "'not a uuid'");
  CHECK(literal("varchar(36)", "\"978c1b0c-7366-8076-80bb-f52adcbc83b4\"") == "'978c1b0c-7366-8076-80bb-f52adcbc83b4'");
}

TEST_CASE("apply values: NULL in any column") {
  for (const char* type : {"int(11)", "varchar(3)", "blob", "json", "timestamp", "decimal(5,2)", "uuid"})
    CHECK(literal(type, "null") == "NULL");
}

TEST_CASE("apply tables: the INSERT prefix, the upsert clause and CREATE TABLE from a table line") {
  cdc::records::TableLine line;
  line.db = "shop";
  line.table = "or`ders";
  line.columns = {{"id", "int(11)", false, std::nullopt, std::nullopt, {}},
                  {"note", "varchar(20)", true, "utf8mb4", "utf8mb4_general_ci", {}}};
  line.key = std::vector<std::string>{"id"};
  const cdc::apply::TargetTable table = cdc::apply::target_table(line, "copy");
  CHECK(table.qualified == "`copy`.`or``ders`");
  CHECK(table.insert_prefix == "INSERT INTO `copy`.`or``ders` (`id`,`note`) VALUES ");
  CHECK(table.upsert_suffix == " ON DUPLICATE KEY UPDATE `id`=VALUES(`id`),`note`=VALUES(`note`)");
  CHECK(table.key_columns == std::vector<std::size_t>{0});
  CHECK(cdc::apply::create_table_sql(line, "copy") ==
        "CREATE TABLE IF NOT EXISTS `copy`.`or``ders` (`id` int(11) NOT NULL, `note` varchar(20) CHARACTER SET "
        "utf8mb4 COLLATE utf8mb4_general_ci NULL, PRIMARY KEY (`id`)) ENGINE=InnoDB");
  line.key.reset();
  CHECK(cdc::apply::target_table(line, "copy").upsert_suffix.empty());
}
