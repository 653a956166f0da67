// cdc-apply --verify without a server (libcore/verify/): the digest SQL, the key diff, the
// keys' JSON and order, the lines, and the rounds of a chunk compared while changes flow,
// against sides that answer from a script.

#include <doctest/doctest.h>

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "ndjson/writer.h"
#include "plan/chunk.h"
#include "verify/chunk_verdict.h"
#include "verify/column_text.h"
#include "verify/digest_sql.h"
#include "verify/postgres_side.h"
#include "verify/row_diff.h"
#include "verify/row_keys.h"
#include "verify/verify_lines.h"

namespace {

using cdc::verify::Digest;
using cdc::verify::DigestRead;
using cdc::verify::KeyDifference;
using cdc::verify::RowHash;
using cdc::verify::RowsRead;
using cdc::verify::Status;

cdc::gtid::Position at(std::string_view text) { return cdc::gtid::Position::parse(text).value(); }

RowHash row(std::string key, std::string hash) { return RowHash{key, "{\"id\":" + key + "}", std::move(hash), {key}}; }

std::vector<std::string> keys_of(const std::vector<KeyDifference>& differences) {
  std::vector<std::string> out;
  for (const auto& difference : differences)
    out.push_back(difference.key_json + (difference.in_source ? "+s" : "") + (difference.in_target ? "+t" : ""));
  return out;
}

// A side that answers each read from its script, in order, and records the reads.
class ScriptedSource : public cdc::verify::Side {
 public:
  std::deque<DigestRead> digests;
  std::deque<RowsRead> rows_reads;
  int reads = 0;
  cdc::Result<DigestRead> digest(const cdc::records::Chunk&) override {
    ++reads;
    REQUIRE_FALSE(digests.empty());
    DigestRead next = digests.front();
    if (digests.size() > 1) digests.pop_front();
    return next;
  }
  cdc::Result<RowsRead> rows(const cdc::records::Chunk&, std::span<const KeyDifference>) override {
    ++reads;
    REQUIRE_FALSE(rows_reads.empty());
    RowsRead next = rows_reads.front();
    if (rows_reads.size() > 1) rows_reads.pop_front();
    return next;
  }
};

class ScriptedTarget : public cdc::verify::TargetSide {
 public:
  std::deque<DigestRead> digests;
  std::deque<RowsRead> rows_reads;
  std::optional<std::string> reaches;  // what wait_for finds; nullopt: never gets there
  int waits = 0;
  cdc::Result<DigestRead> digest(const cdc::records::Chunk&) override {
    REQUIRE_FALSE(digests.empty());
    DigestRead next = digests.front();
    if (digests.size() > 1) digests.pop_front();
    return next;
  }
  cdc::Result<RowsRead> rows(const cdc::records::Chunk&, std::span<const KeyDifference>) override {
    REQUIRE_FALSE(rows_reads.empty());
    RowsRead next = rows_reads.front();
    if (rows_reads.size() > 1) rows_reads.pop_front();
    return next;
  }
  cdc::Result<std::optional<cdc::gtid::Position>> wait_for(const cdc::gtid::Position& wanted) override {
    ++waits;
    if (!reaches) return std::optional<cdc::gtid::Position>();
    const cdc::gtid::Position held = at(*reaches);
    if (!cdc::gtid::includes(held, wanted).value_or(false)) return std::optional<cdc::gtid::Position>();
    return std::optional<cdc::gtid::Position>(held);
  }
};

std::string fmt_position(int i) { return "0-1-" + std::to_string(100 + i); }

DigestRead digest_at(std::uint64_t rows, std::string sum, std::string_view position) {
  return DigestRead{Digest{rows, sum, sum}, at(position)};
}

}  // namespace

TEST_CASE("verify: the MariaDB digest hashes lengths, values and NULL flags, text in utf8mb4") {
  const std::vector<cdc::records::ChunkColumn> columns{{"id", "int(11)", 0}, {"name", "varchar(20)", 45},
                                                       {"b", "varbinary(4)", 63}};
  CHECK(cdc::verify::MariadbDigestSql::row_hash_sql(columns) ==
        "MD5(CONCAT_WS(',',LENGTH(`id`),`id`,LENGTH(CONVERT(`name` USING utf8mb4)),CONVERT(`name` USING utf8mb4),"
        "LENGTH(`b`),`b`,CONCAT(ISNULL(`id`),ISNULL(`name`),ISNULL(`b`))))");
  const cdc::verify::MariadbDigestSql sql;
  CHECK(sql.digest_sql("copy", "t", columns, "(`id` >= 5)") ==
        "SELECT COUNT(*),COALESCE(SUM(CAST(CONV(LEFT(h,16),16,10) AS UNSIGNED)),0),"
        "COALESCE(SUM(CAST(CONV(RIGHT(h,16),16,10) AS UNSIGNED)),0) FROM (SELECT " +
            cdc::verify::MariadbDigestSql::row_hash_sql(columns) +
            " AS h FROM `copy`.`t` WHERE (`id` >= 5) LIMIT 18446744073709551615) AS chunk_rows");
  const std::vector<std::string> listed{"id"};
  CHECK(sql.rows_sql("copy", "t", columns, listed, false, "") ==
        "SELECT `id`," + cdc::verify::MariadbDigestSql::row_hash_sql(columns) + " FROM `copy`.`t`");
}

TEST_CASE("verify: the PostgreSQL digest hashes the same row text, and sums the halves as unsigned") {
  const std::vector<cdc::records::ChunkColumn> columns{{"id", "int(11)", 0}, {"name", "varchar(20)", 45},
                                                       {"b", "varbinary(4)", 63}};
  CHECK(cdc::verify::PostgresDigestSql::row_hash_sql(columns) ==
        "md5(concat_ws(',',octet_length(\"id\"::text),\"id\"::text,octet_length(\"name\"::text),\"name\"::text,"
        "octet_length(encode(\"b\",'hex')),encode(\"b\",'hex'),"
        "concat((\"id\" IS NULL)::int,(\"name\" IS NULL)::int,(\"b\" IS NULL)::int)))");
  // The MariaDB side of the same comparison writes the bytes as hex too.
  CHECK(cdc::verify::MariadbDigestSql::row_hash_sql(columns, cdc::verify::Peer::postgres) ==
        "MD5(CONCAT_WS(',',LENGTH(`id`),`id`,LENGTH(CONVERT(`name` USING utf8mb4)),CONVERT(`name` USING utf8mb4),"
        "LENGTH(LOWER(HEX(`b`))),LOWER(HEX(`b`)),CONCAT(ISNULL(`id`),ISNULL(`name`),ISNULL(`b`))))");
  const cdc::verify::PostgresDigestSql sql;
  CHECK(sql.digest_sql("copy", "t", columns, "\"id\" >= 5") ==
        "SELECT count(*),COALESCE(sum(hi::numeric+CASE WHEN hi<0 THEN 18446744073709551616 ELSE 0 END),0),"
        "COALESCE(sum(lo::numeric+CASE WHEN lo<0 THEN 18446744073709551616 ELSE 0 END),0) FROM "
        "(SELECT ('x'||left(h,16))::bit(64)::bigint AS hi,('x'||right(h,16))::bit(64)::bigint AS lo FROM (SELECT " +
            cdc::verify::PostgresDigestSql::row_hash_sql(columns) +
            " AS h FROM \"copy\".\"t\" WHERE \"id\" >= 5 OFFSET 0) AS hashes OFFSET 0) AS chunk_rows");
  const std::vector<std::string> key{"id"};
  CHECK(sql.rows_sql("copy", "t", columns, key, false, "") ==
        "SELECT \"id\"::text," + cdc::verify::PostgresDigestSql::row_hash_sql(columns) + " FROM \"copy\".\"t\"");
  // A keyless table's rows are named by their row text on both sides.
  const std::vector<std::string> every{"id", "name", "b"};
  CHECK(sql.rows_sql("copy", "t", columns, every, true, "") ==
        "SELECT \"id\"::text,\"name\"::text,encode(\"b\",'hex')," +
            cdc::verify::PostgresDigestSql::row_hash_sql(columns) + " FROM \"copy\".\"t\"");
  const cdc::verify::MariadbDigestSql maria(cdc::verify::Peer::postgres);
  CHECK(maria.rows_sql("copy", "t", columns, every, true, "").starts_with(
      "SELECT `id`,CONVERT(`name` USING utf8mb4),LOWER(HEX(`b`)),"));
  CHECK(maria.rows_sql("copy", "t", columns, key, false, "").starts_with("SELECT `id`,MD5("));
}

TEST_CASE("verify: each type's text on a MariaDB source and on its PostgreSQL copy") {
  struct Case {
    const char* type;
    std::uint32_t collation_id;
    const char* mariadb;
    const char* postgres;
  };
  const Case cases[] = {
      {"bigint(20) unsigned", 0, "`c`", "\"c\"::text"},
      {"decimal(20,6)", 0, "`c`", "\"c\"::text"},
      {"bit(10)", 0, "LPAD(BIN(`c`+0),10,'0')", "\"c\"::text"},
      {"year(4)", 0, "(`c`+0)", "\"c\"::text"},
      {"date", 0, "`c`", "\"c\"::text"},
      {"time(3)", 0, "CAST(TIME_TO_SEC(`c`)*1000000 AS SIGNED)", "(extract(epoch from \"c\")*1000000)::bigint::text"},
      {"datetime", 0, "`c`", "to_char(\"c\",'YYYY-MM-DD HH24:MI:SS')"},
      {"datetime(6)", 0, "`c`", "left(to_char(\"c\",'YYYY-MM-DD HH24:MI:SS.US'),26)"},
      {"timestamp(3)", 0, "`c`", "left(to_char((\"c\" AT TIME ZONE 'UTC'),'YYYY-MM-DD HH24:MI:SS.US'),23)"},
      {"varchar(40)", 8, "CONVERT(`c` USING utf8mb4)", "\"c\"::text"},
      {"enum('s','m')", 45, "CONVERT(`c` USING utf8mb4)", "\"c\"::text"},
      {"blob", 63, "LOWER(HEX(`c`))", "encode(\"c\",'hex')"},
      {"point", 0, "LOWER(HEX(`c`))", "encode(\"c\",'hex')"},
      {"inet6", 0, "`c`", "host(\"c\")"},
      {"uuid", 0, "`c`", "\"c\"::text"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.type);
    const cdc::records::ChunkColumn column{"c", c.type, c.collation_id};
    CHECK(cdc::verify::mariadb_value_sql(column, cdc::verify::Peer::postgres) == c.mariadb);
    CHECK(cdc::verify::postgres_value_sql(column) == c.postgres);
  }
  // Floats: the same steps on both, from the double's text.
  const cdc::records::ChunkColumn fl{"c", "float", 0};
  CHECK(cdc::verify::mariadb_value_sql(fl, cdc::verify::Peer::postgres).find("LOWER(CAST(`c` AS DOUBLE))") !=
        std::string::npos);
  CHECK(cdc::verify::postgres_value_sql(fl).find("lower(\"c\"::float8::text)") != std::string::npos);
  // A DOUBLE: [-]digits, 'e', the power of ten, the same steps in each dialect (checked
  // against both servers: 1.1, -3.4e38, 1e-45, 5e-324, 1.7976931348623157e308, 1e20, 0.1).
  CHECK(cdc::verify::postgres_value_sql({"c", "double", 0}) ==
        "CASE WHEN btrim(replace(split_part(ltrim(lower(\"c\"::text),'-'),'e',1),'.',''),'0')='' THEN '0' ELSE "
        "CASE WHEN left(lower(\"c\"::text),1)='-' THEN '-' ELSE '' END||"
        "btrim(replace(split_part(ltrim(lower(\"c\"::text),'-'),'e',1),'.',''),'0')||'e'||"
        "(COALESCE(NULLIF(split_part(ltrim(lower(\"c\"::text),'-'),'e',2),'')::int,0)+"
        "length(split_part(split_part(ltrim(lower(\"c\"::text),'-'),'e',1),'.',1))-"
        "length(rtrim(replace(split_part(ltrim(lower(\"c\"::text),'-'),'e',1),'.',''),'0')))::text END");
  CHECK(cdc::verify::mariadb_value_sql({"c", "double", 0}, cdc::verify::Peer::postgres) ==
        "IF(TRIM(BOTH '0' FROM REPLACE(SUBSTRING_INDEX(TRIM(LEADING '-' FROM LOWER(`c`)),'e',1),'.',''))='','0',"
        "CONCAT(IF(LEFT(LOWER(`c`),1)='-','-',''),"
        "TRIM(BOTH '0' FROM REPLACE(SUBSTRING_INDEX(TRIM(LEADING '-' FROM LOWER(`c`)),'e',1),'.','')),'e',"
        "IF(LOCATE('e',TRIM(LEADING '-' FROM LOWER(`c`)))>0,"
        "CAST(SUBSTRING_INDEX(TRIM(LEADING '-' FROM LOWER(`c`)),'e',-1) AS SIGNED),0)+"
        "CAST(LENGTH(SUBSTRING_INDEX(SUBSTRING_INDEX(TRIM(LEADING '-' FROM LOWER(`c`)),'e',1),'.',1)) AS SIGNED)-"
        "CAST(LENGTH(TRIM(TRAILING '0' FROM REPLACE(SUBSTRING_INDEX(TRIM(LEADING '-' FROM LOWER(`c`)),'e',1),'.',''))) "
        "AS SIGNED)))");
  CHECK_FALSE(cdc::verify::postgres_comparable({"c", "vector(3)", 0}).has_value());
  // A TIME key as MariaDB prints it; binary keys as hex.
  CHECK(cdc::verify::postgres_key_sql({"c", "time", 0}).find("||':'||") != std::string::npos);
  CHECK(cdc::verify::postgres_key_is_hex({"c", "varbinary(4)", 63}));
  CHECK_FALSE(cdc::verify::postgres_key_is_hex({"c", "varchar(4)", 45}));
}

TEST_CASE("verify: a chunk's range on PostgreSQL, for keys that order alike") {
  using cdc::plan::KeyColumn;
  using cdc::plan::KeyKind;
  cdc::records::Chunk chunk;
  chunk.db = "a";
  chunk.table = "t";
  chunk.start = std::vector<std::string>{"5"};
  chunk.end = std::vector<std::string>{"10"};
  const std::vector<KeyColumn> id{{"id", "int(11)", KeyKind::signed_integer}};
  CHECK(cdc::verify::PostgresTargetSide::range_sql(chunk, id).value() == "\"id\" >= 5 AND \"id\" < 10");
  chunk.start.reset();
  CHECK(cdc::verify::PostgresTargetSide::range_sql(chunk, id).value() == "\"id\" < 10");
  chunk.end.reset();
  CHECK(cdc::verify::PostgresTargetSide::range_sql(chunk, id).value().empty());
  const std::vector<KeyColumn> composite{{"d", "decimal(10,2)", KeyKind::decimal},
                                         {"ts", "timestamp(3)", KeyKind::timestamp},
                                         {"b", "varbinary(4)", KeyKind::binary}};
  chunk.start = std::vector<std::string>{"\"-1.50\"", "\"2024-01-01 00:00:00.000Z\"", "\"AP8=\""};
  CHECK(cdc::verify::PostgresTargetSide::range_sql(chunk, composite).value() ==
        "(\"d\",\"ts\",\"b\") >= (-1.50,'2024-01-01 00:00:00.000','\\x00ff'::bytea)");
  // Only the characters of its kind go into the SQL.
  chunk.start = std::vector<std::string>{"\"1; DROP\"", "\"x\"", "\"AP8=\""};
  CHECK_FALSE(cdc::verify::PostgresTargetSide::range_sql(chunk, composite).has_value());
}

TEST_CASE("verify: the rows of the target that differ from both reads of the source") {
  const std::vector<KeyDifference> first{{"1", "", true, true, {}}, {"2", "", true, false, {}}, {"3", "", true, true, {}}};
  const std::vector<KeyDifference> second{{"3", "", true, true, {}}, {"4", "", false, true, {}}, {"1", "", true, true, {}}};
  const auto both = cdc::verify::in_both(first, second);
  REQUIRE(both.size() == 2);
  CHECK(both[0].sort_key == "1");
  CHECK(both[1].sort_key == "3");
}

TEST_CASE("verify: rows missing on either side and rows that differ, in key order") {
  std::vector<RowHash> source{row("3", "c"), row("1", "a"), row("2", "b"), row("5", "e")};
  std::vector<RowHash> target{row("4", "d"), row("2", "B"), row("1", "a"), row("5", "e")};
  CHECK(keys_of(cdc::verify::diff_rows(source, target)) ==
        std::vector<std::string>{"{\"id\":2}+s+t", "{\"id\":3}+s", "{\"id\":4}+t"});
  SUBCASE("equal sides") {
    std::vector<RowHash> same = source;
    CHECK(cdc::verify::diff_rows(source, same).empty());
  }
  SUBCASE("one side empty") {
    std::vector<RowHash> none;
    CHECK(cdc::verify::diff_rows(source, none).size() == 4);
    CHECK(cdc::verify::diff_rows(none, source).size() == 4);
  }
}

TEST_CASE("verify: a keyless table's equal rows pair off one by one") {
  std::vector<RowHash> source{row("7", "x"), row("7", "x"), row("8", "y")};
  std::vector<RowHash> target{row("7", "x"), row("8", "y"), row("8", "y")};
  CHECK(keys_of(cdc::verify::diff_rows(source, target)) == std::vector<std::string>{"{\"id\":7}+s", "{\"id\":8}+t"});
}

TEST_CASE("verify: a difference is settled only when its source row held still") {
  std::vector<RowHash> before{row("1", "a"), row("2", "b"), row("3", "c")};
  std::vector<RowHash> after{row("1", "a"), row("2", "b2"), row("3", "c")};
  const auto changed = cdc::verify::changed_keys(before, after);
  CHECK(changed.size() == 1);
  CHECK(changed.contains("2"));
  CHECK(cdc::verify::all_settled({{"1", "{}", true, true, {}}, {"3", "{}", true, false, {}}}, changed));
  CHECK_FALSE(cdc::verify::all_settled({{"1", "{}", true, true, {}}, {"2", "{}", true, true, {}}}, changed));
}

TEST_CASE("verify: keys are written as the chunk lines write them and ordered by the collation") {
  cdc::plan::TableSplit split;
  split.key = {{"k", "varchar(10)", cdc::plan::KeyKind::text}, {"b", "varbinary(4)", cdc::plan::KeyKind::binary},
               {"n", "int(11)", cdc::plan::KeyKind::signed_integer}};
  split.columns = {{"k", "varchar(10)", 45}, {"b", "varbinary(4)", 63}, {"n", "int(11)", 0}, {"v", "text", 45}};
  const auto keys = cdc::verify::RowKeys::of(split);
  CHECK(keys.listed() == std::vector<std::string>{"k", "b", "n"});
  const std::vector<std::optional<std::string>> upper{"A", std::string("\x01", 1), "-5", "0123456789abcdef0123456789abcdef"};
  const std::vector<std::optional<std::string>> lower{"a", std::string("\x01", 1), "-5", "ffff"};
  auto a = keys.row(upper);
  auto b = keys.row(lower);
  REQUIRE(a.has_value());
  REQUIRE(b.has_value());
  CHECK(a->key_json == "{\"k\":\"A\",\"b\":\"AQ==\",\"n\":-5}");
  CHECK(a->hash == "0123456789abcdef0123456789abcdef");
  // utf8mb4_general_ci (45): 'A' and 'a' are one key, whose rows differ.
  CHECK(a->sort_key == b->sort_key);
  std::vector<RowHash> source{*a};
  std::vector<RowHash> target{*b};
  CHECK(keys_of(cdc::verify::diff_rows(source, target)) == std::vector<std::string>{a->key_json + "+s+t"});
  const std::vector<std::optional<std::string>> short_row{"a", "-5"};
  CHECK_FALSE(keys.row(short_row).has_value());
}

TEST_CASE("verify: a PostgreSQL row of a text key goes to the chunk whose range holds it in the source's order") {
  cdc::plan::TableSplit split;
  split.key = {{"k", "varchar(10)", cdc::plan::KeyKind::text}};
  split.columns = {{"k", "varchar(10)", 45}, {"v", "int(11)", 0}};
  const auto keys = cdc::verify::RowKeys::of(split, cdc::verify::Peer::postgres);
  // The sort key alone, reusing its scratch, is the one row() gives.
  cdc::verify::RowKeys::Scratch scratch;
  std::string sort_key;
  const auto key_of = [&](const char* k) {
    const std::vector<std::optional<std::string>> values{k, "0123456789abcdef0123456789abcdef"};
    REQUIRE(keys.sort_key(values, scratch, sort_key).has_value());
    CHECK(sort_key == keys.row(values).value().sort_key);
    return sort_key;
  };
  // Chunks [-, "b"), ["b", "M"), ["M", -) under utf8mb4_general_ci: PostgreSQL's C order would
  // put "B" and "Z" before "a".
  std::vector<cdc::order::KeyRange> ranges(3);
  ranges[0].end = key_of("b");
  ranges[1].start = ranges[0].end;
  ranges[1].end = key_of("M");
  ranges[2].start = ranges[1].end;
  using cdc::verify::PostgresTargetSide;
  CHECK(PostgresTargetSide::chunk_holding(ranges, key_of("A")) == 0);
  CHECK(PostgresTargetSide::chunk_holding(ranges, key_of("a")) == 0);
  CHECK(PostgresTargetSide::chunk_holding(ranges, key_of("B")) == 1);
  CHECK(PostgresTargetSide::chunk_holding(ranges, key_of("l")) == 1);
  CHECK(PostgresTargetSide::chunk_holding(ranges, key_of("m")) == 2);
  CHECK(PostgresTargetSide::chunk_holding(ranges, key_of("Z")) == 2);
  // Ranges that leave a gap hold nothing there.
  ranges[1].end = key_of("c");
  CHECK_FALSE(PostgresTargetSide::chunk_holding(ranges, key_of("d")).has_value());
  const std::vector<std::optional<std::string>> null_key{std::nullopt, "0123456789abcdef0123456789abcdef"};
  CHECK_FALSE(keys.sort_key(null_key, scratch, sort_key).has_value());
}

TEST_CASE("verify: against PostgreSQL, a table without a key names its rows by the row text") {
  cdc::plan::TableSplit split;
  split.columns = {{"v", "int(11)", 0}, {"f", "float", 0}, {"b", "blob", 63}};
  const auto keys = cdc::verify::RowKeys::of(split, cdc::verify::Peer::postgres);
  CHECK(keys.keyless());
  const std::vector<std::optional<std::string>> values{"5", "11e-1", "00ff", "0123456789abcdef0123456789abcdef"};
  CHECK(keys.row(values).value().key_json == "{\"v\":5,\"f\":11e-1,\"b\":\"00ff\"}");
}

TEST_CASE("verify: a table without a key names its rows by every column, NULL as null") {
  cdc::plan::TableSplit split;
  split.columns = {{"v", "int(11)", 0}, {"w", "varchar(10)", 45}, {"g", "point", 63}};
  const auto keys = cdc::verify::RowKeys::of(split);
  CHECK(keys.listed() == std::vector<std::string>{"v", "w", "g"});
  const std::vector<std::optional<std::string>> values{std::nullopt, "x", std::string("\x00\x01", 2), "00"};
  auto written = keys.row(values);
  REQUIRE(written.has_value());
  CHECK(written->key_json == "{\"v\":null,\"w\":\"x\",\"g\":\"AAE=\"}");
}

TEST_CASE("verify: equal digests decide at once, without waiting") {
  ScriptedSource source;
  ScriptedTarget target;
  source.digests = {digest_at(10, "77", "0-1-50")};
  target.digests = {digest_at(10, "77", "0-1-40")};
  auto verdict = cdc::verify::verify_chunk({}, source, target, {});
  REQUIRE(verdict.has_value());
  CHECK(verdict->status == Status::equal);
  CHECK(verdict->rounds == 0);
  CHECK(target.waits == 0);
  CHECK(verdict->source_position == "0-1-50");
  CHECK(verdict->target_position == "0-1-40");
}

TEST_CASE("verify: a target behind is compared again once it applied the source's position") {
  ScriptedSource source;
  ScriptedTarget target;
  source.digests = {digest_at(10, "77", "0-1-50")};
  target.digests = {digest_at(9, "70", "0-1-40"), digest_at(10, "77", "0-1-52")};
  target.reaches = "0-1-52";
  auto verdict = cdc::verify::verify_chunk({}, source, target, {});
  REQUIRE(verdict.has_value());
  CHECK(verdict->status == Status::equal);
  CHECK(target.waits == 1);
  CHECK(verdict->target_position == "0-1-52");
}

TEST_CASE("verify: a difference that holds still on the source in two rounds is reported with its keys") {
  ScriptedSource source;
  ScriptedTarget target;
  source.digests = {digest_at(3, "1", "0-1-50")};
  target.digests = {digest_at(3, "2", "0-1-50")};
  target.reaches = "0-1-99";
  const std::vector<RowHash> rows{row("1", "a"), row("2", "b"), row("3", "c")};
  source.rows_reads = {RowsRead{rows, at("0-1-55")}, RowsRead{rows, at("0-1-70")}, RowsRead{rows, at("0-1-85")}};
  const std::vector<RowHash> copied{row("1", "a"), row("2", "x"), row("4", "d")};
  target.rows_reads = {RowsRead{copied, at("0-1-60")}, RowsRead{copied, at("0-1-75")}};
  auto verdict = cdc::verify::verify_chunk({}, source, target, {});
  REQUIRE(verdict.has_value());
  CHECK(verdict->status == Status::differs);
  CHECK(verdict->rounds == 2);  // held still in two rounds in a row
  CHECK(keys_of(verdict->keys) == std::vector<std::string>{"{\"id\":2}+s+t", "{\"id\":3}+s", "{\"id\":4}+t"});
  CHECK(verdict->source_position == "0-1-70");  // the deciding round's
  CHECK(verdict->target_position == "0-1-75");
  CHECK(verdict->rows_source == 3);
  CHECK(verdict->rows_target == 3);
}

TEST_CASE("verify: a difference of rows in flight is compared again, then equal") {
  ScriptedSource source;
  ScriptedTarget target;
  source.digests = {digest_at(2, "1", "0-1-50")};
  target.digests = {digest_at(2, "2", "0-1-50")};
  target.reaches = "0-1-80";
  // Row 2 changes on the source between the two reads of round 1; the target, read between
  // them, has the newer row: equal to the source's second read, so equal.
  source.rows_reads = {RowsRead{{row("1", "a"), row("2", "b")}, at("0-1-55")},
                       RowsRead{{row("1", "a"), row("2", "b2")}, at("0-1-70")}};
  target.rows_reads = {RowsRead{{row("1", "a"), row("2", "b2")}, at("0-1-60")}};
  auto verdict = cdc::verify::verify_chunk({}, source, target, {});
  REQUIRE(verdict.has_value());
  CHECK(verdict->status == Status::equal);
  CHECK(verdict->rounds == 1);
}

TEST_CASE("verify: a chunk whose rows change in every round is unsettled, not differs") {
  ScriptedSource source;
  ScriptedTarget target;
  source.digests = {digest_at(1, "1", "0-1-50")};
  target.digests = {digest_at(1, "2", "0-1-50")};
  target.reaches = "0-1-999";
  std::deque<RowsRead> reads;
  for (int i = 0; i < 10; ++i) reads.push_back(RowsRead{{row("1", std::to_string(i))}, at(fmt_position(i))});
  source.rows_reads = reads;
  target.rows_reads = {RowsRead{{row("1", "old")}, at("0-1-999")}};
  cdc::verify::VerdictOptions options;
  options.rounds = 3;
  auto verdict = cdc::verify::verify_chunk({}, source, target, options);
  REQUIRE(verdict.has_value());
  CHECK(verdict->status == Status::unsettled);
  CHECK(verdict->rounds == 3);
  CHECK(verdict->keys.empty());
  CHECK(verdict->reason.find("--verify-rounds") != std::string::npos);
}

TEST_CASE("verify: a difference that holds still once only is not enough") {
  ScriptedSource source;
  ScriptedTarget target;
  source.digests = {digest_at(1, "1", "0-1-50")};
  target.digests = {digest_at(1, "2", "0-1-50")};
  target.reaches = "0-1-99";
  // Round 1: row 1 looks still on the source (changed and changed back); round 2: it is equal.
  source.rows_reads = {RowsRead{{row("1", "a")}, at("0-1-55")}, RowsRead{{row("1", "a")}, at("0-1-70")}};
  target.rows_reads = {RowsRead{{row("1", "b")}, at("0-1-60")}, RowsRead{{row("1", "a")}, at("0-1-75")}};
  auto verdict = cdc::verify::verify_chunk({}, source, target, {});
  REQUIRE(verdict.has_value());
  CHECK(verdict->status == Status::equal);
  CHECK(verdict->rounds == 2);
}

TEST_CASE("verify: a target that does not reach the source's position in time leaves the chunk unsettled") {
  ScriptedSource source;
  ScriptedTarget target;
  source.digests = {digest_at(3, "1", "0-1-50")};
  target.digests = {digest_at(2, "2", "0-1-40")};
  auto verdict = cdc::verify::verify_chunk({}, source, target, {});
  REQUIRE(verdict.has_value());
  CHECK(verdict->status == Status::unsettled);
  CHECK(verdict->reason.find("0-1-50") != std::string::npos);
  CHECK(verdict->rows_source == 3);  // the digests' counts, as on every verify line
  CHECK(verdict->rows_target == 2);
  SUBCASE("positions of another form are an error") {
    ScriptedTarget other;
    other.digests = {digest_at(1, "2", "binlog.000001:400")};
    auto refused = cdc::verify::verify_chunk({}, source, other, {});
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == cdc::Errc::corrupt_input);
  }
}

TEST_CASE("verify: the verify line lists up to --verify-max-keys keys and counts them all") {
  cdc::records::Chunk chunk;
  chunk.db = "shop";
  chunk.table = "orders";
  chunk.index = 1;
  chunk.count = 3;
  chunk.start = std::vector<std::string>{"100"};
  cdc::verify::Verdict verdict;
  verdict.status = Status::differs;
  verdict.rows_source = 5;
  verdict.rows_target = 4;
  verdict.source_position = "0-1-5";
  verdict.target_position = "0-1-6";
  verdict.rounds = 1;
  verdict.keys = {{"1", "{\"id\":101}", true, false, {"101"}}, {"2", "{\"id\":102}", true, true, {"102"}}};
  cdc::ndjson::Writer out;
  cdc::verify::write_verify_line(chunk, verdict, 1, out);
  CHECK(out.buffered() ==
        "{\"op\":\"verify\",\"v\":1,\"db\":\"shop\",\"table\":\"orders\",\"index\":1,\"count\":3,\"start\":[100],"
        "\"end\":null,\"status\":\"differs\",\"rows_source\":5,\"rows_target\":4,\"source_position\":\"0-1-5\","
        "\"target_position\":\"0-1-6\",\"rounds\":1,\"keys\":[{\"key\":{\"id\":101},\"source\":true,"
        "\"target\":false}],\"keys_total\":2}\n");
  out.clear();
  cdc::verify::VerifySummary summary;
  summary.tables = 1;
  summary.chunks = 3;
  summary.equal = 2;
  summary.differs = 1;
  summary.keys_total = 2;
  cdc::verify::write_summary_line(summary, out);
  CHECK(out.buffered() ==
        "{\"op\":\"verify_summary\",\"v\":1,\"tables\":1,\"chunks\":3,\"equal\":2,\"differs\":1,\"unsettled\":0,"
        "\"keys_total\":2,\"seconds\":0}\n");
  CHECK(cdc::verify::exit_code(summary) == 1);
  summary.differs = 0;
  summary.unsettled = 1;
  CHECK(cdc::verify::exit_code(summary) == 75);
  summary.unsettled = 0;
  CHECK(cdc::verify::exit_code(summary) == 0);
}

TEST_CASE("verify: rows asked for again by their keys") {
  cdc::plan::TableSplit split;
  split.key = {{"id", "int(11)", cdc::plan::KeyKind::signed_integer}};
  split.columns = {{"id", "int(11)", 0}};
  const auto single = cdc::verify::RowKeys::of(split);
  const std::vector<KeyDifference> two{{"a", "{}", true, false, {"5"}}, {"b", "{}", false, true, {"-7"}}};
  CHECK(single.only_sql(two).value() == "(`id` IN (5,-7))");
  CHECK(single.only_sql({}).value().empty());
  split.key = {{"k", "varchar(10)", cdc::plan::KeyKind::text}, {"n", "int(11)", cdc::plan::KeyKind::signed_integer}};
  const auto composite = cdc::verify::RowKeys::of(split);
  const std::vector<KeyDifference> pair{{"a", "{}", true, true, {"x", "1"}}, {"b", "{}", true, true, {"y", "2"}}};
  CHECK(composite.only_sql(pair).value() == "((`k` = _utf8mb4 X'78' AND `n` = 1) OR (`k` = _utf8mb4 X'79' AND `n` = 2))");
  split.key.clear();
  CHECK(cdc::verify::RowKeys::of(split).only_sql(pair).value().empty());
}

TEST_CASE("verify: a round again compares only the rows that differed, and finds the one that stays") {
  ScriptedSource source;
  ScriptedTarget target;
  source.digests = {digest_at(3, "1", "0-1-50")};
  target.digests = {digest_at(3, "2", "0-1-50")};
  target.reaches = "0-1-99";
  // Round 1: row 1 differs for good, row 2 was in flight (the target has the source's second
  // read of it). Round 2, row 1 only: it still differs and held still.
  source.rows_reads = {RowsRead{{row("1", "a"), row("2", "b"), row("3", "c")}, at("0-1-55")},
                       RowsRead{{row("1", "a"), row("2", "b2"), row("3", "c")}, at("0-1-70")},
                       RowsRead{{row("1", "a"), row("2", "b2"), row("3", "c")}, at("0-1-85")},
                       RowsRead{{row("1", "a"), row("2", "b2"), row("3", "c")}, at("0-1-95")}};
  target.rows_reads = {RowsRead{{row("1", "z"), row("2", "b2"), row("3", "c")}, at("0-1-60")},
                       RowsRead{{row("1", "z"), row("2", "b2"), row("3", "c")}, at("0-1-75")},
                       RowsRead{{row("1", "z"), row("2", "b2"), row("3", "c")}, at("0-1-90")}};
  auto verdict = cdc::verify::verify_chunk({}, source, target, {});
  REQUIRE(verdict.has_value());
  CHECK(verdict->status == Status::differs);
  CHECK(verdict->rounds == 2);
  CHECK(keys_of(verdict->keys) == std::vector<std::string>{"{\"id\":1}+s+t"});
  CHECK(verdict->rows_source == 3);
}
