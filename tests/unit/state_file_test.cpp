// The resume point of cdc-stream --state (stream/state_file).

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "stream/state_file.h"
#include "unit_support.h"

namespace {

using cdc::Errc;
using cdc::stream::StateFile;
using cdc::records::StreamState;

using unit_test::TempDir;

StreamState sample_state() {
  StreamState state;
  state.position = "0-1-42,1-2-7";
  state.file = "binlog.000003";
  state.offset = 1234;
  state.gtid = "0-1-42";
  state.output_bytes = 5678;
  state.server = "127.0.0.1:3306";
  return state;
}

}  // namespace

TEST_CASE("state file: saved state reads back and the file is private") {
  TempDir dir;
  const std::string path = dir.path + "/run.state";
  auto state_file = StateFile::open(path);
  REQUIRE(state_file);
  auto missing = state_file->load();
  REQUIRE(missing);
  CHECK_FALSE(missing->has_value());

  REQUIRE(state_file->save(sample_state()));
  auto loaded = state_file->load();
  REQUIRE(loaded);
  REQUIRE(loaded->has_value());
  const StreamState& state = **loaded;
  CHECK(state.position == "0-1-42,1-2-7");
  CHECK(state.file == "binlog.000003");
  CHECK(state.offset == 1234);
  CHECK(state.gtid == "0-1-42");
  REQUIRE(state.output_bytes.has_value());
  CHECK(*state.output_bytes == 5678);
  CHECK(state.server == "127.0.0.1:3306");
  CHECK(state.saved_at.size() == 20);  // 2026-11-29T15:04:05Z

  struct stat info {};
  REQUIRE(::stat(path.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);
  CHECK(::access((path + ".tmp").c_str(), F_OK) != 0);  // renamed away
}

TEST_CASE("state file: a second run on the same state is refused") {
  TempDir dir;
  const std::string path = dir.path + "/run.state";
  auto first = StateFile::open(path);
  REQUIRE(first);
  auto second = StateFile::open(path);
  REQUIRE_FALSE(second);
  CHECK(second.error().code == Errc::usage);
  CHECK(second.error().message.find("in use by another cdc-stream") != std::string::npos);
}

TEST_CASE("state file: without output_bytes the field is absent") {
  StreamState state = sample_state();
  state.output_bytes.reset();
  const std::string text = cdc::records::format_state(state);
  CHECK(text.find("output_bytes") == std::string::npos);
  auto parsed = cdc::records::parse_state(text, "x");
  REQUIRE(parsed);
  CHECK_FALSE(parsed->output_bytes.has_value());
}

TEST_CASE("state file: malformed content is an error naming the file and left alone") {
  TempDir dir;
  const std::string path = dir.path + "/run.state";
  for (const char* content : {"", "[]", "{\"v\":2,\"position\":\"0-1-1\"}", "{\"v\":1}", "{\"v\":1,\"position\":\"\"}",
                              "{\"v\":1,\"position\":\"0-1-1\",\"output_bytes\":-1}", "{\"v\":1,\"position\":"}) {
    {
      std::ofstream out(path, std::ios::trunc);
      out << content;
    }
    auto state_file = StateFile::open(path);
    REQUIRE(state_file);
    auto loaded = state_file->load();
    CAPTURE(std::string(content));
    REQUIRE_FALSE(loaded);
    CHECK(loaded.error().code == Errc::corrupt_input);
    CHECK(loaded.error().message.find(path) != std::string::npos);
  }
}

TEST_CASE("state file: span and server_id read back, and are absent when not set") {
  StreamState state = sample_state();
  state.span = "closed";
  state.server_id = 4294967295U;
  const std::string text = cdc::records::format_state(state);
  CHECK(text.find(R"("span":"closed")") != std::string::npos);
  CHECK(text.find(R"("server_id":4294967295)") != std::string::npos);
  auto parsed = cdc::records::parse_state(text, "s.json");
  REQUIRE(parsed.has_value());
  CHECK(parsed->span == "closed");
  REQUIRE(parsed->server_id.has_value());
  CHECK(*parsed->server_id == 4294967295U);

  const std::string plain = cdc::records::format_state(sample_state());
  CHECK(plain.find("span") == std::string::npos);
  CHECK(plain.find("server_id") == std::string::npos);
  auto without = cdc::records::parse_state(plain, "s.json");
  REQUIRE(without.has_value());
  CHECK(without->span.empty());
  CHECK_FALSE(without->server_id.has_value());

  for (const char* bad : {R"({"v":1,"position":"0-1-1","span":"half"})", R"({"v":1,"position":"0-1-1","server_id":0})",
                          R"({"v":1,"position":"0-1-1","server_id":4294967296})"}) {
    CAPTURE(bad);
    auto refused = cdc::records::parse_state(bad, "s.json");
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == Errc::corrupt_input);
  }
}
