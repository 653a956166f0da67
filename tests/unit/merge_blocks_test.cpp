// The output pass reads a chunk's rows in blocks of 256 KiB (merge/row_blocks.h), on one thread
// or on two at once: lines that cross a block's end or are longer than a block, '\r\n' line
// ends and blank lines, rows whose identity repeats in blocks far apart, and an error in a late
// block all come out as reading the rows line by line would have them.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "merge/row_blocks.h"
#include "merge_support.h"

using merge_test::change;
using merge_test::ChunkSpec;
using merge_test::run_merge;
using merge_test::TempFiles;

namespace {

constexpr int kRows = 3000;
constexpr int kLongRow = 1500;  // its value is longer than a block

std::string after_of(int id, const std::string& v) {
  const std::string pad = id == kLongRow ? std::string(600 << 10, 'x') : std::string(250, static_cast<char>('a' + id % 26));
  return fmt::format(R"({{"id":{},"v":"{}","pad":"{}"}})", id, v, pad);
}

std::string key_of(int id) { return fmt::format(R"({{"id":{}}})", id); }

using merge_test::options_for;

// The merged rows: everything before the op:"high" line.
std::string rows_of(const std::string& out) { return out.substr(0, out.find(R"({"op":"high")")); }

}  // namespace

TEST_CASE("merge: rows read in blocks come out as read line by line, on one thread or two") {
  TempFiles files;
  ChunkSpec chunk;
  chunk.low = "0-1-1";
  chunk.high = "0-1-2";
  ChunkSpec changed = chunk;  // the lines the merge writes for changed rows: the change's ts_ms
  changed.ts = 5000;
  // Rows 1..kRows; every 7th ends in "\r\n", a blank line and a line of spaces after every 11th.
  std::string text = merge_test::low_line(chunk);
  for (int id = 1; id <= kRows; ++id) {
    std::string line = merge_test::row_line(chunk, key_of(id), after_of(id, "old"));
    if (id % 7 == 0) line.insert(line.size() - 1, "\r");
    text += line;
    if (id % 11 == 0) text += "\n  \n";
  }
  text += merge_test::high_line(chunk);
  REQUIRE(text.size() > 4 * cdc::merge::RowBlock::kBytes);
  // Every 5th row updated, every 13th deleted (after its update), kRows+1..kRows+20 inserted.
  std::string deltas;
  std::uint64_t event = 0;  // the changes' GTIDs and offsets grow with it
  const auto next_gtid = [&] { return fmt::format("0-1-{}", 10 + event++); };
  for (int id = 5; id <= kRows; id += 5)
    deltas += change("u", after_of(id, "old"), after_of(id, "new"), next_gtid(), "binlog.000001", 100 + event);
  for (int id = 13; id <= kRows; id += 13)
    deltas += change("d", id % 5 == 0 ? after_of(id, "new") : after_of(id, "old"), "null", next_gtid(), "binlog.000001",
                     100 + event);
  for (int id = kRows + 1; id <= kRows + 20; ++id)
    deltas += change("c", "null", after_of(id, "added"), next_gtid(), "binlog.000001", 100 + event);
  std::string expected;
  for (int id = 1; id <= kRows + 20; ++id) {
    if (id <= kRows && id % 13 == 0) continue;
    if (id > kRows)
      expected += merge_test::row_line(changed, key_of(id), after_of(id, "added"));
    else if (id % 5 == 0)
      expected += merge_test::row_line(changed, key_of(id), after_of(id, "new"));
    else
      expected += merge_test::row_line(chunk, key_of(id), after_of(id, "old"));
  }
  const std::vector<std::string> inputs{files.write("c", text)};
  const std::string deltas_file = files.write("d", merge_test::spanned(deltas));
  for (const std::uint64_t limit : {cdc::merge::kDefaultMemoryLimit, std::uint64_t{64} << 10}) {
    for (const unsigned threads : {1U, 2U}) {
      CAPTURE(limit);
      CAPTURE(threads);
      const auto outcome = run_merge(files, options_for(inputs, deltas_file, threads, limit));
      REQUIRE_MESSAGE(outcome.result.has_value(), outcome.message());
      CHECK(rows_of(outcome.out) == expected);
      CHECK(outcome.result->rows == static_cast<std::uint64_t>(kRows + 20 - kRows / 13));
      if (limit < cdc::merge::kDefaultMemoryLimit) CHECK(outcome.result->passes > 1);
    }
  }
}

TEST_CASE("merge: a repeated identity in blocks far apart is decided in output order, on one thread or two") {
  TempFiles files;
  // t.a: id 7 is read twice, at the start and near the end; its update goes to the first row
  // and the second is dropped. t.b (no identity: rows are a multiset): the row R is read twice
  // as well; its one delete drops the first copy.
  ChunkSpec keyed;
  keyed.low = "0-1-1";
  keyed.high = "0-1-2";
  ChunkSpec changed = keyed;
  changed.ts = 5000;
  ChunkSpec keyless = keyed;
  keyless.table = "b";
  keyless.key = R"(["id"])";
  keyless.identity = "null";
  const std::string repeated = after_of(7, "twice");
  std::string expected_a;
  std::string expected_b;
  for (int position = 1; position <= kRows; ++position) {
    const int id = position == 2900 ? 7 : position;
    keyed.rows.push_back(key_of(id) + "|" + after_of(id, position == 2900 ? "second" : "first"));
    keyless.rows.push_back(key_of(id) + "|" + (id == 7 ? repeated : after_of(id, "row")));
    if (position == 7) expected_a += merge_test::row_line(changed, key_of(7), after_of(7, "new"));
    if (id != 7) expected_a += merge_test::row_line(keyed, key_of(id), after_of(id, "first"));
    if (position != 7) expected_b += merge_test::row_line(keyless, key_of(id), id == 7 ? repeated : after_of(id, "row"));
  }
  std::string deltas;
  deltas += change("u", after_of(7, "first"), after_of(7, "new"), "0-1-10", "binlog.000001", 100);
  deltas += change("d", repeated, "null", "0-1-11", "binlog.000001", 200, 5000, "t", "b");
  const std::vector<std::string> inputs{files.write("a", merge_test::chunk_text(keyed)),
                                        files.write("b", merge_test::chunk_text(keyless))};
  const std::string deltas_file = files.write("d", merge_test::spanned(deltas));
  for (const unsigned threads : {1U, 2U}) {
    CAPTURE(threads);
    const auto outcome = run_merge(files, options_for(inputs, deltas_file, threads, cdc::merge::kDefaultMemoryLimit));
    REQUIRE_MESSAGE(outcome.result.has_value(), outcome.message());
    CHECK(rows_of(outcome.out) == expected_a + expected_b);
  }
}

TEST_CASE("merge: a row without its key in a late block is reported with its line number") {
  TempFiles files;
  ChunkSpec chunk;
  chunk.low = "0-1-1";
  chunk.high = "0-1-2";
  for (int id = 1; id <= kRows; ++id) chunk.rows.push_back(key_of(id) + "|" + after_of(id, "old"));
  std::string text = merge_test::chunk_text(chunk);
  // Row 2500 is line 2501 (after the low line); its "key" member is renamed.
  const std::size_t at = text.find(R"("key":{"id":2500})");
  REQUIRE(at != std::string::npos);
  text.replace(at, 5, R"("kex")");
  const std::string deltas = change("u", after_of(3, "old"), after_of(3, "new"), "0-1-10", "binlog.000001", 100);
  const std::vector<std::string> inputs{files.write("c", text)};
  for (const unsigned threads : {1U, 2U}) {
    CAPTURE(threads);
    const auto outcome = run_merge(
        files, options_for(inputs, files.write("d", merge_test::spanned(deltas)), threads, cdc::merge::kDefaultMemoryLimit));
    REQUIRE_FALSE(outcome.result.has_value());
    CHECK(outcome.result.error().message.find(inputs[0] + ":2501: an op:\"r\" line of t.a without its \"key\" object") !=
          std::string::npos);
  }
}

TEST_CASE("merge: integer keys that share a bit of the lookup filter, and negative keys, find their changes") {
  TempFiles files;
  ChunkSpec chunk;
  chunk.low = "0-1-1";
  chunk.high = "0-1-2";
  // 5, 65541 and 131077 (5 + 2^16, 5 + 2^17) share a bit of Slice::digit_bits; only 65541
  // changes. -7 is read by the row's fast path but not filtered.
  std::string text = merge_test::low_line(chunk);
  for (const char* id : {"-7", "5", "65541", "131077"})
    text += merge_test::row_line(chunk, fmt::format(R"({{"id":{}}})", id), fmt::format(R"({{"id":{},"v":"old"}})", id));
  text += merge_test::high_line(chunk);
  std::string deltas;
  int event = 0;
  for (const char* id : {"-7", "65541"}) {
    const std::string gtid = fmt::format("0-1-{}", 10 + event);
    deltas += change("u", fmt::format(R"({{"id":{},"v":"old"}})", id), fmt::format(R"({{"id":{},"v":"new"}})", id),
                     gtid, "binlog.000001", static_cast<std::uint64_t>(100 + event));
    ++event;
  }
  const std::vector<std::string> inputs{files.write("c", text)};
  const std::string deltas_file = files.write("d", merge_test::spanned(deltas));
  for (const unsigned threads : {1U, 2U}) {
    CAPTURE(threads);
    const auto outcome = run_merge(files, options_for(inputs, deltas_file, threads, cdc::merge::kDefaultMemoryLimit));
    REQUIRE_MESSAGE(outcome.result.has_value(), outcome.message());
    const std::string rows = rows_of(outcome.out);
    for (const char* id : {"-7", "5", "65541", "131077"}) {
      CAPTURE(id);
      const bool updated = std::string_view(id) == "-7" || std::string_view(id) == "65541";
      CHECK(rows.find(fmt::format(R"("key":{{"id":{}}},"before":null,"after":{{"id":{},"v":"{}"}})", id, id,
                                  updated ? "new" : "old")) != std::string::npos);
    }
    CHECK(outcome.result->rows == 4);
  }
}
