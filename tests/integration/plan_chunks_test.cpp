// cdc-plan against the live server: every table shape the issue names is planned, then each
// chunk's rows are counted through its range condition. The sum must be the table's COUNT(*)
// (every row in exactly one chunk, as the ranges are disjoint and cover the key space), and no
// chunk may hold much more than --chunk-size rows.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "mysql/connection.h"
#include "plan/planner.h"
#include "plan/run_plan.h"
#include "test_server.h"

namespace {

using cdc::plan::ChunkPolicy;
using cdc::plan::TableSplit;

constexpr const char* kPlanDatabase = "plan_test";

cdc::mysql::Connection connect_as_cdc() {
  auto connection = cdc::mysql::Connection::open(cdc::test::cdc_account());
  REQUIRE_MESSAGE(connection.has_value(), connection.error().message);
  return std::move(*connection);
}

void setup(const std::string& table, const std::string& definition, const std::string& fill) {
  cdc::test::run_as_root(fmt::format("CREATE DATABASE IF NOT EXISTS {}", kPlanDatabase));
  cdc::test::run_as_root(fmt::format("DROP TABLE IF EXISTS {}.{}", kPlanDatabase, table));
  cdc::test::run_as_root(fmt::format("CREATE TABLE {}.{} {}", kPlanDatabase, table, definition));
  // The SEQUENCE engine's seq_1_to_N tables live in whichever database names them.
  std::string rows = fill;
  for (std::size_t at = rows.find("FROM seq_"); at != std::string::npos; at = rows.find("FROM seq_", at + 1))
    rows.insert(at + 5, fmt::format("{}.", kPlanDatabase));
  if (!rows.empty()) cdc::test::run_as_root(fmt::format("INSERT INTO {}.{} {}", kPlanDatabase, table, rows));
  // TABLE_ROWS is InnoDB's estimate; a fresh table's may lag until the statistics are read.
  cdc::test::run_as_root(fmt::format("ANALYZE TABLE {}.{}", kPlanDatabase, table));
}

std::uint64_t count(cdc::mysql::Connection& connection, const std::string& table, const std::string& where) {
  auto result = connection.query(fmt::format("SELECT COUNT(*) FROM {}.{} WHERE {}", kPlanDatabase, table, where));
  REQUIRE_MESSAGE(result.has_value(), result.error().message);
  return std::stoull(*result->rows.at(0).at(0));
}

TableSplit plan_table(cdc::mysql::Connection& connection, const std::string& table, std::uint64_t chunk_size,
                     const cdc::plan::ChunkKeyOption* chunk_key = nullptr) {
  auto tables = cdc::plan::discover_tables(connection, fmt::format("{}.{}", kPlanDatabase, table), "");
  REQUIRE_MESSAGE(tables.has_value(), tables.error().message);
  REQUIRE(tables->size() == 1);
  auto key = cdc::plan::describe_table(connection, tables->front(), chunk_key);
  REQUIRE_MESSAGE(key.has_value(), key.error().message);
  auto plan = cdc::plan::split_table(connection, *key, ChunkPolicy{chunk_size, 0.05, 1000});
  REQUIRE_MESSAGE(plan.has_value(), plan.error().message);
  return std::move(*plan);
}

// Every row in exactly one chunk; returns the largest chunk's row count.
std::uint64_t check_cover(cdc::mysql::Connection& connection, const TableSplit& plan) {
  const std::uint64_t total = count(connection, plan.table, "TRUE");
  std::uint64_t sum = 0;
  std::uint64_t largest = 0;
  for (const auto& chunk : plan.chunks) {
    auto where = cdc::plan::chunk_condition_sql(plan.key, chunk);
    REQUIRE_MESSAGE(where.has_value(), where.error().message);
    const std::uint64_t rows = count(connection, plan.table, *where);
    sum += rows;
    largest = std::max(largest, rows);
  }
  CHECK(sum == total);
  return largest;
}

}  // namespace

TEST_CASE("plan: INT primary key, evenly spread, splits arithmetically") {
  setup("int_even", "(id INT PRIMARY KEY, v INT)", "SELECT seq, seq FROM seq_1_to_20000");
  auto connection = connect_as_cdc();
  const TableSplit plan = plan_table(connection, "int_even", 1000);
  CHECK(plan.chunks.size() >= 15);
  CHECK(plan.chunks.size() <= 25);
  CHECK_FALSE(plan.chunks.front().start.has_value());
  CHECK_FALSE(plan.chunks.back().end.has_value());
  CHECK(check_cover(connection, plan) <= 2000);
}

TEST_CASE("plan: sparse INT primary key walks the index") {
  setup("int_sparse", "(id INT PRIMARY KEY)", "SELECT seq * seq FROM seq_1_to_5000");  // up to 25e6: factor 5000
  auto connection = connect_as_cdc();
  const TableSplit plan = plan_table(connection, "int_sparse", 500);
  CHECK(plan.chunks.size() >= 9);
  CHECK(check_cover(connection, plan) <= 1000);
  // Walk boundaries are real keys.
  for (std::size_t i = 0; i + 1 < plan.chunks.size(); ++i) {
    const std::string key = plan.chunks[i].end->at(0);
    CHECK(count(connection, "int_sparse", "id = " + key) == 1);
  }
}

TEST_CASE("plan: BIGINT UNSIGNED primary key near its maximum") {
  setup("bigint_top", "(id BIGINT UNSIGNED PRIMARY KEY)", "SELECT 18446744073709551615 - seq FROM seq_0_to_9999");
  auto connection = connect_as_cdc();
  const TableSplit plan = plan_table(connection, "bigint_top", 1000);
  CHECK(plan.chunks.size() >= 8);
  CHECK(check_cover(connection, plan) <= 2000);
}

TEST_CASE("plan: composite primary key whose leading column has one value splits by the second") {
  setup("lead_single", "(tenant INT NOT NULL, id INT NOT NULL, PRIMARY KEY (tenant, id))",
        "SELECT 7, seq FROM seq_1_to_5000");
  auto connection = connect_as_cdc();
  const TableSplit plan = plan_table(connection, "lead_single", 400);
  CHECK(plan.chunks.size() >= 12);
  CHECK(check_cover(connection, plan) <= 800);

  // The walk's condition is the expanded row comparison, which MariaDB reads as index ranges.
  auto where = cdc::plan::key_compare_sql(plan.key, {"7", "100"}, ">");
  REQUIRE(where.has_value());
  auto explain = connection.query(fmt::format(
      "EXPLAIN SELECT tenant, id FROM {}.lead_single FORCE INDEX (PRIMARY) WHERE {} ORDER BY tenant, id LIMIT 1 "
      "OFFSET 399",
      kPlanDatabase, *where));
  REQUIRE(explain.has_value());
  std::size_t type = 0;
  for (std::size_t i = 0; i < explain->columns.size(); ++i)
    if (explain->columns[i] == "type") type = i;
  CHECK(explain->rows.at(0).at(type).value_or("") == "range");
}

TEST_CASE("plan: VARBINARY(16) primary key with random bytes") {
  setup("varbinary_random", "(id VARBINARY(16) PRIMARY KEY, n INT)",
        "SELECT UNHEX(MD5(seq)), seq FROM seq_1_to_6000 UNION ALL SELECT X'00', 0 UNION ALL SELECT X'0000', 0 "
        "UNION ALL SELECT X'20', 0 UNION ALL SELECT X'2000', 0 UNION ALL SELECT X'FF', 0 UNION ALL SELECT '', 0");
  auto connection = connect_as_cdc();
  const TableSplit plan = plan_table(connection, "varbinary_random", 500);
  CHECK(plan.chunks.size() >= 10);
  CHECK(plan.key.front().kind == cdc::plan::KeyKind::binary);
  CHECK(check_cover(connection, plan) <= 1000);
}

TEST_CASE("plan: utf8mb4_general_ci VARCHAR primary key") {
  setup("varchar_ci", "(name VARCHAR(20) COLLATE utf8mb4_general_ci PRIMARY KEY)",
        "SELECT CONCAT(IF(seq % 2, 'k', 'K'), seq, IF(seq % 3 = 0, 'é', 'e')) FROM seq_1_to_5000");
  auto connection = connect_as_cdc();
  const TableSplit plan = plan_table(connection, "varchar_ci", 300);
  CHECK(plan.chunks.size() >= 12);
  CHECK(check_cover(connection, plan) <= 600);
}

TEST_CASE("plan: a non-unique --chunk-key on a case-insensitive column never splits equal values") {
  // 'a', 'A', 'a ' (PAD SPACE) and 'á' are all equal under utf8mb4_general_ci: 800 rows that
  // must stay in one chunk, whatever chunk boundary the walk lands on.
  setup("ci_runs",
        "(id INT PRIMARY KEY, name VARCHAR(10) COLLATE utf8mb4_general_ci NOT NULL, KEY by_name (name))",
        "SELECT seq, CASE WHEN seq <= 300 THEN CHAR(96 + seq % 26 + 1) "
        "WHEN seq <= 1100 THEN ELT(seq % 4 + 1, 'a', 'A', 'a ', 'á') "
        "ELSE CONCAT(CHAR(97 + seq % 26), seq % 7) END FROM seq_1_to_3000");
  auto connection = connect_as_cdc();
  const cdc::plan::ChunkKeyOption key{kPlanDatabase, "ci_runs", {"name"}};
  const TableSplit plan = plan_table(connection, "ci_runs", 100, &key);
  CHECK(plan.chunks.size() >= 10);
  check_cover(connection, plan);
  std::size_t chunks_with_a = 0;
  for (const auto& chunk : plan.chunks) {
    auto where = cdc::plan::chunk_condition_sql(plan.key, chunk);
    REQUIRE(where.has_value());
    const std::uint64_t rows = count(connection, "ci_runs", *where + " AND name = 'a'");
    if (rows > 0) {
      ++chunks_with_a;
      CHECK(rows == count(connection, "ci_runs", "name = 'a'"));
    }
  }
  CHECK(chunks_with_a == 1);
}

TEST_CASE("plan: --chunk-key on a secondary index of a table without a primary key") {
  setup("no_pk_indexed", "(k INT NOT NULL, v VARCHAR(10), KEY by_k (k, v))",
        "SELECT seq DIV 3, seq FROM seq_1_to_4000");
  auto connection = connect_as_cdc();
  auto tables = cdc::plan::discover_tables(connection, "plan_test.no_pk_indexed", "");
  REQUIRE(tables.has_value());
  REQUIRE(tables->size() == 1);
  // Without --chunk-key: no key, one chunk, and the warning names the option.
  const auto whole = cdc::plan::describe_table(connection, tables->front(), nullptr);
  REQUIRE_MESSAGE(whole.has_value(), whole.error().message);
  CHECK(whole->key.empty());
  REQUIRE(cdc::plan::plan_warning(*whole).has_value());
  CHECK(cdc::plan::plan_warning(*whole)->find("--chunk-key plan_test.no_pk_indexed=") != std::string::npos);
  const auto one = cdc::plan::split_table(connection, *whole, cdc::plan::ChunkPolicy{300});
  REQUIRE_MESSAGE(one.has_value(), one.error().message);
  REQUIRE(one->chunks.size() == 1);
  CHECK_FALSE(one->chunks[0].start.has_value());
  CHECK_FALSE(one->chunks[0].end.has_value());

  // v allows NULL: no chunk key, index or not.
  const cdc::plan::ChunkKeyOption not_leading{kPlanDatabase, "no_pk_indexed", {"v"}};
  const auto refused = cdc::plan::describe_table(connection, tables->front(), &not_leading);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == cdc::Errc::usage);
  CHECK(refused.error().message.find("allows NULL") != std::string::npos);

  const cdc::plan::ChunkKeyOption key{kPlanDatabase, "no_pk_indexed", {"k"}};
  const TableSplit plan = plan_table(connection, "no_pk_indexed", 300, &key);
  CHECK(plan.chunks.size() >= 12);
  CHECK(check_cover(connection, plan) <= 600);
}

TEST_CASE("plan: --chunk-key on columns no index starts with splits by the server's sort") {
  // Many duplicates, text under a case-insensitive collation ('a' and 'A' are one value), no index.
  setup("unindexed", "(grp INT NOT NULL, name VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL, v INT)",
        "SELECT seq DIV 7, IF(seq % 2, 'a', 'A'), seq FROM seq_1_to_5000");
  auto connection = connect_as_cdc();
  for (const auto& columns : std::vector<std::vector<std::string>>{{"grp"}, {"name"}, {"name", "grp"}}) {
    CAPTURE(columns.size());
    const cdc::plan::ChunkKeyOption key{kPlanDatabase, "unindexed", columns};
    auto tables = cdc::plan::discover_tables(connection, "plan_test.unindexed", "");
    REQUIRE(tables.has_value());
    const auto described = cdc::plan::describe_table(connection, tables->front(), &key);
    REQUIRE_MESSAGE(described.has_value(), described.error().message);
    CHECK(described->index.empty());
    REQUIRE(cdc::plan::plan_warning(*described).has_value());
    CHECK(cdc::plan::plan_warning(*described)->find("is not the start of an index") != std::string::npos);
    const TableSplit plan = plan_table(connection, "unindexed", 400, &key);
    // Every row in exactly one chunk; boundaries increase strictly under the collation.
    const std::uint64_t largest = check_cover(connection, plan);
    if (columns.size() == 1 && columns.front() == "name") {
      // One value under utf8mb4_general_ci: every row in one chunk (and an empty one before
      // it, as an index walk gives when the first chunk_size rows share the smallest value).
      CHECK(plan.chunks.size() <= 2);
      CHECK(largest == 5000);
    } else {
      CHECK(plan.chunks.size() >= 10);
      CHECK(largest <= 400 + 7);  // a chunk and the rest of its last group
    }
  }
}

TEST_CASE("plan: an empty table is one chunk with open ends") {
  setup("empty_int", "(id INT PRIMARY KEY)", "");
  setup("empty_text", "(id VARCHAR(5) PRIMARY KEY)", "");
  auto connection = connect_as_cdc();
  for (const char* table : {"empty_int", "empty_text"}) {
    CAPTURE(table);
    const TableSplit plan = plan_table(connection, table, 100);
    REQUIRE(plan.chunks.size() == 1);
    CHECK_FALSE(plan.chunks[0].start.has_value());
    CHECK_FALSE(plan.chunks[0].end.has_value());
  }
}

TEST_CASE("plan: run() writes chunk lines only, and a table without a key as one chunk with a warning") {
  setup("run_a", "(id INT PRIMARY KEY)", "SELECT seq FROM seq_1_to_100");
  setup("run_nokey", "(x INT)", "SELECT seq FROM seq_1_to_10");
  char path[] = "/tmp/plan_run_XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  char err_path[] = "/tmp/plan_err_XXXXXX";
  const int err = ::mkstemp(err_path);
  REQUIRE(err >= 0);
  cdc::plan::PlanOptions options;
  options.tables = "plan_test.run_*";
  options.policy.chunk_size = 30;

  const auto planned = cdc::plan::run(cdc::test::cdc_account(), options, fd, err, "cdc-plan");
  REQUIRE_MESSAGE(planned.has_value(), planned.error().message);
  CHECK(planned->tables == 2);
  CHECK(planned->chunks >= 4);
  std::string text(static_cast<std::size_t>(::lseek(fd, 0, SEEK_END)), '\0');
  CHECK(::pread(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()));
  CHECK(text.rfind("{\"op\":\"chunk\",\"v\":1,\"db\":\"plan_test\",\"table\":\"run_a\",\"key\":[\"id\"]", 0) == 0);
  CHECK(text.find("{\"op\":\"chunk\",\"v\":1,\"db\":\"plan_test\",\"table\":\"run_nokey\",\"key\":[],\"key_types\":[],"
                  "\"start\":null,\"end\":null,\"index\":0,\"count\":1,") != std::string::npos);
  std::size_t lines = 0;
  for (const char c : text) lines += c == '\n' ? 1U : 0U;
  CHECK(lines == planned->chunks);
  std::string warnings(static_cast<std::size_t>(::lseek(err, 0, SEEK_END)), '\0');
  CHECK(::pread(err, warnings.data(), warnings.size(), 0) == static_cast<ssize_t>(warnings.size()));
  CHECK(warnings.find("cdc-plan: warning: plan_test.run_nokey has no primary key: it is read as one chunk") !=
        std::string::npos);
  CHECK(warnings.find("run_a") == std::string::npos);

  options.tables = "plan_test.nothing_like_this";
  const auto none = cdc::plan::run(cdc::test::cdc_account(), options, fd, err, "cdc-plan");
  REQUIRE_FALSE(none.has_value());
  ::close(err);
  ::close(fd);
  ::unlink(path);
  ::unlink(err_path);
}

TEST_CASE("plan: DATETIME, DECIMAL and TIMESTAMP keys are walked with exact literals") {
  setup("temporal_keys",
        "(d DATETIME(3) NOT NULL, n DECIMAL(10,2) NOT NULL, PRIMARY KEY (d, n))",
        "SELECT TIMESTAMP'2024-01-01 00:00:00' + INTERVAL (seq DIV 4) SECOND + INTERVAL (seq % 4) * 250000 MICROSECOND, "
        "seq / 100 FROM seq_1_to_3000");
  setup("timestamp_key", "(t TIMESTAMP(2) NOT NULL PRIMARY KEY)",
        "SELECT FROM_UNIXTIME(1700000000 + seq * 7) + INTERVAL (seq % 100) * 10000 MICROSECOND "
        "FROM seq_1_to_3000");
  auto connection = connect_as_cdc();
  // Bounds print in UTC (the planner's session) and the coverage queries must read them the same way.
  REQUIRE(connection.query("SET time_zone = '+00:00'").has_value());
  for (const char* table : {"temporal_keys", "timestamp_key"}) {
    CAPTURE(table);
    const TableSplit plan = plan_table(connection, table, 250);
    CHECK(plan.chunks.size() >= 10);
    CHECK(check_cover(connection, plan) <= 500);
  }
}
