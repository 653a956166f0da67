// cdc-merge's input checks: each a one-line error naming FILE:LINE and the fix, and the raw
// JSON scanner, positions and sizes it is built on.

#include <doctest/doctest.h>

#include "merge/json_scan.h"
#include "merge/positions.h"
#include "merge/run_merge.h"
#include "merge_support.h"

using merge_test::change;
using merge_test::ChunkSpec;
using merge_test::chunk_text;
using merge_test::run_merge;
using merge_test::TempFiles;

namespace {

ChunkSpec one_chunk(int index = 0, int count = 1) {
  ChunkSpec c;
  c.index = index;
  c.count = count;
  c.low = "0-1-10";
  c.high = "0-1-12";
  c.rows = {R"({"id":1}|{"id":1,"v":"x"})", R"({"id":2}|{"id":2,"v":"y"})"};
  return c;
}

std::string run_error(const TempFiles& files, const std::vector<std::string>& chunk_texts, const std::string& deltas,
                      cdc::Errc expected = cdc::Errc::corrupt_input) {
  cdc::merge::Options options;
  for (std::size_t i = 0; i < chunk_texts.size(); ++i)
    options.inputs.push_back(files.write(fmt::format("chunks{}", i), chunk_texts[i]));
  options.deltas = files.write("deltas", deltas);
  const auto outcome = run_merge(files, options);
  REQUIRE_FALSE(outcome.result.has_value());
  CHECK(outcome.result.error().code == expected);
  // Paths differ per run: report from the file name on.
  std::string message = outcome.result.error().message;
  const std::string dir = files.dir() + "/";
  for (std::size_t at; (at = message.find(dir)) != std::string::npos;) message.erase(at, dir.size());
  return message;
}

}  // namespace

TEST_CASE("merge validation: a chunk without its high line") {
  TempFiles files;
  std::string text = chunk_text(one_chunk());
  text.erase(text.rfind("{\"op\":\"high\""));
  CHECK(run_error(files, {text}, "") ==
        "chunks0:1: t.a chunk 0/1 has no high line (the input ends before it): it was not finished; rerun "
        "cdc-snapshot for it");
  // Followed by another chunk's low.
  std::string two = text + chunk_text(one_chunk(1, 2));
  CHECK(run_error(files, {two}, "").find("chunks0:1: t.a chunk 0/1 has no high line (line 4 starts another chunk)") == 0);
}

TEST_CASE("merge validation: lines out of order") {
  TempFiles files;
  const std::string text = chunk_text(one_chunk());
  const std::size_t second = text.find('\n') + 1;
  // An r line before the low.
  CHECK(run_error(files, {text.substr(second)}, "") ==
        "chunks0:1: op:\"r\" line outside a chunk (no low line before it): give whole cdc-snapshot outputs");
  // The high of another chunk.
  ChunkSpec other = one_chunk(1, 2);
  ChunkSpec first = one_chunk(0, 2);
  std::string mixed = chunk_text(first);
  mixed.erase(mixed.rfind("{\"op\":\"high\""));
  mixed += merge_test::high_line(other);
  CHECK(run_error(files, {mixed}, "") ==
        "chunks0:4: high line of t.a chunk 1 while t.a chunk 0/2 is open (its low is at line 1): the input mixes "
        "chunks; give each chunk's lines together, as cdc-snapshot writes them");
  // A high without a low.
  CHECK(run_error(files, {merge_test::high_line(first)}, "") ==
        "chunks0:1: high line without its low line: give whole cdc-snapshot outputs");
  // Something else.
  CHECK(run_error(files, {R"({"op":"c","v":1})"}, "") ==
        "chunks0:1: unexpected op \"c\" in a chunk output (expected low, r, discard or high lines of cdc-snapshot)");
}

TEST_CASE("merge validation: malformed JSON in chunk outputs and deltas") {
  TempFiles files;
  const std::string text = chunk_text(one_chunk());
  CHECK(run_error(files, {"\n" + text.substr(0, 30) + "\n"}, "").find("chunks0:2: malformed JSON: ") == 0);
  const std::string bad_delta = change("c", "null", R"({"id":3,"v":"z"})", "0-1-11", "b", 1);
  CHECK(run_error(files, {text}, bad_delta + bad_delta.substr(0, 60) + "\n").find("deltas:2: malformed JSON: ") == 0);
  // An r line without its key object is caught on the output pass, when its chunk has changes.
  std::string cut = text;
  const std::size_t key = cut.find(R"("key":{"id":2},)");
  cut.erase(key, 15);
  const std::string deltas = change("c", "null", R"({"id":3,"v":"z"})", "0-1-11", "b", 1);
  CHECK(run_error(files, {cut}, deltas).find("chunks0:3: an op:\"r\" line of t.a without its \"key\" object") == 0);
}

TEST_CASE("merge validation: a chunk given twice") {
  TempFiles files;
  const std::string text = chunk_text(one_chunk());
  CHECK(run_error(files, {text, text}, "") == "chunks1:1: t.a chunk 0/1 is also at chunks0:1: give each chunk once");
}

TEST_CASE("merge validation: missing chunks are named") {
  TempFiles files;
  CHECK(run_error(files, {chunk_text(one_chunk(1, 4)), chunk_text(one_chunk(3, 4))}, "") ==
        "t.a: chunks 0, 2 of 4 missing: give every chunk of the table, or --subset to merge only the given ones");
}

TEST_CASE("merge validation: a change whose image lacks a key or identity column") {
  TempFiles files;
  const std::string text = chunk_text(one_chunk());
  CHECK(run_error(files, {text}, change("c", "null", R"({"v":"z"})", "0-1-11", "b", 1)) ==
        "deltas:1: t.a: the after image has no column \"id\" (a chunk key column): cdc-merge needs full row images "
        "(binlog_row_image=FULL) with column names (binlog_row_metadata=FULL)");
  ChunkSpec c = one_chunk();
  c.identity = R"(["id","u"])";
  CHECK(run_error(files, {chunk_text(c)}, change("d", R"({"id":1,"v":"x"})", "null", "0-1-11", "b", 1)) ==
        "deltas:1: t.a: the before image has no column \"u\" (an identity column): cdc-merge needs full row images "
        "(binlog_row_image=FULL) with column names (binlog_row_metadata=FULL)");
}

TEST_CASE("merge validation: DDL on a merged table during the snapshot") {
  TempFiles files;
  const std::string text = chunk_text(one_chunk());
  const std::string ddl =
      R"({"op":"ddl","v":1,"db":"t","sql":"ALTER TABLE a ADD COLUMN w int","pos":{"file":"b","offset":7,"index":0,"gtid":"0-1-11"},"ts_ms":1})"
      "\n";
  CHECK(run_error(files, {text}, "\n" + ddl) ==
        "deltas:2: DDL on t.a during the snapshot (ALTER TABLE a ADD COLUMN w int): snapshot the table again");
  // Before the low, on another table, or after H*: ignored.
  std::string fine = ddl;
  fine.replace(fine.find("0-1-11"), 6, "0-1-9");
  fine += R"({"op":"ddl","v":1,"db":"t","sql":"ALTER TABLE b ADD COLUMN w int","pos":{"file":"b","offset":7,"index":0,"gtid":"0-1-11"},"ts_ms":1})"
          "\n";
  fine += R"({"op":"ddl","v":1,"db":"t","sql":"DROP TABLE a","pos":{"file":"b","offset":7,"index":0,"gtid":"0-1-13"},"ts_ms":1})"
          "\n";
  cdc::merge::Options options;
  options.inputs = {files.write("c", text)};
  options.deltas = files.write("d", fine);
  const auto outcome = run_merge(files, options);
  CHECK_MESSAGE(outcome.result.has_value(), outcome.message());
}

TEST_CASE("merge validation: mixed position forms") {
  TempFiles files;
  ChunkSpec other = one_chunk(1, 2);
  other.low = "binlog.000001:400";
  other.high = "binlog.000001:800";
  CHECK(run_error(files, {chunk_text(one_chunk(0, 2)), chunk_text(other)}, "")
            .find("chunks1:1: t.a chunk 1/2 has FILE:OFFSET watermarks, but t.a chunk 0/2 at chunks0:1 has a "
                  "MariaDB GTID position") == 0);
}

TEST_CASE("merge validation: usage errors") {
  TempFiles files;
  cdc::merge::Options options;
  auto outcome = run_merge(files, options);
  REQUIRE_FALSE(outcome.result.has_value());
  CHECK(outcome.result.error().code == cdc::Errc::usage);
  options.inputs = {files.write("c", chunk_text(one_chunk()))};
  outcome = run_merge(files, options);
  REQUIRE_FALSE(outcome.result.has_value());
  CHECK(outcome.message().find("--deltas FILE is required") == 0);
  options.inputs = {"-"};
  options.deltas = "-";
  outcome = run_merge(files, options);
  REQUIRE_FALSE(outcome.result.has_value());
  CHECK(outcome.message() == "standard input (-) can be given only once");
  options.inputs = {files.dir() + "/nope"};
  options.deltas = "x";
  outcome = run_merge(files, options);
  REQUIRE_FALSE(outcome.result.has_value());
  CHECK(outcome.result.error().code == cdc::Errc::io);
}

TEST_CASE("merge: sizes for --memory-limit") {
  CHECK(*cdc::merge::parse_size("4096") == 4096);
  CHECK(*cdc::merge::parse_size("4K") == 4096);
  CHECK(*cdc::merge::parse_size("256M") == 256ULL << 20);
  CHECK(*cdc::merge::parse_size("2g") == 2ULL << 30);
  CHECK(*cdc::merge::parse_size("1GB") == 1ULL << 30);
  for (const char* junk : {"", "M", "12X", "1.5G", "-1", "4K4", "99999999999999999999"}) {
    CAPTURE(junk);
    CHECK_FALSE(cdc::merge::parse_size(junk).has_value());
  }
}

TEST_CASE("merge: the raw JSON scanner finds members and skips strings with escapes") {
  const std::string_view line =
      R"({"op":"r","v":1,"db":"a\"}b","table":"t","key":{"id":"x\\"},"before":null,"after":{"id":"x\\","n":[1,{"a":"]"}]},"ts_ms":5})";
  CHECK(*cdc::merge::find_member(line, "\"key\"") == R"({"id":"x\\"})");
  CHECK(*cdc::merge::find_member(line, "\"after\"") == R"({"id":"x\\","n":[1,{"a":"]"}]})");
  CHECK(*cdc::merge::find_member(line, "\"ts_ms\"") == "5");
  CHECK_FALSE(cdc::merge::find_member(line, "\"nope\"").has_value());
  CHECK(*cdc::merge::find_member(R"({ "a" : 1 , "b" : "x" })", "\"b\"") == R"("x")");
  for (const char* broken : {R"({"a":)", R"({"a":"x)", R"({"a":{"b":1)", R"({"a" 1})", R"([1])", ""}) {
    CAPTURE(broken);
    CHECK_FALSE(cdc::merge::find_member(broken, "\"a\"").has_value());
  }
}

TEST_CASE("merge: events after a watermark in the three position forms") {
  using cdc::gtid::Position;
  cdc::merge::EventGtidCache gtids;
  const auto mariadb = *Position::parse("0-1-10,1-2-5");
  REQUIRE(gtids.set(Position::Kind::mariadb_gtids, "0-1-10"));
  CHECK_FALSE(cdc::merge::is_after({"0-1-10", "b", 1}, gtids, mariadb));
  REQUIRE(gtids.set(Position::Kind::mariadb_gtids, "0-2-11"));
  CHECK(cdc::merge::is_after({"0-2-11", "b", 1}, gtids, mariadb));
  REQUIRE(gtids.set(Position::Kind::mariadb_gtids, "3-1-1"));
  CHECK(cdc::merge::is_after({"3-1-1", "b", 1}, gtids, mariadb));
  CHECK_FALSE(gtids.set(Position::Kind::mariadb_gtids, "").has_value());
  const auto mysql = *Position::parse("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-10:12");
  REQUIRE(gtids.set(Position::Kind::mysql_gtids, "3e11fa47-71ca-11e1-9e33-c80aa9429562:11"));
  CHECK(cdc::merge::is_after({}, gtids, mysql));
  REQUIRE(gtids.set(Position::Kind::mysql_gtids, "3e11fa47-71ca-11e1-9e33-c80aa9429562:12"));
  CHECK_FALSE(cdc::merge::is_after({}, gtids, mysql));
  const auto file = *Position::parse("binlog.000009:400");
  CHECK(cdc::merge::is_after({"", "binlog.000009", 400}, gtids, file));
  CHECK_FALSE(cdc::merge::is_after({"", "binlog.000009", 399}, gtids, file));
  CHECK(cdc::merge::is_after({"", "binlog.000010", 4}, gtids, file));
  CHECK(cdc::merge::is_after({"", "binlog.1000000", 4}, gtids, file));
  CHECK_FALSE(cdc::merge::is_after({"", "binlog.000008", 9999}, gtids, file));
}

TEST_CASE("merge: a chunk cdc-snapshot discarded and read again counts once, from its second read") {
  TempFiles files;
  // The first read: low, one row, then the connection was lost (rows that must not count,
  // and another low watermark); the discard line; then the whole chunk again.
  ChunkSpec first_try = one_chunk();
  first_try.low = "0-1-9";
  first_try.rows = {R"({"id":1}|{"id":1,"v":"stale"})"};
  std::string partial = chunk_text(first_try);
  partial.erase(partial.rfind("{\"op\":\"high\""));
  const std::string discard =
      R"({"op":"discard","v":1,"db":"t","table":"a","index":0,"count":1,"reason":"connection lost","ts_ms":1})"
      "\n";
  const std::string whole = chunk_text(one_chunk());
  cdc::merge::Options retried;
  retried.inputs.push_back(files.write("retried", partial + discard + whole));
  retried.deltas = files.write("deltas", "");
  const auto with_discard = run_merge(files, retried);
  REQUIRE_MESSAGE(with_discard.result.has_value(), with_discard.message());
  cdc::merge::Options clean;
  clean.inputs.push_back(files.write("clean", whole));
  clean.deltas = files.write("deltas", "");
  const auto without = run_merge(files, clean);
  REQUIRE(without.result.has_value());
  CHECK(merge_test::without_run_time(with_discard.out) == merge_test::without_run_time(without.out));
  CHECK(merge_test::row_lines(with_discard.out).size() == 2);
  CHECK(with_discard.out.find("stale") == std::string::npos);

  // A discard line must name the open chunk, and needs one.
  CHECK(run_error(files, {discard + whole}, "") ==
        "chunks0:1: discard line without its chunk's low line: give whole cdc-snapshot outputs");
  ChunkSpec other = one_chunk(1, 2);
  std::string open_other = chunk_text(other);
  open_other.erase(open_other.rfind("{\"op\":\"high\""));
  CHECK(run_error(files, {open_other + discard}, "") ==
        "chunks0:4: discard line that does not name t.a chunk 1/2, the chunk open since line 1: the input mixes "
        "chunks; give each chunk's lines together, as cdc-snapshot writes them");
}
