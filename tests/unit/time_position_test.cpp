// --from and --until TIME: the time text (util/time_text), the search over binlog files and
// what a file's first events say (stream/time_position).

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "stream/time_position.h"
#include "util/time_text.h"

namespace {

using cdc::Errc;
using cdc::UtcTime;
using cdc::stream::FileOpening;

constexpr std::int64_t k2026_11_30 = 1'795'996'800;  // 2026-11-30T00:00:00Z

// One event: the 19-byte header, then `body`; next_position as a file at `offset` would have it.
std::vector<std::uint8_t> event(std::uint8_t type, std::uint32_t timestamp, const std::vector<std::uint8_t>& body,
                                std::uint32_t offset = 4, std::uint16_t flags = 0) {
  std::vector<std::uint8_t> bytes;
  const auto put = [&bytes](std::uint64_t value, int size) {
    for (int i = 0; i < size; ++i) bytes.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
  };
  const auto size = static_cast<std::uint32_t>(19 + body.size());
  put(timestamp, 4);
  put(type, 1);
  put(1, 4);  // server id
  put(size, 4);
  put(offset + size, 4);
  put(flags, 2);
  bytes.insert(bytes.end(), body.begin(), body.end());
  return bytes;
}

constexpr std::uint8_t kRotate = 4;
constexpr std::uint8_t kFormatDescription = 15;
constexpr std::uint8_t kPreviousGtids = 35;
constexpr std::uint8_t kMariadbGtidList = 163;
constexpr std::uint8_t kQuery = 2;

}  // namespace

TEST_CASE("time text: UTC and offset forms, to the microsecond") {
  auto utc = cdc::parse_time("2026-11-30T10:00:00Z");
  REQUIRE(utc);
  CHECK(utc->micros == (k2026_11_30 + 36'000) * 1'000'000);
  auto offset = cdc::parse_time("2026-11-30T11:00:00+01:00");
  REQUIRE(offset);
  CHECK(*offset == *utc);
  CHECK(*cdc::parse_time("2026-11-30 05:30-0430") == *utc);
  CHECK(*cdc::parse_time("2026-11-30t12:00+02") == *utc);
  CHECK(*cdc::parse_time("2026-11-30T10:00Z") == *utc);
  auto fraction = cdc::parse_time("2026-11-30T10:00:00.25Z");
  REQUIRE(fraction);
  CHECK(fraction->micros == utc->micros + 250'000);
  CHECK(cdc::format_time(*utc) == "2026-11-30T10:00:00Z");
  CHECK(cdc::format_time(*fraction) == "2026-11-30T10:00:00.250000Z");
  CHECK(cdc::format_time(UtcTime{0}) == "1970-01-01T00:00:00Z");
  auto leap = cdc::parse_time("2028-02-29T23:59:59.999999Z");
  REQUIRE(leap);
  CHECK(cdc::format_time(*leap) == "2028-02-29T23:59:59.999999Z");
  CHECK(cdc::format_time(UtcTime{leap->micros + 1}) == "2028-03-01T00:00:00Z");
}

TEST_CASE("time text: what is not a time, or not one cdc reads, says how to write one") {
  CHECK(cdc::looks_like_time("2026-11-30T10:00:00Z"));
  CHECK(cdc::looks_like_time("2026-11-30 10:00"));
  // MariaDB GTID positions and FILE:OFFSET never look like a time.
  CHECK_FALSE(cdc::looks_like_time("2026-11-30"));
  CHECK_FALSE(cdc::looks_like_time("2026-11-30,0-1-5"));
  CHECK_FALSE(cdc::looks_like_time("binlog.000001:4"));
  CHECK_FALSE(cdc::looks_like_time("now"));
  for (const char* text : {"2026-11-30T10:00:00", "2026-11-30T10:00:00 CET", "2026-02-29T10:00Z", "2026-11-31T10:00Z",
                           "2026-13-01T10:00Z", "2026-11-30T24:00Z", "2026-11-30T10:60Z", "2026-11-30T10Z",
                           "2026-11-30T10:00:00.1234567Z", "2026-11-30T10:00:00.Z", "2026-11-30T10:00+15:00",
                           "2026-11-30T10:00Zx", "1969-12-31T23:59Z", "2026-11-30T10:00:0Z"}) {
    CAPTURE(text);
    auto parsed = cdc::parse_time(text);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().code == Errc::usage);
    CHECK(parsed.error().message.find(text) != std::string::npos);
    CHECK(parsed.error().message.find("2026-11-30T10:00:00Z") != std::string::npos);
  }
  CHECK(cdc::parse_time("2026-11-30T10:00:00").error().message.find("has no zone") != std::string::npos);
}

TEST_CASE("time search: the last file opened before the time, in log2 reads") {
  // Files opened at minutes 0, 10, ..., 990.
  const auto opened_at = [](std::size_t i) { return UtcTime::from_seconds(k2026_11_30 + 600 * static_cast<std::int64_t>(i)); };
  // Not structured bindings: clang 14 cannot capture them in CAPTURE's lambda.
  for (const auto& cut : std::vector<std::pair<std::int64_t, std::size_t>>{
           {-3600, 0}, {0, 0}, {1, 0}, {600, 0}, {601, 1}, {6000, 9}, {6001, 10}, {594'000, 99}, {10'000'000, 99}}) {
    const std::int64_t seconds = cut.first;
    const std::size_t want = cut.second;
    CAPTURE(seconds);
    unsigned reads = 0;
    auto index = cdc::stream::file_for_time(100, UtcTime::from_seconds(k2026_11_30 + seconds),
                                            [&](std::size_t i) -> cdc::Result<FileOpening> {
                                              ++reads;
                                              return FileOpening{opened_at(i), std::nullopt};
                                            });
    REQUIRE(index);
    CHECK(*index == want);
    CHECK(reads <= 7);  // ceil(log2(100))
  }
  auto one = cdc::stream::file_for_time(1, UtcTime{0}, [](std::size_t) -> cdc::Result<FileOpening> {
    return FileOpening{};
  });
  REQUIRE(one);
  CHECK(*one == 0);
  auto failing = cdc::stream::file_for_time(5, UtcTime{0}, [](std::size_t) -> cdc::Result<FileOpening> {
    return cdc::fail(Errc::io, "cannot read");
  });
  REQUIRE_FALSE(failing);
  CHECK(failing.error().code == Errc::io);
}

TEST_CASE("time search: a file's opening time and whether history precedes it") {
  const auto ts = static_cast<std::uint32_t>(k2026_11_30);
  SUBCASE("MariaDB: a dump's fake ROTATE is skipped, the GTID list says whether anything came before") {
    cdc::stream::FileOpeningReader reader;
    CHECK_FALSE(*reader.add(event(kRotate, 0, std::vector<std::uint8_t>(12, 0), 0, 0x20)));
    CHECK_FALSE(*reader.add(event(kFormatDescription, ts, std::vector<std::uint8_t>(80, 0))));
    CHECK(*reader.add(event(kMariadbGtidList, ts + 5, {2, 0, 0, 0x10})));  // count 2 (with a flag bit)
    CHECK(reader.opening().opened == UtcTime::from_seconds(ts));
    CHECK(reader.opening().history == true);
  }
  SUBCASE("MariaDB: an empty GTID list is the first binlog ever") {
    cdc::stream::FileOpeningReader reader;
    CHECK_FALSE(*reader.add(event(kFormatDescription, ts, std::vector<std::uint8_t>(80, 0))));
    CHECK(*reader.add(event(kMariadbGtidList, ts, {0, 0, 0, 0})));
    CHECK(reader.opening().history == false);
  }
  SUBCASE("MySQL: the previous GTIDs' number of server uuids") {
    cdc::stream::FileOpeningReader reader;
    CHECK_FALSE(*reader.add(event(kFormatDescription, ts, std::vector<std::uint8_t>(80, 0))));
    CHECK(*reader.add(event(kPreviousGtids, ts, {1, 0, 0, 0, 0, 0, 0, 0})));
    CHECK(reader.opening().history == true);
  }
  SUBCASE("without a GTID list, a zero format description time is taken from the next event") {
    cdc::stream::FileOpeningReader reader;
    CHECK_FALSE(*reader.add(event(kFormatDescription, 0, std::vector<std::uint8_t>(80, 0))));
    CHECK_FALSE(reader.has_time());
    CHECK(*reader.add(event(kQuery, ts + 7, std::vector<std::uint8_t>(20, 0))));
    CHECK(reader.opening().opened == UtcTime::from_seconds(ts + 7));
    CHECK_FALSE(reader.opening().history.has_value());
  }
  SUBCASE("a short event is corrupt input") {
    cdc::stream::FileOpeningReader reader;
    auto added = reader.add(std::vector<std::uint8_t>(10, 0));
    REQUIRE_FALSE(added);
    CHECK(added.error().code == Errc::corrupt_input);
  }
}
