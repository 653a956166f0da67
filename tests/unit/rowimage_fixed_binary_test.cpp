// rowimage/fixed_binary_values.h: MariaDB's INET4, INET6 and UUID from the bytes the binary log
// holds to the server's text, back, and into the server's order. Every expected text is what
// MariaDB 10.11.19 answered for the value (SELECT CAST('<input>' AS INET6) and the like); the
// live proof over random values is tests/integration/fixed_binary_types.sh.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "binlog/events/table_map_event.h"
#include "ndjson/writer.h"
#include "rowimage/fixed_binary_values.h"
#include "rowimage/row_image.h"
#include "util/byte_reader.h"

namespace {

namespace rowimage = cdc::rowimage;
using cdc::FixedBinaryType;

std::vector<std::uint8_t> from_hex(std::string_view hex) {
  std::vector<std::uint8_t> bytes;
  const auto nibble = [](char c) { return static_cast<std::uint8_t>(c <= '9' ? c - '0' : c - 'a' + 10); };
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    bytes.push_back(static_cast<std::uint8_t>(nibble(hex[i]) << 4 | nibble(hex[i + 1])));
  return bytes;
}

std::string text_of(FixedBinaryType type, const std::vector<std::uint8_t>& bytes) {
  rowimage::FixedBinaryText buffer;
  return std::string(rowimage::fixed_binary_text(type, bytes, buffer));
}

struct Case {
  const char* hex;   // the value's bytes, as HEX(CAST(value AS BINARY(n))) gives them
  const char* text;  // what SELECT returns for it
};

// Each case's text, parsed, gives back its bytes; and the bytes give the text.
void check_both_ways(FixedBinaryType type, const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    CAPTURE(c.text);
    const std::vector<std::uint8_t> bytes = from_hex(c.hex);
    CHECK(text_of(type, bytes) == c.text);
    rowimage::FixedBinaryBytes parsed{};
    REQUIRE(rowimage::parse_fixed_binary_text(type, c.text, parsed));
    CHECK(std::equal(bytes.begin(), bytes.end(), parsed.begin()));
  }
}

}  // namespace

TEST_CASE("fixed binary: INET4 is a dotted quad of decimal bytes") {
  check_both_ways(FixedBinaryType::inet4, {
                                              {"00000000", "0.0.0.0"},
                                              {"ffffffff", "255.255.255.255"},
                                              {"0a000001", "10.0.0.1"},
                                              {"0a010009", "10.1.0.9"},  // '010.001.0.9' as typed
                                              {"c0a86401", "192.168.100.1"},
                                          });
}

TEST_CASE("fixed binary: INET6 compresses the first longest zero run, however short") {
  check_both_ways(FixedBinaryType::inet6,
                  {
                      {"00000000000000000000000000000000", "::"},
                      {"00000000000000000000000000000001", "::1"},
                      {"ffffffffffffffffffffffffffffffff", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
                      {"20010db8000000000000000000000001", "2001:db8::1"},
                      {"00010000000200030004000500060007", "1::2:3:4:5:6:7"},  // RFC 5952 keeps this 0
                      {"00010000000000020000000000030004", "1::2:0:0:3:4"},    // ties: the first
                      {"00010000000000020000000000000003", "1:0:0:2::3"},
                      {"00010000000000000002000000000000", "1::2:0:0:0"},
                      {"00010002000300040005000600070000", "1:2:3:4:5:6:7::"},
                      {"00010000000000000000000000000000", "1::"},
                      {"0000000000000000000000000000ffff", "::ffff"},
                      {"00000000000000000000000000000100", "::100"},  // '::0.0.1.0'
                      {"0064ff9b000000000000000001020304", "64:ff9b::102:304"},
                  });
}

TEST_CASE("fixed binary: INET6 writes IPv4-compatible and IPv4-mapped addresses with a dotted quad") {
  check_both_ways(FixedBinaryType::inet6,
                  {
                      {"00000000000000000000000001020304", "::1.2.3.4"},
                      {"00000000000000000000000000010000", "::0.1.0.0"},
                      {"000000000000000000000000ffff0000", "::255.255.0.0"},  // '::ffff:0': six zero groups
                      {"00000000000000000000ffff01020304", "::ffff:1.2.3.4"},
                      {"00000000000000000000ffff00000000", "::ffff:0.0.0.0"},
                      {"00000000000000000000ffff00000001", "::ffff:0.0.0.1"},  // '0:0:0:0:0:ffff:0:1'
                      {"00000000000000000000ffffffffffff", "::ffff:255.255.255.255"},
                      // Neither: a sixth group other than ffff, or a shorter leading run.
                      {"00000000000000000000fffe01020304", "::fffe:102:304"},
                      {"00000000000000000001ffff01020304", "::1:ffff:102:304"},
                      {"00000000000000000000000101020304", "::1:102:304"},  // '::0:1:1.2.3.4' 
                  });
}

TEST_CASE("fixed binary: UUID is 8-4-4-4-12 lower-case hex of the bytes in logged order") {
  check_both_ways(FixedBinaryType::uuid,
                  {
                      {"00000000000000000000000000000000", "00000000-0000-0000-0000-000000000000"},
                      {"ffffffffffffffffffffffffffffffff", "ffffffff-ffff-ffff-ffff-ffffffffffff"},
                      {"123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-426614174000"},
                      {"eae43f84f14c11f1a20002fc00000001", "eae43f84-f14c-11f1-a200-02fc00000001"},  // UUID()
                  });
}

TEST_CASE("fixed binary: the trailing zero bytes the binary log leaves out are put back") {
  // INSERT ... VALUES ('10.0.0.0'): the row image holds 1 byte, 0a.
  CHECK(text_of(FixedBinaryType::inet4, from_hex("0a")) == "10.0.0.0");
  CHECK(text_of(FixedBinaryType::inet4, {}) == "0.0.0.0");
  CHECK(text_of(FixedBinaryType::inet6, from_hex("2001")) == "2001::");
  CHECK(text_of(FixedBinaryType::inet6, {}) == "::");
  // '11111111-2222-5333-e444-555555555500' is logged as its first 15 bytes.
  CHECK(text_of(FixedBinaryType::uuid, from_hex("1111111122225333e44455555555555")) ==
        "11111111-2222-5333-e444-555555555500");
  CHECK(text_of(FixedBinaryType::uuid, {}) == "00000000-0000-0000-0000-000000000000");
  // More bytes than the type has: no text.
  CHECK(text_of(FixedBinaryType::inet4, from_hex("0102030405")).empty());
  CHECK(text_of(FixedBinaryType::uuid, std::vector<std::uint8_t>(17, 1)).empty());
  CHECK(text_of(FixedBinaryType::none, {}).empty());
}

TEST_CASE("fixed binary: only the server's own text parses") {
  const struct {
    FixedBinaryType type;
    const char* text;
  } rejected[] = {
      {FixedBinaryType::inet4, ""},
      {FixedBinaryType::inet4, "1.2.3"},
      {FixedBinaryType::inet4, "1.2.3.4.5"},
      {FixedBinaryType::inet4, "256.0.0.0"},
      {FixedBinaryType::inet4, "010.0.0.1"},  // the server writes 10.0.0.1
      {FixedBinaryType::inet4, "1.2.3.4 "},
      {FixedBinaryType::inet6, "0:0:0:0:0:0:0:1"},
      {FixedBinaryType::inet6, "::0.0.0.1"},  // the server writes ::1
      {FixedBinaryType::inet6, "1:0:2:3:4:5:6:7"},
      {FixedBinaryType::inet6, "2001:DB8::1"},
      {FixedBinaryType::inet6, "::ffff:1.2.3.4.5"},
      {FixedBinaryType::inet6, "::ffff:102:304"},  // the server writes ::ffff:1.2.3.4
      {FixedBinaryType::inet6, "1.2.3.4"},
      {FixedBinaryType::inet6, ":::"},
      {FixedBinaryType::inet6, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
      {FixedBinaryType::uuid, "123E4567-E89B-12D3-A456-426614174000"},
      {FixedBinaryType::uuid, "123e4567e89b12d3a456426614174000"},
      {FixedBinaryType::uuid, "{123e4567-e89b-12d3-a456-426614174000}"},
      {FixedBinaryType::uuid, "123e4567-e89b-12d3-a456-42661417400g"},
      {FixedBinaryType::uuid, "123e4567-e89b-12d3-a456\\u002d426614174000"},
      {FixedBinaryType::none, "::1"},
  };
  for (const auto& r : rejected) {
    CAPTURE(r.text);
    rowimage::FixedBinaryBytes bytes{};
    CHECK_FALSE(rowimage::parse_fixed_binary_text(r.type, r.text, bytes));
  }
}

TEST_CASE("fixed binary: type names as information_schema writes them") {
  CHECK(rowimage::fixed_binary_type_named("inet4") == FixedBinaryType::inet4);
  CHECK(rowimage::fixed_binary_type_named("INET6") == FixedBinaryType::inet6);
  CHECK(rowimage::fixed_binary_type_named("uuid") == FixedBinaryType::uuid);
  CHECK(rowimage::fixed_binary_type_named("binary") == FixedBinaryType::none);
  CHECK(rowimage::fixed_binary_type_named("uuid(16)") == FixedBinaryType::none);
  CHECK(rowimage::fixed_binary_size(FixedBinaryType::inet4) == 4);
  CHECK(rowimage::fixed_binary_size(FixedBinaryType::inet6) == 16);
  CHECK(rowimage::fixed_binary_size(FixedBinaryType::uuid) == 16);
}

TEST_CASE("fixed binary: UUIDs sort as the server sorts them") {
  // SELECT b FROM t ORDER BY b on MariaDB 10.11.19 (a UUID PRIMARY KEY, and the same without
  // the index): versions 1 to 5 with the RFC 4122 variant, version 0 among them, sort by their
  // groups reversed; nil, version 7, variant 0 and all-ones by their bytes.
  const std::vector<std::string_view> server_order = {
      "00000000-0000-0000-0000-000000000000", "eae43f84-f14c-11f1-a200-02fc00000001",
      "11111111-2222-4333-0444-555555555555", "11111111-2222-7333-c444-555555555555",
      "123e4567-e89b-12d3-a456-426614174000", "11111111-2222-5333-e444-555555555500",
      "11111111-2222-0333-8444-555555555555", "11111111-2222-1333-8444-555555555555",
      "ffffffff-ffff-ffff-ffff-ffffffffffff",
  };
  std::vector<rowimage::FixedBinaryBytes> keys;
  for (const std::string_view text : server_order) {
    rowimage::FixedBinaryBytes bytes{};
    REQUIRE(rowimage::parse_fixed_binary_text(FixedBinaryType::uuid, text, bytes));
    rowimage::to_server_order(FixedBinaryType::uuid, bytes);
    keys.push_back(bytes);
  }
  for (std::size_t i = 1; i < keys.size(); ++i) {
    CAPTURE(server_order[i]);
    CHECK(keys[i - 1] < keys[i]);
  }
  // INET6 keeps its bytes: its order is theirs.
  rowimage::FixedBinaryBytes address = {1, 2, 3};
  rowimage::to_server_order(FixedBinaryType::inet6, address);
  CHECK(address == rowimage::FixedBinaryBytes{1, 2, 3});
}

TEST_CASE("fixed binary: a row image column the catalog names is written as text, never as plain bytes") {
  cdc::binlog::TableMap map;
  map.database = "db";
  map.table = "t";
  map.column_names = {"ip", "id"};
  // BINARY(4) of no known collation (binlog_row_metadata=NO_LOG), then BINARY(16).
  map.columns = {{cdc::ColumnType::string, 4, false, true, 0}, {cdc::ColumnType::string, 16, false, true, 63}};
  map.columns[0].fixed_binary = FixedBinaryType::inet4;
  map.columns[1].fixed_binary = FixedBinaryType::uuid;
  // One row: null bitmap, 'ABCD' (65.66.67.68: plain ASCII, which the text shortcut would write
  // as it is), then a UUID cut to its first 15 bytes.
  std::vector<std::uint8_t> row = {0x00, 4, 'A', 'B', 'C', 'D', 15};
  const std::vector<std::uint8_t> uuid = from_hex("1111111122225333e44455555555555");
  row.insert(row.end(), uuid.begin(), uuid.end());
  rowimage::TablePlan plan;
  plan.build(map);
  CHECK_FALSE(plan.layout(0).ascii_text);
  const std::uint8_t present[] = {0x03};
  rowimage::RowScratch scratch;
  cdc::ndjson::Writer out;
  cdc::ByteReader errors;
  rowimage::write_full_row_image(row, 0, plan, out, scratch, errors, {});
  REQUIRE(errors.ok());
  CHECK(out.buffered() == R"({"ip":"65.66.67.68","id":"11111111-2222-5333-e444-555555555500"})");

  cdc::ByteReader in{std::span<const std::uint8_t>(row)};
  std::vector<rowimage::ColumnSlice> slices;
  rowimage::scan_row_image(in, plan, present, slices, scratch);
  REQUIRE(in.ok());
  cdc::ndjson::Writer scanned;
  (void)rowimage::write_row_image(plan, slices, scanned, scratch, errors);
  CHECK(scanned.buffered() == out.buffered());

  // A value longer than the column fails, naming the column.
  std::vector<std::uint8_t> long_row = {0x02, 5, 1, 2, 3, 4, 5};
  cdc::ByteReader long_in{std::span<const std::uint8_t>(long_row)};
  rowimage::scan_row_image(long_in, plan, present, slices, scratch);
  REQUIRE(long_in.ok());
  cdc::ndjson::Writer failed;
  cdc::ByteReader long_errors;
  (void)rowimage::write_row_image(plan, slices, failed, scratch, long_errors);
  CHECK_FALSE(long_errors.ok());
  CHECK(long_errors.failure_text().find("column 1 (ip STRING): a value of 5 bytes where the column holds 4") !=
        std::string::npos);
}
