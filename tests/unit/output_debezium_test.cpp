// output/debezium: canonical lines (hand-written, as cdc-stream and cdc-merge write them) in,
// Debezium's JsonConverter bytes out, against FORMATS.md 2.13's worked example and the type
// mapping of 2.7/2.8 for every type of tests/integration/every_type.h.

#include <doctest/doctest.h>
#include <simdjson.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "ndjson/writer.h"
#include "output/converter.h"
#include "output/format.h"

namespace {

using cdc::output::OutputOptions;

OutputOptions debezium(std::initializer_list<std::string_view> format_options = {}) {
  OutputOptions options;
  options.format = cdc::output::Format::debezium;
  for (const std::string_view option : format_options) REQUIRE(cdc::output::set_format_option(options, option));
  return options;
}

// Every line through one converter, then finish(); the output lines.
std::vector<std::string> convert(const OutputOptions& options, const std::vector<std::string>& lines) {
  auto converter = cdc::output::make_converter(options);
  REQUIRE(converter);
  REQUIRE(*converter != nullptr);
  cdc::ndjson::Writer out;
  for (const std::string& line : lines) {
    auto converted = (*converter)->convert(line, out);
    INFO(line);
    REQUIRE_MESSAGE(converted, (converted ? "" : converted.error().message));
  }
  REQUIRE((*converter)->finish(out));
  std::vector<std::string> result;
  std::string_view text = out.buffered();
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    REQUIRE(end != std::string_view::npos);
    result.emplace_back(text.substr(0, end));
    text.remove_prefix(end + 1);
  }
  return result;
}

// FORMATS.md 2.13: shop.items, server_id 1, thread 12, GTIDs on.
const std::string kItemsTable =
    R"~({"op":"table","v":1,"db":"shop","table":"items","columns":[{"name":"id","type":"int(11)","nullable":false},)~"
    R"~({"name":"name","type":"varchar(32)","nullable":false,"charset":"utf8mb4","collation":"utf8mb4_general_ci"},)~"
    R"~({"name":"price","type":"decimal(8,2)","nullable":false},{"name":"updated","type":"datetime(3)","nullable":false}],)~"
    R"~("key":["id"],"pos":{"file":"binlog.000042","offset":1520,"gtid":"3e11fa47-71ca-11e1-9e33-c80aa9429562:101"},"ts_ms":1725523201000})~";
const std::string kServerUuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562";

std::string change(std::string_view op, std::string_view before, std::string_view after, std::uint64_t offset,
                   int gtid, std::uint64_t ts_ms) {
  return std::string(R"~({"op":")~") + std::string(op) + R"~(","v":1,"db":"shop","table":"items","key":{"id":7},"before":)~" +
         std::string(before) + R"~(,"after":)~" + std::string(after) + R"~(,"pos":{"file":"binlog.000042","offset":)~" +
         std::to_string(offset) + R"~(,"index":0,"gtid":")~" + kServerUuid + ":" + std::to_string(gtid) +
         R"~("},"server_id":1,"thread":12,"ts_ms":)~" + std::to_string(ts_ms) + "}";
}

const std::string kLamp = R"~({"id":7,"name":"lamp","price":"19.90","updated":"2024-09-05 08:00:01.250"})~";
const std::string kLamp2 = R"~({"id":7,"name":"lamp","price":"17.50","updated":"2024-09-05 08:00:02.500"})~";

std::string source(std::uint64_t ts_ms, int gtid, std::uint64_t pos) {
  return R"~({"version":"3.6.1.Final","connector":"mysql","name":"dbz1","ts_ms":)~" + std::to_string(ts_ms) +
         R"~(,"snapshot":"false","db":"shop","sequence":null,"ts_us":)~" + std::to_string(ts_ms) + "000" +
         R"~(,"ts_ns":)~" + std::to_string(ts_ms) + "000000" + R"~(,"table":"items","server_id":1,"gtid":")~" + kServerUuid +
         ":" + std::to_string(gtid) + R"~(","file":"binlog.000042","pos":)~" + std::to_string(pos) +
         R"~(,"row":0,"thread":12,"query":null})~";
}

std::string tail(std::string_view op, std::uint64_t ts_ms) {
  return R"~(,"transaction":null,"op":")~" + std::string(op) + R"~(","ts_ms":)~" + std::to_string(ts_ms) +
         R"~(,"ts_us":)~" + std::to_string(ts_ms) + "000" + R"~(,"ts_ns":)~" + std::to_string(ts_ms) + "000000}";
}

const std::vector<std::string> kExample = {
    kItemsTable,
    change("c", "null", kLamp, 1520, 101, 1725523201000),
    R"~({"op":"commit","v":1,"gtid":"x","pos":{"file":"binlog.000042","offset":1800},"position":"x","rows":1,"ts_ms":1725523201000})~",
    change("u", kLamp, kLamp2, 1890, 102, 1725523202000),
    change("d", kLamp2, "null", 2260, 103, 1725523203000),
};

}  // namespace

TEST_CASE("debezium: FORMATS 2.13's insert, update, delete and tombstone, keyed") {
  OutputOptions options = debezium({"topic.prefix=dbz1"});
  options.kafka_key = true;
  const auto lines = convert(options, kExample);
  const std::string row1 = R"~({"id":7,"name":"lamp","price":"B8Y=","updated":1725523201250})~";
  const std::string row2 = R"~({"id":7,"name":"lamp","price":"BtY=","updated":1725523202500})~";
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == R"~({"id":7})~" "\t" R"~({"before":null,"after":)~" + row1 + R"~(,"source":)~" +
                        source(1725523201000, 101, 1520) + tail("c", 1725523201000));
  CHECK(lines[1] == R"~({"id":7})~" "\t" R"~({"before":)~" + row1 + R"~(,"after":)~" + row2 + R"~(,"source":)~" +
                        source(1725523202000, 102, 1890) + tail("u", 1725523202000));
  CHECK(lines[2] == R"~({"id":7})~" "\t" R"~({"before":)~" + row2 + R"~(,"after":null,"source":)~" +
                        source(1725523203000, 103, 2260) + tail("d", 1725523203000));
  CHECK(lines[3] == "{\"id\":7}\t");  // the tombstone: kcat -Z sends the empty value as null
}

TEST_CASE("debezium: without --key there is no tombstone line, tombstones.on.delete=false drops it with --key") {
  CHECK(convert(debezium({"topic.prefix=dbz1"}), kExample).size() == 3);
  OutputOptions options = debezium({"topic.prefix=dbz1", "tombstones.on.delete=false"});
  options.kafka_key = true;
  CHECK(convert(options, kExample).size() == 3);
}

TEST_CASE("debezium: decimal.handling.mode=string and double, decimal.format=numeric") {
  const auto price = [](std::initializer_list<std::string_view> format_options) {
    const auto lines = convert(debezium(format_options), {kItemsTable, change("c", "null", kLamp, 1520, 101, 1)});
    REQUIRE(lines.size() == 1);
    const std::size_t at = lines[0].find("\"price\":");
    return lines[0].substr(at + 8, lines[0].find(',', at) - at - 8);
  };
  CHECK(price({}) == R"~("B8Y=")~");
  CHECK(price({"decimal.handling.mode=string"}) == R"~("19.90")~");
  CHECK(price({"decimal.handling.mode=double"}) == "19.9");
  CHECK(price({"decimal.format=numeric"}) == "19.90");
}

TEST_CASE("debezium: schemas.enable wraps key and value with the Connect schemas of FORMATS 2.13") {
  OutputOptions options = debezium({"topic.prefix=dbz1", "schemas.enable=true"});
  options.kafka_key = true;
  const auto lines = convert(options, {kItemsTable, change("c", "null", kLamp, 1520, 101, 1725523201000)});
  REQUIRE(lines.size() == 1);
  const std::string& line = lines[0];
  const std::string key =
      R"~({"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false,"name":"dbz1.shop.items.Key"},"payload":{"id":7}})~";
  CHECK(line.substr(0, key.size() + 1) == key + "\t");
  const std::string fields =
      R"~([{"type":"int32","optional":false,"field":"id"},)~"
      R"~({"type":"string","optional":false,"field":"name"},)~"
      R"~({"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"8"},"field":"price"},)~"
      R"~({"type":"int64","optional":false,"name":"io.debezium.time.Timestamp","version":1,"field":"updated"}])~";
  const std::string value_start = "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"struct\",\"fields\":" + fields +
                                  R"~(,"optional":true,"name":"dbz1.shop.items.Value","field":"before"},)~";
  CHECK(line.substr(key.size() + 1, value_start.size()) == value_start);
  CHECK(line.find(R"~({"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"},"default":"false","field":"snapshot"})~") !=
        std::string::npos);
  CHECK(line.find(R"~(],"optional":false,"name":"dbz1.shop.items.Envelope","version":2},"payload":{"before":null,"after":)~") !=
        std::string::npos);
  CHECK(line.ends_with(R"~("ts_ns":1725523201000000000}})~"));
}

TEST_CASE("debezium: a primary key change is a delete, a tombstone and a create") {
  OutputOptions options = debezium({"topic.prefix=dbz1"});
  options.kafka_key = true;
  const std::string moved = R"~({"id":8,"name":"lamp","price":"19.90","updated":"2024-09-05 08:00:01.250"})~";
  const auto lines = convert(options, {kItemsTable, change("u", kLamp, moved, 1890, 102, 1)});
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].starts_with("{\"id\":7}\t{\"before\":{\"id\":7,"));
  CHECK(lines[0].find(R"~("after":null)~") != std::string::npos);
  CHECK(lines[0].find(R"~("op":"d")~") != std::string::npos);
  CHECK(lines[1] == "{\"id\":7}\t");
  CHECK(lines[2].starts_with("{\"id\":8}\t{\"before\":null,\"after\":{\"id\":8,"));
  CHECK(lines[2].find(R"~("op":"c")~") != std::string::npos);
}

TEST_CASE("debezium: without --key a primary key change is still a delete and a create (no tombstone)") {
  const std::string moved = R"~({"id":8,"name":"lamp","price":"19.90","updated":"2024-09-05 08:00:01.250"})~";
  const auto lines = convert(debezium(), {kItemsTable, change("u", kLamp, moved, 1890, 102, 1)});
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].find(R"~("op":"d")~") != std::string::npos);
  CHECK(lines[1].find(R"~("op":"c")~") != std::string::npos);
  CHECK(convert(debezium(), {kItemsTable, change("u", kLamp, kLamp2, 1890, 102, 1)}).size() == 1);
}

TEST_CASE("debezium: --topic prefixes <prefix>.<db>.<table>, schema changes <prefix>") {
  OutputOptions options = debezium({"topic.prefix=dbz1"});
  options.topic_field = true;
  const auto lines = convert(
      options, {kItemsTable, change("c", "null", kLamp, 1520, 101, 1),
                R"~({"op":"ddl","v":1,"db":"shop","sql":"ALTER TABLE items ADD c INT","pos":{"file":"binlog.000042","offset":3000,"index":0,"gtid":null},"ts_ms":1725523204000})~"});
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].starts_with("dbz1.shop.items\t{\"before\":null,"));
  CHECK(lines[1] ==
        "dbz1\t" R"~({"source":{"version":"3.6.1.Final","connector":"mysql","name":"dbz1","ts_ms":1725523204000,"snapshot":"false","db":"shop","sequence":null,"ts_us":1725523204000000,"ts_ns":1725523204000000000,"table":null,"server_id":0,"gtid":null,"file":"binlog.000042","pos":3000,"row":0,"thread":null,"query":null},"ts_ms":1725523204000,"databaseName":"shop","schemaName":null,"ddl":"ALTER TABLE items ADD c INT","tableChanges":[]})~");
  CHECK(convert(debezium({"include.schema.changes=false"}),
                {R"~({"op":"ddl","v":1,"db":"shop","sql":"DROP TABLE t","pos":{"file":"b.1","offset":4,"index":0,"gtid":null},"ts_ms":1})~"})
            .empty());
}

TEST_CASE("debezium: provide.transaction.metadata adds BEGIN, END and each event's transaction block") {
  OutputOptions options = debezium({"topic.prefix=dbz1", "provide.transaction.metadata=true"});
  options.kafka_key = true;
  options.topic_field = true;
  const auto lines = convert(options, kExample);
  // BEGIN, c, END (the commit line), BEGIN, u, d, tombstone (no commit line: no END).
  REQUIRE(lines.size() == 7);
  const std::string id = kServerUuid + ":101";
  CHECK(lines[0] == "dbz1.transaction\t{\"id\":\"" + id + "\"}\t" +
                        R"~({"status":"BEGIN","id":")~" + id +
                        R"~(","event_count":null,"data_collections":null,"ts_ms":1725523201000})~");
  CHECK(lines[1].find(R"~("transaction":{"id":")~" + id + R"~(","total_order":1,"data_collection_order":1},"op":"c")~") !=
        std::string::npos);
  CHECK(lines[2] == "dbz1.transaction\t{\"id\":\"" + id + "\"}\t" + R"~({"status":"END","id":")~" + id +
                        R"~(","event_count":1,"data_collections":[{"data_collection":"shop.items","event_count":1}],"ts_ms":1725523201000})~");
  CHECK(lines[5].find(R"~("total_order":2,"data_collection_order":2},"op":"d")~") != std::string::npos);
}

TEST_CASE("debezium: snapshot rows carry first, first_in_data_collection, true, last_in_data_collection, last") {
  const std::string other =
      R"~({"op":"table","v":1,"db":"shop","table":"tags","columns":[{"name":"id","type":"int(11)","nullable":false}],"key":["id"],"pos":{"file":"binlog.000042","offset":9000,"gtid":null},"ts_ms":5})~";
  const auto row = [](std::string_view table, int id) {
    return std::string(R"~({"op":"r","v":1,"db":"shop","table":")~") + std::string(table) + R"~(","key":{"id":)~" +
           std::to_string(id) + R"~(},"before":null,"after":{"id":)~" + std::to_string(id) + R"~(},"ts_ms":5})~";
  };
  const std::string items =
      R"~({"op":"table","v":1,"db":"shop","table":"items","columns":[{"name":"id","type":"int(11)","nullable":false}],"key":["id"],"pos":{"file":"binlog.000042","offset":9000,"gtid":null},"ts_ms":5})~";
  const auto lines =
      convert(debezium(), {items, row("items", 1), row("items", 2), row("items", 3), other, row("tags", 1),
                           row("tags", 2), R"~({"op":"high","v":1,"position":"x","chunks":2,"rows":5,"ts_ms":6})~"});
  REQUIRE(lines.size() == 5);
  const auto marker = [](const std::string& line) {
    const std::size_t at = line.find("\"snapshot\":\"") + 12;
    return line.substr(at, line.find('"', at) - at);
  };
  CHECK(marker(lines[0]) == "first");
  CHECK(marker(lines[1]) == "true");
  CHECK(marker(lines[2]) == "last_in_data_collection");
  CHECK(marker(lines[3]) == "first_in_data_collection");
  CHECK(marker(lines[4]) == "last");
  CHECK(lines[0] ==
        R"~({"before":null,"after":{"id":1},"source":{"version":"3.6.1.Final","connector":"mysql","name":"cdc","ts_ms":5,"snapshot":"first","db":"shop","sequence":null,"ts_us":5000,"ts_ns":5000000,"table":"items","server_id":0,"gtid":null,"file":"binlog.000042","pos":9000,"row":0,"thread":null,"query":null},"transaction":null,"op":"r","ts_ms":5,"ts_us":5000,"ts_ns":5000000})~");
}

TEST_CASE("debezium: a change of a table without a table line is corrupt input") {
  auto converter = cdc::output::make_converter(debezium());
  REQUIRE(converter);
  cdc::ndjson::Writer out;
  auto converted = (*converter)->convert(change("c", "null", kLamp, 1, 1, 1), out);
  REQUIRE(!converted);
  CHECK(converted.error().code == cdc::Errc::corrupt_input);
  CHECK(converted.error().message ==
        "no table line for shop.items before its first change: the input is not a whole cdc output");
}

TEST_CASE("debezium: a u or d line without its before image, or c without after, is corrupt input") {
  // Found by the output_convert fuzzer: a d line lacking "before" read the key spans of the
  // line before it (another table's) past their end.
  auto converter = cdc::output::make_converter(debezium({"topic.prefix=dbz1"}));
  REQUIRE(converter);
  cdc::ndjson::Writer out;
  REQUIRE((*converter)->convert(kItemsTable, out));
  REQUIRE((*converter)->convert(change("u", kLamp, kLamp2, 1890, 102, 1), out));
  std::string no_before = change("d", kLamp2, "null", 2260, 103, 1);
  no_before.erase(no_before.find(R"~("before":)~"), std::string(R"~("before":)~").size() + kLamp2.size() + 1);
  auto converted = (*converter)->convert(no_before, out);
  REQUIRE(!converted);
  CHECK(converted.error().code == cdc::Errc::corrupt_input);
  CHECK(converted.error().message == R"~(a "d" line of shop.items without its before image)~");
  std::string no_after = change("c", "null", kLamp, 1520, 101, 1);
  no_after.erase(no_after.find(R"~(,"after":)~"), std::string(R"~(,"after":)~").size() + kLamp.size());
  converted = (*converter)->convert(no_after, out);
  REQUIRE(!converted);
  CHECK(converted.error().message == R"~(a "c" line of shop.items without its after image)~");
}

TEST_CASE("debezium: ts_us and ts_ns of a ts_ms past int64's nanoseconds are its digits with zeros") {
  // Found by the output_convert fuzzer: millis * 1000000 overflowed int64 (undefined behaviour).
  const auto lines = convert(debezium(), {kItemsTable, change("c", "null", kLamp, 1520, 101, 179613378200000000)});
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find(R"~("ts_us":179613378200000000000,"ts_ns":179613378200000000000000})~") != std::string::npos);
  CHECK(convert(debezium(), {kItemsTable, change("c", "null", kLamp, 1520, 101, 0)})[0].ends_with(
      R"~("ts_ms":0,"ts_us":0,"ts_ns":0})~"));
}

TEST_CASE("debezium: drop_held forgets a transaction cut off, the table descriptions stay") {
  OutputOptions options = debezium({"provide.transaction.metadata=true"});
  auto converter = cdc::output::make_converter(options);
  REQUIRE(converter);
  cdc::ndjson::Writer out;
  REQUIRE((*converter)->convert(kItemsTable, out));
  REQUIRE((*converter)->convert(change("c", "null", kLamp, 1520, 101, 1), out));
  (*converter)->drop_held();
  out.clear();
  REQUIRE((*converter)->convert(change("c", "null", kLamp, 1520, 101, 1), out));
  // A BEGIN again, and total_order starts over.
  CHECK(out.buffered().find(R"~("status":"BEGIN")~") != std::string_view::npos);
  CHECK(out.buffered().find(R"~("total_order":1,)~") != std::string_view::npos);
}

// ---- every type (tests/integration/every_type.h), value by value ----

namespace {

// The "types" table: one column per type of every_type.h, with the table line cdc writes.
const std::string kTypesTable =
    R"~({"op":"table","v":1,"db":"t","table":"types","columns":[)~"
    R"~({"name":"id","type":"int(11)","nullable":false},{"name":"ti","type":"tinyint(4)","nullable":true},)~"
    R"~({"name":"tiu","type":"tinyint(3) unsigned","nullable":true},{"name":"si","type":"smallint(6)","nullable":true},)~"
    R"~({"name":"siu","type":"smallint(5) unsigned","nullable":true},{"name":"mi","type":"mediumint(9)","nullable":true},)~"
    R"~({"name":"miu","type":"mediumint(8) unsigned","nullable":true},{"name":"i","type":"int(11)","nullable":true},)~"
    R"~({"name":"iu","type":"int(10) unsigned","nullable":true},{"name":"bi","type":"bigint(20)","nullable":true},)~"
    R"~({"name":"biu","type":"bigint(20) unsigned","nullable":true},{"name":"f","type":"float","nullable":true},)~"
    R"~({"name":"d","type":"double","nullable":true},{"name":"dec1","type":"decimal(10,2)","nullable":true},)~"
    R"~({"name":"dec2","type":"decimal(65,30)","nullable":true},{"name":"dec3","type":"decimal(5,0)","nullable":true},)~"
    R"~({"name":"dt","type":"date","nullable":true},{"name":"tm","type":"time","nullable":true},)~"
    R"~({"name":"tm6","type":"time(6)","nullable":true},{"name":"dtm","type":"datetime","nullable":true},)~"
    R"~({"name":"dtm3","type":"datetime(3)","nullable":true},{"name":"dtm6","type":"datetime(6)","nullable":true},)~"
    R"~({"name":"ts","type":"timestamp","nullable":true},{"name":"ts6","type":"timestamp(6)","nullable":true},)~"
    R"~({"name":"yr","type":"year(4)","nullable":true},{"name":"ch","type":"char(10)","nullable":true,"charset":"utf8mb4"},)~"
    R"~({"name":"vc","type":"varchar(300)","nullable":true,"charset":"utf8mb4"},)~"
    R"~({"name":"l1","type":"varchar(20)","nullable":true,"charset":"latin1"},)~"
    R"~({"name":"u2","type":"varchar(20)","nullable":true,"charset":"ucs2"},)~"
    R"~({"name":"u16","type":"char(5)","nullable":true,"charset":"utf16"},)~"
    R"~({"name":"u32","type":"varchar(5)","nullable":true,"charset":"utf32"},)~"
    R"~({"name":"tx","type":"text","nullable":true,"charset":"utf8mb4"},{"name":"bn","type":"binary(4)","nullable":true},)~"
    R"~({"name":"vb","type":"varbinary(20)","nullable":true},{"name":"bl","type":"blob","nullable":true},)~"
    R"~({"name":"bt1","type":"bit(1)","nullable":true},{"name":"bt9","type":"bit(9)","nullable":true},)~"
    R"~({"name":"bt64","type":"bit(64)","nullable":true},)~"
    R"~({"name":"en","type":"enum('small','medium','large')","nullable":true,"values":["small","medium","large"]},)~"
    R"~({"name":"st","type":"set('a','b','c','d')","nullable":true,"values":["a","b","c","d"]},)~"
    R"~({"name":"js","type":"json","nullable":true},{"name":"g","type":"point","nullable":true},)~"
    R"~({"name":"nd","type":"date","nullable":false}],)~"
    R"~("key":["id"],"pos":null,"ts_ms":1})~";

// The converted value of column `name` when the row holds `value` (canonical JSON text).
std::string value_of(const OutputOptions& options, std::string_view name, std::string_view value) {
  const std::string after = std::string(R"~({"id":1,")~") + std::string(name) + "\":" + std::string(value) + "}";
  const auto lines = convert(options, {kTypesTable, R"~({"op":"c","v":1,"db":"t","table":"types","key":{"id":1},"before":null,"after":)~" +
                                                        after + R"~(,"pos":{"file":"b.1","offset":4,"index":0,"gtid":null},"ts_ms":1})~"});
  REQUIRE(lines.size() == 1);
  const std::string member = "\"" + std::string(name) + "\":";
  const std::size_t at = lines[0].find(member, lines[0].find("\"after\":"));
  REQUIRE(at != std::string::npos);
  const std::size_t end = lines[0].find("},\"source\"", at);
  return lines[0].substr(at + member.size(), end - at - member.size());
}

}  // namespace

TEST_CASE("debezium: every type under the defaults (FORMATS 2.7)") {
  const OutputOptions options = debezium();
  CHECK(value_of(options, "ti", "-128") == "-128");
  CHECK(value_of(options, "tiu", "255") == "255");
  CHECK(value_of(options, "iu", "4294967295") == "4294967295");
  CHECK(value_of(options, "bi", "-9223372036854775808") == "-9223372036854775808");
  CHECK(value_of(options, "biu", "18446744073709551615") == "-1");  // long mode wraps
  CHECK(value_of(options, "biu", "1") == "1");
  CHECK(value_of(options, "f", "3.1415927") == "3.1415927");
  CHECK(value_of(options, "d", "2.718281828459045") == "2.718281828459045");
  CHECK(value_of(options, "dec1", R"~("-12345678.90")~") == R"~("tmn9Lg==")~");  // -1234567890
  CHECK(value_of(options, "dec1", R"~("0.00")~") == R"~("AA==")~");
  CHECK(value_of(options, "dec1", R"~("-0.01")~") == R"~("/w==")~");
  CHECK(value_of(options, "dec3", R"~("-99999")~") == R"~("/nlh")~");
  CHECK(value_of(options, "dec2", R"~("-0.000000000000000000000000000001")~") == R"~("/w==")~");
  CHECK(value_of(options, "dt", R"~("2024-09-04")~") == "19970");
  CHECK(value_of(options, "dt", R"~("1000-01-01")~") == "-354285");
  CHECK(value_of(options, "dt", R"~("0000-00-00")~") == "null");  // a zero date, nullable
  CHECK(value_of(options, "nd", R"~("0000-00-00")~") == "0");     // NOT NULL: the epoch
  CHECK(value_of(options, "tm", R"~("-838:59:59")~") == "-3020399000000");
  CHECK(value_of(options, "tm6", R"~("-00:00:00.000001")~") == "-1");
  CHECK(value_of(options, "tm6", R"~("10:52:12.189000")~") == "39132189000");
  CHECK(value_of(options, "dtm", R"~("1000-01-01 00:00:00")~") == "-30610224000000");
  CHECK(value_of(options, "dtm3", R"~("2024-09-05 08:00:01.250")~") == "1725523201250");
  CHECK(value_of(options, "dtm6", R"~("9999-12-31 23:59:59.999999")~") == "253402300799999999");
  CHECK(value_of(options, "dtm", R"~("0000-00-00 00:00:00")~") == "null");
  CHECK(value_of(options, "ts", R"~("1970-01-01 00:00:01Z")~") == R"~("1970-01-01T00:00:01Z")~");
  CHECK(value_of(options, "ts6", R"~("2038-01-19 03:14:07.999999Z")~") == R"~("2038-01-19T03:14:07.999999Z")~");
  CHECK(value_of(options, "ts6", R"~("0000-00-00 00:00:00.000000")~") == "null");
  CHECK(value_of(options, "yr", "1901") == "1901");
  CHECK(value_of(options, "ch", R"~("abc")~") == R"~("abc")~");
  CHECK(value_of(options, "vc", R"~("line1\nline2 \"q\" \\ tab\t")~") == R"~("line1\nline2 \"q\" \\ tab\t")~");
  CHECK(value_of(options, "l1", "\"caf\xc3\xa9\"") == "\"caf\xc3\xa9\"");
  CHECK(value_of(options, "bn", R"~("AP8AAA==")~") == R"~("AP8AAA==")~");
  CHECK(value_of(options, "vb", R"~("")~") == R"~("")~");
  CHECK(value_of(options, "bl", R"~("iVBORw0KGgo=")~") == R"~("iVBORw0KGgo=")~");
  CHECK(value_of(options, "bt1", "1") == "true");
  CHECK(value_of(options, "bt1", "0") == "false");
  CHECK(value_of(options, "bt9", "257") == R"~("AQE=")~");  // 0x0101, little-endian
  CHECK(value_of(options, "bt64", "18446744073709551615") == R"~("//////////8=")~");
  CHECK(value_of(options, "en", R"~("large")~") == R"~("large")~");
  CHECK(value_of(options, "en", "2") == R"~("medium")~");  // the index, without ENUM metadata
  CHECK(value_of(options, "st", R"~("a,b,c,d")~") == R"~("a,b,c,d")~");
  CHECK(value_of(options, "st", "5") == R"~("a,c")~");     // the bitmask
  CHECK(value_of(options, "js", R"~({"a":[1,2.5,null,true],"b":{"c":"d"}})~") ==
        R"~("{\"a\":[1,2.5,null,true],\"b\":{\"c\":\"d\"}}")~");
  CHECK(value_of(options, "js", R"~("just a string")~") == R"~("\"just a string\"")~");
  // POINT(1 2), SRID 0: 4 SRID bytes, then the WKB (byte order 1, type 1, x, y).
  CHECK(value_of(options, "g", R"~("AAAAAAEBAAAAAAAAAAAA8D8AAAAAAAAAQA==")~") ==
        R"~({"x":1,"y":2,"wkb":"AQEAAAAAAAAAAADwPwAAAAAAAABA","srid":0})~");
  CHECK(value_of(options, "i", "null") == "null");
}

TEST_CASE("debezium: the options people change (FORMATS 2.8)") {
  CHECK(value_of(debezium({"bigint.unsigned.handling.mode=precise"}), "biu", "18446744073709551615") ==
        R"~("AP//////////")~");
  CHECK(value_of(debezium({"bigint.unsigned.handling.mode=precise", "decimal.format=numeric"}), "biu",
                 "18446744073709551615") == "18446744073709551615");
  CHECK(value_of(debezium({"binary.handling.mode=hex"}), "bn", R"~("AP8AAA==")~") == R"~("00ff0000")~");
  CHECK(value_of(debezium({"binary.handling.mode=base64"}), "bl", R"~("+/8=")~") == R"~("+/8=")~");
  CHECK(value_of(debezium({"binary.handling.mode=base64-url-safe"}), "bl", R"~("+/8=")~") == R"~("-_8=")~");
  const OutputOptions connect = debezium({"time.precision.mode=connect"});
  CHECK(value_of(connect, "dt", R"~("2024-09-04")~") == "19970");
  CHECK(value_of(connect, "tm6", R"~("10:52:12.189000")~") == "39132189");
  CHECK(value_of(connect, "dtm6", R"~("2024-02-29 23:59:59.000001")~") == "1709251199000");
  CHECK(value_of(debezium({"decimal.handling.mode=double"}), "dec1", R"~("-12345678.90")~") == "-12345678.9");
}

TEST_CASE("debezium --flink: strings Flink's debezium-json reads (FORMATS 3.5)") {
  OutputOptions options = debezium();
  options.flink = true;
  CHECK(value_of(options, "dec2", R"~("99999999999999999999999999999999999.999999999999999999999999999999")~") ==
        R"~("99999999999999999999999999999999999.999999999999999999999999999999")~");
  CHECK(value_of(options, "dt", R"~("2024-02-29")~") == R"~("2024-02-29")~");
  CHECK(value_of(options, "tm6", R"~("12:34:56.500000")~") == R"~("12:34:56.500000")~");
  CHECK(value_of(options, "dtm3", R"~("2024-02-29 23:59:59.999")~") == R"~("2024-02-29 23:59:59.999")~");
  CHECK(value_of(options, "ts6", R"~("2024-02-29 23:59:59.123456Z")~") == R"~("2024-02-29 23:59:59.123456Z")~");
  CHECK(value_of(options, "biu", "18446744073709551615") == "18446744073709551615");
  CHECK(value_of(options, "bn", R"~("AP8AAA==")~") == R"~("AP8AAA==")~");
  CHECK(value_of(options, "nd", R"~("0000-00-00")~") == R"~("1970-01-01")~");
}

TEST_CASE("debezium: --format-option names and values are checked, the known ones listed") {
  OutputOptions options = debezium();
  auto unknown = cdc::output::set_format_option(options, "decimal.mode=string");
  REQUIRE(!unknown);
  CHECK(unknown.error().code == cdc::Errc::usage);
  CHECK(unknown.error().message.starts_with("--format-option decimal.mode: not an option of --format debezium (its "
                                            "options: topic.prefix, schemas.enable, decimal.handling.mode,"));
  auto bad = cdc::output::set_format_option(options, "decimal.handling.mode=exact");
  REQUIRE(!bad);
  CHECK(bad.error().message == "--format-option decimal.handling.mode=exact: 'exact' is not one of precise, string, double");
  CHECK(!cdc::output::set_format_option(options, "schemas.enable"));
  CHECK(!cdc::output::set_format_option(options, "schemas.enable=yes"));
}

TEST_CASE("debezium: with schemas.enable every message is {schema, payload} JSON, each kind of event") {
  OutputOptions options = debezium({"schemas.enable=true", "provide.transaction.metadata=true"});
  options.kafka_key = true;
  options.topic_field = true;
  std::vector<std::string> input = kExample;
  input.push_back(
      R"~({"op":"ddl","v":1,"db":"shop","sql":"ALTER TABLE items ADD c INT","pos":{"file":"b.1","offset":9,"index":0,"gtid":null},"ts_ms":1})~");
  input.push_back(kTypesTable);
  input.push_back(R"~({"op":"r","v":1,"db":"t","table":"types","key":{"id":1},"before":null,"after":{"id":1,"g":null},"ts_ms":1})~");
  const auto lines = convert(options, input);
  REQUIRE(lines.size() == 9);  // BEGIN c END BEGIN u d tombstone, the DDL, the r row
  simdjson::dom::parser parser;
  std::size_t tombstones = 0;
  for (const std::string& line : lines) {
    INFO(line);
    const std::size_t topic_end = line.find('\t');
    const std::size_t key_end = line.find('\t', topic_end + 1);
    REQUIRE(key_end != std::string::npos);
    const std::string key = line.substr(topic_end + 1, key_end - topic_end - 1);
    const std::string value = line.substr(key_end + 1);
    for (const std::string& part : {key, value}) {
      if (part.empty()) continue;
      simdjson::dom::object object;
      REQUIRE(parser.parse(part).get(object) == simdjson::SUCCESS);
      CHECK(object.size() == 2);
      simdjson::dom::object schema;
      CHECK(object["schema"].get(schema) == simdjson::SUCCESS);
      CHECK(object["payload"].error() == simdjson::SUCCESS);
    }
    if (value.empty()) ++tombstones;
  }
  CHECK(tombstones == 1);
}

TEST_CASE("debezium: the Connect schema of each type (FORMATS 2.7)") {
  OutputOptions options = debezium({"schemas.enable=true"});
  const auto lines = convert(options, {kTypesTable, R"~({"op":"r","v":1,"db":"t","table":"types","key":{"id":1},"before":null,"after":{"id":1},"ts_ms":1})~"});
  REQUIRE(lines.size() == 1);
  const std::string& line = lines[0];
  for (const std::string_view field : {
           R"~({"type":"int8","optional":true,"field":"ti"})~",
           R"~({"type":"int16","optional":true,"field":"tiu"})~",
           R"~({"type":"int32","optional":true,"field":"siu"})~",
           R"~({"type":"int32","optional":true,"field":"miu"})~",
           R"~({"type":"int64","optional":true,"field":"iu"})~",
           R"~({"type":"int64","optional":true,"field":"biu"})~",
           R"~({"type":"float","optional":true,"field":"f"})~",
           R"~({"type":"double","optional":true,"field":"d"})~",
           R"~({"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"30","connect.decimal.precision":"65"},"field":"dec2"})~",
           R"~({"type":"int32","optional":true,"name":"io.debezium.time.Date","version":1,"field":"dt"})~",
           R"~({"type":"int64","optional":true,"name":"io.debezium.time.MicroTime","version":1,"field":"tm6"})~",
           R"~({"type":"int64","optional":true,"name":"io.debezium.time.Timestamp","version":1,"field":"dtm3"})~",
           R"~({"type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp","version":1,"field":"dtm6"})~",
           R"~({"type":"string","optional":true,"name":"io.debezium.time.ZonedTimestamp","version":1,"field":"ts6"})~",
           R"~({"type":"int32","optional":true,"name":"io.debezium.time.Year","version":1,"field":"yr"})~",
           R"~({"type":"string","optional":true,"field":"u32"})~",
           R"~({"type":"bytes","optional":true,"field":"bn"})~",
           R"~({"type":"boolean","optional":true,"field":"bt1"})~",
           R"~({"type":"bytes","optional":true,"name":"io.debezium.data.Bits","version":1,"parameters":{"length":"9"},"field":"bt9"})~",
           R"~({"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"small,medium,large"},"field":"en"})~",
           R"~({"type":"string","optional":true,"name":"io.debezium.data.EnumSet","version":1,"parameters":{"allowed":"a,b,c,d"},"field":"st"})~",
           R"~({"type":"string","optional":true,"name":"io.debezium.data.Json","version":1,"field":"js"})~",
           R"~({"type":"struct","fields":[{"type":"double","optional":false,"field":"x"},{"type":"double","optional":false,"field":"y"},{"type":"bytes","optional":true,"field":"wkb"},{"type":"int32","optional":true,"field":"srid"}],"optional":true,"name":"io.debezium.data.geometry.Point","version":1,"doc":"Geometry (POINT)","field":"g"})~",
           R"~({"type":"int32","optional":false,"name":"io.debezium.time.Date","version":1,"field":"nd"})~"}) {
    INFO(field);
    CHECK(line.find(field) != std::string::npos);
  }
  OutputOptions connect = debezium({"schemas.enable=true", "time.precision.mode=connect",
                                    "decimal.handling.mode=string", "binary.handling.mode=hex"});
  const auto other = convert(connect, {kTypesTable, R"~({"op":"r","v":1,"db":"t","table":"types","key":{"id":1},"before":null,"after":{"id":1},"ts_ms":1})~"});
  REQUIRE(other.size() == 1);
  for (const std::string_view field : {
           R"~({"type":"int32","optional":true,"name":"org.apache.kafka.connect.data.Time","version":1,"field":"tm6"})~",
           R"~({"type":"int64","optional":true,"name":"org.apache.kafka.connect.data.Timestamp","version":1,"field":"dtm6"})~",
           R"~({"type":"int32","optional":true,"name":"org.apache.kafka.connect.data.Date","version":1,"field":"dt"})~",
           R"~({"type":"string","optional":true,"field":"dec1"})~",
           R"~({"type":"string","optional":true,"field":"bl"})~"}) {
    INFO(field);
    CHECK(other[0].find(field) != std::string::npos);
  }
}
