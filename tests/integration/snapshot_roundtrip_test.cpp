// cdc-snapshot against the live test server: the values it SELECTs must be byte-identical to
// what cdc-stream decodes from the binlog for the same rows, for every column type; plus key
// ranges, bad chunks, table lines and --output-dir. The watermarks and read views are in
// snapshot_watermarks_test.cpp.

#include <doctest/doctest.h>
#include <fcntl.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "mysql/connection.h"
#include "ndjson/reader.h"
#include "ndjson/writer.h"
#include "snapshot/chunk.h"
#include "snapshot/gtid_at_offset.h"
#include "snapshot/run_snapshot.h"
#include "stream/file_stream.h"
#include "every_type.h"
#include "snapshot_test_util.h"
#include "test_server.h"

using namespace snapshot_test;

namespace {

struct ColumnCase {
  std::string name;
  std::string definition;
};

// Every type of every_type.h, then types and charsets it lacks, GEOMETRY last (its charset
// slot is what once shifted the later string columns).
const std::vector<ColumnCase>& columns() {
  static const std::vector<ColumnCase> kColumns = [] {
    std::vector<ColumnCase> all;
    for (const cdc::test::TypeColumn& column : cdc::test::every_type_columns())
      all.push_back({column.name, column.definition});
    const std::vector<ColumnCase> extras = {
        {"l1c", "CHAR(6) CHARACTER SET latin1"}, {"en1", "ENUM('caf\xc3\xa9','x') CHARACTER SET latin1"},
        {"tm2", "TIME(2)"}, {"dtm2", "DATETIME(2)"}, {"lb", "LONGBLOB"}, {"mt", "MEDIUMTEXT CHARACTER SET latin1"},
        {"dec4", "DECIMAL(5,2)"}, {"bn1", "BINARY(1)"}, {"ts3", "TIMESTAMP(3) NULL"},
        {"gbk", "VARCHAR(10) CHARACTER SET gbk"}, {"st1", "SET('x','\xc3\xbf') CHARACTER SET latin1"},
        {"geo", "GEOMETRY"},
    };
    all.insert(all.end(), extras.begin(), extras.end());
    return all;
  }();
  return kColumns;
}

std::string row(int id) {
  // Values for the extras, in their order.
  static const std::vector<std::string> kExtras = {
      "'caf\xc3\xa9 ', 'caf\xc3\xa9', '-00:00:01.10', '2024-01-01 00:00:00.99', REPEAT(x'ab', 100000), "
      "'m\xc3\xa9\xe2\x82\xac', 0.00, x'00', '2001-02-03 04:05:06.007', '\xe4\xb8\xad\xe6\x96\x87', 'x,\xc3\xbf', "
      "ST_GeomFromText('POINT(1 2)')",
      "'', 'x', '-838:59:59.99', '0000-00-00 00:00:00.00', x'', '', -999.99, x'ff', '0000-00-00 00:00:00', '', '', NULL",
      "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL",
      "'\xe2\x82\xac', '', '00:00:00.01', '1000-01-01 00:00:00', REPEAT(x'cd', 300000), '\xc5\x93', 999.99, x'20', "
      "'1970-01-01 00:00:01.000', 'a', '', "
      "ST_GeomFromText('LINESTRING(0 0, 1 1, 2 0)')",
  };
  const auto at = static_cast<std::size_t>((id - 1) % 4);
  return "(" + std::to_string(id) + ", " + cdc::test::every_type_values()[at] + ", " + kExtras[at] + ")";
}


}  // namespace

TEST_CASE("snapshot round trip: every column type is byte-identical to the binlog decoder's") {
  const char* datadir = std::getenv("CDC_TEST_DATADIR");
  REQUIRE_MESSAGE(datadir != nullptr, "scripts/test.sh exports CDC_TEST_DATADIR");
  auto connection = root();
  run(connection, "SET SESSION sql_mode = '', time_zone = '+00:00'");
  run(connection, "DROP DATABASE IF EXISTS cdc_snapshot_rt");
  run(connection, "CREATE DATABASE cdc_snapshot_rt");
  std::string create = "CREATE TABLE cdc_snapshot_rt.all_types (";
  for (std::size_t i = 0; i < columns().size(); ++i)
    create += (i == 0 ? "" : ", ") + columns()[i].name + " " + columns()[i].definition;
  run(connection, create + ")");
  run(connection, "CREATE TABLE cdc_snapshot_rt.floats (id INT PRIMARY KEY, f FLOAT, d DOUBLE)");
  // MariaDB's plugin types (10.5+ INET6, 10.7+ UUID, 10.10+ INET4), written as their text by both.
  run(connection, "CREATE TABLE cdc_snapshot_rt.plugin_types (id INT PRIMARY KEY, a INET6, u UUID, v4 INET4)");
  const auto start = run(connection, "SHOW MASTER STATUS");
  REQUIRE(start.rows.size() == 1);
  const std::string binlog_file = *start.rows[0][0];
  const int kRows = 8;
  for (int id = 1; id <= kRows; ++id) run(connection, "INSERT INTO cdc_snapshot_rt.all_types VALUES " + row(id));
  // FLOAT/DOUBLE extremes and values whose decimal text does not round-trip through %g.
  const std::vector<std::string> floats = {"3.4028234e38", "-3.4028234e38", "1.17549435e-38", "1e-45", "0.1",
                                           "16777217", "-0.0", "123456789", "0.3", "1.0000001"};
  const std::vector<std::string> doubles = {"1.7976931348623157e308", "5e-324", "0.1", "-0.0", "1e22",
                                            "0.30000000000000004", "123456789012345678", "2.2250738585072014e-308",
                                            "-1.5", "4.35"};
  for (std::size_t i = 0; i < floats.size(); ++i)
    run(connection, "INSERT INTO cdc_snapshot_rt.floats VALUES (" + std::to_string(i + 1) + ", " + floats[i] + ", " +
                        doubles[i] + ")");

  run(connection,
      "INSERT INTO cdc_snapshot_rt.plugin_types VALUES (1, '::1', UUID(), '0.0.0.0'), (2, '2001:db8::ff00:42:8329', "
      "'f47ac10b-58cc-4372-a567-0e02b2c3d479', '10.0.0.1'), (3, '::ffff:192.168.0.1', "
      "'00000000-0000-0000-0000-000000000000', '10.0.0.0'), (4, NULL, NULL, NULL), "
      "(5, 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '123e4567-e89b-12d3-a456-426655440000', '255.255.255.255')");
  // The binlog side, as cdc-stream --file --catalog decodes it (the catalog names the plugin types).
  std::map<std::string, std::map<std::string, std::string>> decoded;  // table -> key -> after
  {
    char path[] = "/tmp/cdc_snapshot_rt.XXXXXX";
    const int fd = ::mkstemp(path);
    REQUIRE(fd >= 0);
    ::unlink(path);
    cdc::stream::FileOptions options;
    options.files = {std::string(datadir) + "/" + binlog_file};
    options.start_position = std::stoull(*start.rows[0][1]);
    options.tables = "cdc_snapshot_rt.*";
    options.catalog = cdc::test::cdc_account();
    std::vector<std::string> warnings;
    auto summary = cdc::stream::run_files(options, fd, [&](std::string_view w) { warnings.emplace_back(w); });
    REQUIRE_MESSAGE(summary.has_value(), summary.error().message);
    CHECK(warnings.empty());
    REQUIRE(::lseek(fd, 0, SEEK_SET) == 0);
    cdc::ndjson::Reader reader(fd, "decoded");
    for (;;) {
      auto next = reader.next();
      REQUIRE_MESSAGE(next.has_value(), next.error().message);
      if (!*next) break;
      const std::string line(reader.line());
      if (op_of(line) != "\"c\"") continue;
      decoded[raw_member(line, "table")][raw_member(line, "key")] = raw_member(line, "after");
    }
    ::close(fd);
  }
  REQUIRE(decoded["\"all_types\""].size() == kRows);
  REQUIRE(decoded["\"floats\""].size() == floats.size());
  REQUIRE(decoded["\"plugin_types\""].size() == 5);
  CHECK(decoded["\"plugin_types\""]["{\"id\":3}"] ==
        R"({"id":3,"a":"::ffff:192.168.0.1","u":"00000000-0000-0000-0000-000000000000","v4":"10.0.0.0"})");

  for (const std::string table : {"all_types", "floats", "plugin_types"}) {
    CAPTURE(table);
    Collected out;
    auto result = read(connection, parse(chunk_line(connection, "cdc_snapshot_rt", table)), out);
    REQUIRE_MESSAGE(result.has_value(), result.error().message);
    const auto lines = lines_of(out.text);
    REQUIRE(lines.size() == decoded["\"" + table + "\""].size() + 3);
    CHECK(op_of(lines.front()) == "\"low\"");
    CHECK(op_of(lines[1]) == "\"table\"");
    CHECK(raw_member(lines[1], "pos") == "null");
    if (table == "all_types") {
      CHECK(lines[1].find(R"J({"name":"i","type":"int(11)","nullable":true})J") != std::string::npos);
      CHECK(lines[1].find(R"J({"name":"en","type":"enum('small','medium','large')","nullable":true,)J") !=
            std::string::npos);
    }
    CHECK(op_of(lines.back()) == "\"high\"");
    std::size_t compared = 0;
    for (std::size_t i = 2; i + 1 < lines.size(); ++i) {
      const std::string& line = lines[i];
      CHECK(op_of(line) == "\"r\"");
      CHECK(raw_member(line, "before") == "null");
      const std::string key = raw_member(line, "key");
      CAPTURE(key);
      const auto& want = decoded["\"" + table + "\""];
      REQUIRE(want.count(key) == 1);
      // Byte for byte; on a difference, name the first differing column.
      const std::string got = raw_member(line, "after");
      if (got != want.at(key)) {
        for (const ColumnCase& column : columns()) {
          if (got.find("\"" + column.name + "\":") == std::string::npos) continue;
          const std::string snapshot_value = raw_member(got, column.name).substr(0, 120);
          const std::string binlog_value = raw_member(want.at(key), column.name).substr(0, 120);
          CAPTURE(column.name);
          CHECK(snapshot_value == binlog_value);
        }
      }
      CHECK_MESSAGE(got == want.at(key), "the row differs (columns above)");
      ++compared;
    }
    CHECK(compared == decoded["\"" + table + "\""].size());
  }
}

TEST_CASE("snapshot key ranges: integer and VARBINARY bounds, inclusive start and exclusive end") {
  auto connection = root();
  run(connection, "DROP DATABASE IF EXISTS cdc_snapshot_kr");
  run(connection, "CREATE DATABASE cdc_snapshot_kr");
  run(connection, "CREATE TABLE cdc_snapshot_kr.n (id BIGINT UNSIGNED PRIMARY KEY)");
  run(connection, "INSERT INTO cdc_snapshot_kr.n SELECT seq FROM mysql.seq_1_to_300");
  run(connection, "INSERT INTO cdc_snapshot_kr.n VALUES (18446744073709551615)");
  run(connection, "CREATE TABLE cdc_snapshot_kr.b (k VARBINARY(4) PRIMARY KEY)");
  run(connection, "INSERT INTO cdc_snapshot_kr.b VALUES (x'00'), (x'10'), (x'1000'), (x'80'), (x'ff')");
  {
    Collected out;
    auto result = read(connection, parse(chunk_line(connection, "cdc_snapshot_kr", "n", "[100]", "[200]")), out);
    REQUIRE_MESSAGE(result.has_value(), result.error().message);
    CHECK(result->rows == 100);
    const auto lines = lines_of(out.text);
    CHECK(raw_member(lines[1], "key") == R"(["id"])");  // the table line's
    CHECK(raw_member(lines[2], "key") == "{\"id\":100}");
    CHECK(raw_member(lines[101], "key") == "{\"id\":199}");
  }
  {
    Collected out;
    auto result =
        read(connection, parse(chunk_line(connection, "cdc_snapshot_kr", "n", "[300]", "null", 3, 4)), out);
    REQUIRE_MESSAGE(result.has_value(), result.error().message);
    CHECK(result->rows == 2);
    CHECK(out.text.find("{\"id\":18446744073709551615}") != std::string::npos);
  }
  {
    Collected out;  // [x'10', x'ff'): x'10', x'1000', x'80'
    auto result =
        read(connection, parse(chunk_line(connection, "cdc_snapshot_kr", "b", "[\"EA==\"]", "[\"/w==\"]")), out);
    REQUIRE_MESSAGE(result.has_value(), result.error().message);
    CHECK(result->rows == 3);
    const auto lines = lines_of(out.text);
    REQUIRE(lines.size() == 6);
    CHECK(lines[1] == R"J({"op":"table","v":1,"db":"cdc_snapshot_kr","table":"b","columns":[)J"
                      R"J({"name":"k","type":"varbinary(4)","nullable":false}],"key":["k"],"pos":null,)J"
                      R"J("ts_ms":)J" + raw_member(lines[0], "ts_ms") + "}");
    CHECK(raw_member(lines[2], "key") == "{\"k\":\"EA==\"}");
    CHECK(raw_member(lines[3], "key") == "{\"k\":\"EAA=\"}");
    CHECK(raw_member(lines[4], "key") == "{\"k\":\"gA==\"}");
  }
}

TEST_CASE("snapshot key ranges: a composite key's chunk is a range of its index, not a scan of the table") {
  auto connection = root();
  run(connection, "DROP DATABASE IF EXISTS cdc_snapshot_ck");
  run(connection, "CREATE DATABASE cdc_snapshot_ck");
  run(connection, "CREATE TABLE cdc_snapshot_ck.t (a INT NOT NULL, at DATETIME(6) NOT NULL, id BIGINT NOT NULL, "
                  "PRIMARY KEY (a, at, id))");
  // a = 1..5 and at = 0..19 s from ids 1..2000, so that bounds can tie on a and at.
  run(connection, "INSERT INTO cdc_snapshot_ck.t SELECT seq % 5 + 1, TIMESTAMP'2024-01-01 00:00:00' + INTERVAL "
                  "seq % 20 SECOND, seq FROM mysql.seq_1_to_2000");
  run(connection, "ANALYZE TABLE cdc_snapshot_ck.t");
  const auto chunk_of = [](const std::string& start, const std::string& end) {
    return parse(R"J({"op":"chunk","v":1,"db":"cdc_snapshot_ck","table":"t","key":["a","at","id"],)J"
                 R"J("key_types":["int(11)","datetime(6)","bigint(20)"],"start":)J" + start + R"J(,"end":)J" + end +
                 R"J(,"index":1,"count":3,"columns":[{"name":"a","type":"int(11)","collation_id":0},)J"
                 R"J({"name":"at","type":"datetime(6)","collation_id":0},{"name":"id","type":"bigint(20)",)J"
                 R"J("collation_id":0}],"rows_estimate":0})J");
  };
  // The rows the row constructor form selects (right, but by reading the whole table).
  const auto expected = [&](const std::string& start, const std::string& end) {
    const auto counted = run(connection, "SELECT COUNT(*) FROM cdc_snapshot_ck.t WHERE (a, at, id) >= (" + start +
                                             ") AND (a, at, id) < (" + end + ")");
    return std::stoull(counted.rows.at(0).at(0).value_or("0"));
  };
  {
    // Ties on a and at at both ends: a = 3, at = 7 s, 1000 <= id < 1500 (ids 1007, 1027 ... 1487).
    const auto chunk = chunk_of(R"J([3,"2024-01-01 00:00:07.000000",1000])J", R"J([3,"2024-01-01 00:00:07.000000",1500])J");
    Collected out;
    auto result = read(connection, chunk, out);
    REQUIRE_MESSAGE(result.has_value(), result.error().message);
    CHECK(result->rows == 25);
    CHECK(result->rows == expected("3, '2024-01-01 00:00:07', 1000", "3, '2024-01-01 00:00:07', 1500"));
    const auto lines = lines_of(out.text);
    REQUIRE(lines.size() == 28);
    CHECK(raw_member(lines[2], "key") == R"J({"a":3,"at":"2024-01-01 00:00:07.000000","id":1007})J");
    CHECK(raw_member(lines[26], "key") == R"J({"a":3,"at":"2024-01-01 00:00:07.000000","id":1487})J");
    // 25 rows of 2000: the server reads a range of the primary key, where the row constructor
    // form (a, at, id) >= (...) has it read every row of the table for every chunk.
    auto select = cdc::snapshot::select_sql(chunk);
    REQUIRE_MESSAGE(select.has_value(), select.error().message);
    const auto explained = run(connection, "EXPLAIN " + *select);
    REQUIRE(explained.rows.size() == 1);
    const auto type_at = std::find(explained.columns.begin(), explained.columns.end(), "type");
    REQUIRE(type_at != explained.columns.end());
    CHECK(explained.rows[0].at(static_cast<std::size_t>(type_at - explained.columns.begin())) == "range");
  }
  {
    // Across values of a: a = 2 from at 15 s on, all of a = 3, a = 4 below at 2 s, id 100.
    const auto chunk = chunk_of(R"J([2,"2024-01-01 00:00:15.000000",0])J", R"J([4,"2024-01-01 00:00:02.000000",100])J");
    Collected out;
    auto result = read(connection, chunk, out);
    REQUIRE_MESSAGE(result.has_value(), result.error().message);
    CHECK(result->rows == 500);
    CHECK(result->rows == expected("2, '2024-01-01 00:00:15', 0", "4, '2024-01-01 00:00:02', 100"));
  }
}

TEST_CASE("snapshot bad chunks: key type changed, table dropped, a name no table can have, malformed line") {
  auto connection = root();
  run(connection, "DROP DATABASE IF EXISTS cdc_snapshot_bad");
  run(connection, "CREATE DATABASE cdc_snapshot_bad");
  run(connection, "CREATE TABLE cdc_snapshot_bad.t (id INT PRIMARY KEY, v INT)");
  run(connection, "INSERT INTO cdc_snapshot_bad.t VALUES (1, 1)");
  {
    Collected out;
    auto result = read(connection,
                       parse(chunk_line(connection, "cdc_snapshot_bad", "t", "null", "null", 0, 1, "bigint(20)")), out);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == cdc::Errc::corrupt_input);
    CHECK(result.error().message == "key column id is now int(11), planned as bigint(20); plan again with cdc-plan");
    CHECK(out.text.empty());
  }
  const std::string line = chunk_line(connection, "cdc_snapshot_bad", "t");
  run(connection, "DROP TABLE cdc_snapshot_bad.t");
  {
    Collected out;
    auto result = read(connection, parse(line), out);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == cdc::Errc::corrupt_input);
    CHECK(result.error().message == "table cdc_snapshot_bad.t no longer exists; plan again with cdc-plan");
  }
  {
    // A name no table can have that only the server finds wrong (a character outside the BMP,
    // which identifiers, in utf8mb3, cannot hold): bad input too, not the server's failure.
    std::string named = line;
    named.replace(named.find("\"table\":\"t\""), 11, "\"table\":\"t\xF0\x9F\x98\x80\"");
    Collected out;
    auto result = read(connection, parse(named), out);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == cdc::Errc::corrupt_input);
    CHECK_MESSAGE(result.error().message.starts_with(
                      "no table can be named \"cdc_snapshot_bad\".\"t\xF0\x9F\x98\x80\": the server rejects the name: "),
                  result.error().message);
  }
  // Through run(): the error names input:line and the chunk; exit code 65.
  const std::string dir = "/tmp/cdc_snapshot_bad." + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir + "/chunks.ndjson") << line << "\n";
    cdc::snapshot::Options options;
    options.connection = cdc::test::root_account();
    options.inputs = {dir + "/chunks.ndjson"};
    auto summary = cdc::snapshot::run(options, -1, -1, -1);
    REQUIRE_FALSE(summary.has_value());
    CHECK(summary.error().code == cdc::Errc::corrupt_input);
    CHECK(summary.error().message == dir + "/chunks.ndjson:1: cdc_snapshot_bad.t chunk 0/1: table cdc_snapshot_bad.t "
                                           "no longer exists; plan again with cdc-plan");
  }
  {
    std::ofstream(dir + "/chunks.ndjson") << "\n{\"op\":\"chunk\",\"v\":1,\"db\":\"x\"}\n";
    cdc::snapshot::Options options;
    options.connection = cdc::test::root_account();
    options.inputs = {dir + "/chunks.ndjson"};
    auto summary = cdc::snapshot::run(options, -1, -1, -1);
    REQUIRE_FALSE(summary.has_value());
    CHECK(summary.error().code == cdc::Errc::corrupt_input);
    CHECK(summary.error().message == dir + "/chunks.ndjson:2: chunk field \"table\" must be a string");
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("snapshot table lines: a table is described once per process, and again after DDL changes it") {
  auto connection = root();
  run(connection, "DROP DATABASE IF EXISTS cdc_snapshot_td");
  run(connection, "CREATE DATABASE cdc_snapshot_td");
  run(connection,
      "CREATE TABLE cdc_snapshot_td.t (id INT AUTO_INCREMENT PRIMARY KEY, e ENUM('a','b'), v INT) ENGINE=InnoDB");
  run(connection, "INSERT INTO cdc_snapshot_td.t (e, v) SELECT 'a', seq FROM mysql.seq_1_to_100");
  cdc::snapshot::ChunkReader reader(cdc::test::cdc_account());
  const auto table_line = [&](const std::string& start, const std::string& end) {
    Collected out;
    auto result = read(connection, parse(chunk_line(connection, "cdc_snapshot_td", "t", start, end)), out, &reader);
    REQUIRE_MESSAGE(result.has_value(), result.error().message);
    std::string line = lines_of(out.text)[1];
    return line.substr(0, line.find(",\"ts_ms\":"));  // the low's time differs from chunk to chunk
  };
  const std::string first = table_line("null", "[50]");
  CHECK(reader.tables().reads() == 1);
  // Rows inserted (the AUTO_INCREMENT counter moves): the same definition, not read again.
  run(connection, "INSERT INTO cdc_snapshot_td.t (e, v) VALUES ('b', 1)");
  CHECK(table_line("[50]", "null") == first);
  CHECK(reader.tables().reads() == 1);
  // Each change a table line shows: described again, and the line says so.
  const std::vector<std::pair<std::string, std::string>> changes = {
      {"ALTER TABLE cdc_snapshot_td.t MODIFY e ENUM('a','b','c')", R"("a","b","c")"},
      {"ALTER TABLE cdc_snapshot_td.t ADD COLUMN w VARCHAR(5) CHARACTER SET latin1", R"("name":"w")"},
      {"ALTER TABLE cdc_snapshot_td.t MODIFY w VARCHAR(5) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
       "utf8mb4_bin"},
      {"ALTER TABLE cdc_snapshot_td.t MODIFY v BIGINT UNSIGNED", "bigint(20) unsigned"},
  };
  std::uint64_t reads = 1;
  for (const auto& change : changes) {
    const std::string& ddl = change.first;
    const std::string& shown = change.second;
    CAPTURE(ddl);
    run(connection, ddl);
    const std::string line = table_line("null", "[50]");
    CHECK(reader.tables().reads() == ++reads);
    CHECK_MESSAGE(line.find(shown) != std::string::npos, line);
    CHECK(table_line("[50]", "null") == line);
    CHECK(reader.tables().reads() == reads);
  }
  // A key column's type changed under the plan: refused, as when first described.
  run(connection, "ALTER TABLE cdc_snapshot_td.t MODIFY id BIGINT AUTO_INCREMENT");
  Collected out;
  auto refused = read(connection, parse(chunk_line(connection, "cdc_snapshot_td", "t", "null", "null", 0, 1, "int(11)")),
                      out, &reader);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message == "key column id is now bigint(20), planned as int(11); plan again with cdc-plan");
  const std::string planned_now = chunk_line(connection, "cdc_snapshot_td", "t");
  CHECK(read(connection, parse(planned_now), out, &reader).has_value());
  run(connection, "DROP TABLE cdc_snapshot_td.t");
  auto gone = read(connection, parse(planned_now), out, &reader);
  REQUIRE_FALSE(gone.has_value());
  CHECK(gone.error().code == cdc::Errc::corrupt_input);
  CHECK(gone.error().message == "table cdc_snapshot_td.t no longer exists; plan again with cdc-plan");
  run(connection, "DROP DATABASE cdc_snapshot_td");
}

TEST_CASE("snapshot --output-dir: one file per chunk, renamed when done, a rerun skips finished chunks") {
  auto connection = root();
  run(connection, "DROP DATABASE IF EXISTS cdc_snapshot_dir");
  run(connection, "CREATE DATABASE cdc_snapshot_dir");
  run(connection, "CREATE TABLE cdc_snapshot_dir.t (id INT PRIMARY KEY)");
  run(connection, "INSERT INTO cdc_snapshot_dir.t SELECT seq FROM mysql.seq_1_to_30");
  const std::string dir = "/tmp/cdc_snapshot_dir." + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/out");
  {
    std::ofstream chunks(dir + "/chunks.ndjson");
    chunks << chunk_line(connection, "cdc_snapshot_dir", "t", "null", "[10]", 0, 3) << "\n"
           << chunk_line(connection, "cdc_snapshot_dir", "t", "[10]", "[20]", 1, 3) << "\n"
           << chunk_line(connection, "cdc_snapshot_dir", "t", "[20]", "null", 2, 3) << "\n";
  }
  cdc::snapshot::Options options;
  options.connection = cdc::test::root_account();
  options.inputs = {dir + "/chunks.ndjson"};
  options.output_dir = dir + "/out";
  auto first = cdc::snapshot::run(options, -1, -1, -1);
  REQUIRE_MESSAGE(first.has_value(), first.error().message);
  CHECK(first->chunks_read == 3);
  CHECK(first->chunks_skipped == 0);
  CHECK(first->rows == 30);
  const auto read_file = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  for (int i = 0; i < 3; ++i) {
    const auto lines = lines_of(read_file(dir + "/out/cdc_snapshot_dir.t." + std::to_string(i) + ".ndjson"));
    REQUIRE(lines.size() == (i == 0 ? 9U : i == 1 ? 10U : 11U) + 3);  // low, table, rows, high
    CHECK(op_of(lines.front()) == "\"low\"");
    CHECK(op_of(lines.back()) == "\"high\"");
  }
  // Chunk 1 was interrupted (only its .partial is there); chunks 0 and 2 are done.
  std::filesystem::remove(dir + "/out/cdc_snapshot_dir.t.1.ndjson");
  std::ofstream(dir + "/out/cdc_snapshot_dir.t.1.ndjson.partial") << "{\"op\":\"low\"}\n";
  std::ofstream(dir + "/out/cdc_snapshot_dir.t.0.ndjson", std::ios::app) << "";  // untouched below
  const auto before = std::filesystem::last_write_time(dir + "/out/cdc_snapshot_dir.t.2.ndjson");
  auto second = cdc::snapshot::run(options, -1, -1, -1);
  REQUIRE_MESSAGE(second.has_value(), second.error().message);
  CHECK(second->chunks_read == 1);
  CHECK(second->chunks_skipped == 2);
  CHECK(second->rows == 10);
  CHECK_FALSE(std::filesystem::exists(dir + "/out/cdc_snapshot_dir.t.1.ndjson.partial"));
  CHECK(lines_of(read_file(dir + "/out/cdc_snapshot_dir.t.1.ndjson")).size() == 13);
  CHECK(std::filesystem::last_write_time(dir + "/out/cdc_snapshot_dir.t.2.ndjson") == before);
  std::filesystem::remove_all(dir);
}
