// Canal and Maxwell on real cdc-stream output: the test server writes rows of every column type,
// a multi-row update (one rows event, a NULL-to-value change among them), an update of one
// column and a delete; its binlog decoded as cdc-stream --file does (table lines included) goes
// through both converters, and "old" must hold exactly what the before images say changed.

#include <doctest/doctest.h>
#include <simdjson.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "every_type.h"
#include "mysql/connection.h"
#include "ndjson/json_scan.h"
#include "ndjson/reader.h"
#include "ndjson/writer.h"
#include "output/canal.h"
#include "output/converter.h"
#include "output/format.h"
#include "output/maxwell.h"
#include "stream/file_stream.h"
#include "test_server.h"

namespace {

std::vector<std::string> decode_binlog(const std::string& file, const std::string& position, const std::string& tables) {
  const char* datadir = std::getenv("CDC_TEST_DATADIR");
  REQUIRE_MESSAGE(datadir != nullptr, "scripts/test.sh exports CDC_TEST_DATADIR");
  char path[] = "/tmp/cdc_formats.XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  ::unlink(path);
  cdc::stream::FileOptions options;
  options.files = {std::string(datadir) + "/" + file};
  options.start_position = std::stoull(position);
  options.tables = tables;
  auto summary = cdc::stream::run_files(options, fd, [](std::string_view) {});
  REQUIRE_MESSAGE(summary.has_value(), summary.error().message);
  REQUIRE(::lseek(fd, 0, SEEK_SET) == 0);
  std::vector<std::string> lines;
  cdc::ndjson::Reader reader(fd, "decoded");
  for (;;) {
    auto next = reader.next();
    REQUIRE_MESSAGE(next.has_value(), next.error().message);
    if (!*next) break;
    lines.emplace_back(reader.line());
  }
  ::close(fd);
  return lines;
}

std::vector<std::string> convert(cdc::output::Converter& converter, const std::vector<std::string>& lines) {
  cdc::ndjson::Writer out;
  for (const std::string& line : lines) {
    auto converted = converter.convert(line, out);
    REQUIRE_MESSAGE(converted.has_value(), line.substr(0, 200), ": ", converted.error().message);
  }
  REQUIRE(converter.finish(out).has_value());
  std::vector<std::string> result;
  std::string_view text = out.buffered();
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    result.emplace_back(text.substr(0, end));
    text.remove_prefix(end + 1);
  }
  return result;
}

std::string member(std::string_view object, std::string_view name) {
  const auto found = cdc::ndjson::find_member(object, cdc::ndjson::quoted(name));
  return found ? std::string(*found) : std::string("<missing>");
}

// The names of an object's members.
std::set<std::string> names_of(std::string_view object) {
  std::set<std::string> names;
  cdc::ndjson::MemberScanner scanner(object);
  std::string_view key;
  std::string_view value;
  while (scanner.next(key, value)) names.emplace(key.substr(1, key.size() - 2));
  return names;
}

// The elements of a JSON array of objects, as text.
std::vector<std::string> elements(std::string_view array) {
  std::vector<std::string> out;
  std::size_t at = 1;
  while (at < array.size() && array[at] == '{') {
    std::size_t end = at;
    REQUIRE(cdc::ndjson::skip_json_value(array, end));
    out.emplace_back(array.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("output formats: Canal and Maxwell on a real binlog's lines") {
  auto root = cdc::mysql::Connection::open(cdc::test::root_account());
  REQUIRE_MESSAGE(root.has_value(), root.error().message);
  auto run = [&](const std::string& sql) {
    auto done = root->query(sql);
    REQUIRE_MESSAGE(done.has_value(), done.error().message);
    return std::move(*done);
  };
  run("SET SESSION sql_mode = '', time_zone = '+00:00'");
  run("DROP DATABASE IF EXISTS cdc_formats");
  run("CREATE DATABASE cdc_formats");
  const auto& columns = cdc::test::every_type_columns();
  std::string create = "CREATE TABLE cdc_formats.all_types (";
  for (std::size_t i = 0; i < columns.size(); ++i)
    create += (i == 0 ? "" : ", ") + columns[i].name + " " + columns[i].definition;
  run(create + ", geo GEOMETRY)");
  const auto start = run("SHOW MASTER STATUS");
  REQUIRE(start.rows.size() == 1);
  const std::vector<std::string> geometry = {"ST_GeomFromText('POINT(1 2)')", "NULL", "NULL",
                                             "ST_GeomFromText('LINESTRING(0 0, 1 1, 2 0)')"};
  std::string insert = "INSERT INTO cdc_formats.all_types VALUES ";
  for (std::size_t i = 0; i < geometry.size(); ++i)
    insert += (i == 0 ? "(" : ", (") + std::to_string(i + 1) + ", " + cdc::test::every_type_values()[i] + ", " +
              geometry[i] + ")";
  run(insert);
  // One rows event of two rows: row 1's l1 changes, row 3's l1 goes from NULL to a value.
  run("UPDATE cdc_formats.all_types SET l1 = CONCAT(IFNULL(l1, ''), '!') WHERE id IN (1, 3)");
  run("UPDATE cdc_formats.all_types SET tiu = 7 WHERE id = 2");
  run("DELETE FROM cdc_formats.all_types WHERE id = 4");
  const std::vector<std::string> lines = decode_binlog(*start.rows[0][0], *start.rows[0][1], "cdc_formats.all_types");
  REQUIRE(!lines.empty());
  CHECK(member(lines.front(), "op") == "\"table\"");

  SUBCASE("canal") {
    cdc::output::OutputOptions options;
    options.format = cdc::output::Format::canal;
    auto converter = cdc::output::make_canal_converter(options);
    const auto messages = convert(*converter, lines);
    REQUIRE(messages.size() == 4);  // one per rows event
    CHECK(member(messages[0], "type") == "\"INSERT\"");
    const auto inserted = elements(member(messages[0], "data"));
    REQUIRE(inserted.size() == 4);
    CHECK(member(inserted[0], "en") == "\"3\"");                   // 'large': the index
    CHECK(member(inserted[1], "st") == "\"15\"");                  // 'a,b,c,d': the bitmask
    CHECK(member(inserted[0], "bn") == "\"\\u0000\xc3\xbf\\u0000\\u0000\"");  // x'00ff0000' as ISO-8859-1
    // BIGINT UNSIGNED: the last row's value (1) decides the code; row 1's 2^64-1 alone would be 3.
    CHECK(member(member(messages[0], "sqlType"), "biu") == "-5");
    CHECK(member(member(messages[0], "mysqlType"), "en") == "\"enum('small','medium','large')\"");
    REQUIRE(member(messages[1], "type") == "\"UPDATE\"");
    const auto old = elements(member(messages[1], "old"));
    const auto data = elements(member(messages[1], "data"));
    REQUIRE(old.size() == 2);
    REQUIRE(data.size() == 2);
    CHECK(names_of(old[0]) == std::set<std::string>{"l1"});
    CHECK(member(old[0], "l1") == member(inserted[0], "l1"));  // the before-value, as Canal writes it
    CHECK(member(old[1], "l1") == "null");                     // NULL -> '!' shows as "l1":null
    CHECK(member(data[1], "l1") == "\"!\"");
    CHECK(member(messages[2], "old") == R"([{"tiu":"0"}])");
    CHECK(member(messages[3], "type") == "\"DELETE\"");
    CHECK(member(elements(member(messages[3], "data"))[0], "id") == "\"4\"");
  }

  SUBCASE("maxwell") {
    cdc::output::OutputOptions options;
    options.format = cdc::output::Format::maxwell;
    REQUIRE(cdc::output::apply_maxwell_option(options.maxwell, "output_xoffset", "true").has_value());
    auto converter = cdc::output::make_maxwell_converter(options);
    const auto rows = convert(*converter, lines);
    REQUIRE(rows.size() == 4 + 2 + 1 + 1);
    const std::string xid = member(rows[0], "xid");
    CHECK(xid != "<missing>");
    for (std::size_t i = 0; i < 4; ++i) {
      CAPTURE(i);
      CHECK(member(rows[i], "type") == "\"insert\"");
      CHECK(member(rows[i], "xid") == xid);
      CHECK(member(rows[i], "xoffset") == (i < 3 ? std::to_string(i) : "<missing>"));
      CHECK(member(rows[i], "commit") == (i == 3 ? "true" : "<missing>"));
    }
    const std::string first = member(rows[0], "data");
    CHECK(member(first, "st") == "[]");
    CHECK(member(member(rows[1], "data"), "st") == R"(["a","b","c","d"])");
    CHECK(member(first, "en") == "\"large\"");
    CHECK(member(first, "geo") == "\"POINT (1 2)\"");
    CHECK(member(member(rows[3], "data"), "geo") == "\"LINESTRING (0 0, 1 1, 2 0)\"");
    CHECK(member(first, "biu") == "18446744073709551615");
    CHECK(member(rows[4], "old") == "{\"l1\":" + member(first, "l1") + "}");
    CHECK(member(rows[5], "old") == R"({"l1":null})");
    CHECK(member(member(rows[5], "data"), "l1") == "\"!\"");
    CHECK(member(rows[4], "xid") == member(rows[5], "xid"));
    CHECK(member(rows[5], "commit") == "true");
    CHECK(member(rows[6], "old") == R"({"tiu":0})");
    CHECK(member(rows[7], "type") == "\"delete\"");
  }
  run("DROP DATABASE cdc_formats");
}
