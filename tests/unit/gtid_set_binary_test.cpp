// MySQL GTID sets in their binary form (PREVIOUS_GTIDS bodies, COM_BINLOG_DUMP_GTID): bytes
// checked by hand and from servers, and hostile input that must fail cleanly.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtid_test_support.h"

using namespace gtid_test;  // the tests' own helpers

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
