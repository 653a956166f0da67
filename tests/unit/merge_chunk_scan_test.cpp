// cdc-merge's first pass over the chunk outputs (merge/chunk_input): an output whose last line is
// its chunk's high line with "rows_bytes" is not read through, and finds the same chunk as reading
// every line does; "rows_bytes" that does not fit, or another line between, makes it read them.

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "merge/chunk_input.h"
#include "merge_support.h"

namespace {

using merge_test::ChunkSpec;
using merge_test::TempFiles;

// A chunk of t.a with three rows, as cdc-snapshot writes it (table line included).
ChunkSpec three_rows(int index = 0, int count = 1) {
  ChunkSpec spec;
  spec.index = index;
  spec.count = count;
  spec.low = "0-1-10";
  spec.high = "0-1-12";
  spec.rows = {R"({"id":1}|{"id":1,"v":"a"})", R"({"id":2}|{"id":2,"v":"bb"})", R"({"id":3}|{"id":3,"v":"ccc"})"};
  return spec;
}

std::string with_rows_bytes(ChunkSpec spec) {
  spec.rows_bytes = true;
  return merge_test::chunk_text(spec, true);
}

// scan_chunk_outputs over one file per text.
cdc::Result<std::vector<cdc::merge::ChunkInfo>> scan(const TempFiles& files, const std::vector<std::string>& texts,
                                                     unsigned threads = 1) {
  std::vector<cdc::merge::InputFile> inputs;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const std::string name = "chunks" + std::to_string(i);
    inputs.push_back({name, ::open(files.write(name, texts[i]).c_str(), O_RDONLY)});
    REQUIRE(inputs.back().fd >= 0);
  }
  auto chunks = cdc::merge::scan_chunk_outputs(inputs, threads);
  for (const auto& input : inputs) ::close(input.fd);
  return chunks;
}

// What the rest of the merge takes from a scanned chunk, but how it was found.
void check_same_chunk(const cdc::merge::ChunkInfo& got, const cdc::merge::ChunkInfo& expected) {
  CHECK(got.input == expected.input);
  CHECK(got.opened.chunk == expected.opened.chunk);
  CHECK(got.closed.chunk == expected.closed.chunk);
  CHECK(got.closed.rows == expected.closed.rows);
  CHECK(got.closed.mark.position == expected.closed.mark.position);
  CHECK(got.high.to_string() == expected.high.to_string());
  CHECK(got.low.to_string() == expected.low.to_string());
  CHECK(got.low_line == expected.low_line);
  CHECK(got.rows_begin == expected.rows_begin);
  CHECK(got.rows_end == expected.rows_end);
  CHECK(got.rows_first_line == expected.rows_first_line);
  CHECK(got.described.has_value() == expected.described.has_value());
}

}  // namespace

TEST_CASE("merge scan: a chunk output ending in its high line with the rows' bytes is not read through") {
  TempFiles files;
  const std::string plain = merge_test::chunk_text(three_rows(), true);
  const std::string fast = with_rows_bytes(three_rows());
  REQUIRE(fast.find("\"rows_bytes\":") != std::string::npos);
  auto read_all = scan(files, {plain});
  auto skipped = scan(files, {fast});
  REQUIRE_MESSAGE(read_all.has_value(), read_all.error().message);
  REQUIRE_MESSAGE(skipped.has_value(), skipped.error().message);
  REQUIRE(read_all->size() == 1);
  REQUIRE(skipped->size() == 1);
  CHECK_FALSE(read_all->front().rows_unread);
  CHECK(skipped->front().rows_unread);
  CHECK(skipped->front().closed.rows_bytes == skipped->front().rows_end - skipped->front().rows_begin);
  check_same_chunk(skipped->front(), read_all->front());

  // Two threads, several inputs: the same.
  auto both = scan(files, {fast, plain, fast}, 2);
  REQUIRE_MESSAGE(both.has_value(), both.error().message);
  REQUIRE(both->size() == 3);
  CHECK((*both)[0].rows_unread);
  CHECK_FALSE((*both)[1].rows_unread);
  CHECK((*both)[2].rows_unread);
}

TEST_CASE("merge scan: rows_bytes that does not fit the space before the high line reads the rows") {
  TempFiles files;
  const std::string plain = merge_test::chunk_text(three_rows(), true);
  auto expected = scan(files, {plain});
  REQUIRE(expected.has_value());
  const std::string fast = with_rows_bytes(three_rows());
  const std::size_t at = fast.find("\"rows_bytes\":") + std::string_view("\"rows_bytes\":").size();
  const std::size_t digits = fast.find(',', at) - at;
  const std::uint64_t bytes = std::stoull(fast.substr(at, digits));
  for (const std::uint64_t wrong : {bytes - 1, bytes + 1, std::uint64_t{0}, bytes * 1000}) {
    CAPTURE(wrong);
    std::string lying = fast;
    lying.replace(at, digits, std::to_string(wrong));
    auto got = scan(files, {lying});
    REQUIRE_MESSAGE(got.has_value(), got.error().message);
    REQUIRE(got->size() == 1);
    CHECK_FALSE(got->front().rows_unread);
    check_same_chunk(got->front(), expected->front());
  }

  // Not a number: read line by line, which names the line.
  std::string bad = fast;
  bad.replace(at, digits, "\"12\"");
  auto refused = scan(files, {bad});
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message == "chunks0:6: \"rows_bytes\" is not a non-negative integer");
}

TEST_CASE("merge scan: a chunk read again after a discard line is found from its last read") {
  TempFiles files;
  // The first read lost its connection after one row: its low, a row, the discard line; then
  // the whole chunk, whose high line counts the bytes of its own rows only.
  ChunkSpec first_try = three_rows();
  first_try.low = "0-1-9";
  first_try.rows = {R"({"id":1}|{"id":1,"v":"stale"})"};
  std::string partial = merge_test::chunk_text(first_try, true);
  partial.erase(partial.rfind("{\"op\":\"high\""));
  const std::string discard =
      R"({"op":"discard","v":1,"db":"t","table":"a","index":0,"count":1,"reason":"connection lost","ts_ms":1})"
      "\n";
  auto expected = scan(files, {partial + discard + merge_test::chunk_text(three_rows(), true)});
  auto got = scan(files, {partial + discard + with_rows_bytes(three_rows())});
  REQUIRE_MESSAGE(expected.has_value(), expected.error().message);
  REQUIRE_MESSAGE(got.has_value(), got.error().message);
  REQUIRE(got->size() == 1);
  CHECK(got->front().rows_unread);  // at its second read's first row
  CHECK(got->front().low.to_string() == "0-1-10");
  CHECK(got->front().rows_begin == partial.size() + discard.size() + merge_test::low_line(three_rows()).size() +
                                       merge_test::table_line().size());
  check_same_chunk(got->front(), expected->front());
}

TEST_CASE("merge scan: in an output of several chunks only the last one's rows go unread") {
  TempFiles files;
  const std::string fast =
      with_rows_bytes(three_rows(0, 3)) + with_rows_bytes(three_rows(1, 3)) + with_rows_bytes(three_rows(2, 3));
  // A line after the last high line (here a blank one): every line is read, at the same offsets.
  auto expected = scan(files, {fast + "\n"});
  auto got = scan(files, {fast});
  REQUIRE_MESSAGE(got.has_value(), got.error().message);
  REQUIRE_MESSAGE(expected.has_value(), expected.error().message);
  REQUIRE(got->size() == 3);
  REQUIRE(expected->size() == 3);
  CHECK_FALSE((*got)[0].rows_unread);
  CHECK_FALSE((*got)[1].rows_unread);
  CHECK((*got)[2].rows_unread);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK_FALSE((*expected)[i].rows_unread);
    check_same_chunk((*got)[i], (*expected)[i]);
  }
}

TEST_CASE("merge: chunk outputs with rows_bytes merge to the same snapshot as without") {
  TempFiles files;
  ChunkSpec first = three_rows(0, 2);
  first.end = "[3]";
  ChunkSpec second = three_rows(1, 2);
  second.start = "[3]";
  second.low = "0-1-11";
  second.high = "0-1-13";
  second.rows = {R"({"id":3}|{"id":3,"v":"x"})", R"({"id":4}|{"id":4,"v":"y"})"};
  first.rows.pop_back();
  // Changes inside the span: an update in the first chunk, a delete in the second, an insert.
  const std::string deltas = merge_test::spanned(
      merge_test::change("u", R"({"id":2,"v":"bb"})", R"({"id":2,"v":"B"})", "0-1-11", "binlog.000001", 500) +
      merge_test::commit("0-1-11", "0-1-11", "binlog.000001", 550) +
      merge_test::change("d", R"({"id":4,"v":"y"})", "null", "0-1-14", "binlog.000001", 600) +
      merge_test::change("c", "null", R"({"id":9,"v":"new"})", "0-1-14", "binlog.000001", 700) +
      merge_test::commit("0-1-14", "0-1-14", "binlog.000001", 750));
  std::string outputs[2];
  for (const bool fast : {false, true}) {
    first.rows_bytes = fast;
    second.rows_bytes = fast;
    cdc::merge::Options options;
    options.inputs = {files.write("a", merge_test::chunk_text(first, true)),
                      files.write("b", merge_test::chunk_text(second, true))};
    options.deltas = files.write("deltas", deltas);
    options.until = "0-1-99999";
    const auto outcome = merge_test::run_merge(files, options);
    REQUIRE_MESSAGE(outcome.result.has_value(), outcome.message());
    outputs[fast ? 1 : 0] = merge_test::without_run_time(outcome.out);
  }
  CHECK(outputs[0] == outputs[1]);
  CHECK(merge_test::row_lines(outputs[1]).size() == 4);
  CHECK(outputs[1].find(R"("v":"B")") != std::string::npos);
  CHECK(outputs[1].find(R"("v":"y")") == std::string::npos);
  CHECK(outputs[1].find(R"("v":"new")") != std::string::npos);
}

TEST_CASE("merge: a chunk whose rows were not read first still refuses a line that is not one of its rows") {
  TempFiles files;
  // The second row's op changed in place, as a corrupted or edited file might: the file's
  // size and its high line's rows_bytes still agree, so the first pass takes the high line
  // without reading the rows, and the output pass finds the line.
  std::string edited = with_rows_bytes(three_rows());
  const std::size_t second_row = edited.find(R"({"op":"r")", edited.find(R"({"op":"r")") + 1);
  REQUIRE(second_row != std::string::npos);
  edited.replace(second_row, 9, R"({"op":"x")");
  cdc::merge::Options options;
  options.inputs = {files.write("edited", edited)};
  options.deltas = files.write("deltas", merge_test::spanned(""));
  options.until = "0-1-99999";
  const auto outcome = merge_test::run_merge(files, options);
  REQUIRE_FALSE(outcome.result.has_value());
  CHECK(outcome.result.error().code == cdc::Errc::corrupt_input);
  CHECK(outcome.message() ==
        files.dir() + "/edited:4: not an op:\"r\" line of t.a as cdc-snapshot writes them, where its high line's "
                      "\"rows_bytes\" says the chunk's rows are: the file was changed after it was written; snapshot "
                      "the chunk again");
  // Read line by line (no rows_bytes), the same line is refused by the first pass.
  std::string plain = merge_test::chunk_text(three_rows(), true);
  plain.replace(plain.find(R"({"op":"r")", plain.find(R"({"op":"r")") + 1), 9, R"({"op":"x")");
  options.inputs = {files.write("plain", plain)};
  const auto refused = merge_test::run_merge(files, options);
  REQUIRE_FALSE(refused.result.has_value());
  CHECK(refused.message().find("/plain:4: unexpected op \"x\"") != std::string::npos);
}
