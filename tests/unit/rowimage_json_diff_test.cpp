// MySQL partial JSON updates: diff paths, vectors and their application (rowimage/json_diff).

#include "json_test_support.h"

namespace json_test {

TEST_CASE("json: diff paths parse") {
  using Kind = JsonPathLeg::Kind;
  struct Case {
    std::string name;
    std::string path;
    std::vector<JsonPathLeg> legs;
  };
  const std::vector<Case> cases = {
      {"root", "$", {}},
      {"member", "$.age", {{Kind::member, "age", 0}}},
      {"member then index", "$.a[2]", {{Kind::member, "a", 0}, {Kind::index, "", 2}}},
      {"quoted key", R"($."a b")", {{Kind::member, "a b", 0}}},
      {"quoted key with escapes", R"($."x\"y\\z\n\u00e9\ud83d\ude00")",
       {{Kind::member, "x\"y\\z\n\xC3\xA9\xF0\x9F\x98\x80", 0}}},
      {"last", "$[last]", {{Kind::index_from_end, "", 0}}},
      {"last minus", "$[last-3]", {{Kind::index_from_end, "", 3}}},
      {"whitespace", " $ . a [ 1 ] [ last - 2 ]", {{Kind::member, "a", 0}, {Kind::index, "", 1}, {Kind::index_from_end, "", 2}}},
      {"deep", "$.a.b[0].c[10]",
       {{Kind::member, "a", 0}, {Kind::member, "b", 0}, {Kind::index, "", 0}, {Kind::member, "c", 0}, {Kind::index, "", 10}}},
      {"unicode unquoted key", "$.\xC3\xA9t\xC3\xA9", {{Kind::member, "\xC3\xA9t\xC3\xA9", 0}}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const auto parsed = cdc::rowimage::parse_json_path(c.path);
    REQUIRE(parsed.has_value());
    CHECK(*parsed == c.legs);
  }

  struct Bad {
    std::string name;
    std::string path;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {"no dollar", ".a", "must start with '$'"},
      {"empty", "", "must start with '$'"},
      {"wildcard member", "$.*", "wildcards"},
      {"wildcard cell", "$[*]", "wildcards"},
      {"ellipsis", "$**.a", "'**'"},
      {"range", "$[1 to 3]", "']' expected"},
      {"no index", "$[]", "array index expected"},
      {"index overflow", "$[99999999999999999999]", "too large"},
      {"unterminated quote", R"($."abc)", "unterminated"},
      {"bad escape", R"($."a\qb")", "bad escape"},
      {"lone surrogate", R"($."\udc00")", "surrogate"},
      {"member name missing", "$.", "member name missing"},
      {"garbage", "$a", "'.' or '[' expected"},
  };
  for (const Bad& c : bad) {
    CAPTURE(c.name);
    const auto parsed = cdc::rowimage::parse_json_path(c.path);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == Errc::corrupt_input);
    CHECK(parsed.error().message.find(c.message) != std::string::npos);
  }
}

// json.binlog.000001 (8.0.22): the PARTIAL_UPDATE_ROWS_EVENT at 3750 sets $.age to 26 on the
// row whose full UPDATE set age 25; its first diff vector starts at file offset 3790.
// UPDATE t SET json_col = JSON_REPLACE(json_col, '$.age', 26) WHERE id = 1 (as the file says).
TEST_CASE("json: the diff vector from MySQL 8.0.22 partial update event") {
  const Bytes vector = hex("0b000000"     // length 11
                           "00"           // REPLACE
                           "05 242e616765"  // path "$.age"
                           "03 051a00");  // value: int16 26
  ByteReader reader(vector, 3790);
  const auto diffs = cdc::rowimage::read_json_diff_vector(reader);
  REQUIRE(diffs.has_value());
  REQUIRE(diffs->size() == 1);
  CHECK((*diffs)[0].operation == JsonDiffOperation::replace);
  CHECK((*diffs)[0].path == "$.age");
  CHECK((*diffs)[0].path_offset == 3796);
  CHECK((*diffs)[0].value_offset == 3802);
  CHECK(reader.empty());

  Writer listed;
  REQUIRE(cdc::rowimage::write_json_diffs(*diffs, listed, 0).has_value());
  CHECK(listed.buffered() == R"([{"op":"replace","path":"$.age","value":26}])");

  // The before image: the document the full UPDATE wrote (age 25).
  const Bytes before = hex("00 0300 3300 1900 0300 1c00 0400 2000 0400 05 1900 0c 2400 0c 2f00 616765 64617461 6e616d65"
                           "0a 78787878787878787878 03 4a6f65");
  REQUIRE(decode(before) == R"({"age":25,"data":"xxxxxxxxxx","name":"Joe"})");
  CHECK(apply_diffs(before, vector) == R"({"age":26,"data":"xxxxxxxxxx","name":"Joe"})");
}

TEST_CASE("json: applying diffs") {
  constexpr auto kReplace = JsonDiffOperation::replace;
  constexpr auto kInsert = JsonDiffOperation::insert;
  constexpr auto kRemove = JsonDiffOperation::remove;
  struct Case {
    std::string name;
    std::string before;
    std::vector<DiffSpec> diffs;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"replace a member", R"({"a": 1, "b": 2})", {{kReplace, "$.a", "10"}}, R"({"a":10,"b":2})"},
      {"replace with an object", R"({"a": 1, "b": 2})", {{kReplace, "$.b", R"({"z": [1, "x"]})"}},
       R"({"a":1,"b":{"z":[1,"x"]}})"},
      {"replace an array element", R"({"a": [1, 2, 3]})", {{kReplace, "$.a[1]", R"("x")"}}, R"({"a":[1,"x",3]})"},
      {"replace the last element", R"({"a": [1, 2, 3]})", {{kReplace, "$.a[last]", "null"}}, R"({"a":[1,2,null]})"},
      {"replace last-2", R"([1, 2, 3])", {{kReplace, "$[last-2]", "true"}}, "[true,2,3]"},
      {"replace deep", R"({"a": {"b": [{"c": 1}, {"c": 2}]}, "z": "keep"})", {{kReplace, "$.a.b[1].c", "3.5"}},
       R"({"a":{"b":[{"c":1},{"c":3.5}]},"z":"keep"})"},
      {"insert into an object keeps the server's key order", R"({"a": 1, "ccc": 3})", {{kInsert, "$.bb", "2"}},
       R"({"a":1,"bb":2,"ccc":3})"},
      {"insert a shorter key first", R"({"bb": 1, "ab": 2})", {{kInsert, "$.z", "0"}}, R"({"z":0,"ab":2,"bb":1})"},
      {"insert same length sorts bytewise", R"({"a": 1, "c": 3})", {{kInsert, "$.b", "2"}}, R"({"a":1,"b":2,"c":3})"},
      {"insert into an empty object", R"({"o": {}})", {{kInsert, "$.o.k", R"("v")"}}, R"({"o":{"k":"v"}})"},
      {"insert into an array", "[1, 2, 3]", {{kInsert, "$[1]", "9"}}, "[1,9,2,3]"},
      {"insert at 0", "[1, 2, 3]", {{kInsert, "$[0]", "9"}}, "[9,1,2,3]"},
      {"insert at size appends", "[1, 2, 3]", {{kInsert, "$[3]", "9"}}, "[1,2,3,9]"},
      {"insert past the end appends", "[1, 2, 3]", {{kInsert, "$[100]", "9"}}, "[1,2,3,9]"},
      {"insert at last goes before the last element", "[1, 2, 3]", {{kInsert, "$[last]", "9"}}, "[1,2,9,3]"},
      {"insert at last-n past the start goes first", "[1, 2, 3]", {{kInsert, "$[last-7]", "9"}}, "[9,1,2,3]"},
      {"insert into an empty array", R"({"a": []})", {{kInsert, "$.a[0]", R"({"x": 1})"}}, R"({"a":[{"x":1}]})"},
      {"remove a member", R"({"a": 1, "b": 2, "c": 3})", {{kRemove, "$.b", ""}}, R"({"a":1,"c":3})"},
      {"remove an array element", R"({"a": [1, 2, 3]})", {{kRemove, "$.a[0]", ""}}, R"({"a":[2,3]})"},
      {"remove the last element", "[1, 2, 3]", {{kRemove, "$[last]", ""}}, "[1,2]"},
      {"several diffs in order",
       R"({"a": [1, 2], "b": {"c": 1}})",
       {{kInsert, "$.a[0]", "0"}, {kReplace, "$.a[2]", "20"}, {kRemove, "$.b.c", ""}, {kInsert, "$.b.d", "[]"},
        {kInsert, "$.b.d[0]", R"("x")"}},
       R"({"a":[0,1,20],"b":{"d":["x"]}})"},
      {"a path into a value an earlier diff wrote", R"({"a": 1})",
       {{kReplace, "$.a", R"({"k": [1]})"}, {kInsert, "$.a.k[1]", "2"}, {kInsert, "$.a.m", "3"}},
       R"({"a":{"k":[1,2],"m":3}})"},
      {"quoted keys", R"({"a b": 1, "x\"y": 2, "é": 3})",
       {{kReplace, R"($."a b")", "10"}, {kReplace, R"($."x\"y")", "20"}, {kReplace, R"($."\u00e9")", "30"}},
       R"({"é":30,"a b":10,"x\"y":20})"},
      {"untouched subtrees keep everything", R"({"big": {"n": [1.5, -70000, 18446744073709551615, "s"]}, "t": 0})",
       {{kReplace, "$.t", "1"}}, R"({"t":1,"big":{"n":[1.5,-70000,18446744073709551615,"s"]}})"},
      {"no diffs", R"({"a": 1})", {}, R"({"a":1})"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(apply_diffs(encode_json(c.before), diff_vector(c.diffs)) == c.expected);
  }

  // Opaque values in an untouched part stay exactly as the decoder prints them.
  const Bytes before = encode(jobject({{"d", jopaque(246, decimal_payload("9", 11, 2))}, {"n", jint(Jv::Kind::int16, 1)}}));
  CHECK(apply_diffs(before, diff_vector({{kReplace, "$.n", "2"}})) == R"({"d":9.00,"n":2})");
  // The large format is expanded the same way.
  CHECK(apply_diffs(encode(large(jobject({{"a", jint(Jv::Kind::int32, 70000)}, {"b", large(jarray({jnull()}))}}))),
              diff_vector({{kInsert, "$.b[1]", "1"}})) == R"({"a":70000,"b":[null,1]})");
  // An empty before document is null; replacing '$' (never written by the server) replaces it.
  CHECK(apply_diffs(Bytes{}, diff_vector({{kReplace, "$", "[1]"}})) == "[1]");
}

TEST_CASE("json: diffs that do not apply are rejected") {
  constexpr auto kReplace = JsonDiffOperation::replace;
  constexpr auto kInsert = JsonDiffOperation::insert;
  constexpr auto kRemove = JsonDiffOperation::remove;
  struct Case {
    std::string name;
    std::string before;
    DiffSpec diff;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"replace a missing member", R"({"a": 1})", {kReplace, "$.b", "1"}, "nothing to replace"},
      {"replace past the end", "[1]", {kReplace, "$[1]", "1"}, "nothing to replace"},
      {"replace last-n before the start", "[1]", {kReplace, "$[last-1]", "1"}, "nothing to replace"},
      {"insert an existing member", R"({"a": 1})", {kInsert, "$.a", "2"}, "already exists"},
      {"insert under a missing parent", R"({"a": 1})", {kInsert, "$.b.c", "2"}, "does not exist"},
      {"insert a member into an array", "[1]", {kInsert, "$.a", "2"}, "matching the last leg"},
      {"insert a cell into an object", R"({"a": 1})", {kInsert, "$[0]", "2"}, "matching the last leg"},
      {"remove a missing member", R"({"a": 1})", {kRemove, "$.b", ""}, "no such member"},
      {"remove past the end", "[1]", {kRemove, "$[5]", ""}, "no such array element"},
      {"path through a scalar", R"({"a": 1})", {kReplace, "$.a.b", "1"}, "nothing to replace"},
      {"no auto-wrapping of scalars", R"({"a": 1})", {kReplace, "$.a[0]", "1"}, "nothing to replace"},
      {"insert at the root", "[1]", {kInsert, "$", "1"}, "no path legs"},
      {"remove the root", "[1]", {kRemove, "$", ""}, "no path legs"},
      {"bad path", R"({"a": 1})", {kReplace, "$.a[*]", "1"}, "wildcards"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::string text = apply_diffs(encode_json(c.before), diff_vector({c.diff}));
    CAPTURE(text);
    CHECK(text.rfind("error: JSON diff 0 (", 0) == 0);
    CHECK(text.find(c.message) != std::string::npos);
  }

  // A path longer than any document may nest is refused before it is walked.
  std::string deep = "$";
  for (int i = 0; i < 200; ++i) deep += "[0]";
  const std::string text = apply_diffs(encode_json("[1]"), diff_vector({{kReplace, deep, "1"}}));
  CHECK(text.find("deeper than a document may nest") != std::string::npos);
  // A corrupt before image surfaces the decoder's error.
  CHECK(apply_diffs(hex("00 01 00 40 00"), diff_vector({{kReplace, "$.a", "1"}})).find("declares 64 bytes") !=
        std::string::npos);
  // So does a corrupt diff value, when it is written.
  std::string vector_bytes;
  append_le(vector_bytes, 7, 4);
  vector_bytes += std::string("\x00\x03$.a\x01\x0d", 7);  // REPLACE $.a with a value of type 0x0d
  CHECK(apply_diffs(encode_json(R"({"a": 1})"), to_bytes(vector_bytes)).find("unknown type 0x0d") != std::string::npos);
}

TEST_CASE("json: diff vector framing errors") {
  struct Case {
    std::string name;
    std::string bytes;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"length cut", "0b 00", "need 4 bytes, have 2"},
      {"length past the end", "0b 00 00 00 00 05", "JSON diff vector: need 11 bytes, have 2"},
      {"unknown operation", "03 00 00 00 03 01 24", "unknown JSON diff operation 3"},
      {"path past the vector", "03 00 00 00 02 05 24", "JSON diff path: need 5 bytes, have 1"},
      {"value length missing", "03 00 00 00 00 01 24", "JSON diff value length"},
      {"value past the vector", "05 00 00 00 00 01 24 09 04", "JSON diff value: need 9 bytes, have 1"},
      {"NULL path length", "03 00 00 00 00 fb 24", "invalid first byte 0xfb"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const Bytes bytes = hex(c.bytes);
    ByteReader reader(bytes, 0);
    const auto diffs = cdc::rowimage::read_json_diff_vector(reader);
    REQUIRE_FALSE(diffs.has_value());
    CHECK(diffs.error().code == Errc::corrupt_input);
    CAPTURE(diffs.error().message);
    CHECK(diffs.error().message.find(c.message) != std::string::npos);
    CHECK_FALSE(reader.ok());
  }

  // An empty vector is no diffs; the 2-byte packed length form is read.
  const Bytes empty_vector = hex("00 00 00 00 ff");
  ByteReader empty(empty_vector, 0);
  const auto none = cdc::rowimage::read_json_diff_vector(empty);
  REQUIRE(none.has_value());
  CHECK(none->empty());
  CHECK(empty.remaining() == 1);

  const std::string long_key(300, 'k');
  const Bytes vector = diff_vector({{JsonDiffOperation::insert, "$." + long_key, "1"}});
  CHECK(vector[5] == 0xfc);  // path length 302 as 0xfc + 2 bytes
  CHECK(apply_diffs(encode_json("{}"), vector) == R"({")" + long_key + R"(":1})");
}


}  // namespace json_test
