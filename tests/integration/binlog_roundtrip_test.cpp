// Live round trip: the test server writes rows covering every column type MariaDB has, and
// the values cdc-stream decodes from its binlog must equal what the server returns for the
// same rows (in the value encoding of DESIGN.md).

#include <doctest/doctest.h>
#include <simdjson.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "mysql/connection.h"
#include "ndjson/reader.h"
#include "stream/file_stream.h"
#include "test_server.h"

namespace {

// How a column's expected value is derived from what the server returns.
enum class Expect { number, year, text, utc_timestamp, hex_of_base64, float_value, double_value };

struct ColumnCase {
  std::string name;
  std::string definition;
  std::string select;  // expression returning the server's text for the value
  Expect expect;
};

const std::vector<ColumnCase>& columns() {
  static const std::vector<ColumnCase> kColumns = {
      {"id", "INT NOT NULL PRIMARY KEY", "id", Expect::number},
      {"ti", "TINYINT", "ti", Expect::number},
      {"tiu", "TINYINT UNSIGNED", "tiu", Expect::number},
      {"si", "SMALLINT", "si", Expect::number},
      {"siu", "SMALLINT UNSIGNED", "siu", Expect::number},
      {"mi", "MEDIUMINT", "mi", Expect::number},
      {"miu", "MEDIUMINT UNSIGNED", "miu", Expect::number},
      {"i", "INT", "i", Expect::number},
      {"iu", "INT UNSIGNED", "iu", Expect::number},
      {"bi", "BIGINT", "bi", Expect::number},
      {"biu", "BIGINT UNSIGNED", "biu", Expect::number},
      {"f", "FLOAT", "f", Expect::float_value},
      {"d", "DOUBLE", "d", Expect::double_value},
      {"dec1", "DECIMAL(10,2)", "dec1", Expect::text},
      {"dec2", "DECIMAL(65,30)", "dec2", Expect::text},
      {"dec3", "DECIMAL(5,0)", "dec3", Expect::text},
      {"dt", "DATE", "dt", Expect::text},
      {"tm", "TIME", "tm", Expect::text},
      {"tm6", "TIME(6)", "tm6", Expect::text},
      {"dtm", "DATETIME", "dtm", Expect::text},
      {"dtm3", "DATETIME(3)", "dtm3", Expect::text},
      {"dtm6", "DATETIME(6)", "dtm6", Expect::text},
      {"ts", "TIMESTAMP NULL", "ts", Expect::utc_timestamp},
      {"ts6", "TIMESTAMP(6) NULL", "ts6", Expect::utc_timestamp},
      {"yr", "YEAR", "yr", Expect::year},
      {"ch", "CHAR(10) CHARACTER SET utf8mb4", "ch", Expect::text},
      {"vc", "VARCHAR(300) CHARACTER SET utf8mb4", "vc", Expect::text},
      {"l1", "VARCHAR(20) CHARACTER SET latin1", "l1", Expect::text},
      {"u2", "VARCHAR(20) CHARACTER SET ucs2", "u2", Expect::text},
      {"u16", "CHAR(5) CHARACTER SET utf16", "u16", Expect::text},
      {"u32", "VARCHAR(5) CHARACTER SET utf32", "u32", Expect::text},
      {"tx", "TEXT CHARACTER SET utf8mb4", "tx", Expect::text},
      {"bn", "BINARY(4)", "HEX(bn)", Expect::hex_of_base64},
      {"vb", "VARBINARY(20)", "HEX(vb)", Expect::hex_of_base64},
      {"bl", "BLOB", "HEX(bl)", Expect::hex_of_base64},
      {"bt1", "BIT(1)", "CAST(bt1 AS UNSIGNED)", Expect::number},
      {"bt9", "BIT(9)", "CAST(bt9 AS UNSIGNED)", Expect::number},
      {"bt64", "BIT(64)", "CAST(bt64 AS UNSIGNED)", Expect::number},
      {"en", "ENUM('small','medium','large')", "en", Expect::text},
      {"st", "SET('a','b','c','d')", "st", Expect::text},
      {"js", "JSON", "js", Expect::text},
      {"geo", "GEOMETRY", "HEX(geo)", Expect::hex_of_base64},
  };
  return kColumns;
}

// Rows with the edge values users hit (cf. ../shared/fixtures/sql): limits of every integer,
// zero dates, DECIMAL(65,30), fractional seconds, negative TIME, latin1/ucs2 text, empty SET.
const std::vector<std::string>& rows() {
  static const std::vector<std::string> kRows = {
      "(1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808, "
      "18446744073709551615, 3.1415927, 2.718281828459045, -12345678.90, "
      "'99999999999999999999999999999999999.999999999999999999999999999999', 99999, "
      "'1000-01-01', '-838:59:59', '-00:00:00.000001', '1000-01-01 00:00:00', '2024-09-04 10:52:12.189', "
      "'9999-12-31 23:59:59.999999', '1970-01-01 00:00:01', '2038-01-19 03:14:07.999999', 1901, "
      "'abc', REPEAT('x', 300), 'caf\xc3\xa9 \xc3\xbc', '\xc3\xa9t\xc3\xa9', 'h\xf0\x9f\x98\x80', 'z\xc3\xbc', "
      "'line1\\nline2 \"q\" \\\\ tab\\t', x'00ff0000', x'', x'89504e470d0a1a0a', b'1', b'100000001', "
      "b'1111111111111111111111111111111111111111111111111111111111111111', 'large', '', "
      "'{\"a\": [1, 2.5, null, true], \"b\": {\"c\": \"d\"}}', ST_GeomFromText('POINT(1 2)'))",
      "(2, 127, 0, 32767, 0, 8388607, 0, 2147483647, 0, 9223372036854775807, 0, -0.5, -1e300, 0.00, "
      "'-0.000000000000000000000000000001', -99999, '0000-00-00', '838:59:59', '00:00:00', '0000-00-00 00:00:00', "
      "'0000-00-00 00:00:00.000', '2000-02-29 12:00:00.5', NULL, '2000-01-01 00:00:00.000001', 2155, "
      "'', '', '', '', '', '', '', x'01', x'ff', x'', b'0', b'0', b'0', 'small', 'a,b,c,d', '[]', NULL)",
      "(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
      "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
      "NULL, NULL, NULL, NULL, NULL, NULL)",
      "(4, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1e-38, 5e-324, 0.01, 0, 0, '2024-02-29', '12:34:56', '-12:34:56.5', "
      "'2024-02-29 23:59:59', '2024-02-29 23:59:59.999', '2024-02-29 23:59:59.000001', '2024-02-29 23:59:59', "
      "'2024-02-29 23:59:59.123456', 0, 'pad  ', 'trailing  ', '\xc3\x80\xc3\xbf', '\xe4\xb8\xad', "
      "'\xc3\xb6', '\xf0\x9f\x8e\x89', 'emoji \xf0\x9f\x8e\x89', x'00000000', x'0000', x'00', b'1', b'111111111', "
      "b'1000000000000000000000000000000000000000000000000000000000000000', 'medium', 'b,d', '\"just a string\"', "
      "ST_GeomFromText('LINESTRING(0 0, 1 1, 2 0)'))",
  };
  return kRows;
}

std::string base64_to_hex(std::string_view base64) {
  static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes;
  unsigned buffer = 0;
  int bits = 0;
  for (const char c : base64) {
    if (c == '=') break;
    const auto index = kAlphabet.find(c);
    REQUIRE(index != std::string::npos);
    buffer = buffer << 6 | static_cast<unsigned>(index);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes += static_cast<char>(buffer >> bits & 0xff);
    }
  }
  std::string hex;
  for (const char c : bytes) {
    char pair[3];
    std::snprintf(pair, sizeof pair, "%02X", static_cast<unsigned char>(c));
    hex += pair;
  }
  return hex;
}

std::string minified(simdjson::dom::element element) { return simdjson::minify(element); }

}  // namespace

TEST_CASE("binlog round trip: every column type decodes to what the server returns") {
  const char* datadir = std::getenv("CDC_TEST_DATADIR");
  REQUIRE_MESSAGE(datadir != nullptr, "scripts/test.sh exports CDC_TEST_DATADIR");
  auto root = cdc::mysql::Connection::open(cdc::test::root_account());
  REQUIRE_MESSAGE(root.has_value(), root.error().message);
  auto run = [&](const std::string& sql) {
    auto done = root->query(sql);
    REQUIRE_MESSAGE(done.has_value(), done.error().message);
    return std::move(*done);
  };
  run("SET SESSION sql_mode = '', time_zone = '+00:00'");
  run("DROP DATABASE IF EXISTS cdc_roundtrip");
  run("CREATE DATABASE cdc_roundtrip");
  std::string create = "CREATE TABLE cdc_roundtrip.all_types (";
  for (std::size_t i = 0; i < columns().size(); ++i)
    create += (i == 0 ? "" : ", ") + columns()[i].name + " " + columns()[i].definition;
  run(create + ")");
  const auto start = run("SHOW MASTER STATUS");
  REQUIRE(start.rows.size() == 1);
  const std::string binlog_file = *start.rows[0][0];
  const std::string start_position = *start.rows[0][1];
  for (const std::string& row : rows()) run("INSERT INTO cdc_roundtrip.all_types VALUES " + row);

  // Decode the server's own binlog file, as cdc-stream --file does.
  char path[] = "/tmp/cdc_roundtrip.XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  ::unlink(path);
  cdc::stream::FileOptions options;
  options.files = {std::string(datadir) + "/" + binlog_file};
  options.start_position = std::stoull(start_position);
  options.tables = "cdc_roundtrip.all_types";
  std::vector<std::string> warnings;
  auto summary = cdc::stream::run_files(options, fd, [&](std::string_view w) { warnings.emplace_back(w); });
  REQUIRE_MESSAGE(summary.has_value(), summary.error().message);
  CHECK(warnings.empty());
  REQUIRE(::lseek(fd, 0, SEEK_SET) == 0);

  std::map<std::int64_t, std::string> decoded;  // id -> the "after" object
  cdc::ndjson::Reader reader(fd, "decoded");
  for (;;) {
    auto next = reader.next();
    REQUIRE_MESSAGE(next.has_value(), next.error().message);
    if (!*next) break;
    const auto record = reader.record();
    if (std::string_view(record["op"].get_string().value()) != "c") continue;
    CHECK(std::string_view(record["db"].get_string().value()) == "cdc_roundtrip");
    const auto after = record["after"].get_object().value();
    decoded[after["id"].get_int64().value()] = std::string(reader.line());
    CHECK(minified(record["key"].value()) == "{\"id\":" + std::to_string(after["id"].get_int64().value()) + "}");
  }
  ::close(fd);
  REQUIRE(decoded.size() == rows().size());

  std::string select = "SELECT ";
  for (std::size_t i = 0; i < columns().size(); ++i) select += (i == 0 ? "" : ", ") + columns()[i].select;
  const auto expected = run(select + " FROM cdc_roundtrip.all_types ORDER BY id");
  REQUIRE(expected.rows.size() == rows().size());
  simdjson::dom::parser parser;
  for (const auto& row : expected.rows) {
    const std::int64_t id = std::stoll(*row[0]);
    CAPTURE(id);
    const auto after = parser.parse(decoded[id])["after"].get_object().value();
    for (std::size_t i = 0; i < columns().size(); ++i) {
      const ColumnCase& column = columns()[i];
      CAPTURE(column.name);
      auto actual = after[column.name];
      REQUIRE_MESSAGE(actual.error() == simdjson::SUCCESS, "column missing from the decoded row");
      if (!row[i]) {
        CHECK(actual.is_null());
        continue;
      }
      const std::string& text = *row[i];
      switch (column.expect) {
        case Expect::number:
          CHECK(minified(actual.value()) == text);
          break;
        case Expect::year:  // the server prints YEAR 0 as "0000"; JSON has the number
          CHECK(actual.get_int64().value() == std::stoll(text));
          break;
        case Expect::text:
          CHECK(std::string(actual.get_string().value()) == text);
          break;
        case Expect::utc_timestamp:
          CHECK(std::string(actual.get_string().value()) == (text.starts_with("0000-00-00") ? text : text + "Z"));
          break;
        case Expect::hex_of_base64:
          CHECK(base64_to_hex(actual.get_string().value()) == text);
          break;
        case Expect::float_value: {
          const float want = std::strtof(text.c_str(), nullptr);
          const double got = actual.get_double().value();
          CHECK(std::fabs(got - want) <= std::fabs(want) * 1e-6);
          break;
        }
        case Expect::double_value:
          CHECK(actual.get_double().value() == doctest::Approx(std::strtod(text.c_str(), nullptr)).epsilon(1e-15));
          break;
      }
    }
  }
  run("DROP DATABASE cdc_roundtrip");
}

TEST_CASE("binlog round trip: MariaDB compressed events (log_bin_compress) decode like plain ones") {
  const char* datadir = std::getenv("CDC_TEST_DATADIR");
  REQUIRE_MESSAGE(datadir != nullptr, "scripts/test.sh exports CDC_TEST_DATADIR");
  auto root = cdc::mysql::Connection::open(cdc::test::root_account());
  REQUIRE_MESSAGE(root.has_value(), root.error().message);
  auto run = [&](const std::string& sql) {
    auto done = root->query(sql);
    REQUIRE_MESSAGE(done.has_value(), done.error().message);
    return std::move(*done);
  };
  run("DROP DATABASE IF EXISTS cdc_compressed");
  run("CREATE DATABASE cdc_compressed");
  run("CREATE TABLE cdc_compressed.t (id INT PRIMARY KEY, body TEXT)");
  const auto start = run("SHOW MASTER STATUS");
  run("SET GLOBAL log_bin_compress = ON, log_bin_compress_min_len = 10");
  run("INSERT INTO cdc_compressed.t VALUES (1, REPEAT('compressible ', 200)), (2, 'short but over ten')");
  run("UPDATE cdc_compressed.t SET body = CONCAT(body, '!') WHERE id = 2");
  run("DELETE FROM cdc_compressed.t WHERE id = 1");
  run("CREATE TABLE cdc_compressed.after_ddl (x INT)");  // a compressed QUERY event
  run("SET GLOBAL log_bin_compress = OFF");

  char path[] = "/tmp/cdc_compressed.XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  ::unlink(path);
  cdc::stream::FileOptions options;
  options.files = {std::string(datadir) + "/" + *start.rows[0][0]};
  options.start_position = std::stoull(*start.rows[0][1]);
  options.tables = "cdc_compressed.*";
  auto summary = cdc::stream::run_files(options, fd, [](std::string_view) {});
  REQUIRE_MESSAGE(summary.has_value(), summary.error().message);
  REQUIRE(::lseek(fd, 0, SEEK_SET) == 0);
  std::vector<std::string> ops;
  std::string ddl;
  cdc::ndjson::Reader reader(fd, "decoded");
  for (;;) {
    auto next = reader.next();
    REQUIRE_MESSAGE(next.has_value(), next.error().message);
    if (!*next) break;
    const auto record = reader.record();
    const std::string op(record["op"].get_string().value());
    if (op == "commit") continue;
    ops.push_back(op);
    if (op == "ddl") ddl = std::string(record["sql"].get_string().value());
    if (op == "c" && record["after"]["id"].get_int64().value() == 1)
      CHECK(std::string(record["after"]["body"].get_string().value()).size() == 13 * 200);
    if (op == "u") {
      CHECK(std::string(record["before"]["body"].get_string().value()) == "short but over ten");
      CHECK(std::string(record["after"]["body"].get_string().value()) == "short but over ten!");
    }
    if (op == "d") CHECK(record["key"]["id"].get_int64().value() == 1);
  }
  ::close(fd);
  CHECK(ops == std::vector<std::string>{"c", "c", "u", "d", "ddl"});
  CHECK(ddl == "CREATE TABLE cdc_compressed.after_ddl (x INT)");
  run("DROP DATABASE cdc_compressed");
}
