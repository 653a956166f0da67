// cdc-merge with threads: the deltas read in two parts at once and the output groups written
// by two workers give the same bytes as one thread, with and without spilling; deltas out of
// log order across the split are reported as reading them whole reports them.

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "merge/deltas.h"
#include "merge_support.h"

using merge_test::change;
using merge_test::ChunkSpec;
using merge_test::chunk_text;
using merge_test::run_merge;
using merge_test::TempFiles;

namespace {

// Chunk 0 is much larger than the others, so that the worker with chunk 1 is done long before
// the one with chunk 0: its bytes must wait for chunk 0's.
constexpr int kChunks = 6;
constexpr int kFirstChunkRows = 6000;
constexpr int kRowsPerChunk = 400;
constexpr int kIds = (kFirstChunkRows + (kChunks - 1) * kRowsPerChunk) * 2;  // even ids are read; odd are for inserts
int chunk_start(int c) { return c == 0 ? 0 : (kFirstChunkRows + (c - 1) * kRowsPerChunk) * 2; }

std::string row(int id, const std::string& v) { return fmt::format(R"({{"id":{},"v":"{}","pad":"{:0>120}"}})", id, v, id); }

// Six chunks of t.a (even ids), read at 0-1-1 .. 0-1-6, chunk 0 the largest.
std::vector<std::string> write_chunks(TempFiles& files) {
  std::vector<std::string> inputs;
  for (int c = 0; c < kChunks; ++c) {
    ChunkSpec spec;
    spec.index = c;
    spec.count = kChunks;
    spec.low = fmt::format("0-1-{}", 1 + c);
    spec.high = fmt::format("0-1-{}", 7 + c);
    spec.start = c == 0 ? "null" : fmt::format("[{}]", chunk_start(c));
    spec.end = c == kChunks - 1 ? "null" : fmt::format("[{}]", chunk_start(c + 1));
    for (int id = chunk_start(c); id < (c == kChunks - 1 ? kIds : chunk_start(c + 1)); id += 2) {
      spec.rows.push_back(fmt::format(R"({{"id":{}}}|{})", id, row(id, fmt::format("v{}", id))));
    }
    inputs.push_back(files.write(fmt::format("c{}", c), chunk_text(spec)));
  }
  return inputs;
}

// More than kMinPartedDeltas of changes in transactions of three, every GTID four digits
// (0-1-1000 on): the same ids changed in both halves, rows moved between chunks.
std::string change_lines() {
  std::mt19937 random(11);
  std::string lines;
  for (int n = 0; lines.size() < cdc::merge::kMinPartedDeltas + (std::size_t{1} << 20); ++n) {
    const std::string gtid = fmt::format("0-1-{}", 1000 + n / 3);
    const int id = static_cast<int>(random() % static_cast<unsigned>(kIds));
    const int to = static_cast<int>(random() % static_cast<unsigned>(kIds));
    const auto at = static_cast<std::uint64_t>(1000 + n);
    switch (random() % 4) {
      case 0: lines += change("c", "null", row(id, fmt::format("n{}", n)), gtid, "binlog.000001", at); break;
      case 1: lines += change("d", row(id, "old"), "null", gtid, "binlog.000001", at); break;
      case 2: lines += change("u", row(id, "old"), row(id, fmt::format("u{}", n)), gtid, "binlog.000001", at); break;
      default: lines += change("u", row(id, "old"), row(to, fmt::format("m{}", n)), gtid, "binlog.000001", at);
    }
  }
  return lines;
}

using merge_test::options_for;

}  // namespace

TEST_CASE("merge: two threads give the bytes of one, spilling or not") {
  TempFiles files;
  const std::vector<std::string> inputs = write_chunks(files);
  const std::string deltas = files.write("d", merge_test::spanned(change_lines()));
  const auto reference = run_merge(files, options_for(inputs, deltas, 1, cdc::merge::kDefaultMemoryLimit));
  REQUIRE_MESSAGE(reference.result.has_value(), reference.message());
  CHECK(reference.result->spill_runs == 0);
  CHECK(reference.result->changes_applied > 10000);
  const std::string expected = merge_test::without_run_time(reference.out);
  for (const std::uint64_t limit : {cdc::merge::kDefaultMemoryLimit, std::uint64_t{256} << 10}) {
    for (const unsigned threads : {1U, 2U}) {
      CAPTURE(limit);
      CAPTURE(threads);
      const auto outcome = run_merge(files, options_for(inputs, deltas, threads, limit));
      REQUIRE_MESSAGE(outcome.result.has_value(), outcome.message());
      CHECK(merge_test::without_run_time(outcome.out) == expected);
      CHECK(outcome.result->rows == reference.result->rows);
      CHECK(outcome.result->changes_applied == reference.result->changes_applied);
      if (limit < cdc::merge::kDefaultMemoryLimit) CHECK(outcome.result->spill_runs > 2);
    }
  }
}

TEST_CASE("merge: deltas out of log order across the split are reported with their line, as read whole") {
  TempFiles files;
  const std::vector<std::string> inputs = write_chunks(files);
  std::string text = merge_test::spanned(change_lines());
  // The line that starts the second part (after the line at the middle) goes back to an early
  // transaction; same length, so the split stays where it was.
  const std::size_t split = text.find('\n', text.size() / 2) + 1;
  const std::size_t gtid = text.find(R"("gtid":"0-1-)", split) + 12;
  REQUIRE(gtid < text.find('\n', split));
  text.replace(gtid, 4, "1001");
  const std::string deltas = files.write("d", text);
  const auto whole = run_merge(files, options_for(inputs, deltas, 1, cdc::merge::kDefaultMemoryLimit));
  REQUIRE_FALSE(whole.result.has_value());
  CHECK(whole.result.error().message.find("out of log order: GTID 0-1-1001") != std::string::npos);
  const auto parted = run_merge(files, options_for(inputs, deltas, 2, cdc::merge::kDefaultMemoryLimit));
  REQUIRE_FALSE(parted.result.has_value());
  CHECK(parted.result.error().message == whole.result.error().message);
  CHECK(parted.out.empty());
}
