// order/key_order.h: sort keys whose memcmp order is the server's order of chunk-key values.
// The live proof (the server's own < and = on random values) is
// tests/integration/merge_key_order_test.cpp; these cases pin each kind's edges.

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "order/collation_weights.h"
#include "order/key_order.h"
#include "order/uca_table.h"
#include "merge_support.h"

namespace {

using cdc::order::KeyColumnOrder;
using cdc::order::detail::UcaTable;
using cdc::order::detail::UcaVersion;

KeyColumnOrder order_of(std::string_view type, std::uint32_t collation = 0) {
  auto order = KeyColumnOrder::make(type, collation);
  REQUIRE_MESSAGE(order.has_value(), order.error().message);
  return *order;
}

using merge_test::key;

// Each value sorts strictly after the one before it.
void check_ascending(const KeyColumnOrder& order, const std::vector<std::string_view>& values) {
  for (std::size_t i = 1; i < values.size(); ++i) {
    CAPTURE(values[i - 1]);
    CAPTURE(values[i]);
    CHECK(key(order, values[i - 1]) < key(order, values[i]));
  }
}

void check_equal(const KeyColumnOrder& order, std::string_view a, std::string_view b) {
  CAPTURE(a);
  CAPTURE(b);
  CHECK(key(order, a) == key(order, b));
}

void check_malformed(const KeyColumnOrder& order, std::string_view json) {
  CAPTURE(json);
  std::string out;
  auto done = order.append_sort_key(json, out);
  REQUIRE_FALSE(done.has_value());
  CHECK(done.error().code == cdc::Errc::corrupt_input);
}

}  // namespace

TEST_CASE("merge key order: signed integers from INT64_MIN to INT64_MAX") {
  const auto order = order_of("bigint(20)");
  check_ascending(
      order, {"-9223372036854775808", "-9223372036854775807", "-256", "-1", "0", "1", "255", "9223372036854775807"});
  check_equal(order, "0", "-0");
  CHECK(key(order, "42").size() == 8);
  check_malformed(order, "9223372036854775808");
  check_malformed(order, "-9223372036854775809");
  check_malformed(order, "1.5");
  check_malformed(order, "\"1\"");
  check_malformed(order, "");
  check_malformed(order, "01");
  const auto year = order_of("year(4)");
  check_ascending(year, {"0", "1901", "2155"});
}

TEST_CASE("merge key order: unsigned integers up to UINT64_MAX") {
  const auto order = order_of("bigint(20) unsigned");
  check_ascending(order, {"0", "1", "9223372036854775807", "9223372036854775808", "18446744073709551615"});
  check_malformed(order, "18446744073709551616");
  check_malformed(order, "-1");
  const auto tiny = order_of("TINYINT(3) UNSIGNED");
  check_ascending(tiny, {"0", "127", "128", "255"});
}

TEST_CASE("merge key order: decimals by value across signs and scales") {
  const auto order = order_of("decimal(10,2)");
  check_ascending(order, {"\"-12345678.99\"", "\"-100.00\"", "\"-99.99\"",     "\"-10.00\"", "\"-9.50\"", "\"-1.50\"",
                          "\"-1.05\"",        "\"-1.00\"",   "\"-0.15\"",      "\"-0.10\"",  "\"-0.01\"", "\"0.00\"",
                          "\"0.01\"",         "\"0.10\"",    "\"0.15\"",       "\"1.00\"",   "\"1.05\"",  "\"1.50\"",
                          "\"9.99\"",         "\"10.00\"",   "\"12345678.99\""});
  check_equal(order, "\"1.50\"", "\"1.5\"");
  check_equal(order, "\"-1.50\"", "\"-1.5000\"");
  check_equal(order, "\"-0.00\"", "\"0.00\"");
  check_equal(order, "\"0\"", "\"0.00\"");
  check_equal(order, "\"007.10\"", "\"7.1\"");
  // 0.001 sorts below 0.01 and above 0 (exponents below zero).
  const auto fine = order_of("decimal(30,20)");
  check_ascending(fine, {"\"-0.00100000000000000000\"", "\"-0.00000000000000000001\"", "\"0.00000000000000000000\"",
                         "\"0.00000000000000000001\"", "\"0.00100000000000000000\"", "\"0.01000000000000000000\"",
                         "\"1000000000.00000000000000000000\""});
  const auto integral = order_of("numeric(65,0)");
  check_ascending(integral, {"\"-99999999999999999999999999999999999999999999999999999999999999999\"", "\"-1\"",
                             "\"0\"", "\"99999999999999999999999999999999999999999999999999999999999999999\""});
  check_malformed(order, "\"1.2.3\"");
  check_malformed(order, "\"abc\"");
  check_malformed(order, "\"1.\"");
  check_malformed(order, "\".5\"");
  check_malformed(order, "\"+1\"");
  check_malformed(order, "\"1e5\"");
  check_malformed(order, "\"\"");
}

TEST_CASE("merge key order: TIME is signed microseconds") {
  const auto order = order_of("time(3)");
  check_ascending(order, {"\"-838:59:59.000\"", "\"-100:00:00.000\"", "\"-10:00:00.000\"", "\"-01:00:00.001\"",
                          "\"-01:00:00.000\"", "\"-00:00:00.001\"", "\"00:00:00.000\"", "\"00:00:00.001\"",
                          "\"09:59:59.999\"", "\"10:00:00.000\"", "\"100:00:00.000\"", "\"838:59:59.000\""});
  check_equal(order, "\"-00:00:00.000\"", "\"00:00:00.000\"");
  check_equal(order, "\"01:02:03.5\"", "\"01:02:03.500000\"");
  check_malformed(order, "\"839:00:00\"");
  check_malformed(order, "\"10:60:00\"");
  check_malformed(order, "\"10:00\"");
  check_malformed(order, "\"1:00:00\"");
  check_malformed(order, "\"10:00:00.1234567\"");
  check_malformed(order, "36000");
}

TEST_CASE("merge key order: DATE DATETIME and TIMESTAMP") {
  const auto date = order_of("date");
  check_ascending(date, {"\"0000-00-00\"", "\"0000-01-01\"", "\"1000-01-01\"", "\"2024-09-04\"", "\"2024-09-05\"",
                         "\"2024-10-01\"", "\"9999-12-31\""});
  const auto datetime = order_of("datetime(3)");
  check_ascending(datetime,
                  {"\"0000-00-00 00:00:00.000\"", "\"2024-09-04 00:00:00.000\"", "\"2024-09-04 10:52:12.189\"",
                   "\"2024-09-04 10:52:12.190\"", "\"2024-09-04 23:59:59.999\"", "\"2024-09-05 00:00:00.000\""});
  check_equal(datetime, "\"2024-09-04 10:52:12.100\"", "\"2024-09-04 10:52:12.1\"");
  check_malformed(datetime, "\"2024-09-04 10:52:12.189Z\"");
  check_malformed(datetime, "\"2024-13-04 10:52:12\"");
  check_malformed(datetime, "\"2024-09-04 24:00:00\"");
  check_malformed(datetime, "\"2024/09/04\"");
  check_malformed(datetime, "20240904");
  const auto timestamp = order_of("timestamp(6)");
  check_ascending(timestamp, {"\"0000-00-00 00:00:00.000000Z\"", "\"1970-01-01 00:00:01.000000Z\"",
                              "\"2024-09-04 10:52:12.189000Z\"", "\"2038-01-19 03:14:07.999999Z\""});
  check_equal(timestamp, "\"2024-09-04 10:52:12.189000Z\"", "\"2024-09-04 10:52:12.189Z\"");
}

TEST_CASE("merge key order: binary strings with embedded zero bytes and prefixes") {
  const auto order = order_of("varbinary(16)", 63);
  // "" < 00 < 00 00 < 00 01 < 01 < 61 ('a') < 61 00 < 61 00 00 < 61 01 < 61 61 < FF
  check_ascending(order, {"\"\"", "\"AA==\"", "\"AAA=\"", "\"AAE=\"", "\"AQ==\"", "\"YQ==\"", "\"YQA=\"", "\"YQAA\"",
                          "\"YQE=\"", "\"YWE=\"", "\"/w==\""});
  check_equal(order, "\"YQ==\"", "\"YQ\"");  // padding optional
  check_malformed(order, "\"not base64!\"");
  check_malformed(order, "\"YQ==");
  // Text with the binary collation is a binary string too.
  const auto text63 = order_of("varchar(10)", 63);
  CHECK(key(text63, "\"YQA=\"") == key(order, "\"YQA=\""));
}

TEST_CASE("merge key order: MariaDB INET4, INET6 and UUID in the server's order") {
  // Each list is SELECT ... ORDER BY on MariaDB 10.11.19.
  check_ascending(order_of("inet4"), {"\"0.0.0.0\"", "\"9.255.255.255\"", "\"10.0.0.1\"", "\"255.255.255.255\""});
  const auto inet6 = order_of("inet6", 63);
  check_ascending(inet6, {"\"::\"", "\"::1\"", "\"::0.1.0.0\"", "\"::ffff:1.2.3.4\"", "\"1::\"",
                          "\"2001:db8::1\"", "\"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff\""});
  CHECK(key(inet6, "\"::1\"").size() == 16);
  // UUIDs of versions 1 to 5 sort by their groups reversed (node first), others by their bytes.
  check_ascending(order_of("uuid"),
                  {"\"00000000-0000-0000-0000-000000000000\"", "\"eae43f84-f14c-11f1-a200-02fc00000001\"",
                   "\"11111111-2222-4333-0444-555555555555\"", "\"11111111-2222-7333-c444-555555555555\"",
                   "\"123e4567-e89b-12d3-a456-426614174000\"", "\"11111111-2222-5333-e444-555555555500\"",
                   "\"11111111-2222-0333-8444-555555555555\"", "\"11111111-2222-1333-8444-555555555555\"",
                   "\"ffffffff-ffff-ffff-ffff-ffffffffffff\""});
  // Values only the server's text spells: anything else is not one of its values.
  check_malformed(inet6, "\"0:0:0:0:0:0:0:1\"");
  check_malformed(inet6, "\"AAEAAAAAAAAAAAAAAAAAAQ==\"");  // base64 of the bytes
  check_malformed(inet6, "1");
  check_malformed(order_of("uuid"), "\"123E4567-E89B-12D3-A456-426614174000\"");
  check_malformed(order_of("inet4"), "\"10.0.0.1\\u0000\"");
}

TEST_CASE("merge key order: composite rows compare column by column") {
  const std::vector<KeyColumnOrder> columns = {order_of("varbinary(8)", 63), order_of("int(11)")};
  const auto row = [&](std::string_view a, std::string_view b) {
    std::string out;
    const std::vector<std::string_view> values = {a, b};
    auto done = cdc::order::append_row_sort_key(columns, values, out);
    REQUIRE_MESSAGE(done.has_value(), done.error().message);
    return out;
  };
  // ('a', 9) < ('a\0', 0) < ('ab', -5): without prefix-freeness the 9 would compare with 'b'.
  CHECK(row("\"YQ==\"", "9") < row("\"YQA=\"", "0"));
  CHECK(row("\"YQA=\"", "0") < row("\"YWI=\"", "-5"));
  CHECK(row("\"YQ==\"", "-5") < row("\"YQ==\"", "9"));
  CHECK(row("\"\"", "2147483647") < row("\"AA==\"", "-2147483648"));
  // Text columns: ('a', 2) < ('a b', 1) in utf8mb4_bin, and ('a', 1) = ('a  ', 1).
  const std::vector<KeyColumnOrder> text_columns = {order_of("varchar(8)", 46), order_of("int(11)")};
  const auto text_row = [&](std::string_view a, std::string_view b) {
    std::string out;
    const std::vector<std::string_view> values = {a, b};
    auto done = cdc::order::append_row_sort_key(text_columns, values, out);
    REQUIRE_MESSAGE(done.has_value(), done.error().message);
    return out;
  };
  CHECK(text_row("\"a\"", "2") < text_row("\"a b\"", "1"));
  CHECK(text_row("\"a\"", "1") == text_row("\"a  \"", "1"));
  CHECK(text_row("\"a\\t\"", "9") < text_row("\"a\"", "0"));

  cdc::order::KeyRange range{text_row("\"b\"", "0"), text_row("\"c\"", "0")};
  CHECK(range.contains(text_row("\"b\"", "0")));
  CHECK(range.contains(text_row("\"b  \"", "5")));
  CHECK(range.contains(text_row("\"bzz\"", "-5")));
  CHECK_FALSE(range.contains(text_row("\"a\"", "0")));
  CHECK_FALSE(range.contains(text_row("\"c\"", "0")));
  CHECK_FALSE(range.contains(text_row("\"b\"", "-1")));

  std::string out;
  const std::vector<std::string_view> one = {"\"YQ==\""};
  auto mismatch = cdc::order::append_row_sort_key(columns, one, out);
  CHECK_FALSE(mismatch.has_value());
  const std::vector<std::string_view> bad = {"\"YQ==\"", "x"};
  auto failed = cdc::order::append_row_sort_key(columns, bad, out);
  REQUIRE_FALSE(failed.has_value());
  CHECK(failed.error().message.find("key column 2") != std::string::npos);
}

TEST_CASE("merge key order: utf8mb4_bin is PAD SPACE code point order") {
  for (const std::uint32_t id : {46U, 83U}) {  // utf8mb4_bin, utf8mb3_bin
    CAPTURE(id);
    const auto order = order_of("varchar(20)", id);
    check_equal(order, "\"a\"", "\"a  \"");
    check_equal(order, "\"\"", "\"   \"");
    // PAD SPACE: the shorter value is compared as if padded with spaces, so a character below
    // the space (tab, newline) after the common prefix sorts before the end.
    // So does "a  b" before "a b": at the second space "a b" has 'b'.
    check_ascending(order, {"\"\\u0001\"", "\"\\t\"", "\"\"", "\"a\\u0000\"", "\"a\\u0000b\"", "\"a\\t\"", "\"a\"",
                            "\"a  b\"", "\"a !\"", "\"a b\"", "\"a!\"", "\"aa\"", "\"b\"", "\"z\"", "\"\\u00e9\"",
                            "\"\\u65e5\"", "\"\\ud83d\\ude00\""});
    CHECK(key(order, "\"A\"") < key(order, "\"a\""));
    // The same text escaped or not.
    check_equal(order, "\"\\u00e9\"", "\"\xC3\xA9\"");
    check_equal(order, "\"\\ud83d\\ude00\"", "\"\xF0\x9F\x98\x80\"");
    check_malformed(order, "\"\xC3\"");     // cut UTF-8
    check_malformed(order, "\"\\ud83d\"");  // lone surrogate
    check_malformed(order, "\"\\x\"");
    check_malformed(order, "abc");
  }
}

TEST_CASE("merge key order: NO PAD binary collations keep trailing spaces") {
  for (const std::uint32_t id : {1070U, 1107U, 309U}) {  // utf8mb4_nopad_bin, utf8mb3_nopad_bin, utf8mb4_0900_bin
    CAPTURE(id);
    const auto order = order_of("varchar(20)", id);
    check_ascending(order, {"\"\"", "\" \"", "\"a\"", "\"a\\t\"", "\"a \"", "\"a  \"", "\"ab\"", "\"\\u00e9\"",
                            "\"\\ud83d\\ude00\""});
  }
  const auto latin1 = order_of("varchar(20)", 1071);  // latin1_nopad_bin
  check_ascending(latin1, {"\"a\"", "\"a \"", "\"a  \""});
}

TEST_CASE("merge key order: latin1_bin and ascii_bin order by the charset's byte") {
  const auto order = order_of("char(10)", 47);  // latin1_bin
  // Byte order: '~' 7E < euro 80 (U+20AC) < U+0081 < OE 8C (U+0152) < nbsp A0 < e-acute E9 < y-diaeresis FF,
  // though U+0152 > U+00E9 in code points.
  check_ascending(order, {"\"\"", "\"a\\t\"", "\"a\"", "\"a~\"", "\"a\\u20ac\"", "\"a\\u0081\"", "\"a\\u0152\"",
                          "\"a\\u00a0\"", "\"a\\u00e9\"", "\"a\\u00ff\""});
  check_equal(order, "\"x\"", "\"x \"");
  check_malformed(order, "\"\\u65e5\"");           // not in latin1
  const auto ascii = order_of("varchar(10)", 65);  // ascii_bin
  check_ascending(ascii, {"\"A\"", "\"a\"", "\"a b\"", "\"b\""});
  check_equal(ascii, "\"b\"", "\"b  \"");
  check_malformed(ascii, "\"\\u00e9\"");
  check_malformed(ascii, "\"\\ufffd\"");
}

TEST_CASE("merge key order: general_ci and latin1_swedish_ci from the generated weights") {
  if (!cdc::order::detail::have_collation_weights()) return;
  for (const std::uint32_t id : {45U, 33U}) {  // utf8mb4_general_ci, utf8mb3_general_ci
    CAPTURE(id);
    const auto order = order_of("varchar(20)", id);
    check_equal(order, "\"a\"", "\"A  \"");
    check_equal(order, "\"\\u00e9t\\u00e9\"", "\"ETE\"");  // accents and case fold to one weight
    check_ascending(order, {"\"a\\t\"", "\"a\"", "\"ab\"", "\"b\""});
    // Above the BMP everything weighs as U+FFFD.
    check_equal(order, "\"\\ud83d\\ude00\"", "\"\\ud83c\\udf89\"");
    check_equal(order, "\"\\ud83d\\ude00\"", "\"\\ufffd\"");
  }
  const auto nopad = order_of("varchar(20)", 1069);  // utf8mb4_general_nopad_ci
  check_ascending(nopad, {"\"a\"", "\"A \""});
  const auto swedish = order_of("varchar(20)", 8);  // latin1_swedish_ci
  check_equal(swedish, "\"a\"", "\"A  \"");
  check_ascending(swedish, {"\"a\"", "\"z\"", "\"\\u00e5\""});  // Swedish: a-ring after z
}

TEST_CASE("merge key order: UCA collations from the generated weights") {
  for (const auto version : {UcaVersion::unicode400, UcaVersion::unicode520, UcaVersion::uca1400})
    CHECK(UcaTable::get(version).ok());
  const auto ai_ci = order_of("varchar(20)", 2304);  // utf8mb4_uca1400_ai_ci
  check_equal(ai_ci, "\"a\"", "\"\\u00c1  \"");     // case and accents do not count, nor trailing spaces
  check_equal(ai_ci, "\"a\\u00ad\"", "\"A\"");       // the soft hyphen is ignorable
  check_equal(ai_ci, "\"\\u00df\"", "\"ss\"");        // an expansion
  check_ascending(ai_ci, {"\"a\\t\"", "\"a\"", "\"ab\"", "\"b\"", "\"\\u65e5\"", "\"\\ud840\\udc00\""});
  // Catalan l-middle-dot is one contraction: l with an accent (equal to l without accents,
  // between l and lz with them); apart, the dot weighs as punctuation.
  check_equal(ai_ci, "\"l\\u00b7\"", "\"L\"");
  check_ascending(ai_ci, {"\"\\u00b7l\"", "\"l\""});
  check_ascending(order_of("varchar(20)", 2306), {"\"l\"", "\"l\\u00b7\"", "\"lz\"", "\"m\""});
  const auto as_cs = order_of("varchar(20)", 2307);  // utf8mb4_uca1400_as_cs
  check_ascending(as_cs, {"\"a\"", "\"A\"", "\"\\u00e1\"", "\"\\u00c1\"", "\"b\""});
  check_equal(as_cs, "\"a\\u0301\"", "\"\\u00e1\"");  // decomposed and precomposed
  // Case without accents: the tertiary weights of a + U+0301 are those of a and one more 0002, the
  // space's, which even NO PAD pads the case level with.
  for (const std::uint32_t id : {2305U, 2309U}) {  // utf8mb4_uca1400_ai_cs, _nopad_ai_cs
    const auto ai_cs = order_of("varchar(20)", id);
    check_equal(ai_cs, "\"a\"", "\"\\u00e1\"");
    check_ascending(ai_cs, {"\"a\"", "\"A\""});
  }
  const auto nopad = order_of("varchar(20)", 2308);  // utf8mb4_uca1400_nopad_ai_ci
  check_ascending(nopad, {"\"a\"", "\"A \""});
  check_equal(order_of("varchar(20)", 2048), "\"a\"", "\"\\u00c1 \"");  // utf8mb3_uca1400_ai_ci
  // utf8mb4_unicode_ci (UCA 4.0.0) weighs every supplementary character FFFD, above the BMP's
  // weights (U+FFFD itself weighs 0DC6); unicode_520_ci tells them apart.
  const auto unicode = order_of("varchar(20)", 224);
  check_equal(unicode, "\"\\ud83d\\ude00\"", "\"\\ud83c\\udf89 \"");
  check_ascending(unicode, {"\"\\ufffd\"", "\"\\ud83d\\ude00\""});
  check_ascending(order_of("varchar(20)", 246), {"\"\\ud83c\\udf89\"", "\"\\ud83d\\ude00\""});
  check_ascending(order_of("varchar(20)", 246), {"\"\\ufffd\"", "\"\\ud83d\\ude00\""});
  check_ascending(order_of("varchar(20)", 1248), {"\"a\"", "\"a \""});  // utf8mb4_unicode_nopad_ci
}

TEST_CASE("merge key order: UCA tables reject malformed text") {
  CHECK(UcaTable::parse({1, ",20: :209", "61.62:300"}).ok());
  CHECK(UcaTable::parse({3, ",20:|| :209", ""}).ok());
  CHECK_FALSE(UcaTable::parse({1, ",20: :209 :zz", ""}).ok());
  CHECK_FALSE(UcaTable::parse({1, ",1f: :209", ""}).ok());       // no run for the space
  CHECK_FALSE(UcaTable::parse({1, ",20: :209.20a", ""}).ok());   // the space must weigh one weight
  CHECK_FALSE(UcaTable::parse({1, ",20: :209", "61:300"}).ok());  // a contraction of one character
  CHECK_FALSE(UcaTable::parse({3, ",20:|| :209|0", ""}).ok());    // no zero weights
  CHECK_FALSE(UcaTable::parse({4, ",20: :209", ""}).ok());
}

TEST_CASE("merge key order: unsupported collations and types say what to do") {
  auto tailored = KeyColumnOrder::make("varchar(20)", 2312);
  REQUIRE_FALSE(tailored.has_value());
  CHECK(tailored.error().code == cdc::Errc::unsupported);
  CHECK(tailored.error().message ==
        "key column collation utf8mb4_uca1400_icelandic_ai_ci (id 2312): cdc-merge cannot order it without the "
        "server; plan the table with --chunk-key on a numeric, binary or _bin column");
  for (const std::uint32_t id : {256U /* utf8mb4_de_pb_0900_ai_ci */, 576U, 0U, 9999U, 66U /* cp1250_bin */,
                                 101U /* utf16_unicode_ci */}) {
    CAPTURE(id);
    auto order = KeyColumnOrder::make("varchar(20)", id);
    REQUIRE_FALSE(order.has_value());
    CHECK(order.error().code == cdc::Errc::unsupported);
    CHECK(order.error().message.find("--chunk-key") != std::string::npos);
  }
  for (const std::string_view type : {"float", "double", "enum('a','b')", "set('a')", "json", "bit(8)"}) {
    CAPTURE(type);
    auto order = KeyColumnOrder::make(type, 0);
    REQUIRE_FALSE(order.has_value());
    CHECK(order.error().code == cdc::Errc::unsupported);
  }
}
