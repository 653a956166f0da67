// cdc-apply --follow's FileFollower (libcore/apply/follow.h) on a real file that a writer grows,
// cuts back and writes again, as a restarted cdc-stream does: the reader gets whole lines only,
// a discard line before anything read again, and never a line begun in the middle.

#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "apply/follow.h"
#include "util/unique_fd.h"

namespace {

struct TempFile {
  std::string path;
  TempFile() {
    char name[] = "/tmp/cdc-follow-test.XXXXXX";
    const int fd = ::mkstemp(name);
    REQUIRE(fd >= 0);
    ::close(fd);
    path = name;
  }
  ~TempFile() { ::unlink(path.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

// What the writer does: the file's bytes from `at`, and its size cut to `size`.
void write_at(const std::string& path, std::size_t at, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  REQUIRE(fd >= 0);
  REQUIRE(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(at)) == static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}
void cut_to(const std::string& path, std::size_t size) { REQUIRE(::truncate(path.c_str(), static_cast<off_t>(size)) == 0); }

// Reads whole lines from fd until `count` lines came, or 5 s passed, or the input ended.
std::vector<std::string> read_lines(int fd, std::string& pending, std::size_t count) {
  std::vector<std::string> lines;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (lines.size() < count && std::chrono::steady_clock::now() < deadline) {
    for (std::size_t end; lines.size() < count && (end = pending.find('\n')) != std::string::npos;) {
      lines.push_back(pending.substr(0, end));
      pending.erase(0, end + 1);
    }
    if (lines.size() == count) break;
    pollfd ready{fd, POLLIN, 0};
    if (::poll(&ready, 1, 100) <= 0) continue;
    char buffer[4096];
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got <= 0) break;
    pending.append(buffer, static_cast<std::size_t>(got));
  }
  return lines;
}

bool is_discard(const std::string& line) { return line.rfind("{\"op\":\"discard\"", 0) == 0; }

}  // namespace

TEST_CASE("apply: --follow reads whole lines, and a file cut back, or cut back and written again past the read "
          "point between two reads, from where it is right") {
  TempFile file;
  const std::string first = "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n";
  write_at(file.path, 0, first);
  std::atomic<bool> stop{false};
  auto follower = cdc::apply::FileFollower::start(cdc::UniqueFd(::open(file.path.c_str(), O_RDONLY)), file.path, stop,
                                                  /*poll_ms=*/400);
  REQUIRE(follower.has_value());
  const int fd = (*follower)->fd();
  std::string pending;

  // A line still being written is not passed on until it ends.
  CHECK(read_lines(fd, pending, 3) == std::vector<std::string>{"{\"a\":1}", "{\"a\":2}", "{\"a\":3}"});
  write_at(file.path, first.size(), "{\"a\":4");
  CHECK(read_lines(fd, pending, 1).empty());
  write_at(file.path, first.size() + 6, "}\n");
  CHECK(read_lines(fd, pending, 1) == std::vector<std::string>{"{\"a\":4}"});

  SUBCASE("cut back, then grown again") {
    // The follower sleeps at the end of the file: the cut is seen at its next poll.
    cut_to(file.path, 8);
    std::this_thread::sleep_for(std::chrono::milliseconds(900));
    write_at(file.path, 8, "{\"b\":2}\n");
    const auto lines = read_lines(fd, pending, 2);
    REQUIRE(lines.size() == 2);
    CHECK(is_discard(lines[0]));
    CHECK(lines[0].find("cut back") != std::string::npos);
    CHECK(lines[1] == "{\"b\":2}");
  }
  SUBCASE("cut back and written again past the read point before the next poll") {
    // Within the follower's sleep: cut inside the second line, then longer new content, so the
    // size never looks smaller than what was read.
    cut_to(file.path, 11);
    write_at(file.path, 11, "\":\"x\"}\n{\"c\":333333333333333333}\n{\"c\":4}\n");
    const auto lines = read_lines(fd, pending, 5);
    REQUIRE(lines.size() == 5);
    CHECK(is_discard(lines[0]));
    CHECK(lines[0].find("written again") != std::string::npos);
    // Read again from the start: every line whole.
    CHECK(lines[1] == "{\"a\":1}");
    CHECK(lines[2] == "{\"a\":\"x\"}");
    CHECK(lines[3] == "{\"c\":333333333333333333}");
    CHECK(lines[4] == "{\"c\":4}");
  }
  stop = true;
  (void)read_lines(fd, pending, 100);  // to the end of the input
}
