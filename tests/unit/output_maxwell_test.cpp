// Maxwell rows from hand-written canonical lines: every column type, FORMATS 5.5's worked
// example, xid/xoffset/commit on a multi-row transaction (also past the spill threshold),
// old, bootstrap markers, DDL, keys and the options.

#include <doctest/doctest.h>

#include "output/maxwell.h"
#include "output/spill_buffer.h"
#include "output_format_support.h"

namespace {

using namespace format_test;

std::unique_ptr<cdc::output::Converter> maxwell(const cdc::output::OutputOptions& options = {}) {
  return cdc::output::make_maxwell_converter(options);
}

cdc::output::OutputOptions with(std::initializer_list<std::pair<std::string_view, std::string_view>> settings) {
  cdc::output::OutputOptions options;
  options.format = cdc::output::Format::maxwell;
  for (const auto& [name, value] : settings) REQUIRE(cdc::output::apply_maxwell_option(options.maxwell, name, value));
  return options;
}

const std::string kLamp1 = items_row(7, "lamp", "19.90", "2024-09-05 08:00:01.250");
const std::string kMaxwellLamp2 = items_row(7, "lamp", "17.50", "2024-09-05 08:00:02.500");

std::string items_insert(int id, std::uint64_t offset, std::uint64_t index) {
  return items_change("c", "null", items_row(id, "n" + std::to_string(id), "1.00", "2024-01-01 00:00:00.000"), offset,
                      index, 200, 1725523300);
}

}  // namespace

TEST_CASE("maxwell: every column type's value") {
  auto converter = maxwell();
  const std::string out = run(*converter, {every_type_table_line(), every_type_insert(),
                                           commit_line("77", 1, 500, 1)});
  const auto lines = lines_of(out);
  REQUIRE(lines.size() == 1);
  const std::string data = member(lines[0], "data");
  for (const TypeCase& c : every_type_cases()) {
    CAPTURE(c.name);
    CHECK(member(data, c.name) == c.maxwell);
  }
}

TEST_CASE("maxwell: FORMATS 5.5 worked example, byte for byte") {
  auto converter = maxwell(with({}));
  const std::string out =
      run(*converter, {items_table_line(), items_change("c", "null", kLamp1, 1520, 0, 101, 1725523201),
                       commit_line("9001", 101, 1700, 1725523201),
                       items_change("u", kLamp1, kMaxwellLamp2, 1890, 0, 102, 1725523202),
                       commit_line("9002", 102, 2100, 1725523202),
                       items_change("d", kMaxwellLamp2, "null", 2260, 0, 103, 1725523203),
                       commit_line("9003", 103, 2400, 1725523203)});
  CHECK(out ==
        R"j({"database":"shop","table":"items","type":"insert","ts":1725523201,"xid":9001,"commit":true,"data":{"id":7,"name":"lamp","price":19.90,"updated":"2024-09-05 08:00:01.250"}}
{"database":"shop","table":"items","type":"update","ts":1725523202,"xid":9002,"commit":true,"data":{"id":7,"name":"lamp","price":17.50,"updated":"2024-09-05 08:00:02.500"},"old":{"price":19.90,"updated":"2024-09-05 08:00:01.250"}}
{"database":"shop","table":"items","type":"delete","ts":1725523203,"xid":9003,"commit":true,"data":{"id":7,"name":"lamp","price":17.50,"updated":"2024-09-05 08:00:02.500"}}
)j");
}

TEST_CASE("maxwell: --key and --topic prefix each row with the table's topic and Maxwell's key") {
  cdc::output::OutputOptions options;
  options.kafka_key = true;
  options.topic_field = true;
  auto converter = maxwell(options);
  const std::string out = run(*converter, {items_table_line(), items_change("c", "null", kLamp1, 1520, 0, 101, 1725523201),
                                           commit_line("9001", 101, 1700, 1725523201)});
  CHECK(out.starts_with("shop.items\t{\"database\":\"shop\",\"table\":\"items\",\"pk.id\":7}\t{\"database\":\"shop\","));
}

TEST_CASE("maxwell: a keyless table's key has a _uuid derived from the row's position") {
  const std::string table =
      R"j({"op":"table","v":1,"db":"s","table":"Log","columns":[{"name":"msg","type":"text","nullable":true,"charset":"utf8mb4"}],"key":null,"pos":null,"ts_ms":0})j";
  const auto insert = [](std::uint64_t offset) {
    return fmt::format(
        R"j({{"op":"c","v":1,"db":"s","table":"Log","key":null,"before":null,"after":{{"msg":"x"}},"pos":{{"file":"b.1","offset":{},"index":0,"gtid":null}},"ts_ms":1000}})j",
        offset);
  };
  cdc::output::OutputOptions options;
  options.kafka_key = true;
  const auto key_of = [](std::string_view line) { return std::string(line.substr(0, line.find('\t'))); };
  auto first = maxwell(options);
  const auto a = lines_of(run(*first, {table, insert(100), insert(200)}));
  auto second = maxwell(options);
  const auto b = lines_of(run(*second, {table, insert(100)}));
  REQUIRE(a.size() == 2);
  REQUIRE(b.size() == 1);
  CHECK(key_of(a[0]).starts_with(R"j({"database":"s","table":"Log","_uuid":")j"));
  CHECK(key_of(a[0]).size() == std::string_view(R"j({"database":"s","table":"Log","_uuid":""})j").size() + 36);
  CHECK(key_of(a[0]) == key_of(b[0]));  // the same position, the same key in every run
  CHECK(key_of(a[0]) != key_of(a[1]));
}

TEST_CASE("maxwell: a multi-row transaction gets its xid on every row, xoffset, and commit on the last") {
  auto converter = maxwell(with({{"output_xoffset", "true"},
                                 {"output_binlog_position", "true"},
                                 {"output_gtid_position", "true"},
                                 {"output_server_id", "true"},
                                 {"output_thread_id", "true"},
                                 {"output_primary_keys", "true"},
                                 {"output_primary_key_columns", "true"}}));
  std::vector<std::string> lines = {items_table_line()};
  for (int i = 0; i < 3; ++i) lines.push_back(items_insert(i + 1, 3000, static_cast<std::uint64_t>(i)));
  lines.push_back(commit_line("4242", 200, 3300, 1725523300));
  const auto out = lines_of(run(*converter, lines));
  REQUIRE(out.size() == 3);
  const std::string tail =
      R"j(,"position":"binlog.000042:3000","gtid":"3e11fa47-71ca-11e1-9e33-c80aa9429562:200","server_id":1,"thread_id":12,)j";
  CHECK(out[0] == R"j({"database":"shop","table":"items","type":"insert","ts":1725523300,"xid":4242,"xoffset":0)j" + tail +
                      R"j("primary_key":[1],"primary_key_columns":["id"],"data":{"id":1,"name":"n1","price":1.00,"updated":"2024-01-01 00:00:00.000"}})j");
  CHECK(out[1].find(R"j("xid":4242,"xoffset":1,"position")j") != std::string::npos);
  CHECK(out[2].find(R"j("xid":4242,"commit":true,"position")j") != std::string::npos);
  CHECK(out[2].find("xoffset") == std::string::npos);
}

TEST_CASE("maxwell: a transaction past the spill threshold comes out whole, in order") {
  cdc::output::OutputOptions options = with({{"output_xoffset", "true"}});
  options.maxwell.spill_threshold_bytes = 300;  // a few rows per spill
  auto converter = maxwell(options);
  std::vector<std::string> lines = {items_table_line()};
  constexpr int kRows = 200;
  for (int i = 0; i < kRows; ++i) lines.push_back(items_insert(i + 1, 5000, static_cast<std::uint64_t>(i)));
  lines.push_back(commit_line("5", 200, 9000, 1725523300));
  // Two transactions: the buffer is reused after the first commit.
  for (int i = 0; i < 3; ++i) lines.push_back(items_insert(1000 + i, 9100, static_cast<std::uint64_t>(i)));
  lines.push_back(commit_line("6", 201, 9200, 1725523300));
  const auto out = lines_of(run(*converter, lines));
  REQUIRE(out.size() == kRows + 3);
  for (int i = 0; i < kRows; ++i) {
    CAPTURE(i);
    CHECK(member(member(out[static_cast<std::size_t>(i)], "data"), "id") == std::to_string(i + 1));
    CHECK(member(out[static_cast<std::size_t>(i)], "xid") == "5");
    if (i + 1 < kRows) CHECK(member(out[static_cast<std::size_t>(i)], "xoffset") == std::to_string(i));
  }
  CHECK(member(out[kRows - 1], "commit") == "true");
  CHECK(member(out[kRows], "xid") == "6");
  CHECK(member(out[kRows + 2], "commit") == "true");
}

TEST_CASE("maxwell: SpillBuffer keeps rows across the file and memory, and is reusable") {
  cdc::output::SpillBuffer buffer(64);
  for (int i = 0; i < 20; ++i) REQUIRE(buffer.add("head" + std::to_string(i), "-tail"));
  CHECK(buffer.spilled());
  std::string seen;
  REQUIRE(buffer.drain([&](std::string_view head, std::string_view tail, std::size_t index) {
    seen += std::string(head) + std::string(tail) + ":" + std::to_string(index) + " ";
  }));
  CHECK(seen.starts_with("head0-tail:0 head1-tail:1 "));
  CHECK(seen.ends_with("head19-tail:19 "));
  CHECK(buffer.rows() == 0);
  CHECK_FALSE(buffer.spilled());
  REQUIRE(buffer.add("again", ""));
  seen.clear();
  REQUIRE(buffer.drain([&](std::string_view head, std::string_view, std::size_t) { seen += head; }));
  CHECK(seen == "again");
}

TEST_CASE("maxwell: old holds only changed columns, none changed means no old, {} with --flink") {
  const std::string same = items_change("u", kLamp1, kLamp1, 1890, 0, 102, 1725523202);
  const std::string from_null = items_change("u", R"j({"id":7,"name":null,"price":"1.00","updated":"2024-01-01 00:00:00.000"})j",
                                             R"j({"id":7,"name":"x","price":"1.00","updated":"2024-01-01 00:00:00.000"})j",
                                             1890, 1, 102, 1725523202);
  SUBCASE("maxwell's bytes") {
    auto converter = maxwell();
    const auto out = lines_of(run(*converter, {items_table_line(), same, from_null, commit_line("1", 102, 2000, 1)}));
    REQUIRE(out.size() == 2);
    CHECK(member(out[0], "old") == "<missing>");
    CHECK(member(out[1], "old") == R"j({"name":null})j");
  }
  SUBCASE("--flink") {
    cdc::output::OutputOptions options;
    options.flink = true;
    auto converter = maxwell(options);
    const auto out = lines_of(run(*converter, {items_table_line(), same, commit_line("1", 102, 2000, 1)}));
    REQUIRE(out.size() == 1);
    CHECK(member(out[0], "old") == "{}");
  }
}

TEST_CASE("maxwell: output_nulls=false leaves NULL columns out, output_null_zerodates makes zero dates null") {
  auto converter = maxwell(with({{"output_nulls", "false"}, {"output_null_zerodates", "true"}}));
  const auto out = lines_of(run(*converter, {every_type_table_line(), every_type_insert(), commit_line("1", 1, 2, 1)}));
  REQUIRE(out.size() == 1);
  const std::string data = member(out[0], "data");
  CHECK(member(data, "ts_2") == "<missing>");
  CHECK(member(data, "dt_2") == "<missing>");  // zero date -> null -> left out
  CHECK(member(data, "dt") == R"j("1000-01-01")j");
}

TEST_CASE("maxwell: snapshot rows are bootstrap-insert between bootstrap-start and -complete per table") {
  const std::string other_table =
      R"j({"op":"table","v":1,"db":"shop","table":"tags","columns":[{"name":"id","type":"int","nullable":false}],"key":["id"],"pos":null,"ts_ms":0})j";
  const auto r_items = [](int id) {
    return fmt::format(
        R"j({{"op":"r","v":1,"db":"shop","table":"items","key":{{"id":{}}},"before":null,"after":{{"id":{},"name":"a","price":"1.00","updated":"2024-01-01 00:00:00.000"}},"ts_ms":1725523200000}})j",
        id, id);
  };
  const std::string r_tags =
      R"j({"op":"r","v":1,"db":"shop","table":"tags","key":{"id":1},"before":null,"after":{"id":1},"ts_ms":1725523260000})j";
  const std::string high =
      R"j({"op":"high","v":1,"position":"0-1-5","file":"b.1","offset":4,"chunks":2,"rows":3,"ts_ms":1})j";
  SUBCASE("maxwell's bytes") {
    auto converter = maxwell();
    const auto out = lines_of(run(*converter, {items_table_line(), r_items(1), r_items(2), other_table, r_tags, high}));
    REQUIRE(out.size() == 7);
    CHECK(out[0] == R"j({"database":"shop","table":"items","type":"bootstrap-start","ts":1725523200,"data":{}})j");
    CHECK(out[1] == R"j({"database":"shop","table":"items","type":"bootstrap-insert","ts":1725523200,"data":{"id":1,"name":"a","price":1.00,"updated":"2024-01-01 00:00:00.000"}})j");
    CHECK(member(out[2], "type") == R"j("bootstrap-insert")j");
    CHECK(out[3] == R"j({"database":"shop","table":"items","type":"bootstrap-complete","ts":1725523200,"data":{}})j");
    CHECK(out[4] == R"j({"database":"shop","table":"tags","type":"bootstrap-start","ts":1725523260,"data":{}})j");
    CHECK(member(out[5], "type") == R"j("bootstrap-insert")j");
    CHECK(out[6] == R"j({"database":"shop","table":"tags","type":"bootstrap-complete","ts":1725523260,"data":{}})j");
  }
  SUBCASE("--flink: insert, no markers") {
    cdc::output::OutputOptions options;
    options.flink = true;
    auto converter = maxwell(options);
    const auto out = lines_of(run(*converter, {items_table_line(), r_items(1), other_table, r_tags, high}));
    REQUIRE(out.size() == 2);
    CHECK(member(out[0], "type") == R"j("insert")j");
    CHECK(member(out[1], "type") == R"j("insert")j");
  }
}

TEST_CASE("maxwell: DDL only with output_ddl, typed as Maxwell types it") {
  const auto ddl = [](std::string_view sql) {
    return fmt::format(
        R"j({{"op":"ddl","v":1,"db":"shop","sql":"{}","pos":{{"file":"b.1","offset":4,"index":0,"gtid":null}},"ts_ms":7000}})j",
        sql);
  };
  auto quiet = maxwell();
  CHECK(run(*quiet, {ddl("ALTER TABLE items ADD x INT")}).empty());
  auto converter = maxwell(with({{"output_ddl", "true"}, {"output_binlog_position", "true"}}));
  const auto out = lines_of(run(*converter, {ddl("ALTER TABLE items ADD x INT"), ddl("CREATE DATABASE d2"),
                                             ddl("TRUNCATE items"), ddl("DROP TABLE shop.items")}));
  REQUIRE(out.size() == 3);
  CHECK(out[0] ==
        R"j({"type":"table-alter","database":"shop","table":"items","ts":7000,"sql":"ALTER TABLE items ADD x INT","position":"b.1:4"})j");
  CHECK(member(out[1], "type") == R"j("database-create")j");
  CHECK(member(out[1], "database") == R"j("d2")j");
  CHECK(member(out[2], "type") == R"j("table-drop")j");
}

TEST_CASE("maxwell: a discarded transaction's rows are dropped, rows without a commit come out at the end") {
  auto converter = maxwell();
  const auto out = lines_of(run(
      *converter,
      {items_table_line(), items_insert(1, 100, 0),
       R"j({"op":"discard","v":1,"pos":{"file":"binlog.000042","offset":100},"reason":"reconnect","ts_ms":1})j",
       items_insert(2, 100, 0)}));
  REQUIRE(out.size() == 1);
  CHECK(member(member(out[0], "data"), "id") == "2");
  CHECK(member(out[0], "xid") == "<missing>");
}

TEST_CASE("maxwell: --format-option names") {
  cdc::output::MaxwellOptions options;
  CHECK(cdc::output::apply_maxwell_option(options, "output_ddl", "true").has_value());
  CHECK(options.output_ddl);
  CHECK(cdc::output::apply_maxwell_option(options, "output_commit_info", "false").has_value());
  CHECK_FALSE(options.output_commit_info);
  const auto bad = cdc::output::apply_maxwell_option(options, "output_ddl", "yes");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == cdc::Errc::usage);
  const auto unknown = cdc::output::apply_maxwell_option(options, "kafka_topic", "x");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().message.find("output_binlog_position") != std::string::npos);
  CHECK(cdc::output::maxwell_option_names().size() == 11);
}

TEST_CASE("maxwell: a line of another kind inside a transaction does not cut it, a high line does") {
  auto converter = maxwell();
  const auto out = lines_of(run(*converter, {items_table_line(), items_insert(1, 100, 0),
                                             R"j({"op":"heartbeat_of_a_newer_cdc","v":1})j", items_insert(2, 100, 1),
                                             commit_line("8", 200, 300, 1), items_insert(3, 400, 0),
                                             R"j({"op":"high","v":1,"position":"x","file":"b","offset":1,"chunks":0,"rows":0,"ts_ms":1})j"}));
  REQUIRE(out.size() == 3);
  CHECK(member(out[0], "xid") == "8");
  CHECK(member(out[0], "commit") == "<missing>");
  CHECK(member(out[1], "commit") == "true");
  CHECK(member(out[2], "xid") == "<missing>");
}

TEST_CASE("maxwell: as RowMap.toJSON, xoffset only with the commit info, and old written when a change is all NULLs") {
  auto converter = maxwell(with({{"output_commit_info", "false"}, {"output_xoffset", "true"}, {"output_nulls", "false"}}));
  const auto out = lines_of(run(
      *converter,
      {items_table_line(), items_insert(1, 100, 0), items_insert(2, 100, 1),
       items_change("u", R"j({"id":7,"name":null,"price":"1.00","updated":"2024-01-01 00:00:00.000"})j",
                    R"j({"id":7,"name":"x","price":"1.00","updated":"2024-01-01 00:00:00.000"})j", 200, 0, 201, 1),
       commit_line("3", 201, 300, 1)}));
  REQUIRE(out.size() == 3);
  CHECK(out[0].find("xoffset") == std::string::npos);
  CHECK(out[0].find("xid") == std::string::npos);
  CHECK(member(out[2], "old") == "{}");  // name changed from NULL; NULLs are left out
}

TEST_CASE("maxwell: bootstrap markers' keys: the key columns as null on start, a _uuid on complete") {
  cdc::output::OutputOptions options;
  options.kafka_key = true;
  auto converter = maxwell(options);
  const auto out = lines_of(run(
      *converter,
      {items_table_line(),
       R"j({"op":"r","v":1,"db":"shop","table":"items","key":{"id":1},"before":null,"after":{"id":1,"name":"a","price":"1.00","updated":"2024-01-01 00:00:00.000"},"ts_ms":1000})j"}));
  REQUIRE(out.size() == 3);
  CHECK(out[0].starts_with("{\"database\":\"shop\",\"table\":\"items\",\"pk.id\":null}\t"));
  CHECK(out[1].starts_with("{\"database\":\"shop\",\"table\":\"items\",\"pk.id\":1}\t"));
  CHECK(out[2].starts_with("{\"database\":\"shop\",\"table\":\"items\",\"_uuid\":\""));
}

namespace {

// t.odd: the DATE, DATETIME and BINARY(n) values Maxwell's binary log reader changes.
const std::string kOddTable =
    R"j({"op":"table","v":1,"db":"t","table":"odd","columns":[{"name":"id","type":"int","nullable":false},)j"
    R"j({"name":"d","type":"date","nullable":true},{"name":"dt","type":"datetime(3)","nullable":true},)j"
    R"j({"name":"bn","type":"binary(4)","nullable":true},{"name":"vb","type":"varbinary(4)","nullable":true}],)j"
    R"j("key":["id"],"pos":null,"ts_ms":0})j";

std::string odd_insert(int id, std::string_view d, std::string_view dt, std::string_view bn, std::string_view vb) {
  return fmt::format(
      R"j({{"op":"c","v":1,"db":"t","table":"odd","key":{{"id":{}}},"before":null,)j"
      R"j("after":{{"id":{},"d":{},"dt":{},"bn":{},"vb":{}}},)j"
      R"j("pos":{{"file":"binlog.000001","offset":400,"index":0,"gtid":null}},"server_id":1,"thread":5,"ts_ms":1000}})j",
      id, id, d, dt, bn, vb);
}

}  // namespace

TEST_CASE("maxwell: a DATE or DATETIME with a zero year, month or day is the zero date (Maxwell's test_zero_created_at)") {
  const std::vector<std::string> lines = {
      kOddTable, odd_insert(1, R"j("0003-00-00")j", R"j("2020-00-01 01:02:03.500")j", "null", "null"),
      odd_insert(2, R"j("0000-05-05")j", R"j("2024-09-05 00:00:01.250")j", "null", "null"),
      odd_insert(3, R"j("2024-09-05")j", R"j("2024-09-00 08:00:01.250")j", "null", "null"),
      commit_line("1", 1, 500, 1)};
  SUBCASE("the zero date, with the column's fraction digits") {
    auto converter = maxwell();
    const auto out = lines_of(run(*converter, lines));
    REQUIRE(out.size() == 3);
    CHECK(member(member(out[0], "data"), "d") == R"j("0000-00-00")j");
    CHECK(member(member(out[0], "data"), "dt") == R"j("0000-00-00 00:00:00.000")j");
    CHECK(member(member(out[1], "data"), "d") == R"j("0000-00-00")j");
    CHECK(member(member(out[1], "data"), "dt") == R"j("2024-09-05 00:00:01.250")j");
    CHECK(member(member(out[2], "data"), "d") == R"j("2024-09-05")j");
    CHECK(member(member(out[2], "data"), "dt") == R"j("0000-00-00 00:00:00.000")j");
  }
  SUBCASE("null with output_null_zerodates") {
    auto converter = maxwell(with({{"output_null_zerodates", "true"}}));
    const auto out = lines_of(run(*converter, lines));
    REQUIRE(out.size() == 3);
    CHECK(member(member(out[0], "data"), "d") == "null");
    CHECK(member(member(out[0], "data"), "dt") == "null");
    CHECK(member(member(out[2], "data"), "dt") == "null");
  }
}

TEST_CASE("maxwell: BINARY(n) of a change without its trailing zero bytes, as the binary log has it (test_blob)") {
  auto converter = maxwell();
  const std::string snapshot_row =
      R"j({"op":"r","v":1,"db":"t","table":"odd","key":{"id":9},"before":null,)j"
      R"j("after":{"id":9,"d":null,"dt":null,"bn":"AQIAAA==","vb":null},"ts_ms":1725523200000})j";
  const auto out = lines_of(run(*converter, {kOddTable, odd_insert(1, "null", "null", R"j("AQIAAA==")j", R"j("AQIAAA==")j"),
                                            odd_insert(2, "null", "null", R"j("AQIDBA==")j", "null"),
                                            odd_insert(3, "null", "null", R"j("AAAAAA==")j", "null"),
                                            odd_insert(4, "null", "null", R"j("AAECAw==")j", "null"),
                                            commit_line("1", 1, 500, 1), snapshot_row}));
  REQUIRE(out.size() == 4 + 3);
  CHECK(member(member(out[0], "data"), "bn") == R"j("AQI=")j");
  CHECK(member(member(out[0], "data"), "vb") == R"j("AQIAAA==")j");  // VARBINARY keeps its bytes
  CHECK(member(member(out[1], "data"), "bn") == R"j("AQIDBA==")j");
  CHECK(member(member(out[2], "data"), "bn") == R"j("")j");
  CHECK(member(member(out[3], "data"), "bn") == R"j("AAECAw==")j");
  // A snapshot row: as Maxwell's bootstrap SELECTs it, padded.
  CHECK(member(out[5], "type") == R"j("bootstrap-insert")j");
  CHECK(member(member(out[5], "data"), "bn") == R"j("AQIAAA==")j");
}

TEST_CASE("maxwell: an update of a minimal row image has the before image's key in data, not old (test_minimal)") {
  const std::string minimal = items_change("u", R"j({"id":7})j", R"j({"name":"x"})j", 1890, 0, 102, 1725523202);
  SUBCASE("data") {
    auto converter = maxwell(with({{"output_primary_keys", "true"}}));
    const auto out = lines_of(run(*converter, {items_table_line(), minimal, commit_line("1", 102, 2000, 1)}));
    REQUIRE(out.size() == 1);
    CHECK(member(out[0], "data") == R"j({"name":"x","id":7})j");
    CHECK(member(out[0], "old") == "<missing>");
    CHECK(member(out[0], "primary_key") == "[7]");
  }
  SUBCASE("--key") {
    cdc::output::OutputOptions options;
    options.kafka_key = true;
    auto converter = maxwell(options);
    const auto out = lines_of(run(*converter, {items_table_line(), minimal, commit_line("1", 102, 2000, 1)}));
    REQUIRE(out.size() == 1);
    CHECK(out[0].starts_with(R"j({"database":"shop","table":"items","pk.id":7})j"));
  }
}
