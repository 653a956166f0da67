// Binary JSON documents to JSON text (rowimage/json_binary).

#include "json_test_support.h"

namespace json_test {

TEST_CASE("json: hand-written small and large documents") {
  struct Case {
    std::string name;
    std::string bytes;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"small object",
       "00"        // type: small object
       "02 00"     // count 2
       "18 00"     // size 24 (from the byte after the type)
       "12 00 01 00"  // key 0: offset 18, length 1
       "13 00 02 00"  // key 1: offset 19, length 2
       "05 01 00"  // value 0: int16 1, inlined
       "0c 15 00"  // value 1: string at offset 21
       "61 62 63"  // keys "a", "bc"
       "02 78 79",  // "xy": length 2, bytes
       R"({"a":1,"bc":"xy"})"},
      {"large array",
       "03"              // type: large array
       "03 00 00 00"     // count 3
       "19 00 00 00"     // size 25
       "05 01 00 00 00"  // int16 1, inlined in a 4-byte slot
       "07 70 11 01 00"  // int32 70000, inlined (large format only)
       "0c 17 00 00 00"  // string at offset 23
       "01 7a",          // "z"
       R"([1,70000,"z"])"},
      {"small array with a non-inlined int32",
       "02"        // type: small array
       "01 00"     // count 1
       "0b 00"     // size 11
       "07 07 00"  // int32 at offset 7 (not inlined in the small format)
       "70 11 01 00",
       "[70000]"},
      {"literals inlined", "02 03 00 0d 00 04 00 00 04 01 00 04 02 00", "[null,true,false]"},
      {"empty object", "00 00 00 04 00", "{}"},
      {"empty large array", "03 00 00 00 00 08 00 00 00", "[]"},
      {"top-level int64 min", "09 00 00 00 00 00 00 00 80", "-9223372036854775808"},
      {"top-level uint64 max", "0a ff ff ff ff ff ff ff ff", "18446744073709551615"},
      {"top-level double 0.1", "0b 9a 99 99 99 99 99 b9 3f", "0.1"},
      {"top-level string", "0c 03 61 22 62", R"("a\"b")"},
      {"top-level literal true", "04 01", "true"},
      {"trailing bytes after the root are ignored", "04 02 ff ff", "false"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(decode(hex(c.bytes)) == c.expected);
  }
}

// Bytes copied from the row images of two server-written binlogs in the shared fixture corpus
// (../shared/fixtures/binlog/rust_mysql_common, see its EXPECTED.md).
TEST_CASE("json: documents written by MySQL 8.0.22 and 9.0.1") {
  struct Case {
    std::string name;
    std::string bytes;
    std::string expected;
  };
  const std::vector<Case> cases = {
      // json.binlog.000001 (8.0.22), WRITE_ROWS at 1059, document at file offset 1099:
      // INSERT INTO t (json_col) VALUES ('{"age":24,"data":"xxxxxxxxxx","name":"Joe"}')
      {"json.binlog.000001 row 1",
       "00 0300 3300 1900 0300 1c00 0400 2000 0400 05 1800 0c 2400 0c 2f00 616765 64617461 6e616d65"
       "0a 78787878787878787878 03 4a6f65",
       R"({"age":24,"data":"xxxxxxxxxx","name":"Joe"})"},
      // json-opaque.binlog (9.0.1), table foo.test (a json), eight inserts; document offsets
      // 772, 882, 999, 1116, 1233, 1348, 1464, 1587.
      {"opaque VARCHAR", "0001000f000b0001000f0c00610f0155", R"({"a":"base64:type15:VQ=="})"},
      {"opaque DATE", "00010016000b0001000f0c00620a080000000000e48b19", R"({"b":"2012-03-18"})"},
      {"opaque DATETIME", "00010016000b0001000f0c00630c08000000adb7e48b19", R"({"c":"2012-03-18 11:30:45.000000"})"},
      {"opaque TIME", "00010016000b0001000f0c00630b08f1fb09ee77050000", R"({"c":"87:31:46.654321"})"},
      {"opaque DECIMAL 123.456", "00010014000b0001000f0c0064f6060603807b01c8", R"({"d":123.456})"},
      {"opaque DECIMAL 9.00", "00010015000b0001000f0c0065f6070b028000000900", R"({"e":9.00})"},
      {"array of inlined scalars", "0001001c000b000100020c006504001000050000050100040100040200",
       R"({"e":[0,1,true,false]})"},
      {"null member", "0001000c000b00010004000065", R"({"e":null})"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(decode(hex(c.bytes)) == c.expected);
  }
}

TEST_CASE("json: every scalar type") {
  struct Case {
    std::string name;
    Jv value;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"null", jnull(), "null"},
      {"true", jbool(true), "true"},
      {"false", jbool(false), "false"},
      {"int16 min", jint(Jv::Kind::int16, INT16_MIN), "-32768"},
      {"int16 max", jint(Jv::Kind::int16, INT16_MAX), "32767"},
      {"uint16 max", juint(Jv::Kind::uint16, UINT16_MAX), "65535"},
      {"int32 min", jint(Jv::Kind::int32, INT32_MIN), "-2147483648"},
      {"int32 max", jint(Jv::Kind::int32, INT32_MAX), "2147483647"},
      {"uint32 max", juint(Jv::Kind::uint32, UINT32_MAX), "4294967295"},
      {"int64 min", jint(Jv::Kind::int64, INT64_MIN), "-9223372036854775808"},
      {"int64 max", jint(Jv::Kind::int64, INT64_MAX), "9223372036854775807"},
      {"uint64 max", juint(Jv::Kind::uint64, UINT64_MAX), "18446744073709551615"},
      {"double 0.1", jdouble(0.1), "0.1"},
      // MySQL prints 1.0 (my_gcvt + ".0"); we print the shortest round-trip form.
      {"double 1.0", jdouble(1.0), "1"},
      {"double -2.5", jdouble(-2.5), "-2.5"},
      {"double 1e300", jdouble(1e300), "1e+300"},
      {"double min subnormal", jdouble(5e-324), "5e-324"},
      {"double max", jdouble(std::numeric_limits<double>::max()), "1.7976931348623157e+308"},
      {"double 1/3", jdouble(1.0 / 3.0), "0.3333333333333333"},
      {"empty string", jstring(""), R"("")"},
      {"unicode string", jstring("h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80"), "\"h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80\""},
      {"escapes", jstring("a\"b\\c\nd\te\x01"), R"("a\"b\\c\nd\te\u0001")"},
      {"invalid UTF-8 is replaced", jstring("a\xff"), "\"a\xEF\xBF\xBD\""},
      {"top-level empty object", jobject({}), "{}"},
      {"top-level empty array", jarray({}), "[]"},
      {"large empty object", large(jobject({})), "{}"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(decode(encode(c.value)) == c.expected);
    // Inside a small and a large array too (inlined where the format inlines).
    CHECK(decode(encode(jarray({c.value}))) == "[" + c.expected + "]");
    CHECK(decode(encode(large(jarray({c.value})))) == "[" + c.expected + "]");
    CHECK(decode(encode(large(jobject({{"k", c.value}})))) == R"({"k":)" + c.expected + "}");
  }
}

TEST_CASE("json: strings with 1-, 2- and 3-byte length prefixes") {
  struct Case {
    std::string name;
    std::size_t length;
    std::size_t prefix_bytes;
  };
  const std::vector<Case> cases = {
      {"127 chars", 127, 1}, {"128 chars", 128, 2}, {"16383 chars", 16383, 2}, {"16384 chars", 16384, 3},
      {"70000 chars (large object)", 70000, 3},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    std::string text(c.length, 'x');
    text[0] = 'A';
    text.back() = 'Z';
    const Bytes top = encode(jstring(text));
    CHECK(top.size() == 1 + c.prefix_bytes + c.length);
    CHECK(decode(top) == "\"" + text + "\"");
    // In an object; at 70000 bytes the encoder must switch to the large format.
    const Bytes object = encode(jobject({{"s", jstring(text)}, {"n", jint(Jv::Kind::int16, 7)}}));
    CHECK(object[0] == (c.length > 65000 ? 0x01 : 0x00));
    CHECK(decode(object) == R"({"s":")" + text + R"(","n":7})");
  }
}

TEST_CASE("json: JSON text round-trips through the test encoder") {
  struct Case {
    std::string name;
    std::string json;
    std::string expected;  // compact, members in the server's order
  };
  const std::vector<Case> cases = {
      {"flat object", R"({"b": 1, "a": "x"})", R"({"a":"x","b":1})"},
      {"key order is length first", R"({"bb": 1, "a": 2, "ccc": 3, "ab": 4})", R"({"a":2,"ab":4,"bb":1,"ccc":3})"},
      {"nested", R"({"a": {"b": [1, {"c": null}, []], "d": {}}, "e": [true, false]})",
       R"({"a":{"b":[1,{"c":null},[]],"d":{}},"e":[true,false]})"},
      {"integers of every width", "[0, -1, 32767, 32768, -32769, 2147483647, 2147483648, -9223372036854775808, "
                                  "18446744073709551615]",
       "[0,-1,32767,32768,-32769,2147483647,2147483648,-9223372036854775808,18446744073709551615]"},
      {"doubles", "[0.5, -1.25, 1e-7, 6.02214076e23]", "[0.5,-1.25,1e-07,6.02214076e+23]"},
      {"unicode keys and values", "{\"\xC3\xA9t\xC3\xA9\": \"\xE2\x98\x83\", \"k\": \"\\u0000\"}",
       "{\"k\":\"\\u0000\",\"\xC3\xA9t\xC3\xA9\":\"\xE2\x98\x83\"}"},
      {"escaped key", R"({"a\"b": 1, "\\": 2})", R"({"\\":2,"a\"b":1})"},
      {"deep mix", R"([[[[{"a": [[{"b": "c"}]]}]]]])", R"([[[[{"a":[[{"b":"c"}]]}]]]])"},
      {"scalar root", "42", "42"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(decode(encode_json(c.json)) == c.expected);
    // The same document forced into the large format decodes the same.
    Jv forced = from_json(c.json);
    if (forced.kind == Jv::Kind::object || forced.kind == Jv::Kind::array) {
      forced.force_large = true;
      CHECK(decode(encode(forced)) == c.expected);
    }
  }
}

TEST_CASE("json: large format everywhere and a document over 64 KiB") {
  // Every container large, every level: int32 inlined, strings pointed at with 4-byte offsets.
  Jv inner = large(jobject({{"i", jint(Jv::Kind::int32, -70000)}, {"u", juint(Jv::Kind::uint32, 70000)}}));
  const Jv doc = large(jarray({inner, large(jarray({jstring("s"), jint(Jv::Kind::int64, 1)})), jnull()}));
  CHECK(decode(encode(doc)) == R"([{"i":-70000,"u":70000},["s",1],null])");

  // 1000 members of 100 bytes: too big for 16-bit offsets, so the encoder picks large.
  std::vector<std::pair<std::string, Jv>> members;
  std::string expected = "{";
  for (int i = 0; i < 1000; ++i) {
    const std::string key = fmt::format("k{:04}", i);
    members.emplace_back(key, jstring(std::string(100, static_cast<char>('a' + i % 26))));
    expected += fmt::format(R"({}"{}":"{}")", i == 0 ? "" : ",", key, std::string(100, static_cast<char>('a' + i % 26)));
  }
  expected += "}";
  const Bytes big = encode(jobject(members));
  CHECK(big[0] == 0x01);
  CHECK(big.size() > 0x10000);
  CHECK(decode(big) == expected);
}

TEST_CASE("json: opaque DECIMAL, temporal and other types") {
  const std::string kNines = std::string(35, '9') + "." + std::string(30, '9');
  const std::string kDigits65 = "-" + repeat("1234567890", 3) + "12345." + repeat("1234567890", 3);
  struct Case {
    std::string name;
    std::uint8_t field_type;
    std::string payload;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"DECIMAL(6,3) 123.456", 246, decimal_payload("123.456", 6, 3), "123.456"},
      {"DECIMAL(11,2) 9.00", 246, decimal_payload("9", 11, 2), "9.00"},
      {"DECIMAL(3,2) -1.50", 246, decimal_payload("-1.50", 3, 2), "-1.50"},
      {"DECIMAL(4,4) 0.0001", 246, decimal_payload("0.0001", 4, 4), "0.0001"},
      {"DECIMAL(10,0) 0", 246, decimal_payload("0", 10, 0), "0"},
      {"DECIMAL(5,0) -12345", 246, decimal_payload("-12345", 5, 0), "-12345"},
      {"DECIMAL(65,30) max", 246, decimal_payload(kNines, 65, 30), kNines},
      {"DECIMAL(65,30) negative, many groups", 246, decimal_payload(kDigits65, 65, 30), kDigits65},
      {"DECIMAL(20,10) leading zeros dropped", 246, decimal_payload("1.5", 20, 10), "1.5000000000"},
      // The sign bit is printed as it is, also for a zero (the row values drop it there).
      {"DECIMAL(3,2) negative zero", 246, decimal_payload("-0.00", 3, 2), "-0.00"},
      {"DECIMAL(12,1) negative, partial groups", 246, decimal_payload("-1234567890.5", 12, 1), "-1234567890.5"},
      {"DATE", 10, packed_bytes(datetime_packed(2024, 9, 4, 0, 0, 0, 0)), R"("2024-09-04")"},
      {"DATE zero", 10, packed_bytes(0), R"("0000-00-00")"},
      {"DATETIME with micros", 12, packed_bytes(datetime_packed(2024, 9, 4, 10, 52, 12, 189000)),
       R"("2024-09-04 10:52:12.189000")"},
      {"DATETIME without micros keeps six zeros", 12, packed_bytes(datetime_packed(1999, 12, 31, 23, 59, 59, 0)),
       R"("1999-12-31 23:59:59.000000")"},
      {"TIMESTAMP", 7, packed_bytes(datetime_packed(1985, 10, 13, 10, 22, 23, 567000)),
       R"("1985-10-13 10:22:23.567000")"},
      {"TIME", 11, packed_bytes(time_packed(false, 15, 22, 33, 670000)), R"("15:22:33.670000")"},
      {"TIME negative, three-digit hours", 11, packed_bytes(time_packed(true, 838, 59, 59, 0)),
       R"("-838:59:59.000000")"},
      {"VAR_STRING is a plain string", 253, "text", R"("text")"},
      {"BLOB", 252, std::string("\x00\x01\xfe\xff", 4), R"("base64:type252:AAH+/w==")"},
      {"BIT", 16, "U", R"("base64:type16:VQ==")"},
      {"YEAR", 13, "\x07", R"("base64:type13:Bw==")"},
      {"empty GEOMETRY", 255, "", R"("base64:type255:")"},
      // mysys base64_encode(): a newline before the group that would start column 77.
      {"long BLOB wraps at 76 characters", 252, std::string(60, 'x'),
       "\"base64:type252:" + repeat("eHh4", 19) + "\\n" + "eHh4\""},
      {"57 bytes fill one line exactly", 252, std::string(57, 'x'), "\"base64:type252:" + repeat("eHh4", 19) + "\""},
      {"two line breaks", 252, std::string(120, 'x'),
       "\"base64:type252:" + repeat("eHh4", 19) + "\\n" + repeat("eHh4", 19) + "\\n" + repeat("eHh4", 2) + "\""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(decode(encode(jopaque(c.field_type, c.payload))) == c.expected);
    CHECK(decode(encode(jobject({{"v", jopaque(c.field_type, c.payload)}}))) == R"({"v":)" + c.expected + "}");
  }
}

TEST_CASE("json: an empty document is null") {
  CHECK(decode(Bytes{}) == "null");
  Writer writer;
  ByteReader reader(std::string_view("\x04\x01rest"), 0);
  CHECK(cdc::rowimage::decode_json_binary(reader, 0, writer, 0).has_value());
  CHECK(writer.buffered() == "null");
  CHECK(reader.position() == 0);
}

TEST_CASE("json: the ByteReader overload consumes exactly the value") {
  const Bytes doc = encode_json(R"({"a": [1, 2]})");
  Bytes framed = doc;
  framed.push_back(0x99);  // the next column
  ByteReader reader(framed, 4000);
  Writer writer;
  REQUIRE(cdc::rowimage::decode_json_binary(reader, doc.size(), writer, 0).has_value());
  CHECK(writer.buffered() == R"({"a":[1,2]})");
  CHECK(reader.remaining() == 1);

  ByteReader short_reader(doc, 4000);
  Writer other;
  const cdc::Result<void> result = cdc::rowimage::decode_json_binary(short_reader, doc.size() + 1, other, 0);
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().code == Errc::corrupt_input);
  CHECK(result.error().message.find("JSON value") != std::string::npos);
  CHECK_FALSE(short_reader.ok());
}

TEST_CASE("json: a document cut short fails at every length") {
  struct Case {
    std::string name;
    std::string json;
  };
  const std::vector<Case> cases = {
      {"object", R"({"a": 1, "bb": "text", "c": [1, 2.5, null], "d": {"e": 70000}})"},
      {"array", R"([18446744073709551615, -9223372036854775808, "x", {}, []])"},
      {"string", R"("hello")"},
      {"double", "0.25"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const Bytes full = encode_json(c.json);
    REQUIRE(decode(full).rfind("error", 0) != 0);
    for (std::size_t size = 1; size < full.size(); ++size) {
      CAPTURE(size);
      const Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(size));
      const std::string text = decode(cut);
      CHECK(text.rfind("error: JSON: ", 0) == 0);
    }
  }
  // The same for a large-format document and for opaque values.
  Jv opaque_doc = large(jarray({jopaque(246, decimal_payload("1.5", 5, 2)), jopaque(12, packed_bytes(1 << 24))}));
  const Bytes full = encode(opaque_doc);
  for (std::size_t size = 1; size < full.size(); ++size) {
    CAPTURE(size);
    CHECK(decode(Bytes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(size))).rfind("error", 0) == 0);
  }
}

TEST_CASE("json: malformed documents fail with what was wrong and where") {
  struct Case {
    std::string name;
    std::string bytes;
    std::string message;  // a substring of the error
  };
  // Offsets in messages are absolute: decode() places the document at offset 1000, so the
  // root value's data starts at 1001.
  const std::vector<Case> cases = {
      {"bad type byte at the root", "0d 00", "value at offset 1001 has unknown type 0x0d"},
      {"bad type byte in an entry", "02 01 00 08 00 0e 07 00 00", "value at offset 1008 has unknown type 0x0e"},
      {"bad literal", "04 03", "literal at offset 1001 is 0x03"},
      {"bad inlined literal", "02 01 00 07 00 04 09 00", "literal at offset 1006 is 0x09"},
      {"object size past the end", "00 01 00 40 00 0a 00 01 00 04 00 00 61", "object at offset 1001 declares 64 bytes, only 12 left"},
      {"header bigger than the object", "02 05 00 06 00 04 00 00", "5 entries need a 19-byte header, more than its 6 bytes"},
      {"count and size cut", "01 01 00 00", "need 8 bytes for its count and size, have 3"},
      {"value offset past the end", "02 01 00 09 00 0c 20 00 00 00", "value 0 at 32 lies outside its value area [7, 9)"},
      {"value offset inside the header", "02 01 00 09 00 0c 02 00 00 00", "value 0 at 2 lies outside its value area [7, 9)"},
      {"key offset inside the header", "00 01 00 0c 00 02 00 01 00 04 00 00 61", "key 0 at 2 (length 1) lies outside its key area [11, 12)"},
      {"key running past the end", "00 01 00 0c 00 0b 00 05 00 04 00 00 61", "key 0 at 11 (length 5) lies outside"},
      {"keys overlapping",
       "00 02 00 14 00"  // small object, 2 members, size 20
       "12 00 02 00"     // key 0 at 18, length 2
       "13 00 01 00"     // key 1 at 19: inside key 0
       "04 00 00 04 01 00 61 62",
       "key 1 at 19 overlaps key 0 at 18 (length 2)"},
      {"string length past the container", "02 01 00 0a 00 0c 07 00 05 61 62", "string at offset 1008: length 5 runs past"},
      {"string length never ends", "0c ff ff", "bad length at offset 1001"},
      {"string length over 32 bits", "0c ff ff ff ff 7f", "bad length"},
      {"int64 cut", "09 01 02 03", "int64 at offset 1001: need 8 bytes, have 3"},
      {"non-inlined int32 cut", "02 01 00 09 00 07 07 00 01 02", "int32 at offset 1008: need 4 bytes, have 2"},
      {"NaN double", "0b 00 00 00 00 00 00 f8 7f", "NaN or infinite"},
      {"opaque without its type", "02 01 00 08 00 0f 07 00 00", "length"},
      {"opaque with no bytes", "0f", "no field type byte"},
      {"DECIMAL precision over 65", "0f f6 04 42 00 00 00", "precision 66, scale 0 out of range"},
      {"DECIMAL scale over precision", "0f f6 03 02 03 00", "precision 2, scale 3 out of range"},
      {"DECIMAL wrong byte count", "0f f6 03 05 02 80", "DECIMAL(5,2) at offset 1003: 1 value bytes, expected 3"},
      {"DECIMAL digit group out of range", "0f f6 03 02 00 ff", "DECIMAL(2,0) at offset 1003: a digit group is out of range"},
      {"DATETIME not 8 bytes", "0f 0c 04 00 00 00 00", "DATETIME at offset 1003: 4 bytes, expected 8"},
      {"TIME not 8 bytes", "0f 0b 00", "TIME at offset 1003: 0 bytes, expected 8"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::string text = decode(hex(c.bytes));
    CAPTURE(text);
    CHECK(text.rfind("error: JSON: ", 0) == 0);
    CHECK(text.find(c.message) != std::string::npos);
  }
  CHECK(decode_error_code(hex("0d")) == Errc::corrupt_input);
}

TEST_CASE("json: nesting depth is limited") {
  using cdc::rowimage::json_max_depth;
  using cdc::rowimage::kJsonMaxDepth;
  CHECK(kJsonMaxDepth == 100);
  CHECK(json_max_depth(0) == std::min<std::size_t>(100, Writer::kMaxDepth));
  CHECK(json_max_depth(Writer::kMaxDepth) == 0);
  CHECK(json_max_depth(Writer::kMaxDepth + 5) == 0);

  // As deep as the writer allows at writer depth 0: fine; one more level fails cleanly.
  const std::size_t limit = json_max_depth(0);
  const std::string deepest = decode(encode(nested_arrays(limit)));
  CHECK(deepest == std::string(limit, '[') + std::string(limit, ']'));
  CHECK(decode(encode(nested_arrays(limit + 1))).rfind("error: JSON: nested deeper than", 0) == 0);
  // A column value sits two levels down in a record; with a writer deep enough that still
  // leaves room for all of MySQL's 100 levels.
  const std::size_t column_limit = json_max_depth(cdc::rowimage::kJsonColumnWriterDepth);
  CHECK(column_limit == std::min<std::size_t>(100, Writer::kMaxDepth - cdc::rowimage::kJsonColumnWriterDepth));
  CHECK(decode(encode(nested_arrays(column_limit)), cdc::rowimage::kJsonColumnWriterDepth).rfind("error", 0) != 0);
  CHECK(decode(encode(nested_arrays(column_limit + 1)), cdc::rowimage::kJsonColumnWriterDepth).rfind("error", 0) == 0);

  // Past MySQL's own limit of 100 the document is corrupt, whatever room the writer has.
  const Bytes too_deep = encode(nested_arrays(kJsonMaxDepth + 1));
  CHECK(decode(too_deep).rfind("error", 0) == 0);
  JsonBinaryDecoder decoder(1000, 1000);
  CHECK(decoder.check_depth(kJsonMaxDepth - 1, 0));
  CHECK_FALSE(decoder.check_depth(kJsonMaxDepth, 77));
  CHECK(decoder.error().code == Errc::corrupt_input);
  CHECK(decoder.error().message == "JSON: nested deeper than 100 levels at offset 77");
  // Within MySQL's limit but past the writer's: unsupported, not corrupt.
  if (Writer::kMaxDepth < kJsonMaxDepth) {
    CHECK(decode_error_code(encode(nested_arrays(Writer::kMaxDepth + 1))) == Errc::unsupported);
  }
}

TEST_CASE("json: entries that share bytes cannot blow up the output") {
  // 40 levels of [x, x] where both entries point at the same child: 2^40 leaves if followed.
  std::string body = container_body(jarray({}), false);  // innermost: []
  for (int level = 0; level < 40; ++level) {
    std::string outer;
    append_le(outer, 2, 2);                     // count 2
    append_le(outer, 10 + body.size(), 2);      // size
    outer += "\x02";                            // small array ...
    append_le(outer, 10, 2);                    // ... at offset 10
    outer += "\x02";                            // the same child again
    append_le(outer, 10, 2);
    outer += body;
    body = outer;
    if (body.size() > 0xfff0) break;
  }
  Bytes doc{0x02};
  doc.insert(doc.end(), body.begin(), body.end());
  const std::string text = decode(doc);
  CHECK(text.rfind("error: JSON: value at offset", 0) == 0);
  CHECK(text.find("reuses bytes") != std::string::npos);
}

TEST_CASE("json: random corruption never crashes and never writes invalid JSON") {
  const std::vector<Bytes> seeds = {
      encode_json(R"({"a": 1, "bb": [1, 2, {"c": "text"}], "d": -70000, "e": 1.5, "f": null})"),
      encode(large(jobject({{"x", jopaque(246, decimal_payload("-12.34", 6, 2))},
                            {"y", jopaque(12, packed_bytes(datetime_packed(2020, 1, 2, 3, 4, 5, 6)))},
                            {"z", jarray({jint(Jv::Kind::int32, 5), jstring("s"), jopaque(252, "blob")})}}))),
      hex("0001001c000b000100020c006504001000050000050100040100040200"),
  };
  std::mt19937 rng(20240904);
  std::size_t decoded = 0;
  for (const Bytes& seed : seeds) {
    for (int round = 0; round < 3000; ++round) {
      Bytes doc = seed;
      const int flips = std::uniform_int_distribution<int>(1, 4)(rng);
      for (int f = 0; f < flips; ++f) {
        const std::size_t at = std::uniform_int_distribution<std::size_t>(0, doc.size() - 1)(rng);
        doc[at] = static_cast<std::uint8_t>(std::uniform_int_distribution<int>(0, 255)(rng));
      }
      if (round % 7 == 0) doc.resize(std::uniform_int_distribution<std::size_t>(0, doc.size())(rng));
      Writer writer;
      if (cdc::rowimage::decode_json_binary(doc, 0, writer, 0)) {
        ++decoded;
        const std::string text(writer.buffered());
        CAPTURE(text);
        CHECK(is_valid_json(text));
      }
    }
  }
  CHECK(decoded > 0);
}

// ---------------------------------------------------------------------------------------------
// Partial updates

}  // namespace json_test
