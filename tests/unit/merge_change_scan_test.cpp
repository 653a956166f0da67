// The checked scan of a change line (merge/change_scan.h, ndjson/json_check.h): it proves a line
// well formed only when simdjson accepts it too, leaves the forms it does not check to the
// parser, and a merge gives the same rows and the same errors as when every line was parsed.

#include <doctest/doctest.h>
#include <simdjson.h>

#include <random>
#include <string>
#include <vector>

#include "merge/change_scan.h"
#include "merge/run_merge.h"
#include "merge_support.h"
#include "records/stream_lines.h"

using merge_test::change;
using merge_test::ChunkSpec;
using merge_test::chunk_text;
using merge_test::run_merge;
using merge_test::spanned;
using merge_test::TempFiles;

namespace {

cdc::merge::TableInfo table_with_id_key() {
  cdc::merge::TableInfo table;
  table.db = "t";
  table.table = "a";
  table.key = {"id"};
  table.quoted_key = {"\"id\""};
  table.identity = std::vector<std::string>{"id"};
  table.quoted_identity = {"\"id\""};
  table.identity_is_key = true;
  return table;
}

// As cdc-merge reads a line it did not parse: up to "pos" when scan_line_pos read the end in
// its exact form (and strict), else whole.
bool proven(std::string_view line) {
  const cdc::merge::TableInfo table = table_with_id_key();
  cdc::merge::ChangeText out;
  cdc::records::LinePos pos;
  cdc::records::LineEnd end;
  if (cdc::records::scan_line_pos(line, false, pos, end))
    return cdc::merge::scan_change(line, table, end.pos_member - 1, true, end.strict_json, out) ==
           cdc::merge::ChangeScan::read;
  return cdc::merge::scan_change(line, table, line.size(), true, false, out) == cdc::merge::ChangeScan::read;
}

bool parses(std::string_view line) {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  return parser.parse(line.data(), line.size(), true).get_object().get(object) == simdjson::SUCCESS;
}

std::string line_with(const std::string& after) {
  std::string line = change("u", R"({"id":3,"v":"a"})", after, "0-1-11", "b", 1);
  line.pop_back();  // the '\n'
  return line;
}

}  // namespace

TEST_CASE("merge: a checked scan proves cdc-stream's change lines well formed and reads what an unchecked one reads") {
  const cdc::merge::TableInfo table = table_with_id_key();
  for (const std::string& after :
       {std::string(R"({"id":3,"v":"b"})"), std::string(R"({"id":-3,"v":"tab\tquote\"slash\\\/é\u00e9\b\f\n\r"})"),
        std::string(R"({"id":3,"v":null,"w":true,"x":false,"y":-0.25,"z":[1,{"a":[]},"]"],"o":{}})"),
        std::string(R"( { "id" : 3 , "v" : "x" } )")}) {
    CAPTURE(after);
    const std::string line = line_with(after);
    cdc::merge::ChangeText checked;
    cdc::merge::ChangeText unchecked;
    REQUIRE(cdc::merge::scan_change(line, table, line.size(), true, false, checked) == cdc::merge::ChangeScan::read);
    REQUIRE(cdc::merge::scan_change(line, table, line.size(), false, false, unchecked) ==
            cdc::merge::ChangeScan::read);
    // Read as cdc-merge does, up to "pos", the spaced image is not proven: space before the ','.
    CHECK(proven(line) == (after.front() != ' '));
    CHECK(checked.after == unchecked.after);
    CHECK(checked.before == unchecked.before);
    CHECK(checked.after_values.key == unchecked.after_values.key);
    CHECK(checked.ts_ms == unchecked.ts_ms);
    CHECK(parses(line));
  }
}

TEST_CASE("merge: a checked scan leaves malformed lines and the forms it does not check to the parser") {
  // Malformed: the parser refuses them too.
  for (const char* after :
       {R"({"id":3,"v":"a\x"})", "{\"id\":3,\"v\":\"a\tb\"}", R"({"id":03,"v":"a"})", R"({"id":3,"v":tru})",
        R"({"id":3,"v":"a",})", R"({"id":3 "v":"a"})", R"({"id":-,"v":"a"})", R"({"id":3.,"v":"a"})",
        R"({"id":3,"v":"\u12G4"})", "{\"id\":3,\"v\":\"\xC3\x28\"}", R"({"id":3,"v":[1,]})", R"({"id":+3})"}) {
    CAPTURE(after);
    const std::string line = line_with(after);
    CHECK_FALSE(proven(line));
    CHECK_FALSE(parses(line));
  }
  // Valid, but left to the parser: exponents, long numbers, escaped surrogates, deep nesting.
  std::string deep = "1";
  for (int i = 0; i < 40; ++i) deep = "[" + deep + "]";
  for (const std::string& after :
       {std::string(R"({"id":3,"v":1e5})"), std::string(R"({"id":1234567890123456789,"v":"a"})"),
        std::string(R"({"id":3,"v":"\ud83d\ude00"})"), R"({"id":3,"v":)" + deep + "}"}) {
    CAPTURE(after);
    const std::string line = line_with(after);
    CHECK_FALSE(proven(line));
    CHECK(parses(line));
  }
  // Faults in the end that scan_line_pos reads: a leading zero, a control character.
  // (No structured binding: clang 14 cannot capture one in CAPTURE.)
  for (const std::pair<std::string, std::string>& edit : std::vector<std::pair<std::string, std::string>>{
           {R"("offset":1,)", R"("offset":01,)"}, {R"("ts_ms":5000})", R"("ts_ms":05000})"},
           {R"("file":"b")", "\"file\":\"b\x01\""}, {R"("gtid":"0-1-11")", "\"gtid\":\"0-1\t11\""}}) {
    CAPTURE(edit.second);
    std::string line = line_with(R"({"id":3})");
    const std::size_t at = line.find(edit.first);
    REQUIRE(at != std::string::npos);
    line.replace(at, edit.first.size(), edit.second);
    CHECK_FALSE(proven(line));
    CHECK_FALSE(parses(line));
  }
  CHECK_FALSE(proven(line_with(R"({"id":3})") + " x"));
  CHECK(proven(line_with(R"({"id":3})") + " \t"));
}

TEST_CASE("merge: a line the checked scan proves is one simdjson parses, for lines with any byte changed") {
  const std::string line = line_with(R"({"id":3,"v":"x\"y\\z","n":[1,-2.5,{"a":null}],"b":true})");
  REQUIRE(proven(line));
  std::mt19937 random(15);
  const std::string bytes = std::string("\"\\{}[],:0-.e tfnu\x01\x80\xC3", 20) + "a";
  std::size_t proven_count = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string changed = line;
    for (int edits = 1 + static_cast<int>(random() % 2); edits > 0; --edits) {
      const std::size_t at = random() % changed.size();
      const char byte = bytes[random() % bytes.size()];
      switch (random() % 3) {
        case 0: changed[at] = byte; break;
        case 1: changed.insert(at, 1, byte); break;
        default: changed.erase(at, 1); break;
      }
    }
    if (!proven(changed)) continue;
    ++proven_count;
    CAPTURE(changed);
    CHECK(parses(changed));
  }
  CHECK(proven_count > 100);
}

TEST_CASE("merge: changes in forms the checked scan leaves to the parser merge, and malformed ones are refused as before") {
  TempFiles files;
  ChunkSpec chunk;
  chunk.low = "0-1-10";
  chunk.high = "0-1-12";
  chunk.rows = {R"({"id":1}|{"id":1,"v":"x"})"};
  cdc::merge::Options options;
  options.inputs = {files.write("chunk", chunk_text(chunk))};
  options.until = "0-1-20";
  const std::string exponent = change("c", "null", R"({"id":2,"v":1e5})", "0-1-13", "b", 1);
  const std::string surrogate = change("c", "null", R"({"id":3,"v":"\ud83d\ude00"})", "0-1-14", "b", 2);
  options.deltas = files.write("deltas", spanned(exponent + surrogate, "0-1-1", "0-1-20"));
  const auto merged = run_merge(files, options);
  REQUIRE(merged.result.has_value());
  CHECK(merged.out.find(R"("after":{"id":2,"v":1e5})") != std::string::npos);
  CHECK(merged.out.find(R"("after":{"id":3,"v":"\ud83d\ude00"})") != std::string::npos);

  const std::string bad_utf8 = change("c", "null", "{\"id\":4,\"v\":\"\xC3\x28\"}", "0-1-15", "b", 3);
  options.deltas = files.write("deltas", spanned(exponent + bad_utf8, "0-1-1", "0-1-20"));
  const auto refused = run_merge(files, options);
  REQUIRE_FALSE(refused.result.has_value());
  CHECK(refused.result.error().message.find("deltas:3: torn or malformed line (") != std::string::npos);
}
