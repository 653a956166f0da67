// cdc-merge end to end on hand-written chunk outputs and cdc-stream lines: which change
// applies to which chunk, the three position forms, whole-row identity, composite and
// binary keys, --subset, --span, --until, spilling, and every validation error.

#include <doctest/doctest.h>
#include <sys/resource.h>

#include <random>
#include <set>
#include <thread>

#include "merge/deltas.h"
#include "merge_support.h"
#include "ndjson/writer.h"

using merge_test::change;
using merge_test::ChunkSpec;
using merge_test::chunk_text;
using merge_test::row_lines;
using merge_test::run_merge;
using merge_test::TempFiles;

namespace {

// The position forms: "after n transactions" and the n-th transaction's event position.
struct Form {
  const char* name;
  std::string (*after)(int n);
  std::string (*gtid)(int n);
  std::string earliest;  // before every watermark of the tests: the deltas' span_start
  std::string latest;    // after every one: their span_end
};
const char* const kUuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
std::uint64_t event_offset(int n) { return 1000 + 100 * static_cast<std::uint64_t>(n); }

const Form kForms[] = {
    {"MariaDB GTID", [](int n) { return fmt::format("0-1-{}", n); }, [](int n) { return fmt::format("0-1-{}", n); },
     merge_test::kEarliestMariadb, merge_test::kLatestMariadb},
    {"MySQL GTID set", [](int n) { return fmt::format("{}:1-{}", kUuid, n); },
     [](int n) { return fmt::format("{}:{}", kUuid, n); }, fmt::format("{}:1", kUuid),
     fmt::format("{}:1-1000000", kUuid)},
    {"FILE:OFFSET", [](int n) { return fmt::format("binlog.000001:{}", event_offset(n + 1)); },
     [](int) { return std::string(); }, "binlog.000001:4", "binlog.999999:4"},
};

std::string ev(const Form& form, const std::string& op, const std::string& before, const std::string& after, int n,
               std::uint64_t ts = 5000) {
  return change(op, before, after, form.gtid(n), "binlog.000001", event_offset(n), ts);
}

// Two chunks of t.a: [-inf, 10) read at 10, [10, +inf) read at 12; H* = 13.
struct Scenario {
  const Form* form;
  std::string chunk0;
  std::string chunk1;
  std::string deltas;  // the change lines
  // The deltas as cdc-stream --from --until writes them.
  [[nodiscard]] std::string covered() const { return merge_test::spanned(deltas, form->earliest, form->latest); }
};

// `described`: chunk 0's output has its table line (as cdc-snapshot writes it), chunk 1's not.
Scenario two_chunks(const Form& form, bool described = false) {
  ChunkSpec c0;
  c0.count = 2;
  c0.low = form.after(10);
  c0.high = form.after(12);
  c0.end = "[10]";
  c0.rows = {R"({"id":1}|{"id":1,"v":"x"})", R"({"id":5}|{"id":5,"v":"y"})"};
  ChunkSpec c1;
  c1.index = 1;
  c1.count = 2;
  c1.low = form.after(12);
  c1.high = form.after(13);
  c1.start = "[10]";
  c1.rows = {R"({"id":10}|{"id":10,"v":"z"})", R"({"id":11}|{"id":11,"v":"w2"})", R"({"id":12}|{"id":12,"v":"x"})"};
  std::string deltas;
  // 11: between the lows. Seen by chunk 1's SELECT, not by chunk 0's.
  deltas += ev(form, "u", R"({"id":11,"v":"w"})", R"({"id":11,"v":"w2"})", 11);
  deltas += ev(form, "u", R"({"id":1,"v":"x"})", R"({"id":12,"v":"x"})", 11);
  // 12: an insert into chunk 0's range that its SELECT did not see.
  deltas += ev(form, "c", "null", R"({"id":3,"v":"new"})", 12);
  // 13: after both lows.
  deltas += ev(form, "d", R"({"id":5,"v":"y"})", "null", 13);
  deltas += ev(form, "u", R"({"id":10,"v":"z"})", R"({"id":10,"v":"z2"})", 13);
  // 14: after H*.
  deltas += ev(form, "c", "null", R"({"id":7,"v":"late"})", 14);
  return Scenario{&form, chunk_text(c0, described), chunk_text(c1), deltas};
}

const std::vector<std::string> kTwoChunksRows = {
    R"({"op":"r","v":1,"db":"t","table":"a","key":{"id":3},"before":null,"after":{"id":3,"v":"new"},"ts_ms":5000})",
    R"({"op":"r","v":1,"db":"t","table":"a","key":{"id":10},"before":null,"after":{"id":10,"v":"z2"},"ts_ms":5000})",
    R"({"op":"r","v":1,"db":"t","table":"a","key":{"id":11},"before":null,"after":{"id":11,"v":"w2"},"ts_ms":1000})",
    R"({"op":"r","v":1,"db":"t","table":"a","key":{"id":12},"before":null,"after":{"id":12,"v":"x"},"ts_ms":1000})",
};

cdc::merge::Options options_for(const std::vector<std::string>& inputs, const std::string& deltas) {
  cdc::merge::Options options;
  options.inputs = inputs;
  options.deltas = deltas;
  return options;
}

}  // namespace

TEST_CASE("merge: the same scenario gives the same rows in every position form") {
  for (const Form& form : kForms) {
    CAPTURE(form.name);
    TempFiles files;
    const Scenario s = two_chunks(form);
    const auto outcome = run_merge(files, options_for({files.write("c0", s.chunk0), files.write("c1", s.chunk1)},
                                                      files.write("d", s.covered())));
    REQUIRE_MESSAGE(outcome.result.has_value(), outcome.message());
    CHECK(row_lines(outcome.out) == kTwoChunksRows);
    CHECK(outcome.result->changes_after_high == 1);
    CHECK(outcome.err.find("notice: 1 change after") != std::string::npos);
    const std::string expected_high =
        fmt::format(R"({{"op":"high","v":1,"position":"{}","file":"binlog.000001",)", form.after(13));
    CHECK(outcome.out.find(expected_high) != std::string::npos);
    CHECK(outcome.out.find(R"("chunks":2,"rows":4,"ts_ms":)") != std::string::npos);
  }
}

TEST_CASE("merge: an update moving a key between chunks applies only on the side whose low is before it") {
  // Covered in detail by the scenario: id 1 -> 12 at 11 leaves chunk 0 (low 10) but is not put
  // into chunk 1 (low 12, whose SELECT already had id 12). Here: the move after both lows.
  const Form& form = kForms[0];
  TempFiles files;
  Scenario s = two_chunks(form);
  // Before the last line, the change after H*: the deltas stay in log order.
  s.deltas.insert(s.deltas.rfind("{\"op\""), ev(form, "u", R"({"id":11,"v":"w2"})", R"({"id":4,"v":"moved"})", 13));
  const auto outcome = run_merge(files, options_for({files.write("c0", s.chunk0), files.write("c1", s.chunk1)},
                                                    files.write("d", s.covered())));
  REQUIRE_MESSAGE(outcome.result.has_value(), outcome.message());
  const auto rows = row_lines(outcome.out);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].find(R"("key":{"id":3})") != std::string::npos);
  CHECK(rows[1].find(R"("key":{"id":4},"before":null,"after":{"id":4,"v":"moved"})") != std::string::npos);
  CHECK(rows[2].find(R"("key":{"id":10})") != std::string::npos);
  CHECK(rows[3].find(R"("key":{"id":12})") != std::string::npos);
}

TEST_CASE("merge: unchanged snapshot rows are copied byte for byte") {
  const Form& form = kForms[0];
  TempFiles files;
  const Scenario s = two_chunks(form);
  const auto outcome = run_merge(files, options_for({files.write("c0", s.chunk0), files.write("c1", s.chunk1)},
                                                    files.write("d", merge_test::spanned(""))));
  REQUIRE_MESSAGE(outcome.result.has_value(), outcome.message());
  std::string expected;
  for (const std::string& text : {s.chunk0, s.chunk1})
    for (const std::string& line : row_lines(text)) expected += line + "\n";
  CHECK(outcome.out.substr(0, expected.size()) == expected);
}

TEST_CASE("merge: multi-domain MariaDB positions") {
  TempFiles files;
  ChunkSpec c0;
  c0.count = 2;
  c0.low = "0-1-10,1-2-5";
  c0.high = "0-1-11,1-2-6";
  c0.end = "[10]";
  c0.rows = {R"({"id":1}|{"id":1})"};
  ChunkSpec c1;
  c1.index = 1;
  c1.count = 2;
  c1.low = "0-1-11,1-2-5";
  c1.high = "0-1-11,1-2-7";
  c1.start = "[10]";
  c1.rows = {R"({"id":20}|{"id":20})"};
  std::string deltas;
  deltas += change("c", "null", R"({"id":2})", "1-2-6", "binlog.000001", 100);   // after both lows
  deltas += change("c", "null", R"({"id":21})", "0-1-11", "binlog.000001", 200);  // after c0's only: chunk 1 skips
  deltas += change("c", "null", R"({"id":22})", "2-3-1", "binlog.000001", 300);   // domain 2: after all lows...
  const auto outcome = run_merge(files, options_for({files.write("c0", chunk_text(c0)), files.write("c1", chunk_text(c1))},
                                                    files.write("d", merge_test::spanned(deltas))));
  // ... but also after H* (no domain 2 there): not applied.
  REQUIRE_MESSAGE(outcome.result.has_value(), outcome.message());
  const auto rows = row_lines(outcome.out);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].find(R"("key":{"id":1})") != std::string::npos);
  CHECK(rows[1].find(R"("key":{"id":2})") != std::string::npos);
  CHECK(rows[2].find(R"("key":{"id":20})") != std::string::npos);
  CHECK(outcome.result->changes_after_high == 1);
  CHECK(outcome.out.find(R"("position":"0-1-11,1-2-7")") != std::string::npos);
}

TEST_CASE("merge: whole-row identity is a multiset") {
  TempFiles files;
  ChunkSpec c;
  c.low = "0-1-1";
  c.high = "0-1-1";
  c.key = R"(["a"])";
  c.identity = "null";
  c.rows = {R"({"a":1}|{"a":1,"b":"x"})", R"({"a":1}|{"a":1,"b":"x"})", R"({"a":2}|{"a":2,"b":"y"})"};
  std::string deltas;
  deltas += change("d", R"({"a":1,"b":"x"})", "null", "0-1-2", "binlog.000001", 100);
  deltas += change("c", "null", R"({"a":3,"b":"z"})", "0-1-3", "binlog.000001", 200);
  deltas += change("c", "null", R"({"a":3,"b":"z"})", "0-1-4", "binlog.000001", 300);
  deltas += change("u", R"({"a":2,"b":"y"})", R"({"a":2,"b":"y2"})", "0-1-5", "binlog.000001", 400);
  auto options = options_for({files.write("c", chunk_text(c))}, files.write("d", merge_test::spanned(deltas)));
  options.until = "0-1-5";
  const auto outcome = run_merge(files, options);
  REQUIRE_MESSAGE(outcome.result.has_value(), outcome.message());
  const auto rows = row_lines(outcome.out);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].find(R"("after":{"a":1,"b":"x"})") != std::string::npos);
  CHECK(rows[1].find(R"("after":{"a":2,"b":"y2"})") != std::string::npos);
  CHECK(rows[2].find(R"("after":{"a":3,"b":"z"})") != std::string::npos);
  CHECK(rows[3] == rows[2]);
}

TEST_CASE("merge: composite VARBINARY and integer key ranges") {
  TempFiles files;
  ChunkSpec c0;
  c0.count = 2;
  c0.key = R"(["k","n"])";
  c0.key_types = R"J(["varbinary(16)","int(11)"])J";
  c0.key_collations = "[63,0]";
  c0.identity = R"(["k","n"])";
  c0.low = "0-1-1";
  c0.high = "0-1-4";
  c0.end = R"(["AQ==",5])";
  ChunkSpec c1 = c0;
  c1.index = 1;
  c1.start = c0.end;
  c1.end = "null";
  c1.low = "0-1-3";
  std::string deltas;
  deltas += change("c", "null", R"({"k":"AQ==","n":4})", "0-1-2", "binlog.000001", 100);   // chunk 0
  deltas += change("c", "null", R"({"k":"AQ==","n":5})", "0-1-2", "binlog.000001", 100);   // chunk 1, before its low
  deltas += change("c", "null", R"({"k":"AA==","n":100})", "0-1-4", "binlog.000001", 200);  // chunk 0
  deltas += change("c", "null", R"({"k":"Ag==","n":0})", "0-1-4", "binlog.000001", 200);    // chunk 1
  deltas += change("c", "null", R"({"k":"AQE=","n":0})", "0-1-4", "binlog.000001", 200);    // chunk 1 (longer)
  const auto outcome = run_merge(files, options_for({files.write("c0", chunk_text(c0)), files.write("c1", chunk_text(c1))},
                                                    files.write("d", merge_test::spanned(deltas))));
  REQUIRE_MESSAGE(outcome.result.has_value(), outcome.message());
  const auto rows = row_lines(outcome.out);
  REQUIRE(rows.size() == 4);
  // Chunk 0's inserts sorted by identity bytes, then chunk 1's.
  CHECK(rows[0].find(R"("key":{"k":"AA==","n":100})") != std::string::npos);
  CHECK(rows[1].find(R"("key":{"k":"AQ==","n":4})") != std::string::npos);
  CHECK(rows[2].find(R"("key":{"k":"AQE=","n":0})") != std::string::npos);
  CHECK(rows[3].find(R"("key":{"k":"Ag==","n":0})") != std::string::npos);
}

TEST_CASE("merge: identity text built from images equals the key object ndjson::Writer writes") {
  const std::vector<std::string> names = {"id", "we\"ird\\name", "k"};
  std::vector<std::string> quoted;
  for (const auto& name : names) quoted.push_back(cdc::ndjson::quoted(name));
  cdc::ndjson::Writer writer;
  writer.begin_object();
  writer.key(names[0]);
  writer.integer(10);
  writer.key(names[1]);
  writer.string("a\"b");
  writer.key(names[2]);
  writer.string_base64(std::string_view("\x01\x02", 2));
  writer.end_object();
  writer.end_record();
  std::string built;
  const std::vector<std::string_view> values = {"10", R"("a\"b")", R"("AQI=")"};
  cdc::merge::append_object(quoted, values, built);
  CHECK(built + "\n" == std::string(writer.buffered()));
}

TEST_CASE("merge: a key order that is not reproduced works when all lows are equal") {
  TempFiles files;
  ChunkSpec c0;
  c0.count = 2;
  c0.key = R"(["g"])";
  c0.key_types = R"(["geometry"])";
  c0.key_collations = "[63]";
  c0.low = "0-1-1";
  c0.high = "0-1-2";
  c0.end = R"(["AAA="])";
  c0.rows = {R"({"g":"AQ=="}|{"g":"AQ==","id":1})"};
  c0.identity = R"(["id"])";
  ChunkSpec c1 = c0;
  c1.index = 1;
  c1.start = c0.end;
  c1.end = "null";
  c1.rows = {R"({"g":"Ag=="}|{"g":"Ag==","id":2})"};
  std::string deltas = change("d", R"({"g":"Ag==","id":2})", "null", "0-1-2", "binlog.000001", 100);
  deltas += change("c", "null", R"({"g":"Aw==","id":3})", "0-1-2", "binlog.000001", 100);
  const auto outcome = run_merge(files, options_for({files.write("c0", chunk_text(c0)), files.write("c1", chunk_text(c1))},
                                                    files.write("d", merge_test::spanned(deltas))));
  REQUIRE_MESSAGE(outcome.result.has_value(), outcome.message());
  const auto rows = row_lines(outcome.out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].find(R"("id":1)") != std::string::npos);
  CHECK(rows[1].find(R"("id":3)") != std::string::npos);

  // With different lows it is an error naming the key.
  c1.low = "0-1-2";
  const auto failed = run_merge(files, options_for({files.write("c0", chunk_text(c0)), files.write("c1", chunk_text(c1))},
                                                   files.write("d", merge_test::spanned(deltas))));
  REQUIRE_FALSE(failed.result.has_value());
  CHECK(failed.result.error().code == cdc::Errc::unsupported);
  CHECK(failed.message().find("t.a: cannot tell which chunk a change belongs to (chunk key g)") != std::string::npos);
}

TEST_CASE("merge: --subset merges only the given chunks") {
  const Form& form = kForms[0];
  TempFiles files;
  const Scenario s = two_chunks(form);
  auto options = options_for({files.write("c1", s.chunk1)}, files.write("d", s.covered()));
  const auto missing = run_merge(files, options);
  REQUIRE_FALSE(missing.result.has_value());
  CHECK(missing.result.error().code == cdc::Errc::corrupt_input);
  CHECK(missing.message() == "t.a: chunk 0 of 2 missing: give every chunk of the table, or --subset to merge only "
                             "the given ones");
  options.subset = true;
  options.until = form.after(13);
  const auto outcome = run_merge(files, options);
  REQUIRE_MESSAGE(outcome.result.has_value(), outcome.message());
  const std::vector<std::string> chunk1_rows(kTwoChunksRows.begin() + 1, kTwoChunksRows.end());
  CHECK(row_lines(outcome.out) == chunk1_rows);
}

TEST_CASE("merge: --span prints the lowest low and the highest high") {
  struct Case {
    const char* name;
    std::vector<std::pair<std::string, std::string>> marks;  // low, high per chunk
    std::string expected;
  };
  const std::string u2 = "4f2b0c1e-0000-11e1-9e33-c80aa9429562";
  const Case cases[] = {
      {"MariaDB", {{"0-1-10,1-2-5", "0-1-12,1-2-5"}, {"0-1-12", "0-1-13"}}, "0-1-10 0-1-13,1-2-5\n"},
      {"MySQL",
       {{fmt::format("{}:1-10,{}:1-3", kUuid, u2), fmt::format("{}:1-12,{}:1-3", kUuid, u2)},
        {fmt::format("{}:1-12", kUuid), fmt::format("{}:1-13", kUuid)}},
       fmt::format("{}:1-10 {}:1-13,{}:1-3\n", kUuid, kUuid, u2)},
      {"FILE:OFFSET",
       {{"binlog.000002:400", "binlog.000002:900"}, {"binlog.000001:800", "binlog.000010:4"}},
       "binlog.000001:800 binlog.000010:4\n"},
      {"equal", {{"0-1-7", "0-1-7"}}, "0-1-7 0-1-7\n"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    TempFiles files;
    std::vector<std::string> inputs;
    int index = 0;
    for (const auto& [low, high] : c.marks) {
      ChunkSpec spec;
      spec.index = index;
      spec.count = static_cast<int>(c.marks.size());
      spec.low = low;
      spec.high = high;
      spec.rows = {R"({"id":1}|{"id":1})"};
      inputs.push_back(files.write(fmt::format("c{}", index++), chunk_text(spec)));
    }
    cdc::merge::Options options;
    options.inputs = inputs;
    options.span = true;
    const auto outcome = run_merge(files, options);
    REQUIRE_MESSAGE(outcome.result.has_value(), outcome.message());
    CHECK(outcome.out == c.expected);
  }
}

TEST_CASE("merge: --until must contain every high and sets H*") {
  const Form& form = kForms[0];
  TempFiles files;
  const Scenario s = two_chunks(form);
  auto options = options_for({files.write("c0", s.chunk0), files.write("c1", s.chunk1)}, files.write("d", s.covered()));
  options.until = "0-1-12";
  const auto early = run_merge(files, options);
  REQUIRE_FALSE(early.result.has_value());
  CHECK(early.result.error().code == cdc::Errc::usage);
  CHECK(early.message().find("--until 0-1-12 is before the high watermark 0-1-13 of t.a chunk 1/2") == 0);
  options.until = "0-1-14";
  const auto later = run_merge(files, options);
  REQUIRE_MESSAGE(later.result.has_value(), later.message());
  CHECK(later.result->changes_after_high == 0);
  CHECK(row_lines(later.out).size() == 5);  // id 7 applied too
  CHECK(later.out.find(R"({"op":"high","v":1,"position":"0-1-14","file":null,"offset":null,"chunks":2,"rows":5,)") !=
        std::string::npos);
}

TEST_CASE("merge: chunk outputs and deltas from standard input, and --output") {
  const Form& form = kForms[1];
  TempFiles files;
  const Scenario s = two_chunks(form);
  auto options = options_for({"-"}, files.write("d", s.covered()));
  options.output = files.dir() + "/merged.ndjson";
  const auto outcome = run_merge(files, options, s.chunk0 + s.chunk1);
  REQUIRE_MESSAGE(outcome.result.has_value(), outcome.message());
  CHECK(outcome.out.empty());
  CHECK(row_lines(files.read(*options.output)) == kTwoChunksRows);
  CHECK_FALSE(std::filesystem::exists(*options.output + ".partial"));

  auto from_stdin = options_for({files.write("c0", s.chunk0), files.write("c1", s.chunk1)}, "-");
  const auto deltas_in = run_merge(files, from_stdin, s.covered());
  REQUIRE_MESSAGE(deltas_in.result.has_value(), deltas_in.message());
  CHECK(row_lines(deltas_in.out) == kTwoChunksRows);
}

TEST_CASE("merge: a tiny memory limit spills and splits passes with byte-identical output") {
  TempFiles files;
  std::mt19937 random(42);
  constexpr int kChunks = 3;
  constexpr int kRowsPerChunk = 1200;
  std::vector<std::string> inputs;
  std::string all_chunks;
  std::vector<std::string> values(kChunks * kRowsPerChunk * 2);
  for (int c = 0; c < kChunks; ++c) {
    ChunkSpec spec;
    spec.index = c;
    spec.count = kChunks;
    spec.low = fmt::format("0-1-{}", 10 + c * 100);
    spec.high = fmt::format("0-1-{}", 20 + c * 100);
    spec.start = c == 0 ? "null" : fmt::format("[{}]", c * kRowsPerChunk * 2);
    spec.end = c == kChunks - 1 ? "null" : fmt::format("[{}]", (c + 1) * kRowsPerChunk * 2);
    for (int r = 0; r < kRowsPerChunk; ++r) {
      const int id = c * kRowsPerChunk * 2 + r * 2;  // even ids; odd ones are free for inserts
      values[static_cast<std::size_t>(id)] = fmt::format("v{}", id);
      spec.rows.push_back(fmt::format(R"({{"id":{}}}|{{"id":{},"v":"v{}","pad":"{:0>40}"}})", id, id, id, id));
    }
    inputs.push_back(files.write(fmt::format("c{}", c), chunk_text(spec)));
  }
  std::string deltas;
  const int ids = kChunks * kRowsPerChunk * 2;
  for (int n = 0; n < 2500; ++n) {
    const int seq = 5 + n * 400 / 2500;  // spans all lows and past H* (220)
    const int id = static_cast<int>(random() % static_cast<unsigned>(ids));
    const int to = static_cast<int>(random() % static_cast<unsigned>(ids));
    const auto row = [&](int i, const std::string& v) {
      return fmt::format(R"({{"id":{},"v":"{}","pad":"{:0>40}"}})", i, v, i);
    };
    switch (random() % 3) {
      case 0:
        deltas += change("c", "null", row(id, fmt::format("n{}", n)), fmt::format("0-1-{}", seq), "b", 1);
        break;
      case 1:
        deltas += change("d", row(id, "old"), "null", fmt::format("0-1-{}", seq), "b", 1);
        break;
      default:
        deltas += change("u", row(id, "old"), row(to, fmt::format("u{}", n)), fmt::format("0-1-{}", seq), "b", 1);
        break;
    }
  }
  const std::string deltas_path = files.write("d", merge_test::spanned(deltas));
  const auto unlimited = run_merge(files, options_for(inputs, deltas_path));
  REQUIRE_MESSAGE(unlimited.result.has_value(), unlimited.message());
  CHECK(unlimited.result->spill_runs == 0);
  CHECK(unlimited.result->passes == kChunks);
  auto small = options_for(inputs, deltas_path);
  small.memory_limit = 4096;
  // With few file descriptors to spare: the spill runs are more than that, and are closed once
  // written (kept open, they failed with "Too many open files").
  std::size_t open_fds = 0;
  for ([[maybe_unused]] const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) ++open_fds;
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved) == 0);
  rlimit tight = saved;
  tight.rlim_cur = open_fds + 32;
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &tight) == 0);
  const auto limited = run_merge(files, small);
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &saved) == 0);
  REQUIRE_MESSAGE(limited.result.has_value(), limited.message());
  CHECK(limited.result->spill_runs > 32);
  CHECK(limited.result->passes > kChunks * 5);
  CHECK(merge_test::without_run_time(limited.out) == merge_test::without_run_time(unlimited.out));
  CHECK(limited.result->rows == unlimited.result->rows);
  // The scratch files are gone.
  std::size_t left = 0;
  for (const auto& entry : std::filesystem::directory_iterator(files.dir()))
    if (entry.path().filename().string().rfind("cdc-merge.", 0) == 0) ++left;
  CHECK(left == 0);
  // Each identity at most once.
  std::set<std::string> keys;
  for (const std::string& line : row_lines(limited.out)) {
    const std::size_t at = line.find("\"key\":");
    CHECK(keys.insert(line.substr(at, line.find('}', at) - at)).second);
  }
}

TEST_CASE("merge: rows the changes add come in the byte order of their identity, spilled or not") {
  // The identity is s, not the key: identities that share long prefixes, differ only past 8
  // bytes of them, in length, or in bytes above 0x7F.
  TempFiles files;
  ChunkSpec c;
  c.low = "0-1-1";
  c.high = "0-1-2";
  c.identity = R"(["s"])";
  // Two are longer than a spill run's first read of a record (512 bytes).
  std::vector<std::string> values = {"", "a", "ab", "b", "abcdefghij1", "abcdefghij2", "abcdefghijk", "abcdefghij",
                                     "\u00e9", "\u00e9a", "z", "zz", std::string(1500, 'm'), std::string(700, 'm') + "n"};
  for (unsigned n = 0; n < 300; ++n) values.push_back(fmt::format("{:x}", (n * 2654435761U) % 100000));
  std::string deltas;
  std::vector<std::string> identities;
  for (std::size_t n = 0; n < values.size(); ++n) {
    const std::string after = fmt::format(R"({{"id":{},"s":"{}"}})", n, values[n]);
    deltas += change("c", "null", after, fmt::format("0-1-{}", 10 + n), "b", 1 + n);
    identities.push_back(fmt::format(R"({{"s":"{}"}})", values[n]));
  }
  std::sort(identities.begin(), identities.end());
  const std::vector<std::string> inputs{files.write("c", chunk_text(c))};
  const std::string deltas_path = files.write("d", merge_test::spanned(deltas));
  for (const std::uint64_t limit : {cdc::merge::kDefaultMemoryLimit, std::uint64_t{4096}}) {
    CAPTURE(limit);
    auto options = options_for(inputs, deltas_path);
    options.until = "0-1-99999";
    options.memory_limit = limit;
    const auto outcome = run_merge(files, options);
    REQUIRE_MESSAGE(outcome.result.has_value(), outcome.message());
    CHECK((outcome.result->spill_runs > 0) == (limit == 4096));
    const auto rows = row_lines(outcome.out);
    REQUIRE(rows.size() == identities.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const std::size_t s = rows[i].find(R"("s":)");
      CHECK("{" + rows[i].substr(s, rows[i].find('}', s) - s) + "}" == identities[i]);
    }
  }
}

TEST_CASE("merge: deltas from a file or a pipe, with any memory limit, give the same bytes") {
  // Rows whose images are read back from the mapped deltas file, spilled through many runs
  // (merged a few at a time), or copied from a pipe first: one output.
  for (const std::string& identity : {std::string(R"(["id"])"), std::string("null")}) {
    CAPTURE(identity);
    TempFiles files;
    ChunkSpec spec;
    spec.low = "0-1-10";
    spec.high = "0-1-20";
    spec.identity = identity;
    for (int id = 0; id < 400; id += 2)
      spec.rows.push_back(fmt::format(R"({{"id":{}}}|{{"id":{},"v":"v{}","pad":"{:0>30}"}})", id, id, id, id));
    const std::string chunk = files.write("c0", chunk_text(spec));
    std::mt19937 random(7);
    std::string deltas;
    const auto row = [](int id, const std::string& v) {
      return fmt::format(R"({{"id":{},"v":"{}","pad":"{:0>30}"}})", id, v, id);
    };
    for (int n = 0; n < 300; ++n) {
      const int id = static_cast<int>(random() % 200) * 2;
      const std::string gtid = fmt::format("0-1-{}", 11 + n * 9 / 300);
      const std::uint64_t at = 100 + static_cast<std::uint64_t>(n) * 10;
      switch (n % 4) {
        case 0: deltas += change("c", "null", row(401 + n * 2, fmt::format("n{}", n)), gtid, "binlog.000001", at); break;
        case 1: deltas += change("d", row(id, fmt::format("v{}", id)), "null", gtid, "binlog.000001", at); break;
        case 2: deltas += change("u", row(id, fmt::format("v{}", id)), row(id, fmt::format("u{}", n)), gtid, "binlog.000001", at); break;
        default: deltas += change("u", row(id, fmt::format("v{}", id)), row(id + 1, fmt::format("m{}", n)), gtid, "binlog.000001", at);
      }
      if (n % 10 == 9) deltas += merge_test::commit(gtid, gtid, "binlog.000001", at + 5);
    }
    deltas = merge_test::spanned(deltas);
    const std::string deltas_path = files.write("d", deltas);
    const auto reference = run_merge(files, options_for({chunk}, deltas_path));
    REQUIRE_MESSAGE(reference.result.has_value(), reference.message());
    CHECK(reference.result->spill_runs == 0);
    auto small = options_for({chunk}, deltas_path);
    small.memory_limit = 4096;
    const auto spilled = run_merge(files, small);
    REQUIRE_MESSAGE(spilled.result.has_value(), spilled.message());
    CHECK(spilled.result->spill_runs > 8);
    CHECK(merge_test::without_run_time(spilled.out) == merge_test::without_run_time(reference.out));
    for (const std::uint64_t limit : {cdc::merge::kDefaultMemoryLimit, std::uint64_t{4096}}) {
      CAPTURE(limit);
      auto piped = options_for({chunk}, "-");
      piped.memory_limit = limit;
      piped.spill_dir = files.dir();
      int fds[2];
      REQUIRE(::pipe(fds) == 0);
      std::thread writer([&] {
        std::size_t at = 0;
        while (at < deltas.size()) {
          const ssize_t wrote = ::write(fds[1], deltas.data() + at, deltas.size() - at);
          if (wrote <= 0) break;
          at += static_cast<std::size_t>(wrote);
        }
        ::close(fds[1]);
      });
      const std::string out_path = files.dir() + "/piped.txt";
      const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int err = ::open((files.dir() + "/piped.err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      auto result = cdc::merge::run(piped, fds[0], out, err);
      writer.join();
      ::close(fds[0]);
      ::close(out);
      ::close(err);
      REQUIRE_MESSAGE(result.has_value(), (result ? std::string() : result.error().message));
      CHECK(merge_test::without_run_time(files.read(out_path)) == merge_test::without_run_time(reference.out));
    }
  }
}

TEST_CASE("merge: deltas must span the lowest low to H* in every position form") {
  for (const Form& form : kForms) {
    CAPTURE(form.name);
    TempFiles files;
    const Scenario s = two_chunks(form);
    const auto inputs = std::vector<std::string>{files.write("c0", s.chunk0), files.write("c1", s.chunk1)};
    const auto merged = [&](const std::string& from, const std::string& until) {
      return run_merge(files, options_for(inputs, files.write("d", merge_test::spanned(s.deltas, from, until))));
    };
    // Exactly the span: the lowest low (10) to H* (13).
    const auto exact = merged(form.after(10), form.after(13));
    REQUIRE_MESSAGE(exact.result.has_value(), exact.message());
    CHECK(row_lines(exact.out) == kTwoChunksRows);
    // Starting after the lowest low, or ending before H*.
    const auto late = merged(form.after(11), form.after(13));
    REQUIRE_FALSE(late.result.has_value());
    CHECK(late.result.error().code == cdc::Errc::corrupt_input);
    CHECK(late.message().find(fmt::format("/d:1: the deltas start at {} (span_start), after the low watermark {} of "
                                          "t.a chunk 0/2",
                                          form.after(11), form.after(10))) != std::string::npos);
    const auto short_of = merged(form.after(10), form.after(12));
    REQUIRE_FALSE(short_of.result.has_value());
    CHECK(short_of.message().find(fmt::format("the deltas end at {} (span_end), before H* = {} (the highest high "
                                              "watermark)",
                                              form.after(12), form.after(13))) != std::string::npos);
  }
}

TEST_CASE("merge: table lines in chunk outputs and deltas, one before the table's rows, at the merged high") {
  for (const Form& form : kForms) {
    CAPTURE(form.name);
    TempFiles files;
    Scenario s = two_chunks(form, true);
    // cdc-stream describes the table before its first change.
    s.deltas.insert(0, merge_test::table_line(R"({"file":"binlog.000001","offset":1100,"gtid":null})", 5000));
    const auto outcome = run_merge(files, options_for({files.write("c0", s.chunk0), files.write("c1", s.chunk1)},
                                                      files.write("d", s.covered())));
    REQUIRE_MESSAGE(outcome.result.has_value(), outcome.message());
    CHECK(row_lines(outcome.out) == kTwoChunksRows);
    // First line: chunk 0's description, at the merged high's file and offset.
    const std::string high_offset = form.after(13).starts_with("binlog.") ? merge_test::offset_of(form.after(13)) : "4";
    CHECK(outcome.out.starts_with(merge_test::table_line(
        fmt::format(R"({{"file":"binlog.000001","offset":{},"gtid":null}})", high_offset))));
    CHECK(outcome.out.find(R"("op":"table")", outcome.out.find('\n')) == std::string::npos);
  }
}

TEST_CASE("merge: a table line elsewhere than right after its low line is refused") {
  TempFiles files;
  ChunkSpec c;
  c.low = "0-1-10";
  c.high = "0-1-12";
  c.rows = {R"({"id":1}|{"id":1,"v":"x"})"};
  std::string text = chunk_text(c);
  const std::string late = text.substr(0, text.rfind("{\"op\":\"high\"")) + merge_test::table_line() +
                           merge_test::high_line(c);
  CHECK(run_merge(files, options_for({files.write("late", late)}, files.write("d", merge_test::spanned(""))))
            .message()
            .find("late:3: table line that does not follow a low line") != std::string::npos);
  const std::string twice = merge_test::low_line(c) + merge_test::table_line() + merge_test::table_line() +
                            text.substr(text.find('\n') + 1);
  CHECK(run_merge(files, options_for({files.write("twice", twice)}, files.write("d", merge_test::spanned(""))))
            .message()
            .find("twice:3: table line that does not follow a low line") != std::string::npos);
}

// cdc-stream --include-query puts a "query" member before "pos"; cdc-merge reads past it (a
// statement may hold text like a "pos" member, a '}' or a newline, all escaped), so the merged
// snapshot is the same with or without it.
TEST_CASE("merge: deltas with the statements of --include-query merge to the same bytes") {
  for (const Form& form : kForms) {
    CAPTURE(form.name);
    TempFiles files;
    const Scenario s = two_chunks(form);
    const std::string query = R"("query":"UPDATE t.a SET v = '\"pos\":{\"file\":\"x\",\"offset\":1}}\n' /* é */",)";
    std::string queried = s.deltas;
    for (std::size_t at = queried.find(R"("pos":{)"); at != std::string::npos;
         at = queried.find(R"("pos":{)", at + query.size() + 1))
      queried.insert(at, query);
    REQUIRE(queried.size() == s.deltas.size() + 6 * query.size());
    const std::vector<std::string> chunks = {files.write("c0", s.chunk0), files.write("c1", s.chunk1)};
    const auto plain = run_merge(files, options_for(chunks, files.write("d", s.covered())));
    const auto with_queries = run_merge(
        files, options_for(chunks, files.write("dq", merge_test::spanned(queried, form.earliest, form.latest))));
    REQUIRE_MESSAGE(with_queries.result.has_value(), with_queries.message());
    CHECK(row_lines(with_queries.out) == kTwoChunksRows);
    CHECK(merge_test::without_run_time(with_queries.out) == merge_test::without_run_time(plain.out));
  }
}
