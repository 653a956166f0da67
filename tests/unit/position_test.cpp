// Positions as --from, --until and state files take them (gtid/position).

#include <doctest/doctest.h>

#include <string>

#include "gtid/position.h"

namespace {

using cdc::Errc;
using cdc::gtid::FilePosition;
using cdc::gtid::Position;

}  // namespace

TEST_CASE("position: the three forms are told apart by their shape") {
  auto mysql = Position::parse("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:7,3e11fa47-71ca-11e1-9e33-c80aa9429563:1-3");
  REQUIRE(mysql);
  CHECK(mysql->kind == Position::Kind::mysql_gtids);
  CHECK(mysql->to_string() == "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7,3e11fa47-71ca-11e1-9e33-c80aa9429563:1-3");

  auto tagged = Position::parse("3e11fa47-71ca-11e1-9e33-c80aa9429562:Nightly:1-5");
  REQUIRE(tagged);
  CHECK(tagged->kind == Position::Kind::mysql_gtids);
  CHECK(tagged->to_string() == "3e11fa47-71ca-11e1-9e33-c80aa9429562:nightly:1-5");

  auto mariadb = Position::parse("1-2-7,0-1-100");
  REQUIRE(mariadb);
  CHECK(mariadb->kind == Position::Kind::mariadb_gtids);
  CHECK(mariadb->to_string() == "0-1-100,1-2-7");

  auto file = Position::parse("binlog.000042:4711");
  REQUIRE(file);
  CHECK(file->kind == Position::Kind::file);
  CHECK(file->file.file == "binlog.000042");
  CHECK(file->file.offset == 4711);
  CHECK(file->to_string() == "binlog.000042:4711");

  // A binlog base name may contain ':' itself; the offset is after the last one.
  auto odd = Position::parse("host:a-bin.000001:4");
  REQUIRE(odd);
  CHECK(odd->kind == Position::Kind::file);
  CHECK(odd->file.file == "host:a-bin.000001");
}

TEST_CASE("position: malformed text is a usage error naming the accepted forms") {
  for (const char* text : {"", "binlog.000001", "binlog.000001:", "binlog.000001:x", "binlog.000001:3",
                           "/var/lib/mysql/binlog.000001:4", "0-1", "0-1-2,0-3-4",
                           "3e11fa47-71ca-11e1-9e33-c80aa9429562:5-3", "binlog.000001:99999999999999999999999"}) {
    const auto parsed = Position::parse(text);
    CAPTURE(std::string(text));
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().code == Errc::usage);
  }
  const auto parsed = Position::parse("nonsense");
  REQUIRE_FALSE(parsed);
  CHECK(parsed.error().message.find("FILE:OFFSET") != std::string::npos);
  CHECK(parsed.error().message.find("earliest") != std::string::npos);
}

TEST_CASE("position: binlog files order by their number") {
  CHECK(FilePosition{"binlog.000009", 900} < FilePosition{"binlog.000010", 4});
  CHECK(FilePosition{"binlog.999999", 900} < FilePosition{"binlog.1000000", 4});
  CHECK(FilePosition{"binlog.000010", 4} < FilePosition{"binlog.000010", 5});
  CHECK_FALSE(FilePosition{"binlog.000010", 5} < FilePosition{"binlog.000010", 5});
}

// Found by gtid_fuzz: a MySQL GTID set text that names no transaction ("uuid", "uuid:tag") is a
// valid empty set, but as a position it would print as "", which is no position; a user who
// typed "uuid:tag" meant some transactions of that tag. Both are usage errors saying why.
TEST_CASE("position: a GTID set naming no transaction is not a position") {
  for (const char* text : {"b9b88c66-0755-11f1-9899-4a9da94c4d71:U", "b9b88c66-0755-11f1-9899-4a9da94c4d71:",
                           "b9b88c66-0755-11f1-9899-4a9da94c4d71:mytag,", "b9b88c66-0755-11f1-9899-4a9da94c4d71:a:b"}) {
    CAPTURE(std::string(text));
    const auto parsed = Position::parse(text);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().code == Errc::usage);
  }
  const auto parsed = Position::parse("b9b88c66-0755-11f1-9899-4a9da94c4d71:mytag");
  REQUIRE_FALSE(parsed);
  CHECK(parsed.error().message.find("names no transaction") != std::string::npos);
  // What parses prints back to the same position.
  const auto tagged = Position::parse("b9b88c66-0755-11f1-9899-4a9da94c4d71:mytag:1-2");
  REQUIRE(tagged);
  const auto again = Position::parse(tagged->to_string());
  REQUIRE(again);
  CHECK(again->to_string() == tagged->to_string());
}
