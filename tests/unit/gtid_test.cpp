#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "gtid/mariadb_gtid.h"
#include "gtid/mysql_gtid_set.h"
#include "gtid/uuid.h"
#include "util/byte_reader.h"

#include "gtid_string_makers.h"

namespace {

using cdc::ByteReader;
using cdc::Errc;
using cdc::gtid::Gtid;
using cdc::gtid::Interval;
using cdc::gtid::kMaxGno;
using cdc::gtid::MariadbGtid;
using cdc::gtid::MariadbGtidPos;
using cdc::gtid::MysqlGtidSet;
using cdc::gtid::Uuid;

const std::string U1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
const std::string U2 = "4f8ca9d0-1234-11ee-8000-000000000001";
const std::string U3 = "a1b2c3d4-0000-4000-8000-0000000000ff";

Uuid uuid(const std::string& text) {
  auto parsed = Uuid::parse(text);
  REQUIRE(parsed.has_value());
  return *parsed;
}

MysqlGtidSet set_of(const std::string& text) {
  auto parsed = MysqlGtidSet::parse(text);
  if (!parsed) FAIL_CHECK(parsed.error().message);
  REQUIRE(parsed.has_value());
  return *parsed;
}

std::string bytes(std::initializer_list<unsigned> values) {
  std::string out;
  for (const unsigned v : values) out.push_back(static_cast<char>(v));
  return out;
}

std::string u64_le(std::uint64_t value) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  return out;
}

std::string uuid_bytes(const std::string& text) {
  const Uuid u = uuid(text);
  return std::string(reinterpret_cast<const char*>(u.bytes.data()), u.bytes.size());
}

std::string hex_to_bytes(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

std::string encoded(const MysqlGtidSet& set) {
  std::string out;
  set.encode(out);
  return out;
}

cdc::Result<MysqlGtidSet> decode(const std::string& data) {
  ByteReader reader(data);
  return MysqlGtidSet::decode(reader);
}

// ---------------------------------------------------------------------------------------
// Random sets with an independent model: the set of (uuid index, tag index, number).

const std::vector<std::string> kRandomUuids = {U1, U2, U3};
const std::vector<Uuid> kRandomUuidValues = {*Uuid::parse(U1), *Uuid::parse(U2), *Uuid::parse(U3)};
const std::vector<std::string> kRandomTags = {"", "alpha", "b_2"};
using Model = std::set<std::tuple<std::size_t, std::size_t, std::uint64_t>>;

std::uint64_t pick(std::mt19937_64& rng, std::uint64_t low, std::uint64_t high) {
  return std::uniform_int_distribution<std::uint64_t>(low, high)(rng);
}

// Small numbers (1..kSmallMax), so the model can enumerate every member.
constexpr std::uint64_t kSmallMax = 40;

MysqlGtidSet random_small_set(std::mt19937_64& rng, Model& model) {
  MysqlGtidSet set;
  const std::uint64_t count = pick(rng, 0, 6);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::size_t u = static_cast<std::size_t>(pick(rng, 0, kRandomUuids.size() - 1));
    const std::size_t t = static_cast<std::size_t>(pick(rng, 0, kRandomTags.size() - 1));
    const std::uint64_t start = pick(rng, 1, kSmallMax);
    const std::uint64_t end = std::min(kSmallMax, start + pick(rng, 0, 8));
    REQUIRE(set.add(kRandomUuidValues[u], kRandomTags[t], start, end).has_value());
    for (std::uint64_t n = start; n <= end; ++n) model.emplace(u, t, n);
  }
  return set;
}

// Anywhere in 1..kMaxGno, including the very end.
MysqlGtidSet random_wide_set(std::mt19937_64& rng) {
  MysqlGtidSet set;
  const std::uint64_t count = pick(rng, 0, 8);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::size_t u = static_cast<std::size_t>(pick(rng, 0, kRandomUuids.size() - 1));
    const std::size_t t = static_cast<std::size_t>(pick(rng, 0, kRandomTags.size() - 1));
    std::uint64_t start = 0;
    switch (pick(rng, 0, 2)) {
      case 0: start = pick(rng, 1, 30); break;
      case 1: start = pick(rng, kMaxGno - 30, kMaxGno); break;
      default: start = pick(rng, 1, kMaxGno); break;
    }
    const std::uint64_t length = pick(rng, 0, 1) == 0 ? pick(rng, 0, 5) : pick(rng, 0, std::uint64_t{1} << 40);
    const std::uint64_t end = length > kMaxGno - start ? kMaxGno : start + length;
    REQUIRE(set.add(kRandomUuidValues[u], kRandomTags[t], start, end).has_value());
  }
  return set;
}

void check_matches_model(const MysqlGtidSet& set, const Model& model) {
  for (std::size_t u = 0; u < kRandomUuids.size(); ++u) {
    for (std::size_t t = 0; t < kRandomTags.size(); ++t) {
      for (std::uint64_t n = 1; n <= kSmallMax + 1; ++n) {
        const Gtid gtid{kRandomUuidValues[u], kRandomTags[t], n};
        const bool expected = model.count({u, t, n}) != 0;
        if (set.contains(gtid) != expected) {
          FAIL_CHECK(fmt::format("{} in {}: expected {}", gtid, set, expected));
          return;
        }
      }
    }
  }
}

}  // namespace



// =======================================================================================
// Uuid

TEST_CASE("gtid: Uuid parses the 36-character form in either case and prints lower case") {
  const auto parsed = Uuid::parse("3E11FA47-71CA-11E1-9E33-C80AA9429562");
  REQUIRE(parsed.has_value());
  CHECK(parsed->to_string() == U1);
  CHECK(parsed->bytes[0] == 0x3e);
  CHECK(parsed->bytes[15] == 0x62);
  CHECK(fmt::format("{}", *parsed) == U1);
  CHECK(fmt::format("[{:>38}]", *parsed) == "[  " + U1 + "]");
  CHECK(uuid(U1) < uuid(U2));
}

TEST_CASE("gtid: Uuid rejects other forms with a message") {
  struct Case {
    std::string name;
    std::string text;
    std::string message;
  };
  const Case cases[] = {
      {"35 characters", "3e11fa47-71ca-11e1-9e33-c80aa942956",
       "a UUID has 36 characters (like 3e11fa47-71ca-11e1-9e33-c80aa9429562), found 35"},
      // MySQL's Uuid::parse knows these two, but its GTID-set parser never asks for them.
      {"32 hex digits without dashes", "3e11fa4771ca11e19e33c80aa9429562",
       "a UUID has 36 characters (like 3e11fa47-71ca-11e1-9e33-c80aa9429562), found 32"},
      {"braces", "{3e11fa47-71ca-11e1-9e33-c80aa9429562}",
       "a UUID has 36 characters (like 3e11fa47-71ca-11e1-9e33-c80aa9429562), found 38"},
      {"not hex", "3e11fa47-71ca-11e1-9e33-c80aa942956g", "expected a hex digit at position 35 of the UUID, found 'g'"},
      {"dash misplaced", "3e11fa4-771ca-11e1-9e33-c80aa9429562",
       "expected a hex digit at position 7 of the UUID, found '-'"},
      {"no dash", "3e11fa47x71ca-11e1-9e33-c80aa9429562", "expected '-' at position 8 of the UUID, found 'x'"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const auto parsed = Uuid::parse(c.text);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == Errc::usage);
    CHECK(parsed.error().message == c.message);
  }
}

// =======================================================================================
// MySQL GTID sets: text

TEST_CASE("gtid: MySQL set text parses and prints canonically") {
  struct Case {
    std::string name;
    std::string text;
    std::string canonical;
  };
  const std::string tag32(32, 't');
  const Case cases[] = {
      {"empty", "", ""},
      {"only whitespace", " \n\t ", ""},
      {"one GTID, upper case UUID", "3E11FA47-71CA-11E1-9E33-C80AA9429562:23", U1 + ":23"},
      {"intervals and single numbers", U1 + ":1-5:7:9-12", U1 + ":1-5:7:9-12"},
      {"adjacent intervals merge", U1 + ":1-3:4-6", U1 + ":1-6"},
      {"overlapping intervals merge", U1 + ":1-5:3-8:8", U1 + ":1-8"},
      {"unsorted intervals", U1 + ":9-12:1-5:7", U1 + ":1-5:7:9-12"},
      {"interval of one", U1 + ":5-5", U1 + ":5"},
      {"contained interval", U1 + ":1-100:20-30", U1 + ":1-100"},
      {"interval bridging two", U1 + ":1-3:7-9:4-6", U1 + ":1-9"},
      {"same UUID twice", U1 + ":1-3," + U1 + ":4-5", U1 + ":1-5"},
      {"UUIDs sort by bytes", U3 + ":1," + U2 + ":2," + U1 + ":3", U1 + ":3," + U2 + ":2," + U3 + ":1"},
      // SHOW MASTER STATUS / @@gtid_executed wrap entries with ",\n".
      {"server output with newlines", U1 + ":1-100,\n" + U2 + ":1-7", U1 + ":1-100," + U2 + ":1-7"},
      {"whitespace around every separator", " \t" + U1 + " : 1 - 5 :\n7 ,\r\n " + U2 + " :3 \n", U1 + ":1-5:7," + U2 + ":3"},
      {"largest GTID number", U1 + ":9223372036854775806", U1 + ":9223372036854775806"},
      {"range to the largest", U1 + ":1-9223372036854775806", U1 + ":1-9223372036854775806"},
      // Tagged GTIDs (MySQL 8.3+): a tag applies to the intervals after it.
      {"tagged", U1 + ":tag:1-5", U1 + ":tag:1-5"},
      {"untagged then tagged", U1 + ":1-3:tag:5", U1 + ":1-3:tag:5"},
      {"upper case tag folds", U1 + ":My_Tag_1:5", U1 + ":my_tag_1:5"},
      {"untagged prints first", U1 + ":tag:1," + U1 + ":2", U1 + ":2:tag:1"},
      {"tags sort", U1 + ":zeta:1:alpha:2:_x:3", U1 + ":_x:3:alpha:2:zeta:1"},  // '_' < 'a' in bytes
      {"same tag, two entries", U1 + ":t:1-2," + U1 + ":T:3", U1 + ":t:1-3"},
      {"a tag covers every interval after it", U1 + ":b:1:4:6-7", U1 + ":b:1:4:6-7"},
      {"tags under several UUIDs", U2 + ":b:1," + U2 + ":4," + U1 + ":a:2", U1 + ":a:2," + U2 + ":4:b:1"},
      {"tag of 32 characters", U1 + ":" + tag32 + ":1", U1 + ":" + tag32 + ":1"},
      {"tag with digits", U1 + ":t2024_01:9", U1 + ":t2024_01:9"},
      // As on the server: empty entries and entries without intervals add nothing.
      {"trailing comma", U1 + ":1-5,", U1 + ":1-5"},
      {"empty entries", ",," + U1 + ":1,, ," + U2 + ":2,", U1 + ":1," + U2 + ":2"},
      {"UUID without intervals", U1, ""},
      {"tag without intervals", U1 + ":tag," + U2 + ":1", U2 + ":1"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const auto parsed = MysqlGtidSet::parse(c.text);
    if (!parsed) FAIL_CHECK(parsed.error().message);
    REQUIRE(parsed.has_value());
    CHECK(parsed->to_string() == c.canonical);
    CHECK(fmt::format("{}", *parsed) == c.canonical);
    CHECK(parsed->empty() == c.canonical.empty());
    const auto again = MysqlGtidSet::parse(parsed->to_string());
    REQUIRE(again.has_value());
    CHECK(*again == *parsed);
  }
}

TEST_CASE("gtid: malformed MySQL set text fails with the offset and what was expected") {
  struct Case {
    std::string name;
    std::string text;
    std::string message;
  };
  const std::string at37 = "invalid GTID set at offset 37: ";
  const Case cases[] = {
      {"UUID of 35 characters", "3e11fa47-71ca-11e1-9e33-c80aa942956:1",
       "invalid GTID set at offset 0: expected a UUID of 36 characters like 3e11fa47-71ca-11e1-9e33-c80aa9429562, "
       "found '3e11fa47-71ca-11e1-9e33-c80aa942956' (35 characters)"},
      {"UUID of 37 characters", U1 + "2:1",
       "invalid GTID set at offset 0: expected a UUID of 36 characters like 3e11fa47-71ca-11e1-9e33-c80aa9429562, "
       "found '3e11fa47-71ca-11e1-9e33-c80aa94295622' (37 characters)"},
      {"UUID without dashes", "3e11fa4771ca11e19e33c80aa9429562:1",
       "invalid GTID set at offset 0: expected a UUID of 36 characters like 3e11fa47-71ca-11e1-9e33-c80aa9429562, "
       "found '3e11fa4771ca11e19e33c80aa9429562' (32 characters)"},
      {"UUID with a non-hex character", "3e11fa47-71ca-11e1-9e33-c80aa942956g:1",
       "invalid GTID set at offset 35: expected a hex digit or '-' in the UUID, found 'g'"},
      {"UUID with a misplaced dash", "3e11fa4-771ca-11e1-9e33-c80aa9429562:1",
       "invalid GTID set at offset 0: invalid UUID '3e11fa4-771ca-11e1-9e33-c80aa9429562': expected a hex digit at "
       "position 7 of the UUID, found '-'"},
      {"no UUID", ":1",
       "invalid GTID set at offset 0: expected a UUID like 3e11fa47-71ca-11e1-9e33-c80aa9429562, found ':'"},
      {"zero", U1 + ":0", at37 + "transaction numbers start at 1, found 0"},
      {"zero starts an interval", U1 + ":0-5", at37 + "transaction numbers start at 1, found 0"},
      {"hex number", U1 + ":0x10", at37 + "transaction numbers start at 1, found 0"},
      {"leading zero", U1 + ":010", at37 + "number '010' has a leading zero (the server would read it as octal)"},
      {"start after end", U1 + ":5-3", at37 + "interval 5-3 starts after it ends"},
      {"nothing after ':'", U1 + ":", at37 + "expected a transaction number or a tag after ':', found end of text"},
      {"empty interval", U1 + "::5", at37 + "expected a transaction number or a tag after ':', found ':'"},
      {"open interval", U1 + ":1-",
       "invalid GTID set at offset 39: expected the end of the interval (a transaction number), found end of text"},
      {"sign", U1 + ":+5", at37 + "expected a transaction number or a tag after ':', found '+'"},
      {"negative", U1 + ":-5", at37 + "expected a transaction number or a tag after ':', found '-'"},
      {"2^63-1 (the server's GNO_END)", U1 + ":9223372036854775807",
       at37 + "transaction number 9223372036854775807 is larger than the maximum 9223372036854775806"},
      {"2^64", U1 + ":1-18446744073709551616",
       "invalid GTID set at offset 39: transaction number 18446744073709551616 is larger than the maximum "
       "9223372036854775806"},
      {"bad tag character", U1 + ":tag-x:1",
       "invalid GTID set at offset 40: expected ':', ',' or the end of the set after a tag, found '-'"},
      {"tag of 33 characters", U1 + ":" + std::string(33, 'a') + ":1",
       at37 + "tag 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' has 33 characters, more than 32"},
      {"non-ASCII tag", U1 + ":t\xc3\xa2g:1",
       "invalid GTID set at offset 38: expected ':', ',' or the end of the set after a tag, found byte 0xc3"},
      {"tag then a number without ':'", U1 + ":tag 5",
       "invalid GTID set at offset 41: expected ':', ',' or the end of the set after a tag, found '5'"},
      {"letters after a number", U1 + ":1tag",
       "invalid GTID set at offset 38: expected ':', ',' or the end of the set after an interval, found 't'"},
      {"space between numbers", U1 + ":1 2",
       "invalid GTID set at offset 39: expected ':', ',' or the end of the set after an interval, found '2'"},
      {"number without ':'", U1 + " 1",
       at37 + "expected ':', ',' or the end of the set after the UUID, found '1'"},
      {"semicolon separator", U1 + ":1;" + U2 + ":2",
       "invalid GTID set at offset 38: expected ':', ',' or the end of the set after an interval, found ';'"},
      {"error in a later line", U1 + ":1,\n" + U2 + ":1:",
       "invalid GTID set at offset 79: expected a transaction number or a tag after ':', found end of text"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const auto parsed = MysqlGtidSet::parse(c.text);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == Errc::usage);
    CHECK(parsed.error().message == c.message);
  }
}

TEST_CASE("gtid: single GTIDs parse and print as uuid:n and uuid:tag:n") {
  const auto plain = Gtid::parse(" 3E11FA47-71CA-11E1-9E33-C80AA9429562:23 ");
  REQUIRE(plain.has_value());
  CHECK(*plain == Gtid{uuid(U1), "", 23});
  CHECK(plain->to_string() == U1 + ":23");
  const auto tagged = Gtid::parse(U1 + ":Batch_7:5");
  REQUIRE(tagged.has_value());
  CHECK(*tagged == Gtid{uuid(U1), "batch_7", 5});
  CHECK(fmt::format("{}", *tagged) == U1 + ":batch_7:5");

  struct Case {
    std::string name;
    std::string text;
    std::string message;
  };
  const Case cases[] = {
      {"a range", U1 + ":1-5",
       "invalid GTID at offset 38: expected the end of the GTID (one GTID is uuid[:tag]:number), found '-'"},
      {"no number", U1, "invalid GTID at offset 36: expected ':' after the UUID, found end of text"},
      {"tag without number", U1 + ":tag", "invalid GTID at offset 40: expected ':' after the tag, found end of text"},
      {"zero", U1 + ":0", "invalid GTID at offset 37: transaction numbers start at 1, found 0"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const auto parsed = Gtid::parse(c.text);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().message == c.message);
  }
}

// =======================================================================================
// MySQL GTID sets: membership, add, algebra

TEST_CASE("gtid: MySQL set contains GTIDs and subsets") {
  const MysqlGtidSet set = set_of(U1 + ":1-5:7:tag:10-20," + U2 + ":3");
  struct Case {
    std::string name;
    std::string gtid;
    bool contained;
  };
  const Case cases[] = {
      {"first", U1 + ":1", true},          {"inside", U1 + ":4", true},
      {"interval end", U1 + ":5", true},   {"gap", U1 + ":6", false},
      {"single", U1 + ":7", true},         {"after", U1 + ":8", false},
      {"tagged", U1 + ":tag:15", true},    {"tag is part of the id", U1 + ":15", false},
      {"other tag", U1 + ":other:1", false}, {"untagged not in tag", U1 + ":tag:1", false},
      {"second UUID", U2 + ":3", true},    {"unknown UUID", U3 + ":1", false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const auto gtid = Gtid::parse(c.gtid);
    REQUIRE(gtid.has_value());
    CHECK(set.contains(*gtid) == c.contained);
  }

  CHECK(set.contains(set));
  CHECK(set.contains(MysqlGtidSet{}));
  CHECK_FALSE(MysqlGtidSet{}.contains(set));
  CHECK(set.contains(set_of(U1 + ":2-4:tag:10," + U2 + ":3")));
  CHECK_FALSE(set.contains(set_of(U1 + ":4-6")));
  CHECK_FALSE(set.contains(set_of(U1 + ":5-7")));  // 6 is missing
  CHECK_FALSE(set.contains(set_of(U3 + ":1")));
  CHECK_FALSE(set.contains(set_of(U1 + ":other:1")));
  CHECK(set.intervals(uuid(U1), "tag") == std::vector<Interval>{{10, 20}});
  CHECK(set.intervals(uuid(U3)).empty());
  CHECK(set.has_tags());
  CHECK_FALSE(set_of(U1 + ":1").has_tags());
}

TEST_CASE("gtid: MySQL set add merges and checks its arguments") {
  MysqlGtidSet set;
  REQUIRE(set.add(Gtid{uuid(U1), "", 3}).has_value());
  REQUIRE(set.add(uuid(U1), "", 1, 2).has_value());
  REQUIRE(set.add(uuid(U1), "", 5, 9).has_value());
  CHECK(set.to_string() == U1 + ":1-3:5-9");
  REQUIRE(set.add(Gtid{uuid(U1), "", 4}).has_value());
  CHECK(set.to_string() == U1 + ":1-9");
  REQUIRE(set.add(uuid(U1), "TAG", kMaxGno, kMaxGno).has_value());
  CHECK(set.to_string() == U1 + ":1-9:tag:9223372036854775806");

  struct Case {
    std::string name;
    std::string tag;
    std::uint64_t start;
    std::uint64_t end;
    std::string message;
  };
  const Case cases[] = {
      {"zero", "", 0, 5, "GTID number 0 is out of range (1 to 9223372036854775806)"},
      {"too large", "", 1, kMaxGno + 1, "GTID number 9223372036854775807 is out of range (1 to 9223372036854775806)"},
      {"start after end", "", 5, 4, "GTID interval 5-4 starts after it ends"},
      {"bad tag", "a-b", 1, 1,
       "tag 'a-b': '-' is not allowed (tags are [a-z_][a-z0-9_]{0,31}, case-insensitive)"},
      {"digit first", "1a", 1, 1,
       "tag '1a': '1' is not allowed as the first character (tags are [a-z_][a-z0-9_]{0,31}, case-insensitive)"},
      {"long tag", std::string(33, 'x'), 1, 1,
       "tag 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' has 33 characters, more than 32 (tags are [a-z_][a-z0-9_]{0,31}, "
       "case-insensitive)"},
  };
  const MysqlGtidSet before = set;
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const auto added = set.add(uuid(U1), c.tag, c.start, c.end);
    REQUIRE_FALSE(added.has_value());
    CHECK(added.error().code == Errc::usage);
    CHECK(added.error().message == c.message);
    CHECK(set == before);
  }
}

TEST_CASE("gtid: MySQL set union, intersect and subtract") {
  struct Case {
    std::string name;
    std::string a;
    std::string b;
    std::string union_ab;
    std::string intersect_ab;
    std::string a_minus_b;
  };
  const Case cases[] = {
      {"disjoint UUIDs", U1 + ":1-5", U2 + ":1-5", U1 + ":1-5," + U2 + ":1-5", "", U1 + ":1-5"},
      {"overlap", U1 + ":1-10", U1 + ":5-15", U1 + ":1-15", U1 + ":5-10", U1 + ":1-4"},
      {"adjacent", U1 + ":1-4", U1 + ":5-9", U1 + ":1-9", "", U1 + ":1-4"},
      {"hole punched", U1 + ":1-10", U1 + ":4-6", U1 + ":1-10", U1 + ":4-6", U1 + ":1-3:7-10"},
      {"many pieces", U1 + ":1-3:5-8:10-20", U1 + ":2-6:9-11:15", U1 + ":1-20", U1 + ":2-3:5-6:10-11:15",
       U1 + ":1:7-8:12-14:16-20"},
      {"tags are separate ids", U1 + ":1-5:t:1-5", U1 + ":t:3-9", U1 + ":1-5:t:1-9", U1 + ":t:3-5",
       U1 + ":1-5:t:1-2"},
      {"empty operand", U1 + ":1-5", "", U1 + ":1-5", "", U1 + ":1-5"},
      {"to the largest number", U1 + ":1-9223372036854775806", U1 + ":9223372036854775806",
       U1 + ":1-9223372036854775806", U1 + ":9223372036854775806", U1 + ":1-9223372036854775805"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const MysqlGtidSet a = set_of(c.a);
    const MysqlGtidSet b = set_of(c.b);
    CHECK(a.union_with(b).to_string() == c.union_ab);
    CHECK(b.union_with(a).to_string() == c.union_ab);
    CHECK(a.intersect(b).to_string() == c.intersect_ab);
    CHECK(b.intersect(a).to_string() == c.intersect_ab);
    CHECK(a.subtract(b).to_string() == c.a_minus_b);
    CHECK(a == set_of(c.a));  // operands unchanged
  }
}

TEST_CASE("gtid: MySQL set algebra matches a model on random small sets") {
  std::mt19937_64 rng(20240904);
  for (int round = 0; round < 300; ++round) {
    CAPTURE(round);
    Model model_a;
    Model model_b;
    const MysqlGtidSet a = random_small_set(rng, model_a);
    const MysqlGtidSet b = random_small_set(rng, model_b);
    check_matches_model(a, model_a);
    check_matches_model(b, model_b);

    Model model_union = model_a;
    model_union.insert(model_b.begin(), model_b.end());
    Model model_intersect;
    Model model_minus;
    for (const auto& member : model_a) (model_b.count(member) ? model_intersect : model_minus).insert(member);

    check_matches_model(a.union_with(b), model_union);
    check_matches_model(a.intersect(b), model_intersect);
    check_matches_model(a.subtract(b), model_minus);
    CHECK(a.contains(b) == std::includes(model_a.begin(), model_a.end(), model_b.begin(), model_b.end()));
  }
}

TEST_CASE("gtid: MySQL set algebra laws hold on random sets over the whole number range") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 500; ++round) {
    CAPTURE(round);
    const MysqlGtidSet a = random_wide_set(rng);
    const MysqlGtidSet b = random_wide_set(rng);
    const MysqlGtidSet a_or_b = a.union_with(b);
    const MysqlGtidSet a_and_b = a.intersect(b);
    const MysqlGtidSet a_minus_b = a.subtract(b);
    const std::string a_text = a.to_string();
    const std::string b_text = b.to_string();
    CAPTURE(a_text);
    CAPTURE(b_text);
    CHECK(a_or_b.contains(a));
    CHECK(a_or_b.contains(b));
    CHECK(a_or_b == b.union_with(a));
    CHECK(a.contains(a_and_b));
    CHECK(b.contains(a_and_b));
    CHECK(a_and_b == b.intersect(a));
    CHECK(a_minus_b.intersect(b).empty());
    CHECK(a_minus_b.union_with(a_and_b) == a);
    CHECK(a.subtract(a).empty());
    CHECK(a.contains(b) == b.subtract(a).empty());
    CHECK(a.union_with(a) == a);
    CHECK(a.intersect(a) == a);
  }
}

TEST_CASE("gtid: parse(to_string(x)) == x and decode(encode(x)) == x on random sets") {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 500; ++round) {
    CAPTURE(round);
    const MysqlGtidSet set = random_wide_set(rng);
    const std::string text = set.to_string();
    CAPTURE(text);
    const auto parsed = MysqlGtidSet::parse(text);
    REQUIRE(parsed.has_value());
    CHECK(*parsed == set);
    CHECK(parsed->to_string() == text);

    const std::string binary = encoded(set);
    CHECK(binary.size() == set.encoded_size());
    ByteReader reader(binary);
    const auto decoded = MysqlGtidSet::decode(reader);
    REQUIRE(decoded.has_value());
    CHECK(*decoded == set);
    CHECK(reader.empty());
  }
}

// =======================================================================================
// MySQL GTID sets: binary form

TEST_CASE("gtid: MySQL set binary form, hand-checked bytes") {
  SUBCASE("untagged") {
    const MysqlGtidSet set = set_of(U1 + ":1-5:7");
    const std::string expected = bytes({
        0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // n_sids = 1 (format 0 in the top byte)
        0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1,  // UUID 3e11fa47-71ca-11e1-
        0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62,  //      9e33-c80aa9429562
        0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // n_intervals = 2
        0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // start 1
        0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // end 6, exclusive: 1-5
        0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // start 7
        0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // end 8, exclusive: 7
    });
    CHECK(encoded(set) == expected);
    const auto decoded = decode(expected);
    REQUIRE(decoded.has_value());
    CHECK(*decoded == set);
  }
  SUBCASE("tagged (MySQL 8.3+)") {
    const MysqlGtidSet set = set_of(U1 + ":1-2:abc:7");
    const std::string expected = bytes({
        0x01,                                      // format 1 (tagged), repeated in the lowest byte
        0x02, 0x00, 0x00, 0x00, 0x00, 0x00,        // n_sids = 2 (bits 8..55): one per (uuid, tag)
        0x01,                                      // format 1 in the top byte
        0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1,  // UUID
        0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62,  //
        0x00,                                            // tag length 0 << 1: untagged
        0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // n_intervals = 1
        0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // start 1
        0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // end 3, exclusive: 1-2
        0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1,  // UUID again
        0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62,  //
        0x06, 'a', 'b', 'c',                             // tag length 3 << 1, then "abc"
        0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // n_intervals = 1
        0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // start 7
        0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // end 8, exclusive: 7
    });
    CHECK(encoded(set) == expected);
    const auto decoded = decode(expected);
    REQUIRE(decoded.has_value());
    CHECK(*decoded == set);
  }
  SUBCASE("empty set") {
    CHECK(encoded(MysqlGtidSet{}) == bytes({0, 0, 0, 0, 0, 0, 0, 0}));
  }
}

TEST_CASE("gtid: MySQL set binary form decodes PREVIOUS_GTIDS bodies written by servers") {
  struct Case {
    std::string name;
    std::string body_hex;  // the event body, without header and CRC32
    std::string text;
  };
  const Case cases[] = {
      // ../shared/fixtures/binlog/rust_mysql_common/binlog_transaction_with_GTID_TAG.000001
      // (MySQL 9.6.0), PREVIOUS_GTIDS at file offset 127: untagged 1-13 and tag mytag 1-2.
      {"9.6.0, tagged",
       "0102000000000001" "55778904029911f1b1b84ef0c4956feb" "00" "0100000000000000" "0100000000000000"
       "0e00000000000000" "55778904029911f1b1b84ef0c4956feb" "0a6d79746167" "0100000000000000"
       "0100000000000000" "0300000000000000",
       "55778904-0299-11f1-b1b8-4ef0c4956feb:1-13:mytag:1-2"},
      // binlog_transaction_previous_GTID_no_tag.000001 (MySQL 8.0.40), offset 126.
      {"8.0.40, untagged",
       "0100000000000000" "b9b88c66075511f198994a9da94c4d71" "0100000000000000" "0100000000000000"
       "0300000000000000",
       "b9b88c66-0755-11f1-9899-4a9da94c4d71:1-2"},
      // master-bin.000001 (MySQL 8.0.2), offset 123: no GTIDs yet.
      {"8.0.2, empty", "0000000000000000", ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::string body = hex_to_bytes(c.body_hex);
    ByteReader reader(body);
    const auto decoded = MysqlGtidSet::decode(reader);
    if (!decoded) FAIL_CHECK(decoded.error().message);
    REQUIRE(decoded.has_value());
    CHECK(decoded->to_string() == c.text);
    CHECK(reader.empty());
    CHECK(encoded(*decoded) == body);  // byte-exact round trip
  }
}

TEST_CASE("gtid: MySQL set binary decoding accepts what the server accepts") {
  SUBCASE("bytes after the set stay in the reader") {
    const std::string data = encoded(set_of(U1 + ":1")) + "xyz";
    ByteReader reader(data);
    const auto decoded = MysqlGtidSet::decode(reader);
    REQUIRE(decoded.has_value());
    CHECK(decoded->to_string() == U1 + ":1");
    CHECK(reader.remaining() == 3);
  }
  SUBCASE("an upper-case tag folds to lower case, as Tag::decode_tag does") {
    const std::string data = bytes({0x01, 0x01, 0, 0, 0, 0, 0, 0x01}) + uuid_bytes(U1) + bytes({0x06, 'A', 'b', 'C'}) +
                             u64_le(1) + u64_le(5) + u64_le(6);
    const auto decoded = decode(data);
    REQUIRE(decoded.has_value());
    CHECK(decoded->to_string() == U1 + ":abc:5");
  }
  SUBCASE("a TSID repeated in a later entry merges") {
    const std::string data = u64_le(2) + uuid_bytes(U1) + u64_le(1) + u64_le(5) + u64_le(9) + uuid_bytes(U1) +
                             u64_le(2) + u64_le(1) + u64_le(6) + u64_le(20) + u64_le(21);
    const auto decoded = decode(data);
    REQUIRE(decoded.has_value());
    CHECK(decoded->to_string() == U1 + ":1-8:20");
  }
  SUBCASE("the tagged format without any tag") {
    const std::string data = bytes({0x01, 0x01, 0, 0, 0, 0, 0, 0x01}) + uuid_bytes(U1) + bytes({0x00}) + u64_le(1) +
                             u64_le(1) + u64_le(2);
    const auto decoded = decode(data);
    REQUIRE(decoded.has_value());
    CHECK(decoded->to_string() == U1 + ":1");
    CHECK(encoded(*decoded).size() == data.size() - 1);  // re-encoded in the untagged format
  }
}

TEST_CASE("gtid: hostile MySQL set binary input fails cleanly") {
  struct Case {
    std::string name;
    std::string data;
    std::string message;
  };
  const std::string uuid1 = uuid_bytes(U1);
  const std::string tagged1 = bytes({0x01, 0x01, 0, 0, 0, 0, 0, 0x01});  // tagged, n_sids = 1
  const Case cases[] = {
      {"nothing", "", "GTID set encoding: n_sids: need 8 bytes, have 0 at offset 0"},
      {"short header", bytes({1, 0, 0}), "GTID set encoding: n_sids: need 8 bytes, have 3 at offset 0"},
      {"unknown format", bytes({0, 0, 0, 0, 0, 0, 0, 2}),
       "GTID set encoding: unknown format 2 in n_sids 0x0200000000000000 at offset 0"},
      {"huge n_sids", bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00}),
       "GTID set encoding: n_sids 72057594037927935 does not fit in the 0 bytes left (24 or more each) at offset 0"},
      {"huge tagged n_sids", bytes({0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}) + uuid1,
       "GTID set encoding: n_sids 281474976710655 does not fit in the 16 bytes left (25 or more each) at offset 0"},
      {"n_sids one too many", u64_le(2) + uuid1 + u64_le(0) + uuid1,
       "GTID set encoding: n_sids 2 does not fit in the 40 bytes left (24 or more each) at offset 0"},
      {"huge n_intervals", u64_le(1) + uuid1 + u64_le(~std::uint64_t{0}),
       "GTID set encoding: n_intervals 18446744073709551615 does not fit in the 0 bytes left (16 each) at offset 24"},
      {"truncated interval", u64_le(1) + uuid1 + u64_le(1) + u64_le(1) + bytes({2, 0, 0}),
       "GTID set encoding: n_intervals 1 does not fit in the 11 bytes left (16 each) at offset 24"},
      {"start 0", u64_le(1) + uuid1 + u64_le(1) + u64_le(0) + u64_le(1),
       "GTID set encoding: interval [0, 1) of " + U1 +
           " is not increasing (need 0 < start < end <= 2^63-1) at offset 32"},
      {"empty interval", u64_le(1) + uuid1 + u64_le(1) + u64_le(5) + u64_le(5),
       "GTID set encoding: interval [5, 5) of " + U1 +
           " is not increasing (need 0 < start < end <= 2^63-1) at offset 32"},
      {"touching intervals", u64_le(1) + uuid1 + u64_le(2) + u64_le(1) + u64_le(3) + u64_le(3) + u64_le(5),
       "GTID set encoding: interval [3, 5) of " + U1 +
           " is not increasing (need 3 < start < end <= 2^63-1) at offset 48"},
      {"decreasing intervals", u64_le(1) + uuid1 + u64_le(2) + u64_le(5) + u64_le(7) + u64_le(1) + u64_le(3),
       "GTID set encoding: interval [1, 3) of " + U1 +
           " is not increasing (need 7 < start < end <= 2^63-1) at offset 48"},
      {"negative end", u64_le(1) + uuid1 + u64_le(1) + u64_le(1) + u64_le(std::uint64_t{1} << 63),
       "GTID set encoding: interval [1, -9223372036854775808) of " + U1 +
           " is not increasing (need 0 < start < end <= 2^63-1) at offset 32"},
      {"tag too long", tagged1 + uuid1 + bytes({33 << 1}) + std::string(33, 'a'),
       "GTID set encoding: tag length 33 is more than 32 at offset 24"},
      {"truncated tag", tagged1 + uuid1 + bytes({32 << 1}) + std::string(8, 'a'),
       "GTID set encoding: tag: need 32 bytes, have 8 at offset 25"},
      {"tag with a bad character", tagged1 + uuid1 + bytes({3 << 1, 'a', '-', 'b'}) + u64_le(0),
       "GTID set encoding: invalid tag 'a-b': '-' is not allowed (tags are [a-z_][a-z0-9_]{0,31}, "
       "case-insensitive) at offset 24"},
      // 0xff: eight more length bytes follow ("aaaaaaaa" = 0x6161616161616161).
      {"nine-byte varlen tag length", tagged1 + uuid1 + bytes({0xff}) + std::string(8, 'a'),
       "GTID set encoding: tag length 7016996765293437281 is more than 32 at offset 24"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    ByteReader reader(c.data);
    const auto decoded = MysqlGtidSet::decode(reader);
    REQUIRE_FALSE(decoded.has_value());
    CHECK(decoded.error().code == Errc::corrupt_input);
    CHECK(decoded.error().message == c.message);
    CHECK_FALSE(reader.ok());
  }
}

TEST_CASE("gtid: every truncation and random mutation of a valid encoding decodes or fails cleanly") {
  const std::string valid = encoded(set_of(U1 + ":1-13:5000:mytag:1-2:other:9," + U2 + ":7-8"));
  for (std::size_t length = 0; length < valid.size(); ++length) {
    CAPTURE(length);
    const auto decoded = decode(valid.substr(0, length));
    REQUIRE_FALSE(decoded.has_value());
    CHECK(decoded.error().code == Errc::corrupt_input);
  }
  std::mt19937_64 rng(99);
  int decoded_count = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string data = valid;
    const std::uint64_t flips = pick(rng, 1, 4);
    for (std::uint64_t i = 0; i < flips; ++i) {
      const auto at = static_cast<std::size_t>(pick(rng, 0, data.size() - 1));
      data[at] = static_cast<char>(pick(rng, 0, 255));
    }
    const auto decoded = decode(data);
    if (!decoded) {
      CHECK(decoded.error().code == Errc::corrupt_input);
      continue;
    }
    ++decoded_count;
    // Whatever decodes is a valid set: it survives a text and a binary round trip.
    const auto reparsed = MysqlGtidSet::parse(decoded->to_string());
    REQUIRE(reparsed.has_value());
    CHECK(*reparsed == *decoded);
    const auto again = decode(encoded(*decoded));
    REQUIRE(again.has_value());
    CHECK(*again == *decoded);
  }
  CHECK(decoded_count > 0);
}
