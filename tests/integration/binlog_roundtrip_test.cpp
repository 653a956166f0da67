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
#include "every_type.h"
#include "test_server.h"

namespace {

using cdc::test::Expect;
using ColumnCase = cdc::test::TypeColumn;

const std::vector<ColumnCase>& columns() {
  static const std::vector<ColumnCase> kColumns = [] {
    std::vector<ColumnCase> all = cdc::test::every_type_columns();
    all.push_back({"geo", "GEOMETRY", "HEX(geo)", Expect::hex_of_base64});
    return all;
  }();
  return kColumns;
}

const std::vector<std::string>& rows() {
  static const std::vector<std::string> kRows = [] {
    const std::vector<std::string> geometry = {"ST_GeomFromText('POINT(1 2)')", "NULL", "NULL",
                                               "ST_GeomFromText('LINESTRING(0 0, 1 1, 2 0)')"};
    std::vector<std::string> all;
    for (std::size_t i = 0; i < geometry.size(); ++i)
      all.push_back("(" + std::to_string(i + 1) + ", " + cdc::test::every_type_values()[i] + ", " + geometry[i] + ")");
    return all;
  }();
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
  CHECK(ops == std::vector<std::string>{"table", "c", "c", "u", "d", "ddl"});
  CHECK(ddl == "CREATE TABLE cdc_compressed.after_ddl (x INT)");
  run("DROP DATABASE cdc_compressed");
}
