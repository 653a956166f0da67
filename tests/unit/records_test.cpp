// records/: the list of line kinds, and each codec against it: every member a codec writes is
// listed for its kind, in the listed order, and what is written reads back the same.

#include <doctest/doctest.h>
#include <simdjson.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "ndjson/writer.h"
#include "records/check_lines.h"
#include "records/chunk.h"
#include "records/kinds.h"
#include "records/members.h"
#include "records/position.h"
#include "records/row.h"
#include "records/snapshot_lines.h"
#include "records/state.h"
#include "records/stream_lines.h"
#include "records/table_line.h"

namespace {

using cdc::records::Kind;

// The member names of one line as the kinds list spells them: "pos.file", "columns[].name".
void collect(simdjson::dom::element value, const std::string& prefix, std::vector<std::string>& names) {
  simdjson::dom::object object;
  simdjson::dom::array array;
  if (value.get_object().get(object) == simdjson::SUCCESS) {
    for (const auto member : object) {
      const std::string name = prefix + std::string(member.key);
      names.push_back(name);
      // A row image's members are the table's columns: data, not fields of the line.
      if (prefix.empty() && (member.key == "key" || member.key == "before" || member.key == "after" ||
                             member.key == "json_diffs"))
        continue;
      collect(member.value, name + ".", names);
    }
  } else if (value.get_array().get(array) == simdjson::SUCCESS && !prefix.empty()) {
    const std::string parent = prefix.substr(0, prefix.size() - 1) + "[].";
    for (const auto item : array)
      if (item.is_object()) {
        std::vector<std::string> inner;
        collect(item, parent, inner);
        for (const std::string& name : inner)
          if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      }
  }
}

std::vector<std::string> members_of(const std::string& line) {
  static simdjson::dom::parser parser;
  simdjson::dom::element element;
  REQUIRE(parser.parse(line).get(element) == simdjson::SUCCESS);
  std::vector<std::string> names;
  collect(element, "", names);
  return names;
}

// Every member written is listed for the kind, and they come in the listed order.
void check_listed(Kind kind, const std::string& line) {
  const auto& info = cdc::records::kind_info(kind);
  CAPTURE(info.name);
  CAPTURE(line);
  const std::vector<std::string> written = members_of(line);
  std::size_t at = 0;
  for (const std::string& name : written) {
    const auto found = std::find(info.fields.begin() + static_cast<std::ptrdiff_t>(at), info.fields.end(), name);
    CHECK_MESSAGE(found != info.fields.end(), name << " is written but not listed (or not in the listed order)");
    if (found != info.fields.end()) at = static_cast<std::size_t>(found - info.fields.begin()) + 1;
  }
  if (!info.op.empty()) CHECK(line.starts_with("{\"op\":\"" + std::string(info.op) + "\","));
}

std::string written(auto write) {
  cdc::ndjson::Writer out;
  write(out);
  return std::string(out.buffered());
}

cdc::records::Chunk sample_chunk() {
  cdc::records::Chunk chunk;
  chunk.db = "shop";
  chunk.table = "orders";
  chunk.key = {"id", "k"};
  chunk.key_types = {"int(11)", "varbinary(4)"};
  chunk.start = std::vector<std::string>{"1000", "\"AAE=\""};
  chunk.index = 3;
  chunk.count = 12;
  chunk.columns = {{"id", "int(11)", 0}, {"k", "varbinary(4)", 63}, {"n", "varchar(5)", 45}};
  chunk.identity = std::vector<std::string>{"id", "n"};
  chunk.rows_estimate = 8096;
  return chunk;
}

}  // namespace

TEST_CASE("records: one entry per kind, with unique names and the op first") {
  std::set<std::string_view> names;
  std::size_t i = 0;
  for (const auto& info : cdc::records::all_kinds()) {
    CAPTURE(info.name);
    CHECK(static_cast<std::size_t>(info.kind) == i++);
    CHECK(names.insert(info.name).second);
    CHECK(&cdc::records::kind_info(info.kind) == &info);
    std::set<std::string_view> fields(info.fields.begin(), info.fields.end());
    CHECK(fields.size() == info.fields.size());
    if (info.kind == Kind::stream_state) {
      CHECK(info.op.empty());
      CHECK(info.fields.front() == "v");
    } else {
      REQUIRE(info.fields.size() >= 2);
      CHECK(info.fields[0] == "op");
      CHECK(info.fields[1] == "v");
    }
  }
  CHECK(names.size() == static_cast<std::size_t>(Kind::stream_state) + 1);
}

TEST_CASE("records: the chunk line is listed and reads back") {
  const auto chunk = sample_chunk();
  const std::string line = written([&](auto& out) { cdc::records::write_chunk(chunk, out); });
  check_listed(Kind::chunk, line);
  simdjson::dom::parser parser;
  simdjson::dom::object record;
  REQUIRE(parser.parse(line).get_object().get(record) == simdjson::SUCCESS);
  auto read = cdc::records::parse_chunk(record);
  REQUIRE_MESSAGE(read.has_value(), read.error().message);
  CHECK(read->describe() == "shop.orders chunk 3/12");
  CHECK(read->start == chunk.start);
  CHECK_FALSE(read->end.has_value());
  CHECK(read->identity == chunk.identity);
  CHECK(read->columns.size() == 3);
  CHECK(read->columns[1].collation_id == 63);
  CHECK(written([&](auto& out) { cdc::records::write_chunk(*read, out); }) == line);
}

TEST_CASE("records: cdc-snapshot's lines are listed, and low and high read back") {
  const auto chunk = sample_chunk();
  const cdc::records::Watermark mark{"0-1-42", "binlog.000003", 1234, 1700000000000};
  const auto low = cdc::records::low_of(chunk, mark);
  CHECK(low.key_collations == std::vector<std::uint32_t>{0, 63});
  const std::string low_line = written([&](auto& out) { cdc::records::write_low(low, out); });
  check_listed(Kind::low, low_line);
  const cdc::records::High high{cdc::records::chunk_ref(chunk), mark, 77, 4096};
  const std::string high_line = written([&](auto& out) { cdc::records::write_high(high, out); });
  check_listed(Kind::high, high_line);
  check_listed(Kind::snapshot_discard, written([&](auto& out) {
                 cdc::records::write_snapshot_discard({cdc::records::chunk_ref(chunk), "Lost connection", 5}, out);
               }));
  cdc::records::MergedHigh merged{"0-1-42", cdc::gtid::FilePosition{"binlog.000003", 1234}, 2, 5, 6};
  check_listed(Kind::merged_high, written([&](auto& out) { cdc::records::write_merged_high(merged, out); }));
  {
    const std::string line = written([&](auto& out) { cdc::records::write_merged_high(merged, out); });
    simdjson::dom::parser parser;
    simdjson::dom::object record;
    REQUIRE(parser.parse(line).get_object().get(record) == simdjson::SUCCESS);
    auto read = cdc::records::parse_merged_high(record);
    REQUIRE_MESSAGE(read.has_value(), read.error().message);
    CHECK(read->position == "0-1-42");
    REQUIRE(read->at.has_value());
    CHECK(read->at->offset == 1234);
    CHECK(read->rows == 5);
    CHECK(written([&](auto& out) { cdc::records::write_merged_high(*read, out); }) == line);
  }
  merged.at.reset();
  CHECK(written([&](auto& out) { cdc::records::write_merged_high(merged, out); }) ==
        "{\"op\":\"high\",\"v\":1,\"position\":\"0-1-42\",\"file\":null,\"offset\":null,\"chunks\":2,\"rows\":5,"
        "\"ts_ms\":6}\n");

  simdjson::dom::parser parser;
  simdjson::dom::object record;
  REQUIRE(parser.parse(low_line).get_object().get(record) == simdjson::SUCCESS);
  auto read_low = cdc::records::parse_low(record, low_line);
  REQUIRE_MESSAGE(read_low.has_value(), read_low.error().message);
  CHECK(read_low->chunk == high.chunk);
  CHECK(read_low->mark.position == "0-1-42");
  CHECK(read_low->mark.file == "binlog.000003");
  CHECK(read_low->start == chunk.start);
  CHECK(read_low->identity == chunk.identity);
  CHECK(written([&](auto& out) { cdc::records::write_low(*read_low, out); }) == low_line);
  REQUIRE(parser.parse(high_line).get_object().get(record) == simdjson::SUCCESS);
  auto read_high = cdc::records::parse_high(record);
  REQUIRE_MESSAGE(read_high.has_value(), read_high.error().message);
  CHECK(read_high->rows == 77);
  CHECK(read_high->rows_bytes == 4096);
  CHECK(written([&](auto& out) { cdc::records::write_high(*read_high, out); }) == high_line);
  // An older cdc-snapshot's high line has no "rows_bytes".
  cdc::records::High older = high;
  older.rows_bytes.reset();
  const std::string older_line = written([&](auto& out) { cdc::records::write_high(older, out); });
  CHECK(older_line.find("rows_bytes") == std::string::npos);
  REQUIRE(parser.parse(older_line).get_object().get(record) == simdjson::SUCCESS);
  auto read_older = cdc::records::parse_high(record);
  REQUIRE_MESSAGE(read_older.has_value(), read_older.error().message);
  CHECK_FALSE(read_older->rows_bytes.has_value());
}

TEST_CASE("records: cdc-stream's lines are listed, and their pos reads back from the bytes") {
  const cdc::records::EventPos pos{"binlog.000002", 900, 0, "0-1-11"};
  const std::string ddl = written([&](auto& out) { cdc::records::write_ddl({"shop", "DROP TABLE t", pos, 7}, out); });
  check_listed(Kind::ddl, ddl);
  const std::string commit = written(
      [&](auto& out) { cdc::records::write_commit({"0-1-11", "binlog.000002", 1300, "0-1-11", 3, 55, 7}, out); });
  CHECK(commit.find(R"("rows":3,"xid":55,"ts_ms":7})") != std::string::npos);
  const std::string commit_without_xid = written(
      [&](auto& out) { cdc::records::write_commit({"", "binlog.000002", 1300, "binlog.000002:1300", 1, {}, 7}, out); });
  CHECK(commit_without_xid.find(R"("rows":1,"xid":null,"ts_ms":7})") != std::string::npos);
  // A change line as stream/change_writer writes it, with its origin after "pos".
  const std::string change = R"({"op":"c","v":1,"db":"shop","table":"t","key":null,"before":null,"after":{"id":1},)"
                             R"("pos":{"file":"binlog.000002","offset":1200,"index":3,"gtid":"0-1-11"},)"
                             R"("server_id":1,"thread":42,"ts_ms":7})"
                             "\n";
  check_listed(Kind::insert, change);
  const std::string change_without_thread = R"({"op":"d","v":1,"db":"shop","table":"t","key":null,)"
                                            R"("before":{"id":1},"after":null,)"
                                            R"("pos":{"file":"binlog.000002","offset":1250,"index":0,"gtid":null},)"
                                            R"("server_id":4294967295,"thread":null,"ts_ms":7})"
                                            "\n";
  check_listed(Kind::commit, commit);
  const std::string incident =
      written([&](auto& out) { cdc::records::write_incident({"lost events", {"binlog.000002", 1400, 0, ""}, 7}, out); });
  check_listed(Kind::incident, incident);
  check_listed(Kind::span_start, written([&](auto& out) { cdc::records::write_span_start({"0-1-10"}, out); }));
  check_listed(Kind::span_end, written([&](auto& out) {
                 cdc::records::write_span_end({"0-1-12", cdc::gtid::FilePosition{"binlog.000002", 1500}, "0-1-12"},
                                              out);
               }));
  check_listed(Kind::stream_discard, written([&](auto& out) {
                 cdc::records::write_stream_discard({"", "binlog.000002", 1300, "gone", 1000}, out);
               }));

  simdjson::dom::parser parser;
  for (const auto& expected :
       {std::tuple{ddl, false, "0-1-11", 900}, std::tuple{commit, true, "0-1-11", 1300},
        std::tuple{incident, false, "", 1400}, std::tuple{change, false, "0-1-11", 1200},
        std::tuple{change_without_thread, false, "", 1250}}) {
    // Not structured bindings: clang 14 lets no lambda (CAPTURE's) capture one.
    const auto& line = std::get<0>(expected);
    const bool is_commit = std::get<1>(expected);
    const auto& gtid = std::get<2>(expected);
    const auto offset = std::get<3>(expected);
    CAPTURE(line);
    const std::string_view text(line.data(), line.size() - 1);  // as a line reader gives it, without '\n'
    cdc::records::LinePos scanned;
    REQUIRE(cdc::records::scan_line_pos(text, is_commit, scanned));
    CHECK(scanned.file == "binlog.000002");
    CHECK(scanned.offset == static_cast<std::uint64_t>(offset));
    CHECK(scanned.gtid == gtid);
    simdjson::dom::object record;
    REQUIRE(parser.parse(line).get_object().get(record) == simdjson::SUCCESS);
    auto read = cdc::records::read_pos(record, !is_commit);
    REQUIRE_MESSAGE(read.has_value(), read.error().message);
    CHECK(read->file == scanned.file);
    CHECK(read->offset == scanned.offset);
    CHECK(read->gtid == scanned.gtid);
  }
  // Not in the writers' exact form: left to the parser.
  cdc::records::LinePos scanned;
  CHECK_FALSE(cdc::records::scan_line_pos(R"({"op":"ddl","pos":{"file": "b","offset":1,"index":0,"gtid":null},"ts_ms":1})",
                                          false, scanned));
  CHECK_FALSE(cdc::records::scan_line_pos(
      R"({"op":"c","pos":{"file":"b","offset":1,"index":0,"gtid":null},"server_id":1,"thread":x,"ts_ms":1})", false,
      scanned));
  CHECK_FALSE(cdc::records::scan_line_pos(
      R"({"op":"c","pos":{"file":"b","offset":1,"index":0,"gtid":null},"server_id":1,"ts_ms":1})", false, scanned));
}

namespace {

cdc::records::TableLine sample_table_line() {
  cdc::records::TableLine line;
  line.db = "shop";
  line.table = "it\"ems";
  line.columns.push_back({"id", "int(11)", false, std::nullopt, std::nullopt, {}});
  line.columns.push_back({"name", "varchar(32)", true, "utf8mb4", "utf8mb4_general_ci", {}});
  line.columns.push_back({"size", "enum('s','m''l')", true, "utf8mb4", "utf8mb4_general_ci", {"s", "m'l"}});
  line.key = std::vector<std::string>{"id"};
  line.pos = cdc::records::TablePos{"binlog.000042", 1520, "0-1-5"};
  line.ts_ms = 1725523201000;
  return line;
}

cdc::Result<cdc::records::TableLine> parse_table(simdjson::dom::parser& parser, const std::string& json) {
  simdjson::dom::object record;
  REQUIRE(parser.parse(json).get_object().get(record) == simdjson::SUCCESS);
  return cdc::records::parse_table_line(record);
}

}  // namespace

TEST_CASE("records: the table line is listed, reads back, and names what is wrong in a bad one") {
  const auto line = sample_table_line();
  const std::string text = written([&](auto& out) { cdc::records::write_table_line(line, out); });
  check_listed(Kind::table, text);
  CHECK(text == R"j({"op":"table","v":1,"db":"shop","table":"it\"ems","columns":[)j"
                R"j({"name":"id","type":"int(11)","nullable":false},)j"
                R"j({"name":"name","type":"varchar(32)","nullable":true,"charset":"utf8mb4",)j"
                R"j("collation":"utf8mb4_general_ci"},)j"
                R"j({"name":"size","type":"enum('s','m''l')","nullable":true,"charset":"utf8mb4",)j"
                R"j("collation":"utf8mb4_general_ci","values":["s","m'l"]}],"key":["id"],)j"
                R"j("pos":{"file":"binlog.000042","offset":1520,"gtid":"0-1-5"},"ts_ms":1725523201000})j"
                "\n");
  simdjson::dom::parser parser;
  auto read = parse_table(parser, text);
  REQUIRE_MESSAGE(read.has_value(), read.error().message);
  CHECK(read->columns.size() == 3);
  CHECK(read->columns[2].values == std::vector<std::string>{"s", "m'l"});
  CHECK_FALSE(read->columns[0].charset.has_value());
  CHECK(written([&](auto& out) { cdc::records::write_table_line(*read, out); }) == text);

  // A snapshot's: no key known, no position.
  auto bare = line;
  bare.key.reset();
  bare.pos.reset();
  const std::string bare_text = written([&](auto& out) { cdc::records::write_table_line(bare, out); });
  CHECK(bare_text.find(R"("key":null,"pos":null,"ts_ms":)") != std::string::npos);
  auto read_bare = parse_table(parser, bare_text);
  REQUIRE_MESSAGE(read_bare.has_value(), read_bare.error().message);
  CHECK_FALSE(read_bare->key.has_value());
  CHECK_FALSE(read_bare->pos.has_value());
  CHECK(written([&](auto& out) { cdc::records::write_table_line(*read_bare, out); }) == bare_text);

  const auto error_of = [&](const std::string& json) {
    auto bad = parse_table(parser, json);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code == cdc::Errc::corrupt_input);
    return bad.error().message;
  };
  const std::string head = R"({"op":"table","v":1,"db":"s","table":"t",)";
  const std::string column = R"({"name":"id","type":"int","nullable":false})";
  const std::string tail = R"("key":null,"pos":null,"ts_ms":1})";
  CHECK(error_of(R"({"op":"r","v":1})") == R"(not an op:"table" line)");
  CHECK(error_of(R"({"op":"table","v":2})").starts_with(R"("v":2: the line is of a newer shape)"));
  CHECK(error_of(R"({"op":"table","v":1,"table":"t"})") == R"("db" is missing or not a string)");
  CHECK(error_of(head + R"("columns":{},)" + tail) == R"("columns" is missing or not an array)");
  CHECK(error_of(head + R"("columns":[],)" + tail) == R"("columns" is empty: a table has at least one column)");
  CHECK(error_of(head + R"("columns":[1],)" + tail) == R"("columns"[0] is not an object)");
  CHECK(error_of(head + R"("columns":[)" + column + R"(,{"name":"x","nullable":true}],)" + tail) ==
        R"("columns"[1]: "type" is missing or not a string)");
  CHECK(error_of(head + R"("columns":[{"name":"x","type":"int"}],)" + tail) ==
        R"("columns"[0]: "nullable" is missing or not true/false)");
  CHECK(error_of(head + R"("columns":[{"name":"x","type":"int","nullable":true,"charset":1}],)" + tail) ==
        R"("columns"[0]: "charset" is not a string)");
  CHECK(error_of(head + R"("columns":[{"name":"x","type":"enum","nullable":true,"values":[1]}],)" + tail) ==
        R"("columns"[0]: "values" holds a value that is not a string)");
  CHECK(error_of(head + R"("columns":[)" + column + R"(],"key":["nope"],"pos":null,"ts_ms":1})") ==
        R"("key" names "nope", which is not in "columns")");
  CHECK(error_of(head + R"("columns":[)" + column + R"(],"pos":null,"ts_ms":1})") ==
        R"("key" is missing (null when not known))");
  CHECK(error_of(head + R"("columns":[)" + column + R"(],"key":null,"pos":{"file":"b"},"ts_ms":1})") ==
        R"("pos": "offset" is missing or not a non-negative integer)");
  CHECK(error_of(head + R"("columns":[)" + column + R"(],"key":null,"pos":[],"ts_ms":1})") ==
        R"("pos" is not an object or null)");
  CHECK(error_of(head + R"("columns":[)" + column + R"(],"key":null,"pos":null})") ==
        R"("ts_ms" is missing or not an integer)");
}

TEST_CASE("records: the change lines' envelope") {
  CHECK(cdc::records::change_op_member(cdc::records::ChangeOp::insert) == R"("op":"c")");
  CHECK(cdc::records::change_op_member(cdc::records::ChangeOp::update) == R"("op":"u")");
  CHECK(cdc::records::change_op_member(cdc::records::ChangeOp::erase) == R"("op":"d")");
  CHECK(cdc::records::table_members("s\"hop", "t") == R"("v":1,"db":"s\"hop","table":"t")");
  const std::string prefix = cdc::records::row_line_prefix(cdc::ndjson::quoted("shop"), cdc::ndjson::quoted("t"));
  CHECK(prefix == R"({"op":"r","v":1,"db":"shop","table":"t","key":)");
  CHECK(prefix.starts_with(cdc::records::kRowLineStart));
  CHECK(prefix.starts_with(cdc::records::kOpLineStart));
  CHECK("{" + cdc::records::row_head_members("shop", "t") + ",\"key\":" == prefix);
  check_listed(Kind::row, prefix + R"({"id":1},"before":null,"after":{"id":1},"ts_ms":5})");
}

TEST_CASE("records: the check lines and the state file are listed") {
  check_listed(Kind::check,
               written([](auto& out) { cdc::records::write_check({"log_bin", "fail", "OFF", "ON", "why", "how"}, out); }));
  const std::vector<std::string_view> failed{"log_bin"};
  check_listed(Kind::check_summary, written([&](auto& out) {
                 cdc::records::write_check_summary({"mariadb", false, failed, {}}, out);
               }));
  cdc::records::StreamState state;
  state.position = "0-1-42";
  state.output_bytes = 5;
  state.span = "open";
  state.server_id = 1;
  check_listed(Kind::stream_state, cdc::records::format_state(state));
}

TEST_CASE("records: one position parser") {
  CHECK(cdc::records::parse_position("0-1-42").has_value());
  auto bad = cdc::records::parse_position("nonsense");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == cdc::Errc::corrupt_input);
  CHECK(bad.error().message.starts_with("\"position\": "));
  simdjson::dom::parser parser;
  simdjson::dom::object record;
  REQUIRE(parser.parse(std::string(R"({"op":"span_start","v":1})")).get_object().get(record) == simdjson::SUCCESS);
  auto missing = cdc::records::read_position(record);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().message == "\"position\" is missing or not a string");
}

TEST_CASE("records: a line of a newer shape is refused, one without v taken as version 1") {
  simdjson::dom::parser parser;
  const auto version_of = [&](const char* json) {
    simdjson::dom::object record = parser.parse(std::string_view(json)).get_object().value();
    return cdc::records::check_version(record);
  };
  CHECK(version_of(R"({"op":"low","v":1})").has_value());
  CHECK(version_of(R"({"op":"low"})").has_value());
  const auto newer = version_of(R"({"op":"low","v":2})");
  REQUIRE_FALSE(newer.has_value());
  CHECK(newer.error().code == cdc::Errc::corrupt_input);
  CHECK(newer.error().message.find("\"v\":2: the line is of a newer shape") != std::string::npos);
  CHECK_FALSE(version_of(R"({"op":"low","v":"1"})").has_value());
  CHECK_FALSE(version_of(R"({"op":"low","v":-1})").has_value());
  // Every reader of a framing line checks it: the chunk line and the low/high lines.
  simdjson::dom::object chunk =
      parser.parse(std::string_view(R"({"op":"chunk","v":2,"db":"d","table":"t","key":["id"],"key_types":["int"],)"
                                    R"("start":null,"end":null,"index":0,"count":1})"))
          .get_object()
          .value();
  CHECK_FALSE(cdc::records::parse_chunk(chunk).has_value());
}
