// Canal flat messages from hand-written canonical lines: every column type, FORMATS 4.6's
// worked example, "old" as Canal accumulates it, one message per rows event, DDL types, keys.

#include <doctest/doctest.h>

#include "output/canal.h"
#include "output_format_support.h"

namespace {

using namespace format_test;

std::unique_ptr<cdc::output::Converter> canal(const cdc::output::OutputOptions& options = {}) {
  return cdc::output::make_canal_converter(options);
}

// data[0] of a message line.
std::string first_data_row(std::string_view line) {
  std::string data = member(line, "data");
  REQUIRE(data.size() > 2);
  const std::size_t end = data.find("},{");
  return data.substr(1, end == std::string::npos ? data.size() - 2 : end);
}

}  // namespace

TEST_CASE("canal: every column type's value and sqlType") {
  auto converter = canal();
  const std::string out = run(*converter, {every_type_table_line(), every_type_insert()});
  const auto lines = lines_of(out);
  REQUIRE(lines.size() == 1);
  const std::string row = first_data_row(lines[0]);
  const std::string sql_types = member(lines[0], "sqlType");
  const std::string mysql_types = member(lines[0], "mysqlType");
  for (const TypeCase& c : every_type_cases()) {
    CAPTURE(c.name);
    CHECK(member(row, c.name) == c.canal);
    CHECK(member(sql_types, c.name) == std::to_string(c.canal_sql_type));
  }
  CHECK(member(mysql_types, "tiu") == R"j("tinyint(3) unsigned")j");
  CHECK(member(mysql_types, "en") == R"j("enum('small','medium','large')")j");
}

TEST_CASE("canal: --flink writes ENUM and SET as labels and binary strings as base64") {
  cdc::output::OutputOptions options;
  options.format = cdc::output::Format::canal;
  options.flink = true;
  auto converter = canal(options);
  const std::string out = run(*converter, {every_type_table_line(), every_type_insert()});
  const std::string row = first_data_row(out);
  CHECK(member(row, "en") == R"j("large")j");
  CHECK(member(row, "en_fallback") == R"j("medium")j");
  CHECK(member(row, "st_2") == R"j("a,b,c,d")j");
  CHECK(member(row, "st_fallback") == R"j("a,c")j");
  CHECK(member(row, "bn") == R"j("AP8AAA==")j");
  CHECK(member(row, "bl") == R"j("iVBORw0KGgo=")j");
  CHECK(member(row, "g") == fmt::format("\"{}\"", kPointBase64));
  CHECK(member(row, "ts6") == R"j("2038-01-19 03:14:07.999999")j");
}

// FORMATS 4.6 with our choices where Canal's bytes come from its own state: "id" counts the
// messages from 1 (Canal: its batch id), "gtid" is the transaction's GTID (Canal: its GTID
// set), "ts" is the event time (Canal: its clock when it built the message).
TEST_CASE("canal: FORMATS 4.6 worked example") {
  auto converter = canal();
  const std::string out =
      run(*converter, {items_table_line(),
                       items_change("c", "null", items_row(7, "lamp", "19.90", "2024-09-05 08:00:01.250"), 1520, 0, 101,
                                    1725523201),
                       commit_line("9001", 101, 1700, 1725523201),
                       items_change("u", items_row(7, "lamp", "19.90", "2024-09-05 08:00:01.250"),
                                    items_row(7, "lamp", "17.50", "2024-09-05 08:00:02.500"), 1890, 0, 102, 1725523202),
                       commit_line("9002", 102, 2100, 1725523202),
                       items_change("d", items_row(7, "lamp", "17.50", "2024-09-05 08:00:02.500"), "null", 2260, 0, 103,
                                    1725523203),
                       commit_line("9003", 103, 2400, 1725523203)});
  const std::string types =
      R"j("mysqlType":{"id":"int","name":"varchar(32)","price":"decimal(8,2)","updated":"datetime(3)"})j";
  const std::string sql_types = R"j("sqlType":{"id":4,"name":12,"price":3,"updated":93})j";
  const std::string gtid = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
  CHECK(out ==
        R"j({"data":[{"id":"7","name":"lamp","price":"19.90","updated":"2024-09-05 08:00:01.250"}],"database":"shop","es":1725523201000,"gtid":")j" +
            gtid + R"j(:101","id":1,"isDdl":false,)j" + types + R"j(,"old":null,"pkNames":["id"],"sql":"",)j" + sql_types +
            R"j(,"table":"items","ts":1725523201000,"type":"INSERT"})j" + "\n" +
            R"j({"data":[{"id":"7","name":"lamp","price":"17.50","updated":"2024-09-05 08:00:02.500"}],"database":"shop","es":1725523202000,"gtid":")j" +
            gtid + R"j(:102","id":2,"isDdl":false,)j" + types +
            R"j(,"old":[{"price":"19.90","updated":"2024-09-05 08:00:01.250"}],"pkNames":["id"],"sql":"",)j" + sql_types +
            R"j(,"table":"items","ts":1725523202000,"type":"UPDATE"})j" + "\n" +
            R"j({"data":[{"id":"7","name":"lamp","price":"17.50","updated":"2024-09-05 08:00:02.500"}],"database":"shop","es":1725523203000,"gtid":")j" +
            gtid + R"j(:103","id":3,"isDdl":false,)j" + types + R"j(,"old":null,"pkNames":["id"],"sql":"",)j" + sql_types +
            R"j(,"table":"items","ts":1725523203000,"type":"DELETE"})j" + "\n");
}

TEST_CASE("canal: old holds changed columns, NULL to a value included, accumulated across the rows of one event") {
  const std::string table =
      R"j({"op":"table","v":1,"db":"s","table":"t","columns":[{"name":"id","type":"int","nullable":false},)j"
      R"j({"name":"a","type":"int","nullable":true},{"name":"b","type":"varchar(5)","nullable":true,"charset":"utf8mb4"},)j"
      R"j({"name":"u","type":"int(10) unsigned","nullable":true}],"key":["id"],"pos":null,"ts_ms":0})j";
  const auto update = [](int index, std::string_view before, std::string_view after) {
    return fmt::format(
        R"j({{"op":"u","v":1,"db":"s","table":"t","key":{{"id":1}},"before":{},"after":{},)j"
        R"j("pos":{{"file":"b.000001","offset":900,"index":{},"gtid":null}},"server_id":1,"thread":null,"ts_ms":5000}})j",
        before, after, index);
  };
  SUBCASE("one message per rows event") {
    auto converter = canal();
    // Row 0 changes a (NULL -> 1), row 1 changes b only; Canal's old[1] lists a too, with row 1's
    // before-value. The unsigned column's code follows the last row's value (4294967295 -> BIGINT).
    const std::string out =
        run(*converter, {table,
                         update(0, R"j({"id":1,"a":null,"b":"x","u":1})j", R"j({"id":1,"a":1,"b":"x","u":1})j"),
                         update(1, R"j({"id":2,"a":5,"b":"x","u":4294967295})j",
                                R"j({"id":2,"a":5,"b":null,"u":4294967295})j"),
                         R"j({"op":"commit","v":1,"gtid":null,"pos":{"file":"b.000001","offset":990},"position":"b.000001:990","rows":2,"xid":4,"ts_ms":5000})j"});
    const auto lines = lines_of(out);
    REQUIRE(lines.size() == 1);
    CHECK(member(lines[0], "data") ==
          R"j([{"id":"1","a":"1","b":"x","u":"1"},{"id":"2","a":"5","b":null,"u":"4294967295"}])j");
    CHECK(member(lines[0], "old") == R"j([{"a":null},{"a":"5","b":"x"}])j");
    CHECK(member(lines[0], "sqlType") == R"j({"id":4,"a":4,"b":12,"u":-5})j");
    CHECK(member(lines[0], "gtid") == R"j("")j");
  }
  SUBCASE("message=row, and --flink (Flink's canal-json needs it): one message per row, old per row") {
    cdc::output::OutputOptions options;
    SUBCASE("message=row") { REQUIRE(cdc::output::apply_canal_option(options.canal, "message", "row").has_value()); }
    SUBCASE("--flink") { options.flink = true; }
    auto converter = canal(options);
    const std::string out =
        run(*converter, {table, update(0, R"j({"id":1,"a":null,"b":"x","u":1})j", R"j({"id":1,"a":1,"b":"x","u":1})j"),
                         update(1, R"j({"id":2,"a":5,"b":"x","u":2})j", R"j({"id":2,"a":5,"b":null,"u":2})j")});
    const auto lines = lines_of(out);
    REQUIRE(lines.size() == 2);
    CHECK(member(lines[0], "old") == R"j([{"a":null}])j");
    CHECK(member(lines[1], "old") == R"j([{"b":"x"}])j");
    CHECK(member(lines[1], "id") == "2");
  }
}

TEST_CASE("canal: rows of different events, tables or kinds are different messages") {
  auto converter = canal();
  const std::string out = run(
      *converter,
      {items_table_line(),
       items_change("c", "null", items_row(1, "a", "1.00", "2024-01-01 00:00:00.000"), 1520, 0, 101, 1725523201),
       items_change("c", "null", items_row(2, "b", "2.00", "2024-01-01 00:00:00.000"), 1520, 1, 101, 1725523201),
       items_change("d", items_row(1, "a", "1.00", "2024-01-01 00:00:00.000"), "null", 1520, 2, 101, 1725523201),
       items_change("c", "null", items_row(3, "c", "3.00", "2024-01-01 00:00:00.000"), 1600, 0, 101, 1725523201)});
  const auto lines = lines_of(out);
  REQUIRE(lines.size() == 3);
  CHECK(member(lines[0], "type") == R"j("INSERT")j");
  CHECK(member(lines[0], "data").find(R"j("id":"2")j") != std::string::npos);
  CHECK(member(lines[1], "type") == R"j("DELETE")j");
  CHECK(member(lines[2], "data").find(R"j("id":"3")j") != std::string::npos);
  CHECK(member(lines[2], "id") == "3");
}

TEST_CASE("canal: DDL messages are typed by the statement") {
  struct Case {
    std::string sql;
    std::string type;
    std::string table;
  };
  const Case cases[] = {
      {"CREATE TABLE items (id INT)", "CREATE", "items"},   {"ALTER TABLE shop.items ADD x INT", "ALTER", "items"},
      {"DROP TABLE items", "ERASE", "items"},               {"RENAME TABLE items TO old_items", "RENAME", "items"},
      {"TRUNCATE TABLE items", "TRUNCATE", "items"},        {"CREATE INDEX i ON items (x)", "CINDEX", "items"},
      {"DROP INDEX i ON items", "DINDEX", "items"},         {"CREATE DATABASE other", "QUERY", ""},
      {"ALTER TABLE items ADD UNIQUE KEY u (name)", "CINDEX", "items"},
      {"ALTER TABLE items ADD CONSTRAINT c UNIQUE (name)", "CINDEX", "items"},
      {"ALTER TABLE items DROP KEY u", "DINDEX", "items"},
      {"ALTER TABLE items RENAME TO items2", "RENAME", "items"},
      {"ALTER TABLE items RENAME COLUMN a TO b", "ALTER", "items"},
      {"ALTER TABLE items ADD COLUMN k INT, ADD INDEX (k)", "ALTER", "items"},
      {"CREATE VIEW v AS SELECT 1", "QUERY", ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.sql);
    auto converter = canal();
    const std::string out = run(
        *converter,
        {fmt::format(
            R"j({{"op":"ddl","v":1,"db":"shop","sql":"{}","pos":{{"file":"b.1","offset":4,"index":0,"gtid":"0-1-9"}},"ts_ms":7000}})j",
            c.sql)});
    CHECK(out == fmt::format(R"j({{"data":null,"database":"shop","es":7000,"gtid":"0-1-9","id":1,"isDdl":true,)j"
                             R"j("mysqlType":null,"old":null,"pkNames":null,"sql":"{}","sqlType":null,"table":"{}",)j"
                             R"j("ts":7000,"type":"{}"}})j"
                             "\n",
                             c.sql, c.table, c.type));
  }
}

TEST_CASE("canal: --key gives the primary key object and one message per row, --topic the table's topic") {
  cdc::output::OutputOptions options;
  options.kafka_key = true;
  options.topic_field = true;
  auto converter = canal(options);
  const std::string out = run(
      *converter,
      {items_table_line(),
       items_change("c", "null", items_row(1, "a", "1.00", "2024-01-01 00:00:00.000"), 1520, 0, 101, 1725523201),
       items_change("c", "null", items_row(2, "b", "2.00", "2024-01-01 00:00:00.000"), 1520, 1, 101, 1725523201)});
  const auto lines = lines_of(out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].starts_with("shop.items\t{\"id\":\"1\"}\t{\"data\":[{\"id\":\"1\","));
  CHECK(lines[1].starts_with("shop.items\t{\"id\":\"2\"}\t{\"data\":[{\"id\":\"2\","));
}

TEST_CASE("canal: snapshot rows are INSERT messages, control lines are not written, a change needs its table line") {
  auto converter = canal();
  const std::string out = run(
      *converter,
      {items_table_line(),
       R"j({"op":"r","v":1,"db":"shop","table":"items","key":{"id":7},"before":null,"after":{"id":7,"name":"lamp","price":"19.90","updated":"2024-09-05 08:00:01.250"},"ts_ms":1725523200000})j",
       R"j({"op":"high","v":1,"position":"0-1-5","file":"b.1","offset":4,"chunks":1,"rows":1,"ts_ms":1})j"});
  const auto lines = lines_of(out);
  REQUIRE(lines.size() == 1);
  CHECK(member(lines[0], "type") == R"j("INSERT")j");
  CHECK(member(lines[0], "gtid") == R"j("")j");

  auto fresh = canal();
  cdc::ndjson::Writer sink;
  const auto refused = fresh->convert(
      items_change("c", "null", items_row(1, "a", "1.00", "2024-01-01 00:00:00.000"), 1520, 0, 101, 1), sink);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == cdc::Errc::corrupt_input);
  CHECK(refused.error().message.find("no table line for shop.items") != std::string::npos);
}

TEST_CASE("canal: --format-option names") {
  cdc::output::CanalOptions options;
  CHECK(cdc::output::apply_canal_option(options, "message", "row").has_value());
  CHECK(options.message == cdc::output::CanalOptions::Message::row);
  const auto bad_value = cdc::output::apply_canal_option(options, "message", "batch");
  REQUIRE_FALSE(bad_value.has_value());
  CHECK(bad_value.error().code == cdc::Errc::usage);
  const auto unknown = cdc::output::apply_canal_option(options, "flatMessage", "true");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().message.find("its options: message") != std::string::npos);
}
