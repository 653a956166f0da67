// The Java renderings Canal and Maxwell share: Double/Float.toString, BigDecimal.toString,
// JTS's WKT, MySQL's JSON text, and the small helpers around them.

#include <doctest/doctest.h>

#include <string>

#include "util/base64.h"
#include "output/value_text.h"

namespace {

std::string java_double(std::string_view text) {
  std::string out;
  REQUIRE(cdc::output::append_java_double(text, out));
  return out;
}

std::string java_float(std::string_view text) {
  std::string out;
  REQUIRE(cdc::output::append_java_float(text, out));
  return out;
}

std::string big_decimal(std::string_view text) {
  std::string out;
  REQUIRE(cdc::output::append_java_big_decimal(text, out));
  return out;
}

std::string wkt(std::string_view base64) {
  const auto bytes = cdc::decode_base64(base64);
  REQUIRE(bytes.has_value());
  std::string out;
  REQUIRE(cdc::output::append_wkt(*bytes, out));
  return out;
}

}  // namespace

TEST_CASE("value text: Java's Double.toString and Float.toString") {
  CHECK(java_double("0") == "0.0");
  CHECK(java_double("-0") == "-0.0");
  CHECK(java_double("1") == "1.0");
  CHECK(java_double("100") == "100.0");
  CHECK(java_double("0.001") == "0.001");
  CHECK(java_double("0.0001") == "1.0E-4");
  CHECK(java_double("9999999") == "9999999.0");
  CHECK(java_double("10000000") == "1.0E7");
  CHECK(java_double("1e10") == "1.0E10");
  CHECK(java_double("123456789012") == "1.23456789012E11");
  CHECK(java_double("-1e300") == "-1.0E300");
  CHECK(java_double("5e-324") == "4.9E-324");  // Double.MIN_VALUE: two digits, the closest
  CHECK(java_double("2e-323") == "2.0E-323");
  CHECK(java_double("0.1") == "0.1");
  CHECK(java_float("3.1415927") == "3.1415927");
  CHECK(java_float("1e-38") == "1.0E-38");
  CHECK(java_float("-0.5") == "-0.5");
  std::string out;
  CHECK_FALSE(cdc::output::append_java_double("\"x\"", out));
}

TEST_CASE("value text: Java's BigDecimal.toString, as Jackson writes a DECIMAL") {
  CHECK(big_decimal("19.90") == "19.90");
  CHECK(big_decimal("-0.50") == "-0.50");
  CHECK(big_decimal("0.000001") == "0.000001");
  CHECK(big_decimal("0.0000001") == "1E-7");
  CHECK(big_decimal("-0.0000012") == "-0.0000012");  // adjusted exponent -6: still plain
  CHECK(big_decimal("0.00000012") == "1.2E-7");
  CHECK(big_decimal("0.000000000000000000000000000000") == "0E-30");
  CHECK(big_decimal("-0.000000000000000000000000000001") == "-1E-30");
  CHECK(big_decimal("99999") == "99999");
  std::string out;
  CHECK_FALSE(cdc::output::append_java_big_decimal("1.2.3", out));
}

TEST_CASE("value text: WKT of MySQL geometry values as JTS writes it") {
  CHECK(wkt("AAAAAAEBAAAAAAAAAAAA8D8AAAAAAAAAQA==") == "POINT (1 2)");
  // SRID 4326, POLYGON((0 0,10 0,10 10,0 0))
  CHECK(wkt("5hAAAAEDAAAAAQAAAAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAJEAAAAAAAAAAAAAAAAAAACRAAAAAAAAAJEAAAAAAAAAAAAAAAAAAAAAA") ==
        "POLYGON ((0 0, 10 0, 10 10, 0 0))");
  // MULTIPOINT((0.5 -1.25),(1e20 0.1))
  CHECK(wkt("AAAAAAEEAAAAAgAAAAEBAAAAAAAAAAAA4D8AAAAAAAD0vwEBAAAAQIy1eB2vFUSamZmZmZm5Pw==") ==
        "MULTIPOINT ((0.5 -1.25), (100000000000000000000 0.1))");
  // GEOMETRYCOLLECTION(POINT(1 2),LINESTRING(0 0,1 1))
  CHECK(wkt("AAAAAAEHAAAAAgAAAAEBAAAAAAAAAAAA8D8AAAAAAAAAQAECAAAAAgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAADwPwAAAAAAAPA/") ==
        "GEOMETRYCOLLECTION (POINT (1 2), LINESTRING (0 0, 1 1))");
  std::string out;
  CHECK_FALSE(cdc::output::append_wkt(std::string("\0\0\0\0\1\x09\0\0\0", 9), out));  // type 9: not OGC
  CHECK_FALSE(cdc::output::append_wkt(std::string("\0\0\0\0\1\1\0\0\0\0", 10), out));  // cut short
}

TEST_CASE("value text: MySQL's JSON text, ISO-8859-1, unescaping, topics and uuids") {
  std::string out;
  REQUIRE(cdc::output::append_mysql_json_text(R"j({"a:b":[1,"x, y"],"c":{}})j", out));
  CHECK(out == R"j({"a:b": [1, "x, y"], "c": {}})j");
  out.clear();
  cdc::output::append_latin1_as_utf8(std::string("A\xff\x80", 3), out);
  CHECK(out == "A\xc3\xbf\xc2\x80");
  REQUIRE(cdc::output::unescape_json_string(R"j("a\"b\u00e9\ud83d\ude00")j", out));
  CHECK(out == "a\"b\xc3\xa9\xf0\x9f\x98\x80");
  out.clear();
  cdc::output::append_topic_name("shop", "order items$", out);
  CHECK(out == "shop.order_items_");
  std::string a;
  std::string b;
  cdc::output::append_uuid_from("binlog.000001:400:0", a);
  cdc::output::append_uuid_from("binlog.000001:400:0", b);
  CHECK(a == b);
  CHECK(a.size() == 36);
  CHECK(a[14] == '8');
  b.clear();
  cdc::output::append_uuid_from("binlog.000001:400:1", b);
  CHECK(a != b);
}
