// MySQL GTID sets as text: UUIDs, parsing and printing, membership and the set algebra.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtid_test_support.h"

using namespace gtid_test;  // the tests' own helpers

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
