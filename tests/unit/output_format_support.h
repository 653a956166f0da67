#pragma once

// What the Canal and Maxwell converter tests share: canonical lines written by hand (the table
// line of FORMATS' shop.items and of a table with one column per type of
// tests/integration/every_type.h, plus GEOMETRY), a runner that feeds lines to a converter,
// and reading one member out of an output line.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ndjson/json_scan.h"
#include "ndjson/writer.h"
#include "output/converter.h"
#include "output/format.h"

#include <doctest/doctest.h>

namespace format_test {

// FORMATS 2.13: shop.items, server_id 1, thread 12, GTIDs 3e11...:101-103.
inline constexpr std::string_view kGtid = "3e11fa47-71ca-11e1-9e33-c80aa9429562";

inline std::string items_table_line() {
  return R"j({"op":"table","v":1,"db":"shop","table":"items","columns":[)j"
         R"j({"name":"id","type":"int","nullable":false},)j"
         R"j({"name":"name","type":"varchar(32)","nullable":false,"charset":"utf8mb4","collation":"utf8mb4_general_ci"},)j"
         R"j({"name":"price","type":"decimal(8,2)","nullable":false},)j"
         R"j({"name":"updated","type":"datetime(3)","nullable":false}],"key":["id"],)j"
         R"j("pos":{"file":"binlog.000042","offset":1520,"gtid":"3e11fa47-71ca-11e1-9e33-c80aa9429562:101"},"ts_ms":1725523201000})j";
}

// A change line of shop.items: op, before/after as JSON text, the rows event's offset, the
// row's index in it, the GTID's number and the header time in seconds.
inline std::string items_change(std::string_view op, std::string_view before, std::string_view after,
                                std::uint64_t offset, std::uint64_t index, int gtid_number, std::int64_t seconds) {
  return fmt::format(
      R"j({{"op":"{}","v":1,"db":"shop","table":"items","key":{{"id":7}},"before":{},"after":{},)j"
      R"j("pos":{{"file":"binlog.000042","offset":{},"index":{},"gtid":"{}:{}"}},"server_id":1,"thread":12,"ts_ms":{}}})j",
      op, before, after, offset, index, kGtid, gtid_number, seconds * 1000);
}

inline std::string items_row(int id, std::string_view name, std::string_view price, std::string_view updated) {
  return fmt::format(R"j({{"id":{},"name":"{}","price":"{}","updated":"{}"}})j", id, name, price, updated);
}

inline std::string commit_line(std::string_view xid, int gtid_number, std::uint64_t offset, std::int64_t seconds) {
  return fmt::format(
      R"j({{"op":"commit","v":1,"gtid":"{}:{}","pos":{{"file":"binlog.000042","offset":{}}},"position":"{}:1-{}",)j"
      R"j("rows":1,"xid":{},"ts_ms":{}}})j",
      kGtid, gtid_number, offset, kGtid, gtid_number, xid, seconds * 1000);
}

// One column of the every-type table: its table-line description, a canonical value, and what
// each format writes for it (JSON text).
struct TypeCase {
  std::string name;
  std::string column;  // the column's object in the table line, without the name
  std::string canonical;
  std::string canal;
  int canal_sql_type;
  std::string maxwell;
};

inline constexpr std::string_view kUtf8 = R"j(,"charset":"utf8mb4","collation":"utf8mb4_general_ci")j";

inline std::string type_only(std::string_view type) { return fmt::format(R"j("type":"{}","nullable":true)j", type); }
inline std::string text_type(std::string_view type, std::string_view charset = "utf8mb4") {
  return fmt::format(R"j("type":"{}","nullable":true,"charset":"{}","collation":"{}_general_ci")j", type, charset,
                     charset);
}

// POINT(1 2), SRID 0: SRID 00000000, WKB 01 01000000 3ff0000000000000 4000000000000000 (LE).
inline constexpr std::string_view kPointBase64 = "AAAAAAEBAAAAAAAAAAAA8D8AAAAAAAAAQA==";

// The values of every_type_values()' first row as cdc-ndjson(5) writes them, and a few of the
// others' (suffix _2.._4), with what Canal (LogEventConvert/RowsLogBuffer) and Maxwell
// (ColumnDef.asJSON) make of them.
inline const std::vector<TypeCase>& every_type_cases() {
  static const std::vector<TypeCase> kCases = {
      {"id", R"j("type":"int(11)","nullable":false)j", "1", R"j("1")j", 4, "1"},
      {"ti", type_only("tinyint(4)"), "-128", R"j("-128")j", -6, "-128"},
      {"tiu", type_only("tinyint(3) unsigned"), "255", R"j("255")j", 5, "255"},
      {"tiu_2", type_only("tinyint(3) unsigned"), "127", R"j("127")j", -6, "127"},
      {"si", type_only("smallint(6)"), "-32768", R"j("-32768")j", 5, "-32768"},
      {"siu", type_only("smallint(5) unsigned"), "65535", R"j("65535")j", 4, "65535"},
      {"mi", type_only("mediumint(9)"), "-8388608", R"j("-8388608")j", 4, "-8388608"},
      {"miu", type_only("mediumint(8) unsigned"), "16777215", R"j("16777215")j", 4, "16777215"},
      {"i", type_only("int(11)"), "-2147483648", R"j("-2147483648")j", 4, "-2147483648"},
      {"iu", type_only("int(10) unsigned"), "4294967295", R"j("4294967295")j", -5, "4294967295"},
      {"bi", type_only("bigint(20)"), "-9223372036854775808", R"j("-9223372036854775808")j", -5,
       "-9223372036854775808"},
      {"biu", type_only("bigint(20) unsigned"), "18446744073709551615", R"j("18446744073709551615")j", 3,
       "18446744073709551615"},
      {"biu_2", type_only("bigint(20) unsigned"), "0", R"j("0")j", -5, "0"},
      {"f", type_only("float"), "3.1415927", R"j("3.1415927")j", 7, "3.1415927"},
      {"f_2", type_only("float"), "-0.5", R"j("-0.5")j", 7, "-0.5"},
      {"f_4", type_only("float"), "1e-38", R"j("1.0E-38")j", 7, "1.0E-38"},
      {"d", type_only("double"), "2.718281828459045", R"j("2.718281828459045")j", 8, "2.718281828459045"},
      {"d_2", type_only("double"), "-1e300", R"j("-1.0E300")j", 8, "-1.0E300"},
      {"d_4", type_only("double"), "5e-324", R"j("4.9E-324")j", 8, "4.9E-324"},
      {"d_5", type_only("double"), "10000000", R"j("1.0E7")j", 8, "1.0E7"},
      {"d_6", type_only("double"), "0.001", R"j("0.001")j", 8, "0.001"},
      {"dec1", type_only("decimal(10,2)"), R"j("-12345678.90")j", R"j("-12345678.90")j", 3, "-12345678.90"},
      {"dec1_2", type_only("decimal(10,2)"), R"j("0.00")j", R"j("0.00")j", 3, "0.00"},
      {"dec2", type_only("decimal(65,30)"),
       R"j("99999999999999999999999999999999999.999999999999999999999999999999")j",
       R"j("99999999999999999999999999999999999.999999999999999999999999999999")j", 3,
       "99999999999999999999999999999999999.999999999999999999999999999999"},
      // BigDecimal.toString (Jackson's rendering) goes scientific below 1E-6.
      {"dec2_2", type_only("decimal(65,30)"), R"j("-0.000000000000000000000000000001")j",
       R"j("-0.000000000000000000000000000001")j", 3, "-1E-30"},
      {"dec2_4", type_only("decimal(65,30)"), R"j("0.000000000000000000000000000000")j",
       R"j("0.000000000000000000000000000000")j", 3, "0E-30"},
      {"dec3", type_only("decimal(5,0)"), R"j("99999")j", R"j("99999")j", 3, "99999"},
      {"dt", type_only("date"), R"j("1000-01-01")j", R"j("1000-01-01")j", 91, R"j("1000-01-01")j"},
      {"dt_2", type_only("date"), R"j("0000-00-00")j", R"j("0000-00-00")j", 91, R"j("0000-00-00")j"},
      {"tm", type_only("time"), R"j("-838:59:59")j", R"j("-838:59:59")j", 92, R"j("-838:59:59")j"},
      {"tm6", type_only("time(6)"), R"j("-00:00:00.000001")j", R"j("-00:00:00.000001")j", 92,
       R"j("-00:00:00.000001")j"},
      {"dtm", type_only("datetime"), R"j("1000-01-01 00:00:00")j", R"j("1000-01-01 00:00:00")j", 93,
       R"j("1000-01-01 00:00:00")j"},
      {"dtm3", type_only("datetime(3)"), R"j("2024-09-04 10:52:12.189")j", R"j("2024-09-04 10:52:12.189")j", 93,
       R"j("2024-09-04 10:52:12.189")j"},
      {"dtm6", type_only("datetime(6)"), R"j("9999-12-31 23:59:59.999999")j", R"j("9999-12-31 23:59:59.999999")j", 93,
       R"j("9999-12-31 23:59:59.999999")j"},
      {"ts", type_only("timestamp"), R"j("1970-01-01 00:00:01Z")j", R"j("1970-01-01 00:00:01")j", 93,
       R"j("1970-01-01 00:00:01")j"},
      {"ts6", type_only("timestamp(6)"), R"j("2038-01-19 03:14:07.999999Z")j", R"j("2038-01-19 03:14:07.999999")j", 93,
       R"j("2038-01-19 03:14:07.999999")j"},
      {"ts_2", type_only("timestamp"), "null", "null", 93, "null"},
      {"yr", type_only("year(4)"), "1901", R"j("1901")j", 12, "1901"},
      {"yr_4", type_only("year(4)"), "0", R"j("0000")j", 12, "0"},
      {"ch", text_type("char(10)"), R"j("abc")j", R"j("abc")j", 1, R"j("abc")j"},
      {"vc", text_type("varchar(300)"), R"j("xyz")j", R"j("xyz")j", 12, R"j("xyz")j"},
      {"l1", text_type("varchar(20)", "latin1"), "\"caf\xc3\xa9 \xc3\xbc\"", "\"caf\xc3\xa9 \xc3\xbc\"", 12,
       "\"caf\xc3\xa9 \xc3\xbc\""},
      {"u2", text_type("varchar(20)", "ucs2"), "\"\xc3\xa9t\xc3\xa9\"", "\"\xc3\xa9t\xc3\xa9\"", 12,
       "\"\xc3\xa9t\xc3\xa9\""},
      {"u16", text_type("char(5)", "utf16"), "\"h\xf0\x9f\x98\x80\"", "\"h\xf0\x9f\x98\x80\"", 1,
       "\"h\xf0\x9f\x98\x80\""},
      {"u32", text_type("varchar(5)", "utf32"), "\"z\xc3\xbc\"", "\"z\xc3\xbc\"", 12, "\"z\xc3\xbc\""},
      {"tx", text_type("text"), R"j("line1\nline2 \"q\" \\ tab\t")j", R"j("line1\nline2 \"q\" \\ tab\t")j", 2005,
       R"j("line1\nline2 \"q\" \\ tab\t")j"},
      // Canal: the bytes as ISO-8859-1 characters (00 ff 00 00; 89 'PNG' 0d 0a 1a 0a). Maxwell:
      // BINARY(n) as the binary log carries it, without the trailing zero bytes (00 ff).
      {"bn", type_only("binary(4)"), R"j("AP8AAA==")j", "\"\\u0000\xc3\xbf\\u0000\\u0000\"", 2004, R"j("AP8=")j"},
      {"vb", type_only("varbinary(20)"), R"j("")j", R"j("")j", 2004, R"j("")j"},
      {"bl", type_only("blob"), R"j("iVBORw0KGgo=")j", "\"\xc2\x89PNG\\r\\n\\u001a\\n\"", 2004, R"j("iVBORw0KGgo=")j"},
      {"bt1", type_only("bit(1)"), "1", R"j("1")j", -7, "1"},
      {"bt9", type_only("bit(9)"), "257", R"j("257")j", -7, "257"},
      {"bt64", type_only("bit(64)"), "18446744073709551615", R"j("18446744073709551615")j", -7,
       "18446744073709551615"},
      // Canal: ENUM as the 1-based index, SET as the bitmask; Maxwell: the label, SET as an array.
      {"en", text_type("enum('small','medium','large')") + R"j(,"values":["small","medium","large"])j", R"j("large")j",
       R"j("3")j", 4, R"j("large")j"},
      {"en_2", text_type("enum('small','medium','large')") + R"j(,"values":["small","medium","large"])j", R"j("")j",
       R"j("0")j", 4, "null"},
      {"en_fallback", text_type("enum('small','medium','large')") + R"j(,"values":["small","medium","large"])j", "2",
       R"j("2")j", 4, R"j("medium")j"},
      {"st", text_type("set('a','b','c','d')") + R"j(,"values":["a","b","c","d"])j", R"j("")j", R"j("0")j", -7, "[]"},
      {"st_2", text_type("set('a','b','c','d')") + R"j(,"values":["a","b","c","d"])j", R"j("a,b,c,d")j", R"j("15")j", -7,
       R"j(["a","b","c","d"])j"},
      // A NULL SET and a NULL JSON take the codes of their binlog types' NULL (BLOB, OTHER).
      {"st_3", text_type("set('a','b','c','d')") + R"j(,"values":["a","b","c","d"])j", "null", "null", 2004, "null"},
      {"js_3", type_only("json"), "null", "null", 1111, "null"},
      {"st_4", text_type("set('a','b','c','d')") + R"j(,"values":["a","b","c","d"])j", R"j("b,d")j", R"j("10")j", -7,
       R"j(["b","d"])j"},
      {"st_fallback", text_type("set('a','b','c','d')") + R"j(,"values":["a","b","c","d"])j", "5", R"j("5")j", -7,
       R"j(["a","c"])j"},
      // Canal: MySQL's JSON text in a string; Maxwell: the value itself.
      {"js", type_only("json"), R"j({"a":[1,2.5,null,true],"b":{"c":"d"}})j",
       R"j("{\"a\": [1, 2.5, null, true], \"b\": {\"c\": \"d\"}}")j", 12, R"j({"a":[1,2.5,null,true],"b":{"c":"d"}})j"},
      {"js_2", type_only("json"), "[]", R"j("[]")j", 12, "[]"},
      {"js_4", type_only("json"), R"j("just a string")j", R"j("\"just a string\"")j", 12, R"j("just a string")j"},
      {"g", type_only("geometry"), fmt::format("\"{}\"", kPointBase64),
       "\"\\u0000\\u0000\\u0000\\u0000\\u0001\\u0001\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000"
       "\\u0000\xc3\xb0?\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000@\"",
       2004, R"j("POINT (1 2)")j"},
  };
  return kCases;
}

inline std::string every_type_table_line() {
  std::string columns;
  for (const TypeCase& c : every_type_cases())
    columns += fmt::format(R"j({}{{"name":"{}",{}}})j", columns.empty() ? "" : ",", c.name, c.column);
  return fmt::format(R"j({{"op":"table","v":1,"db":"t","table":"every","columns":[{}],"key":["id"],"pos":null,"ts_ms":0}})j",
                     columns);
}

inline std::string every_type_row() {
  std::string row;
  for (const TypeCase& c : every_type_cases())
    row += fmt::format(R"j({}"{}":{})j", row.empty() ? "" : ",", c.name, c.canonical);
  return "{" + row + "}";
}

inline std::string every_type_insert() {
  return fmt::format(
      R"j({{"op":"c","v":1,"db":"t","table":"every","key":{{"id":1}},"before":null,"after":{},)j"
      R"j("pos":{{"file":"binlog.000001","offset":400,"index":0,"gtid":null}},"server_id":1,"thread":5,"ts_ms":1000}})j",
      every_type_row());
}

// Every line through the converter, then finish(): the output text.
inline std::string run(cdc::output::Converter& converter, const std::vector<std::string>& lines) {
  cdc::ndjson::Writer out;
  for (const std::string& line : lines) {
    auto converted = converter.convert(line, out);
    REQUIRE_MESSAGE(converted.has_value(), line, ": ", converted.error().message);
  }
  auto finished = converter.finish(out);
  REQUIRE(finished.has_value());
  return std::string(out.buffered());
}

inline std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    lines.emplace_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

// The raw value of member name of the object text (a whole line, or a nested object).
inline std::string member(std::string_view object, std::string_view name) {
  const auto found = cdc::ndjson::find_member(object, cdc::ndjson::quoted(name));
  return found ? std::string(*found) : std::string("<missing>");
}

}  // namespace format_test
