// MariaDB GTIDs and GTID positions (gtid/mariadb_gtid).

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gtid/mariadb_gtid.h"

#include "gtid_string_makers.h"

namespace {

using cdc::Errc;
using cdc::gtid::MariadbGtid;
using cdc::gtid::MariadbGtidPos;

}  // namespace


// =======================================================================================
// MariaDB GTIDs and positions

TEST_CASE("gtid: MariaDB GTID positions parse and print canonically") {
  struct Case {
    std::string name;
    std::string text;
    std::string canonical;
  };
  const Case cases[] = {
      {"empty", "", ""},
      {"only whitespace", " \n ", ""},
      {"one GTID", "0-1-100", "0-1-100"},
      {"sorted by domain", "1-2-7,0-1-100", "0-1-100,1-2-7"},
      {"numeric domain order", "10-1-1,9-1-1,100-1-1", "9-1-1,10-1-1,100-1-1"},
      {"whitespace around GTIDs", " 0-1-100 ,\n 1-2-7 \n", "0-1-100,1-2-7"},
      {"leading zeros read as decimal", "007-01-010", "7-1-10"},
      {"largest values", "4294967295-4294967295-18446744073709551615", "4294967295-4294967295-18446744073709551615"},
      {"seq_no 0", "0-0-0", "0-0-0"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const auto parsed = MariadbGtidPos::parse(c.text);
    if (!parsed) FAIL_CHECK(parsed.error().message);
    REQUIRE(parsed.has_value());
    CHECK(parsed->to_string() == c.canonical);
    CHECK(fmt::format("{}", *parsed) == c.canonical);
    const auto again = MariadbGtidPos::parse(parsed->to_string());
    REQUIRE(again.has_value());
    CHECK(*again == *parsed);
  }
}

TEST_CASE("gtid: malformed MariaDB GTID positions fail with a message") {
  struct Case {
    std::string name;
    std::string text;
    std::string message;
  };
  const std::string prefix = "invalid MariaDB GTID position at offset ";
  const Case cases[] = {
      {"two numbers", "0-1",
       prefix + "3: expected '-' after the server id (a GTID is domain-server-seq), found end of text"},
      {"letters", "a-b-c", prefix + "0: expected a domain id (decimal digits), found 'a'"},
      {"negative domain", "-1-2-3", prefix + "0: expected a domain id (decimal digits), found '-'"},
      {"domain of 2^32", "4294967296-1-1", prefix + "0: domain id 4294967296 is larger than 4294967295"},
      {"server of 2^32", "0-4294967296-1", prefix + "2: server id 4294967296 is larger than 4294967295"},
      {"seq_no of 2^64", "0-1-18446744073709551616",
       prefix + "4: sequence number 18446744073709551616 is larger than 18446744073709551615"},
      {"missing seq_no", "0-1-", prefix + "4: expected a sequence number (decimal digits), found end of text"},
      {"spaces inside", "0 - 1 - 1",
       prefix + "1: expected '-' after the domain id (a GTID is domain-server-seq), found ' '"},
      {"trailing comma", "0-1-1,", prefix + "6: expected a domain id (decimal digits), found end of text"},
      {"leading comma", ",0-1-1", prefix + "0: expected a domain id (decimal digits), found ','"},
      {"other separator", "0-1-1;1-1-1", prefix + "5: expected ',' or the end of the position after a GTID, found ';'"},
      {"MySQL set", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5",
       prefix + "1: expected '-' after the domain id (a GTID is domain-server-seq), found 'e'"},
      {"duplicate domain", "0-1-100,0-2-5",
       prefix + "8: GTIDs 0-1-100 and 0-2-5 conflict (duplicate domain id 0; a position holds one GTID per domain)"},
      {"first duplicate in text order", "2-1-1,1-1-1,3-1-1,1-1-2,2-1-2",
       prefix + "18: GTIDs 1-1-1 and 1-1-2 conflict (duplicate domain id 1; a position holds one GTID per domain)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const auto parsed = MariadbGtidPos::parse(c.text);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == Errc::usage);
    CHECK(parsed.error().message == c.message);
  }
}

TEST_CASE("gtid: single MariaDB GTIDs") {
  const auto gtid = MariadbGtid::parse(" 0-1-100 ");
  REQUIRE(gtid.has_value());
  CHECK(*gtid == MariadbGtid{0, 1, 100});
  CHECK(gtid->to_string() == "0-1-100");
  CHECK(fmt::format("{}", *gtid) == "0-1-100");
  const auto two = MariadbGtid::parse("0-1-100,1-1-1");
  REQUIRE_FALSE(two.has_value());
  CHECK(two.error().message ==
        "invalid MariaDB GTID at offset 7: expected the end of the GTID (one GTID is domain-server-seq), found ','");
}

TEST_CASE("gtid: MariaDB position contains GTIDs it has passed") {
  const auto pos = MariadbGtidPos::parse("0-1-100,2-5-7");
  REQUIRE(pos.has_value());
  struct Case {
    std::string name;
    MariadbGtid gtid;
    bool contained;
  };
  const Case cases[] = {
      {"earlier seq_no", {0, 1, 99}, true},
      {"same GTID", {0, 1, 100}, true},
      {"later seq_no", {0, 1, 101}, false},
      {"server id does not matter", {0, 9, 50}, true},
      {"server id does not matter, later", {0, 9, 101}, false},
      {"other domain", {2, 5, 7}, true},
      {"domain not in the position", {1, 1, 1}, false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(pos->contains(c.gtid) == c.contained);
  }
  CHECK(pos->contains(*pos));
  CHECK(pos->contains(MariadbGtidPos{}));
  CHECK_FALSE(MariadbGtidPos{}.contains(*pos));
  CHECK(pos->contains(*MariadbGtidPos::parse("0-3-50")));
  CHECK_FALSE(pos->contains(*MariadbGtidPos::parse("0-3-50,1-1-1")));
  CHECK_FALSE(pos->contains(*MariadbGtidPos::parse("2-5-8")));
  CHECK(pos->find(2) == MariadbGtid{2, 5, 7});
  CHECK_FALSE(pos->find(1).has_value());
}

TEST_CASE("gtid: MariaDB position advance sets the domain's last GTID") {
  MariadbGtidPos pos;
  pos.advance({1, 1, 5});
  pos.advance({0, 1, 10});
  CHECK(pos.to_string() == "0-1-10,1-1-5");
  pos.advance({1, 2, 6});
  CHECK(pos.to_string() == "0-1-10,1-2-6");
  pos.advance({0, 1, 3});  // not a max: the position follows the events it is given
  CHECK(pos.to_string() == "0-1-3,1-2-6");
  pos.advance({4294967295U, 7, 18446744073709551615ULL});
  CHECK(pos.to_string() == "0-1-3,1-2-6,4294967295-7-18446744073709551615");
}

TEST_CASE("gtid: MariaDB position union and intersect work per domain") {
  struct Case {
    std::string name;
    std::string a;
    std::string b;
    std::string union_ab;
    std::string intersect_ab;
  };
  const Case cases[] = {
      {"same domain", "0-1-100", "0-2-90", "0-1-100", "0-2-90"},
      {"disjoint domains", "0-1-5", "1-1-7", "0-1-5,1-1-7", ""},
      {"mixed", "0-1-5,1-1-9,3-1-1", "1-2-10,2-1-4,3-1-1", "0-1-5,1-2-10,2-1-4,3-1-1", "1-1-9,3-1-1"},
      {"equal seq_no, different server", "0-1-5", "0-2-5", "0-2-5", "0-1-5"},
      {"empty operand", "0-1-5", "", "0-1-5", ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const auto a = MariadbGtidPos::parse(c.a);
    const auto b = MariadbGtidPos::parse(c.b);
    REQUIRE(a.has_value());
    REQUIRE(b.has_value());
    CHECK(a->union_with(*b).to_string() == c.union_ab);
    CHECK(b->union_with(*a).to_string() == c.union_ab);
    CHECK(a->intersect(*b).to_string() == c.intersect_ab);
    CHECK(b->intersect(*a).to_string() == c.intersect_ab);
    CHECK(a->union_with(*b).contains(*a));
    CHECK(a->union_with(*b).contains(*b));
    CHECK(a->contains(a->intersect(*b)));
    CHECK(b->contains(a->intersect(*b)));
  }
}
