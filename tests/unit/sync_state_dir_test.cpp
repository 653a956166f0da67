// cdc-sync's state directory (sync/state_dir.h) on real files, without a server: files
// written whole, half-written ones (a crash before the rename) not counted, a directory in
// the shell version's format read as it wrote it, and the lock.

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include "merge_support.h"
#include "sync/state_dir.h"

using cdc::sync::SyncState;
using merge_test::TempFiles;

TEST_CASE("sync state: a file written whole leaves no temporary file, and reads back") {
  TempFiles files;
  auto state = SyncState::open(files.dir() + "/dir");
  REQUIRE(state);
  REQUIRE(state->mark("deltas.done", "0-1-42"));
  CHECK(files.read(files.dir() + "/dir/deltas.done") == "0-1-42\n");
  CHECK_FALSE(std::filesystem::exists(files.dir() + "/dir/deltas.done.tmp"));
  CHECK(state->read_text("deltas.done") == "0-1-42");
  CHECK_FALSE(state->read_text("span").has_value());
  CHECK(state->facts().deltas_done);
}

TEST_CASE("sync state: half-written files (a crash before their rename) do not count as done") {
  TempFiles files;
  auto state = SyncState::open(files.dir() + "/dir");
  REQUIRE(state);
  for (const char* name : {"plan.ndjson.tmp", "span.tmp", "snapshot.ndjson.tmp", "snapshot.emitted.tmp",
                           "settings.tmp", "deltas.done.tmp", "stream.started.tmp"})
    files.write(std::string("dir/") + name, "half");
  std::filesystem::create_directories(files.dir() + "/dir/chunks");
  files.write("dir/chunks/s.items.2.ndjson.partial", "{\"op\":\"low\"");
  const cdc::sync::DirFacts facts = state->facts();
  CHECK_FALSE(facts.plan);
  CHECK_FALSE(facts.span);
  CHECK_FALSE(facts.snapshot);
  CHECK_FALSE(facts.snapshot_emitted);
  CHECK_FALSE(facts.deltas_done);
  CHECK(state->chunk_files().empty());
  // So the next run starts at the plan.
  CHECK(cdc::sync::next_action(cdc::sync::Mode::initial, false, facts, {}) == cdc::sync::Action::plan);
  // A rewrite over a stale temporary file replaces it.
  REQUIRE(state->mark("span", "0-1-5 0-1-9"));
  CHECK(state->read_text("span") == "0-1-5 0-1-9");
}

TEST_CASE("sync state: a directory the shell version wrote is read as it left it") {
  TempFiles files;
  std::filesystem::create_directories(files.dir() + "/dir/chunks");
  files.write("dir/settings", "family=snapshot\ntables=s.items\nexclude=\nchunk-size=50\n");
  files.write("dir/plan.ndjson", "{\"op\":\"chunk\"}\n{\"op\":\"chunk\"}\n\n{\"op\":\"chunk\"}");
  files.write("dir/chunks/s.items.1.ndjson",
              "{\"op\":\"low\"}\n{\"rows\":50,\"op\":\"high\",\"v\":1,\"db\":\"s\",\"table\":\"items\",\"index\":1,"
              "\"count\":2,\"position\":\"0-1-7\"}\n");
  files.write("dir/chunks/s.items.0.ndjson", "{\"op\":\"low\"}\n{\"op\":\"high\",\"rows\":3}\n");
  files.write("dir/span", "0-1-5 0-1-9\n");
  files.write("dir/deltas.ndjson", "{\"op\":\"span_start\"}\n");
  files.write("dir/deltas.state", "{\"v\":1,\"position\":\"0-1-6\"}\n");
  auto state = SyncState::open(files.dir() + "/dir");
  REQUIRE(state);
  CHECK(state->read_text("settings") ==
        cdc::sync::settings_text({cdc::sync::Mode::initial, "s.items", "", 50, {}, {}, {}}));
  const auto facts = state->facts();
  CHECK((facts.plan && facts.span && facts.deltas && facts.deltas_state));
  CHECK_FALSE(facts.deltas_done);
  CHECK(cdc::sync::next_action(cdc::sync::Mode::initial, false, facts, {.snapshot_start_announced = true}) ==
        cdc::sync::Action::read_deltas);
  CHECK_FALSE(cdc::sync::deltas_start_over(facts));
  CHECK(*cdc::sync::count_lines(state->path("plan.ndjson")) == 3u);
  const auto chunks = state->chunk_files();
  REQUIRE(chunks.size() == 2);
  CHECK(chunks[0].ends_with("/chunks/s.items.0.ndjson"));
  CHECK(cdc::sync::chunk_file_rows(chunks[1]) == 50);  // read by name, whatever the key order
  CHECK(cdc::sync::chunk_file_rows(chunks[0]) == 0);   // not a whole high line: not counted
}

TEST_CASE("sync state: the last line of a file, with or without its newline, past one read block") {
  TempFiles files;
  const std::string long_line(100000, 'x');
  CHECK(*cdc::sync::last_line(files.write("a", "one\ntwo\n")) == "two");
  CHECK(*cdc::sync::last_line(files.write("b", "one\ntwo")) == "two");
  CHECK(*cdc::sync::last_line(files.write("c", "")) == "");
  CHECK(*cdc::sync::last_line(files.write("d", "first\n" + long_line + "\n")) == long_line);
  CHECK_FALSE(cdc::sync::last_line(files.dir() + "/missing"));
}

TEST_CASE("sync state: H* from a merged snapshot's high line, and a clear error without one") {
  TempFiles files;
  const auto high = cdc::sync::read_merged_high(files.write(
      "snapshot.ndjson", "{\"op\":\"r\"}\n{\"rows\":1,\"chunks\":1,\"position\":\"0-1-9\",\"v\":1,\"op\":\"high\"}\n"));
  REQUIRE(high);
  CHECK(high->position == "0-1-9");
  for (const char* end : {"{\"op\":\"r\"}\n", "{\"op\":\"high\",\"posi", "[1]\n", ""}) {
    CAPTURE(end);
    const auto refused = cdc::sync::read_merged_high(files.write("cut.ndjson", std::string("{\"op\":\"r\"}\n") + end));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == cdc::Errc::corrupt_input);
    CHECK(refused.error().message.find("cut.ndjson") != std::string::npos);
  }
}

TEST_CASE("sync state: one run per directory") {
  TempFiles files;
  auto first = SyncState::open(files.dir() + "/dir");
  REQUIRE(first);
  auto second = SyncState::open(files.dir() + "/dir");
  REQUIRE_FALSE(second);
  CHECK(second.error().code == cdc::Errc::usage);
  CHECK(second.error().message.find("is in use by another cdc-sync") != std::string::npos);

  // Waiting for it: refused when it stays held, after the wait, having said so once.
  int waits = 0;
  const auto started = std::chrono::steady_clock::now();
  auto waited = SyncState::open(files.dir() + "/dir", std::chrono::milliseconds{300}, [&] { ++waits; });
  CHECK(std::chrono::steady_clock::now() - started >= std::chrono::milliseconds{300});
  REQUIRE_FALSE(waited);
  CHECK(waits == 1);
  CHECK(waited.error().code == cdc::Errc::usage);
  CHECK(waited.error().message == files.dir() + "/dir is in use by another cdc-sync (it holds " + files.dir() +
                                      "/dir/lock, still after 0.3 s); one --dir belongs to one run");

  // Taken when the holder lets go during the wait (as the tools of a killed run exit).
  std::optional<SyncState> holder(std::move(*first));
  std::thread exits([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds{150});
    holder.reset();
  });
  waits = 0;
  auto taken = SyncState::open(files.dir() + "/dir", std::chrono::seconds{10}, [&] { ++waits; });
  exits.join();
  REQUIRE_MESSAGE(taken, taken.error().message);
  CHECK(waits == 1);
}

TEST_CASE("sync state: paths are made absolute without resolving links") {
  CHECK(cdc::sync::logical_absolute("/a/b/../c/./d/") == "/a/c/d");
  CHECK(cdc::sync::logical_absolute("x").starts_with("/"));
}
