// cdc-merge's input checks: each a one-line error naming FILE:LINE and the fix, and the raw
// JSON scanner, positions and sizes it is built on.

#include <doctest/doctest.h>

#include "merge/positions.h"
#include "merge/run_merge.h"
#include "merge_support.h"
#include "ndjson/json_scan.h"

using merge_test::change;
using merge_test::ChunkSpec;
using merge_test::chunk_text;
using merge_test::run_merge;
using merge_test::span_end;
using merge_test::span_start;
using merge_test::spanned;
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
        "chunks0:1: unexpected op \"c\" in a chunk output (expected low, table, r, discard or high lines of cdc-snapshot)");
}

TEST_CASE("merge validation: malformed JSON in chunk outputs and deltas") {
  TempFiles files;
  const std::string text = chunk_text(one_chunk());
  CHECK(run_error(files, {"\n" + text.substr(0, 30) + "\n"}, "").find("chunks0:2: malformed JSON: ") == 0);
  const std::string bad_delta = change("c", "null", R"({"id":3,"v":"z"})", "0-1-11", "b", 1);
  CHECK(run_error(files, {text}, spanned(bad_delta + bad_delta.substr(0, 60) + "\n"))
            .find("deltas:3: torn or malformed line (") == 0);
  // An r line without its key object is caught on the output pass, when its chunk has changes.
  std::string cut = text;
  const std::size_t key = cut.find(R"("key":{"id":2},)");
  cut.erase(key, 15);
  const std::string deltas = spanned(change("c", "null", R"({"id":3,"v":"z"})", "0-1-11", "b", 1));
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
  CHECK(run_error(files, {text}, spanned(change("c", "null", R"({"v":"z"})", "0-1-11", "b", 1))) ==
        "deltas:2: t.a: the after image has no column \"id\" (a chunk key column): cdc-merge needs full row images "
        "(binlog_row_image=FULL) with column names (binlog_row_metadata=FULL)");
  ChunkSpec c = one_chunk();
  c.identity = R"(["id","u"])";
  CHECK(run_error(files, {chunk_text(c)}, spanned(change("d", R"({"id":1,"v":"x"})", "null", "0-1-11", "b", 1))) ==
        "deltas:2: t.a: the before image has no column \"u\" (an identity column): cdc-merge needs full row images "
        "(binlog_row_image=FULL) with column names (binlog_row_metadata=FULL)");
}

TEST_CASE("merge validation: a change with a partial row image, wherever its \"partial\" member is") {
  TempFiles files;
  const std::string text = chunk_text(one_chunk());
  const std::string line = change("u", R"({"id":1,"v":"x"})", R"({"id":1,"v":"z"})", "0-1-11", "b", 1);
  const auto with = [&](std::string_view before, std::string_view member) {
    std::string edited = line;
    edited.insert(edited.find(before), member);
    return edited;
  };
  const std::string refused =
      "deltas:2: t.a: the change has a partial row image: cdc-merge needs full images (binlog_row_image=FULL)";
  // Where cdc-stream writes it (before "pos", the line keeps its exact form), after "table",
  // and after "pos" (the line is then parsed whole).
  CHECK(run_error(files, {text}, spanned(with(R"(,"pos":)", R"(,"partial":true)"))) == refused);
  CHECK(run_error(files, {text}, spanned(with(R"(,"key":)", R"(,"partial":true)"))) == refused);
  CHECK(run_error(files, {text}, spanned(with(R"(,"server_id":)", R"(,"partial":true)"))) == refused);
  // false is a full image.
  cdc::merge::Options options;
  options.inputs = {files.write("chunks", text)};
  options.deltas = files.write("deltas", spanned(with(R"(,"pos":)", R"(,"partial":false)")));
  const auto outcome = run_merge(files, options);
  REQUIRE_MESSAGE(outcome.result.has_value(), outcome.message());
  CHECK(outcome.out.find(R"("after":{"id":1,"v":"z"},"ts_ms":5000})") != std::string::npos);
}

TEST_CASE("merge validation: DDL on a merged table during the snapshot") {
  TempFiles files;
  const std::string text = chunk_text(one_chunk());
  const std::string ddl =
      R"({"op":"ddl","v":1,"db":"t","sql":"ALTER TABLE a ADD COLUMN w int","pos":{"file":"b","offset":7,"index":0,"gtid":"0-1-11"},"ts_ms":1})"
      "\n";
  CHECK(run_error(files, {text}, spanned("\n" + ddl)) ==
        "deltas:3: DDL on t.a during the snapshot (ALTER TABLE a ADD COLUMN w int): snapshot the table again");
  // Before the low, on another table, or after H*: ignored.
  std::string fine = ddl;
  fine.replace(fine.find("0-1-11"), 6, "0-1-9");
  fine += R"({"op":"ddl","v":1,"db":"t","sql":"ALTER TABLE b ADD COLUMN w int","pos":{"file":"b","offset":7,"index":0,"gtid":"0-1-11"},"ts_ms":1})"
          "\n";
  fine += R"({"op":"ddl","v":1,"db":"t","sql":"DROP TABLE a","pos":{"file":"b","offset":7,"index":0,"gtid":"0-1-13"},"ts_ms":1})"
          "\n";
  cdc::merge::Options options;
  options.inputs = {files.write("c", text)};
  options.deltas = files.write("d", spanned(fine));
  const auto outcome = run_merge(files, options);
  CHECK_MESSAGE(outcome.result.has_value(), outcome.message());
}

TEST_CASE("merge validation: chunks of one table read with different definitions") {
  // The table changed between two chunks' reads (the DDL before the lowest low, so the deltas
  // do not show it): their rows have other columns or types, and cannot make one snapshot.
  TempFiles files;
  const std::string first = chunk_text(one_chunk(0, 2), true);
  std::string second = chunk_text(one_chunk(1, 2), true);
  second.replace(second.find("varchar(8)"), 10, "varchar(9)");
  CHECK(run_error(files, {first, second}, "") ==
        "chunks1:1: t.a chunk 1/2 was read with another table definition than t.a chunk 0/2 at chunks0:1 (column v "
        "is varchar(8) there, varchar(9) here): the table changed during the snapshot; remove the chunk outputs and "
        "snapshot the table again");
  second = chunk_text(one_chunk(1, 2), true);
  second.replace(second.find(R"("key":["id"],"pos")"), 18, R"("key":null,"pos")");
  CHECK(run_error(files, {first, second}, "").find("(another primary key)") != std::string::npos);
  // A chunk output without a table line (an older cdc-snapshot's) is not compared.
  TempFiles more;
  cdc::merge::Options options;
  options.inputs = {more.write("c0", first), more.write("c1", chunk_text(one_chunk(1, 2)))};
  options.deltas = more.write("d", spanned(""));
  const auto outcome = run_merge(more, options);
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
  CHECK(*cdc::ndjson::find_member(line, "\"key\"") == R"({"id":"x\\"})");
  CHECK(*cdc::ndjson::find_member(line, "\"after\"") == R"({"id":"x\\","n":[1,{"a":"]"}]})");
  CHECK(*cdc::ndjson::find_member(line, "\"ts_ms\"") == "5");
  CHECK_FALSE(cdc::ndjson::find_member(line, "\"nope\"").has_value());
  CHECK(*cdc::ndjson::find_member(R"({ "a" : 1 , "b" : "x" })", "\"b\"") == R"("x")");
  for (const char* broken : {R"({"a":)", R"({"a":"x)", R"({"a":{"b":1)", R"({"a" 1})", R"([1])", ""}) {
    CAPTURE(broken);
    CHECK_FALSE(cdc::ndjson::find_member(broken, "\"a\"").has_value());
  }
}

TEST_CASE("merge: the raw JSON scanner skips nested values wherever they fall in its 16-byte steps") {
  const std::string nested = R"([{"a":[1,2,{"b":"}]{[\"x"}],"d":-3.5e2},{"c":{}},[[],[null]]])";
  for (std::size_t shift = 0; shift < 40; ++shift) {
    CAPTURE(shift);
    const std::string line = R"({"pad":")" + std::string(shift, 'x') + R"(","n":1234567890123,"v":)" + nested +
                             R"(,"w":true})";
    CHECK(*cdc::ndjson::find_member(line, "\"n\"") == "1234567890123");
    CHECK(*cdc::ndjson::find_member(line, "\"v\"") == nested);
    CHECK(*cdc::ndjson::find_member(line, "\"w\"") == "true");
    // Cut anywhere inside the nested value, nothing after it is found.
    const std::size_t v = line.find(nested);
    for (std::size_t cut = v; cut < v + nested.size(); ++cut)
      CHECK_FALSE(cdc::ndjson::find_member(std::string_view(line).substr(0, cut), "\"w\"").has_value());
  }
  // A number or literal ends at a separator, a bracket or a space; a quote, an opening bracket
  // or a colon cannot follow one.
  CHECK(*cdc::ndjson::find_member(R"({"a":12 ,"b":true})", "\"b\"") == "true");
  for (const char* broken : {R"({"a":12"b"})", R"({"a":tru[e]})", R"({"a":1{}})", R"({"a":nu:ll})"}) {
    CAPTURE(broken);
    CHECK_FALSE(cdc::ndjson::find_member(broken, "\"a\"").has_value());
  }
}

TEST_CASE("merge: find_last finds a needle's last occurrence as rfind does, wherever it falls in 16-byte steps") {
  const std::string needle = R"("pos":{)";
  for (std::size_t size = 0; size < 70; ++size) {
    for (std::size_t at = 0; at <= size + 1; ++at) {
      // Quotes everywhere (candidates for the first byte), the needle at `at` when it fits, a
      // near miss after it, and the needle again after that (two in one 16-byte step).
      std::string text(size, '"');
      for (std::size_t i = 1; i < size; i += 3) text[i] = 'p';
      if (at + needle.size() <= size) text.replace(at, needle.size(), needle);
      if (at + needle.size() + 7 <= size) text.replace(at + needle.size(), 7, R"("pos":x)");
      if (at + 2 * needle.size() + 7 <= size) text.replace(at + needle.size() + 7, needle.size(), needle);
      CAPTURE(text);
      CHECK(cdc::ndjson::find_last(text, needle) == std::string_view(text).rfind(needle));
    }
  }
  CHECK(cdc::ndjson::find_last(std::string(40, 'x') + "y" + std::string(20, 'x'), "y") == 40);
  CHECK(cdc::ndjson::find_last("", "x") == std::string_view::npos);
  CHECK(cdc::ndjson::find_last("abc", "abcd") == std::string_view::npos);
}

TEST_CASE("merge: events after a watermark in the three position forms") {
  using cdc::gtid::Position;
  cdc::merge::EventGtidCache gtids;
  const auto mariadb = *Position::parse("0-1-10,1-2-5");
  REQUIRE(gtids.set(Position::Kind::mariadb_gtids, "0-1-10"));
  CHECK_FALSE(cdc::merge::is_after({.file = "b", .offset = 1, .gtid = "0-1-10"}, gtids, mariadb));
  REQUIRE(gtids.set(Position::Kind::mariadb_gtids, "0-2-11"));
  CHECK(cdc::merge::is_after({.file = "b", .offset = 1, .gtid = "0-2-11"}, gtids, mariadb));
  REQUIRE(gtids.set(Position::Kind::mariadb_gtids, "3-1-1"));
  CHECK(cdc::merge::is_after({.file = "b", .offset = 1, .gtid = "3-1-1"}, gtids, mariadb));
  CHECK_FALSE(gtids.set(Position::Kind::mariadb_gtids, "").has_value());
  const auto mysql = *Position::parse("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-10:12");
  REQUIRE(gtids.set(Position::Kind::mysql_gtids, "3e11fa47-71ca-11e1-9e33-c80aa9429562:11"));
  CHECK(cdc::merge::is_after({}, gtids, mysql));
  REQUIRE(gtids.set(Position::Kind::mysql_gtids, "3e11fa47-71ca-11e1-9e33-c80aa9429562:12"));
  CHECK_FALSE(cdc::merge::is_after({}, gtids, mysql));
  const auto file = *Position::parse("binlog.000009:400");
  CHECK(cdc::merge::is_after({.file = "binlog.000009", .offset = 400, .gtid = ""}, gtids, file));
  CHECK_FALSE(cdc::merge::is_after({.file = "binlog.000009", .offset = 399, .gtid = ""}, gtids, file));
  CHECK(cdc::merge::is_after({.file = "binlog.000010", .offset = 4, .gtid = ""}, gtids, file));
  CHECK(cdc::merge::is_after({.file = "binlog.1000000", .offset = 4, .gtid = ""}, gtids, file));
  CHECK_FALSE(cdc::merge::is_after({.file = "binlog.000008", .offset = 9999, .gtid = ""}, gtids, file));
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
  retried.deltas = files.write("deltas", span_start("0-1-10") + span_end("0-1-12", "binlog.000001", 1150));
  const auto with_discard = run_merge(files, retried);
  REQUIRE_MESSAGE(with_discard.result.has_value(), with_discard.message());
  cdc::merge::Options clean;
  clean.inputs.push_back(files.write("clean", whole));
  clean.deltas = files.write("deltas", span_start("0-1-10") + span_end("0-1-12", "binlog.000001", 1150));
  const auto without = run_merge(files, clean);
  REQUIRE(without.result.has_value());
  CHECK(merge_test::without_run_time(with_discard.out) == merge_test::without_run_time(without.out));
  CHECK(merge_test::row_lines(with_discard.out).size() == 2);
  CHECK(with_discard.out.find("stale") == std::string::npos);

  // A discard line must name the open chunk, and needs one.
  CHECK(run_error(files, {discard + whole}, span_start("0-1-10") + span_end("0-1-12", "binlog.000001", 1150)) ==
        "chunks0:1: discard line without its chunk's low line: give whole cdc-snapshot outputs");
  ChunkSpec other = one_chunk(1, 2);
  std::string open_other = chunk_text(other);
  open_other.erase(open_other.rfind("{\"op\":\"high\""));
  CHECK(run_error(files, {open_other + discard}, span_start("0-1-10") + span_end("0-1-12", "binlog.000001", 1150)) ==
        "chunks0:4: discard line that does not name t.a chunk 1/2, the chunk open since line 1: the input mixes "
        "chunks; give each chunk's lines together, as cdc-snapshot writes them");
}

// ---- deltas that must prove they cover the span (issue 11) ------------------------------------

namespace {

const std::string kRerun = "rerun cdc-stream --from 0-1-10 --until 0-1-12 to produce the deltas";

// A transaction of one_chunk()'s table: an insert of id, then its commit line.
std::string transaction(int id, int seq, std::uint64_t offset, const std::string& table = "a") {
  const std::string gtid = fmt::format("0-1-{}", seq);
  return change("c", "null", fmt::format(R"({{"id":{},"v":"n"}})", id), gtid, "binlog.000001", offset, 5000, "t",
                table) +
         merge_test::commit(gtid, gtid, "binlog.000001", offset + 50);
}

// The changes of a real sync from the lowest low (0-1-10) to H* (0-1-12).
std::string whole_span() {
  return span_start("0-1-10") + transaction(3, 11, 1000) + transaction(4, 12, 1100) +
         span_end("0-1-12", "binlog.000001", 1150);
}

}  // namespace

TEST_CASE("merge validation: deltas that cover the span are merged") {
  TempFiles files;
  cdc::merge::Options options;
  options.inputs = {files.write("c", chunk_text(one_chunk()))};
  options.deltas = files.write("d", whole_span());
  const auto outcome = run_merge(files, options);
  REQUIRE_MESSAGE(outcome.result.has_value(), outcome.message());
  CHECK(outcome.result->changes_applied == 2);
  // An empty span (every chunk read at one position) still has its two lines, and needs them.
  ChunkSpec still = one_chunk();
  still.high = still.low;
  options.inputs = {files.write("c", chunk_text(still))};
  options.deltas = files.write("d", span_start("0-1-10") + span_end("0-1-10", "binlog.000001", 900));
  const auto empty_span = run_merge(files, options);
  REQUIRE_MESSAGE(empty_span.result.has_value(), empty_span.message());
  CHECK(run_error(files, {chunk_text(still)}, "") ==
        "deltas: empty: the deltas need the span_start and span_end lines of a bounded cdc-stream; rerun cdc-stream "
        "--from 0-1-10 --until 0-1-10 to produce the deltas");
}

TEST_CASE("merge validation: deltas cut before H* are refused") {
  TempFiles files;
  const std::string text = chunk_text(one_chunk());
  // Cut after the first transaction, on a whole line: no span_end.
  const std::string whole = whole_span();
  const std::string first_half = span_start("0-1-10") + transaction(3, 11, 1000);
  CHECK(run_error(files, {text}, first_half) ==
        "deltas:3: the deltas end without their span_end line (the last pos is binlog.000001:1050, line 3): "
        "cdc-stream stopped before --until, or the file was cut; " + kRerun);
  // A span_end short of H*.
  CHECK(run_error(files, {text}, first_half + span_end("0-1-11", "binlog.000001", 1050)) ==
        "deltas:4: the deltas end at 0-1-11 (span_end), before H* = 0-1-12 (the highest high watermark): the changes "
        "up to H* are missing; " + kRerun);
  // Short of --until.
  cdc::merge::Options options;
  options.inputs = {files.write("c", text)};
  options.deltas = files.write("d", whole);
  options.until = "0-1-13";
  const auto outcome = run_merge(files, options);
  REQUIRE_FALSE(outcome.result.has_value());
  CHECK(outcome.result.error().code == cdc::Errc::corrupt_input);
  CHECK_MESSAGE(outcome.message().find("/d:6: the deltas end at 0-1-12 (span_end), before H* = 0-1-13 (--until)") !=
                    std::string::npos,
                outcome.message());
}

TEST_CASE("merge validation: torn lines are refused, last or not") {
  TempFiles files;
  const std::string text = chunk_text(one_chunk());
  const std::string whole = whole_span();
  // The last line without its newline, cut mid-line or whole.
  CHECK(run_error(files, {text}, whole.substr(0, whole.size() - 20)) ==
        "deltas:6: torn last line: it has no newline (the writer was interrupted mid-record, or the file was cut); " +
            kRerun);
  CHECK(run_error(files, {text}, whole.substr(0, whole.size() - 1)).find("deltas:6: torn last line") == 0);
  // A torn line in the middle, continued by the next line: the lost change is of another
  // table (read without parsing) or of the merged one.
  const std::string other = change("c", "null", R"({"id":8,"v":"o"})", "0-1-11", "binlog.000001", 990, 5000, "t", "b");
  const std::string mine = transaction(3, 11, 1000);
  for (const std::string& torn : {other.substr(0, 70), mine.substr(0, 70)}) {
    CAPTURE(torn);
    CHECK(run_error(files, {text}, span_start("0-1-10") + torn + mine + transaction(4, 12, 1100) +
                                       span_end("0-1-12", "binlog.000001", 1150))
              .find("deltas:2: torn or malformed line (") == 0);
  }
  // Cut mid-line, followed by a newline.
  CHECK(run_error(files, {text}, span_start("0-1-10") + other.substr(0, 60) + "\n" + mine + transaction(4, 12, 1100) +
                                     span_end("0-1-12", "binlog.000001", 1150))
            .find("deltas:2: torn or malformed line (") == 0);
}

TEST_CASE("merge validation: lines out of log order are refused") {
  TempFiles files;
  const std::string text = chunk_text(one_chunk());
  // Two transactions swapped: 0-1-12 before 0-1-11.
  CHECK(run_error(files, {text}, span_start("0-1-10") + transaction(4, 12, 1100) + transaction(3, 11, 1000) +
                                     span_end("0-1-12", "binlog.000001", 1150)) ==
        "deltas:4: out of log order: pos binlog.000001:1000 comes after binlog.000001:1150 (line 3): transactions "
        "are swapped, or the deltas were pieced together; " + kRerun);
  // The same for lines of another table, which are not parsed.
  const auto other = [](int seq, std::uint64_t offset) {
    return change("c", "null", R"({"id":8})", fmt::format("0-1-{}", seq), "binlog.000001", offset, 5000, "t", "b");
  };
  CHECK(run_error(files, {text}, span_start("0-1-10") + other(12, 1100) + other(11, 1000) +
                                     span_end("0-1-12", "binlog.000001", 1150))
            .find("deltas:3: out of log order: pos binlog.000001:1000 comes after binlog.000001:1100 (line 2)") == 0);
  // A later file is a longer name or a larger one of equal length.
  CHECK(run_error(files, {text}, span_start("0-1-10") + other(11, 4) +
                                     change("c", "null", R"({"id":8})", "0-1-11", "binlog.000010", 4, 5000, "t", "b") +
                                     change("c", "null", R"({"id":8})", "0-1-12", "binlog.000009", 9, 5000, "t", "b") +
                                     span_end("0-1-12"))
            .find("deltas:4: out of log order: pos binlog.000009:9 comes after binlog.000010:4 (line 3)") == 0);
  // MariaDB GTIDs of one domain go up, even where the binlog coordinates say nothing.
  const auto at_one_place = [](int seq) {
    return change("c", "null", R"({"id":8})", fmt::format("0-1-{}", seq), "b", 1, 5000, "t", "b");
  };
  CHECK(run_error(files, {text}, span_start("0-1-10") + at_one_place(12) + at_one_place(11) + span_end("0-1-12")) ==
        "deltas:3: out of log order: GTID 0-1-11 comes after 0-1-12 (line 2) in domain 0: transactions are swapped, "
        "or the deltas were pieced together; " + kRerun);
  // Other domains have their own sequence.
  cdc::merge::Options options;
  options.inputs = {files.write("c", text)};
  options.deltas = files.write("d", span_start("0-1-10") + at_one_place(12) +
                                        change("c", "null", R"({"id":8})", "1-1-3", "b", 1, 5000, "t", "b") +
                                        span_end("0-1-12"));
  const auto domains = run_merge(files, options);
  CHECK_MESSAGE(domains.result.has_value(), domains.message());
}

TEST_CASE("merge validation: lines of another kind are refused") {
  TempFiles files;
  const std::string text = chunk_text(one_chunk());
  // A plan passed as --deltas.
  CHECK(run_error(files, {text},
                  R"({"op":"chunk","v":1,"db":"t","table":"a","index":0,"count":1,"key":["id"],"start":null,"end":null})"
                  "\n") ==
        "deltas:1: op \"chunk\" is not a line of cdc-stream (a line of a cdc-plan plan): --deltas takes the output of "
        "cdc-stream --from FROM --until UNTIL; " + kRerun);
  // A chunk output, and a snapshot line inside the span.
  CHECK(run_error(files, {text}, text).find("deltas:1: op \"low\" is not a line of cdc-stream (a line of a "
                                            "cdc-snapshot chunk output or of a merged snapshot)") == 0);
  const std::string r_line = text.substr(text.find('\n') + 1, text.find('\n', text.find('\n') + 1) - text.find('\n'));
  CHECK(run_error(files, {text}, spanned(r_line)).find("deltas:2: op \"r\" is not a line of cdc-stream") == 0);
  // Spaced differently, so read by parsing.
  CHECK(run_error(files, {text}, spanned(R"({ "op" : "high", "v" : 1 })" "\n"))
            .find("deltas:2: op \"high\" is not a line of cdc-stream") == 0);
}

TEST_CASE("merge validation: the span lines are required and must enclose the span") {
  TempFiles files;
  const std::string text = chunk_text(one_chunk());
  const std::string changes = transaction(3, 11, 1000) + transaction(4, 12, 1100);
  // No span_start: an unbounded stream, or cut at the start.
  CHECK(run_error(files, {text}, changes + span_end("0-1-12", "binlog.000001", 1150)) ==
        "deltas:1: the deltas do not start with a span_start line (the first line is op \"c\"): they are not the "
        "whole output of a bounded cdc-stream --until; " + kRerun);
  CHECK(run_error(files, {text}, changes).find("deltas:1: the deltas do not start with a span_start line") == 0);
  // No span_end.
  CHECK(run_error(files, {text}, span_start("0-1-10") + changes)
            .find("deltas:5: the deltas end without their span_end line (the last pos is binlog.000001:1150, line "
                  "5)") == 0);
  // Starting after the lowest low.
  ChunkSpec later = one_chunk(1, 2);
  later.low = "0-1-11";
  later.start = "[100]";
  ChunkSpec first = one_chunk(0, 2);
  first.end = "[100]";
  CHECK(run_error(files, {chunk_text(first), chunk_text(later)},
                  span_start("0-1-11") + transaction(4, 12, 1100) + span_end("0-1-12", "binlog.000001", 1150)) ==
        "deltas:1: the deltas start at 0-1-11 (span_start), after the low watermark 0-1-10 of t.a chunk 0/2 (the "
        "lowest low is 0-1-10): the changes between them are missing; " + kRerun);
  // Lines after span_end, and a second span_start: outputs put together.
  CHECK(run_error(files, {text}, whole_span() + transaction(5, 13, 1200))
            .find("deltas:7: op \"c\" after the span_end line (line 6): the deltas were appended to or pieced "
                  "together") == 0);
  CHECK(run_error(files, {text}, span_start("0-1-10") + span_start("0-1-10") + span_end("0-1-12"))
            .find("deltas:2: a second span_start line (the first is at line 1)") == 0);
}

TEST_CASE("merge validation: span lines in another position form than the watermarks") {
  TempFiles files;
  // GTID watermarks (their low lines at binlog.000001:4), deltas started at FILE:OFFSET: by the
  // lows' binlog coordinates.
  const std::string text = chunk_text(one_chunk());
  cdc::merge::Options options;
  options.inputs = {files.write("c", text)};
  options.deltas = files.write("d", span_start("binlog.000001:4") + span_end("0-1-12"));
  const auto by_file = run_merge(files, options);
  CHECK_MESSAGE(by_file.result.has_value(), by_file.message());
  CHECK(run_error(files, {text}, span_start("binlog.000001:5") + span_end("0-1-12"))
            .find("deltas:1: the deltas start at binlog.000001:5 (span_start), after the low watermark 0-1-10 of t.a "
                  "chunk 0/1 (binlog binlog.000001:4)") == 0);
  // FILE:OFFSET watermarks, deltas started at a GTID: no way to compare.
  ChunkSpec files_only = one_chunk();
  files_only.low = "binlog.000001:400";
  files_only.high = "binlog.000001:800";
  const std::string file_text = chunk_text(files_only);
  CHECK(run_error(files, {file_text}, span_start("0-1-10") + span_end("0-1-12", "binlog.000001", 900)) ==
        "deltas:1: the deltas start at 0-1-10 (span_start), a MariaDB GTID position, and the low watermark of t.a "
        "chunk 0/1 is binlog.000001:400, FILE:OFFSET: they cannot be compared, so the deltas are not shown to cover "
        "the chunks; rerun cdc-stream --from binlog.000001:400 --until binlog.000001:800 to produce the deltas");
  // FILE:OFFSET H*, deltas ending at a GTID position: by span_end's "pos".
  options.inputs = {files.write("c", file_text)};
  options.deltas = files.write("d", span_start("binlog.000001:400") + span_end("0-1-12", "binlog.000001", 800));
  const auto end_by_pos = run_merge(files, options);
  CHECK_MESSAGE(end_by_pos.result.has_value(), end_by_pos.message());
  CHECK(run_error(files, {file_text}, span_start("binlog.000001:400") + span_end("0-1-12", "binlog.000001", 799))
            .find("deltas:2: the deltas end at 0-1-12 (span_end, at binlog binlog.000001:799), before H* = "
                  "binlog.000001:800") == 0);
}

TEST_CASE("merge validation: --check-deltas checks the deltas and writes nothing") {
  TempFiles files;
  cdc::merge::Options options;
  options.inputs = {files.write("c", chunk_text(one_chunk()))};
  options.deltas = files.write("d", whole_span());
  options.check_deltas = true;
  const auto fine = run_merge(files, options);
  REQUIRE_MESSAGE(fine.result.has_value(), fine.message());
  CHECK(fine.out.empty());
  CHECK(fine.result->changes_applied == 0);
  // A schema change of a merged table is the merge's to refuse: the deltas still cover the span.
  const std::string ddl =
      R"({"op":"ddl","v":1,"db":"t","sql":"ALTER TABLE a ADD COLUMN w int","pos":{"file":"binlog.000001","offset":990,"index":0,"gtid":"0-1-11"},"ts_ms":1})"
      "\n";
  options.deltas = files.write("d", span_start("0-1-10") + ddl + span_end("0-1-12"));
  const auto with_ddl = run_merge(files, options);
  CHECK_MESSAGE(with_ddl.result.has_value(), with_ddl.message());
  options.check_deltas = false;
  CHECK(run_merge(files, options).message().find("DDL on t.a during the snapshot") != std::string::npos);
  options.check_deltas = true;
  options.deltas = files.write("d", span_start("0-1-10") + transaction(3, 11, 1000));
  const auto cut = run_merge(files, options);
  REQUIRE_FALSE(cut.result.has_value());
  CHECK(cut.result.error().code == cdc::Errc::corrupt_input);
  CHECK(cut.message().find("the deltas end without their span_end line") != std::string::npos);
  options.output = files.dir() + "/x";
  CHECK(run_merge(files, options).result.error().code == cdc::Errc::usage);
}

TEST_CASE("merge validation: --span takes no --output") {
  TempFiles files;
  cdc::merge::Options options;
  options.inputs = {files.write("c", chunk_text(one_chunk()))};
  options.span = true;
  options.output = files.dir() + "/span.txt";
  const auto outcome = run_merge(files, options);
  REQUIRE_FALSE(outcome.result.has_value());
  CHECK(outcome.result.error().code == cdc::Errc::usage);
  CHECK(outcome.message().find("--output names the file for the merged snapshot, and --span writes none") == 0);
  CHECK_FALSE(std::filesystem::exists(*options.output));
}
