// The pure half of chunk planning: the distribution factor, the even split, chunks from walk
// boundaries, the SQL of a range and the op:"chunk" line.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ndjson/writer.h"
#include "plan/chunk.h"
#include "plan/planner.h"

namespace {

using cdc::plan::KeyRange;
using cdc::plan::ChunkPolicy;
using cdc::plan::IntegerKeyRange;
using cdc::plan::KeyColumn;
using cdc::plan::KeyKind;
using cdc::plan::KeyTuple;

IntegerKeyRange signed_range(std::int64_t min, std::int64_t max) {
  return {false, cdc::plan::bias_signed(min), cdc::plan::bias_signed(max)};
}

std::string bound(const std::optional<KeyTuple>& tuple) { return tuple ? tuple->at(0) : "null"; }

}  // namespace

TEST_CASE("distribution factor is (max - min + 1) / rows") {
  CHECK(cdc::plan::distribution_factor(signed_range(1, 1000), 1000) == doctest::Approx(1.0));
  CHECK(cdc::plan::distribution_factor(signed_range(1, 1000), 10) == doctest::Approx(100.0));
  CHECK(cdc::plan::distribution_factor(signed_range(-500, 499), 2000) == doctest::Approx(0.5));
  CHECK(std::isinf(cdc::plan::distribution_factor(signed_range(1, 10), 0)));
  // The whole BIGINT UNSIGNED range: 2^64 values, no overflow.
  const IntegerKeyRange all{true, 0, std::numeric_limits<std::uint64_t>::max()};
  CHECK(cdc::plan::distribution_factor(all, 1) == doctest::Approx(18446744073709551616.0));
}

TEST_CASE("even split: ranges of chunk_size * factor, open at both ends") {
  const ChunkPolicy policy{100, 0.05, 1000};
  const auto chunks = cdc::plan::plan_integer_chunks(signed_range(1, 1000), 1000, policy);
  REQUIRE(chunks.has_value());
  REQUIRE(chunks->size() == 10);
  CHECK(bound(chunks->front().start) == "null");
  CHECK(bound(chunks->front().end) == "101");
  CHECK(bound((*chunks)[1].start) == "101");
  CHECK(bound((*chunks)[1].end) == "201");
  CHECK(bound(chunks->back().start) == "901");
  CHECK(bound(chunks->back().end) == "null");
  for (std::size_t i = 1; i < chunks->size(); ++i) CHECK((*chunks)[i].start == (*chunks)[i - 1].end);
  CHECK(chunks->front().rows_estimate == 100);

  SUBCASE("sparse keys widen the ranges") {
    const auto sparse = cdc::plan::plan_integer_chunks(signed_range(0, 9999), 1000, policy);  // factor 10
    REQUIRE(sparse.has_value());
    CHECK(sparse->size() == 10);
    CHECK(bound(sparse->front().end) == "1000");
  }
  SUBCASE("negative keys") {
    const auto negative = cdc::plan::plan_integer_chunks(signed_range(-1000, -1), 1000, policy);
    REQUIRE(negative.has_value());
    CHECK(negative->size() == 10);
    CHECK(bound(negative->front().end) == "-900");
    CHECK(bound(negative->back().start) == "-100");
  }
  SUBCASE("a small table is one chunk") {
    const auto small = cdc::plan::plan_integer_chunks(signed_range(1, 50), 50, policy);
    REQUIRE(small.has_value());
    REQUIRE(small->size() == 1);
    CHECK_FALSE(small->front().start.has_value());
    CHECK_FALSE(small->front().end.has_value());
  }
}

TEST_CASE("even split is refused outside the factor bounds, so the index gets walked") {
  const ChunkPolicy policy{100, 0.05, 1000};
  CHECK_FALSE(cdc::plan::plan_integer_chunks(signed_range(1, 1000000000), 1000, policy).has_value());  // 1e6
  CHECK_FALSE(cdc::plan::plan_integer_chunks(signed_range(1, 10), 1000, policy).has_value());          // 0.01
  CHECK_FALSE(cdc::plan::plan_integer_chunks(signed_range(1, 10), 0, policy).has_value());             // no estimate
  CHECK(cdc::plan::plan_integer_chunks(signed_range(1, 1000000), 1000, policy).has_value());           // 1000: in
}

TEST_CASE("even split near the ends of BIGINT and BIGINT UNSIGNED does not wrap") {
  const ChunkPolicy policy{1000, 0.05, 1000};
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  const auto top = cdc::plan::plan_integer_chunks(IntegerKeyRange{true, kMax - 4999, kMax}, 5000, policy);
  REQUIRE(top.has_value());
  CHECK(top->size() == 5);
  CHECK(bound(top->front().end) == "18446744073709547616");
  CHECK(bound(top->back().start) == "18446744073709550616");
  CHECK_FALSE(top->back().end.has_value());

  const auto bottom = cdc::plan::plan_integer_chunks(
      signed_range(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::min() + 2999), 3000,
      policy);
  REQUIRE(bottom.has_value());
  CHECK(bottom->size() == 3);
  CHECK(bound(bottom->front().end) == "-9223372036854774808");

  CHECK(cdc::plan::parse_biased("18446744073709551615", true) == kMax);
  CHECK(cdc::plan::parse_biased("-9223372036854775808", false) == 0U);
  CHECK_FALSE(cdc::plan::parse_biased("18446744073709551616", true).has_value());
  CHECK(cdc::plan::unbiased_text(cdc::plan::bias_signed(-42), false) == "-42");
}

TEST_CASE("chunks from walk boundaries") {
  const auto none = cdc::plan::chunks_from_boundaries({}, 0, 100);
  REQUIRE(none.size() == 1);
  CHECK_FALSE(none[0].start.has_value());
  CHECK_FALSE(none[0].end.has_value());

  const auto three = cdc::plan::chunks_from_boundaries({{"b"}, {"m"}}, 250, 100);
  REQUIRE(three.size() == 3);
  CHECK(bound(three[0].start) == "null");
  CHECK(bound(three[0].end) == "b");
  CHECK(bound(three[1].start) == "b");
  CHECK(bound(three[1].end) == "m");
  CHECK(bound(three[2].start) == "m");
  CHECK(bound(three[2].end) == "null");
  CHECK(three[2].rows_estimate == 50);
}

TEST_CASE("range SQL: literals per kind and the expanded row comparison") {
  const KeyColumn id{"id", "int(11)", KeyKind::signed_integer};
  const KeyColumn name{"na`me", "varchar(10)", KeyKind::text};
  const KeyColumn bytes{"b", "varbinary(16)", KeyKind::binary};
  const KeyColumn at{"at", "timestamp", KeyKind::timestamp};

  CHECK(cdc::plan::sql_literal(id, "-12").value() == "-12");
  CHECK_FALSE(cdc::plan::sql_literal(id, "1; DROP TABLE t").has_value());
  CHECK(cdc::plan::sql_literal(name, "a'b").value() == "_utf8mb4 X'612762'");
  CHECK(cdc::plan::sql_literal(bytes, std::string("\x00\xff", 2)).value() == "X'00FF'");
  CHECK(cdc::plan::sql_literal(at, "2024-09-04 10:52:12.189Z").value() == "'2024-09-04 10:52:12.189'");
  CHECK_FALSE(cdc::plan::sql_literal(at, "2024' OR '1").has_value());

  // MariaDB's INET6/UUID: the server's text, which it reads back as the type; nothing else.
  const KeyColumn address{"ip", "inet6", KeyKind::fixed_binary};
  const KeyColumn uuid{"u", "uuid", KeyKind::fixed_binary};
  CHECK(cdc::plan::sql_literal(address, "::ffff:1.2.3.4").value() == "'::ffff:1.2.3.4'");
  CHECK(cdc::plan::sql_literal(uuid, "123e4567-e89b-12d3-a456-426614174000").value() ==
        "'123e4567-e89b-12d3-a456-426614174000'");
  CHECK_FALSE(cdc::plan::sql_literal(address, "::1' OR '1").has_value());
  CHECK_FALSE(cdc::plan::sql_literal(uuid, "::1").has_value());

  CHECK(cdc::plan::key_compare_sql({id}, {"5"}, ">=").value() == "(`id` >= 5)");
  CHECK(cdc::plan::key_compare_sql({id, name}, {"5", "x"}, ">=").value() ==
        "((`id` > 5) OR (`id` = 5 AND `na``me` >= _utf8mb4 X'78'))");
  CHECK(cdc::plan::key_compare_sql({id, name}, {"5", "x"}, "<").value() ==
        "((`id` < 5) OR (`id` = 5 AND `na``me` < _utf8mb4 X'78'))");
  CHECK_FALSE(cdc::plan::key_compare_sql({id, name}, {"5"}, "<").has_value());

  KeyRange chunk;
  CHECK(cdc::plan::chunk_condition_sql({id}, chunk).value() == "TRUE");
  chunk.start = KeyTuple{"1"};
  chunk.end = KeyTuple{"9"};
  CHECK(cdc::plan::chunk_condition_sql({id}, chunk).value() == "(`id` >= 1) AND (`id` < 9)");
}

TEST_CASE("the op:chunk line") {
  cdc::plan::TableSplit plan;
  plan.database = "shop";
  plan.table = "orders";
  plan.key = {{"id", "bigint(20) unsigned", KeyKind::unsigned_integer}, {"code", "varbinary(4)", KeyKind::binary}};
  plan.columns = {{"id", "bigint(20) unsigned", 0}, {"code", "varbinary(4)", 63}, {"note", "varchar(5)", 45}};
  KeyRange first;
  first.end = KeyTuple{"18446744073709551615", std::string("\x00\x01", 2)};
  first.rows_estimate = 10;
  KeyRange second;
  second.start = first.end;
  plan.chunks = {first, second};
  plan.identity = std::vector<std::string>{"id", "code"};

  cdc::ndjson::Writer out;
  cdc::plan::write_chunk_line(plan, 0, out);
  cdc::plan::write_chunk_line(plan, 1, out);
  CHECK(out.buffered() ==
        "{\"op\":\"chunk\",\"v\":1,\"db\":\"shop\",\"table\":\"orders\",\"key\":[\"id\",\"code\"],"
        "\"key_types\":[\"bigint(20) unsigned\",\"varbinary(4)\"],\"start\":null,\"end\":[18446744073709551615,\"AAE=\"],"
        "\"index\":0,\"count\":2,\"columns\":[{\"name\":\"id\",\"type\":\"bigint(20) unsigned\",\"collation_id\":0},"
        "{\"name\":\"code\",\"type\":\"varbinary(4)\",\"collation_id\":63},"
        "{\"name\":\"note\",\"type\":\"varchar(5)\",\"collation_id\":45}],\"identity\":[\"id\",\"code\"],"
        "\"rows_estimate\":10}\n"
        "{\"op\":\"chunk\",\"v\":1,\"db\":\"shop\",\"table\":\"orders\",\"key\":[\"id\",\"code\"],"
        "\"key_types\":[\"bigint(20) unsigned\",\"varbinary(4)\"],\"start\":[18446744073709551615,\"AAE=\"],\"end\":null,"
        "\"index\":1,\"count\":2,\"columns\":[{\"name\":\"id\",\"type\":\"bigint(20) unsigned\",\"collation_id\":0},"
        "{\"name\":\"code\",\"type\":\"varbinary(4)\",\"collation_id\":63},"
        "{\"name\":\"note\",\"type\":\"varchar(5)\",\"collation_id\":45}],\"identity\":[\"id\",\"code\"],"
        "\"rows_estimate\":0}\n");
}

TEST_CASE("--chunk-key DB.TABLE=COL[,COL]") {
  const auto key = cdc::plan::parse_chunk_key("shop.orders=created_at,id");
  REQUIRE(key.has_value());
  CHECK(key->database == "shop");
  CHECK(key->table == "orders");
  CHECK(key->columns == std::vector<std::string>{"created_at", "id"});
  for (const char* bad : {"shop.orders", "orders=id", "shop.orders=", "shop.orders=a,,b", ".t=a", "db.=a"}) {
    CAPTURE(bad);
    const auto parsed = cdc::plan::parse_chunk_key(bad);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == cdc::Errc::usage);
  }
}

TEST_CASE("an integer key's value is a JSON number, also YEAR 0, which the server writes 0000") {
  const KeyColumn year{"y", "year", KeyKind::signed_integer};
  for (const auto& [text, json] : std::vector<std::pair<std::string, std::string>>{
           {"0000", "0"}, {"0", "0"}, {"2024", "2024"}, {"0069", "69"}, {"-5", "-5"}, {"-007", "-7"}}) {
    cdc::ndjson::Writer out;
    cdc::plan::write_value(year, text, out);
    CHECK(out.buffered() == json);
  }
}
