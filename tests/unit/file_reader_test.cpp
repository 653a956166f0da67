// binlog::FileReader's blocks: an event's bytes stay as they were for as long as a copy of the
// block they were read into is held (the rows thread reads them in place), and the reader
// reuses blocks nobody else holds.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "binlog/event_header.h"
#include "binlog/file_reader.h"
#include "unit_support.h"

namespace {

using unit_test::Bytes;

// A file of events of the given sizes (a header with the size, then a fill that tells the
// events apart), after the binlog magic. The reader looks at nothing else.
std::string write_events(const std::string& dir, const std::vector<std::size_t>& sizes) {
  Bytes file = {0xfe, 0x62, 0x69, 0x6e};
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::size_t size = sizes[i];
    Bytes event(size, static_cast<std::uint8_t>(i * 7 + 1));
    event[4] = 0x02;  // QUERY_EVENT: any type but a format description
    for (std::size_t b = 0; b < 4; ++b) event[9 + b] = static_cast<std::uint8_t>(size >> (8 * b));
    event[size - 1] = static_cast<std::uint8_t>(i);
    file.insert(file.end(), event.begin(), event.end());
  }
  const std::string path = dir + "/events.bin";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(file.size()));
  return path;
}

std::string write_events(const std::string& dir, std::size_t count, std::size_t size) {
  return write_events(dir, std::vector<std::size_t>(count, size));
}

bool is_event(std::span<const std::uint8_t> bytes, std::size_t i, std::size_t size) {
  if (bytes.size() != size || bytes[size - 1] != static_cast<std::uint8_t>(i)) return false;
  for (std::size_t b = cdc::binlog::kEventHeaderSize; b + 1 < size; ++b)
    if (bytes[b] != static_cast<std::uint8_t>(i * 7 + 1)) return false;
  return true;
}

// The next event, which must be event i of such a file.
std::span<const std::uint8_t> next_event(cdc::binlog::FileReader& reader, std::size_t i, std::size_t size) {
  auto next = reader.next();
  REQUIRE(next);
  REQUIRE(next->has_value());
  CAPTURE(i);
  REQUIRE(is_event((*next)->bytes, i, size));
  return (*next)->bytes;
}

}  // namespace

TEST_CASE("file reader: a held block keeps its events' bytes while the reader reads on") {
  const unit_test::TempDir dir;
  constexpr std::size_t kEvents = 40;
  constexpr std::size_t kSize = 100'003;  // events straddle the 1 MiB blocks
  const std::string path = write_events(dir.path, kEvents, kSize);
  auto reader = cdc::binlog::FileReader::open(path);
  REQUIRE(reader);
  // Every third event held, with its block, until the end: as the rows thread holds work.
  std::vector<std::pair<cdc::binlog::FileReader::Block, std::span<const std::uint8_t>>> held;
  std::vector<const void*> blocks_seen;
  for (std::size_t i = 0; i < kEvents; ++i) {
    const auto bytes = next_event(*reader, i, kSize);
    if (i % 3 == 0) held.emplace_back(reader->block(), bytes);
    if (blocks_seen.empty() || blocks_seen.back() != reader->block().get()) blocks_seen.push_back(reader->block().get());
  }
  auto end = reader->next();
  REQUIRE(end);
  CHECK_FALSE(end->has_value());
  for (std::size_t k = 0; k < held.size(); ++k) {
    CAPTURE(k);
    CHECK(is_event(held[k].second, k * 3, kSize));
  }
  // 4 MB through 1 MiB blocks, each held: the reader went on in new ones.
  CHECK(blocks_seen.size() >= 4);
}

TEST_CASE("file reader: blocks nobody else holds are reused, not reallocated") {
  const unit_test::TempDir dir;
  constexpr std::size_t kEvents = 60;
  constexpr std::size_t kSize = 70'001;
  const std::string path = write_events(dir.path, kEvents, kSize);
  SUBCASE("nothing held: one block throughout") {
    auto reader = cdc::binlog::FileReader::open(path);
    REQUIRE(reader);
    const void* first = reader->block().get();
    for (std::size_t i = 0; i < kEvents; ++i) {
      (void)next_event(*reader, i, kSize);
      CHECK(reader->block().get() == first);
    }
  }
  SUBCASE("each block held a while and let go: a few blocks, taken in turn") {
    auto reader = cdc::binlog::FileReader::open(path);
    REQUIRE(reader);
    std::vector<cdc::binlog::FileReader::Block> holding;
    std::vector<const void*> distinct;
    for (std::size_t i = 0; i < kEvents; ++i) {
      (void)next_event(*reader, i, kSize);
      holding.push_back(reader->block());
      if (holding.size() > 2) holding.erase(holding.begin());  // the oldest let go
      const void* block = reader->block().get();
      if (std::find(distinct.begin(), distinct.end(), block) == distinct.end()) distinct.push_back(block);
    }
    // 4.2 MB read; at most two events held at a time, so a handful of blocks serve it all.
    CHECK(distinct.size() <= 4);
  }
}

TEST_CASE("file reader: events of any size are read whole, across read steps and blocks") {
  // The reader asks read() for 128 KiB at a time, more when an event needs it, in 1 MiB blocks
  // that grow for a bigger event: sizes on either side of each.
  const std::vector<std::size_t> sizes = {19,          131'072 - 19, 131'072, 131'072 + 1, 40,
                                          300'007,     1'048'576 - 4, 1'048'576, 1'048'576 + 7, 23,
                                          3'000'001,   19,           131'071,  2'000'003};
  const unit_test::TempDir dir;
  const std::string path = write_events(dir.path, sizes);
  auto reader = cdc::binlog::FileReader::open(path);
  REQUIRE(reader);
  for (std::size_t i = 0; i < sizes.size(); ++i) (void)next_event(*reader, i, sizes[i]);
  auto end = reader->next();
  REQUIRE(end);
  CHECK_FALSE(end->has_value());
}
