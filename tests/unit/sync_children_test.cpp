// cdc-sync's child processes (sync/children.h) with sh standing in for the tools: exit
// statuses, stdout and stderr files, the relayed stderr with its filter, the errors held back
// while a tool is rerun, the environment, and a stop signal passed on as SIGTERM.

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "merge_support.h"
#include "sync/children.h"

using cdc::sync::ChildSpec;
using cdc::sync::Children;
using cdc::sync::Console;
using merge_test::TempFiles;

namespace {

ChildSpec shell(const std::string& script) {
  ChildSpec spec;
  spec.argv = {"sh", "-c", script};
  return spec;
}

}  // namespace

TEST_CASE("sync children: exit statuses, a signal's death as 128 + its number, a missing program as 127") {
  Console console;
  Children children(console);
  CHECK(children.run(shell("exit 0")) == 0);
  CHECK(children.run(shell("exit 69")) == 69);
  CHECK(children.run(shell("kill -KILL $$")) == 128 + SIGKILL);
  ChildSpec missing;
  missing.argv = {"/nonexistent/cdc-plan"};
  CHECK(children.run(missing) == 127);
  CHECK(Children::stop_signal() == 0);
}

TEST_CASE("sync children: stdout and stderr to files, stdin empty, extra environment") {
  TempFiles files;
  Console console;
  Children children(console);
  ChildSpec spec = shell("read line; echo \"[$line] $CDC_SYNC_PHASE\"; echo oops >&2");
  spec.stdout_file = files.dir() + "/out";
  spec.stderr_file = files.dir() + "/err";
  spec.environment = {"CDC_SYNC_PHASE=snapshot_end"};
  CHECK(children.run(spec) == 0);
  CHECK(files.read(spec.stdout_file) == "[] snapshot_end\n");
  CHECK(files.read(spec.stderr_file) == "oops\n");
}

TEST_CASE("sync children: the first of several to fail, the others stopped") {
  Console console;
  Children children(console);
  REQUIRE(children.start(shell("exec sleep 30")));
  REQUIRE(children.start(shell("exit 65")));
  int first_failure = 0;
  const auto started = std::chrono::steady_clock::now();
  children.wait_all([&](std::size_t index, int status) {
    if (status != 0 && first_failure == 0) {
      first_failure = status;
      CHECK(index == 1);
      children.terminate_all();
    }
  });
  CHECK(first_failure == 65);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
}

TEST_CASE("sync children: a background child is not waited for, and stopped with SIGTERM on demand") {
  Console console;
  Children children(console);
  TempFiles files;
  const std::string trapped = files.dir() + "/trapped";
  // The shell says when its trap is set: a SIGTERM before that (a loaded machine can take a
  // while to start sh) would end it by the signal, which is not what this test is about.
  REQUIRE(children.start_background(
      shell("trap 'exit 0' TERM; : > '" + trapped + "'; while :; do sleep 0.05; done")));
  CHECK_FALSE(children.start_background(shell("exit 0")).has_value());  // one at a time
  const auto started = std::chrono::steady_clock::now();
  CHECK(children.run(shell("exit 7")) == 7);  // the step beside it ends on its own
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  CHECK_FALSE(children.background_status().has_value());  // still running
  for (int waited = 0; waited < 1000 && ::access(trapped.c_str(), F_OK) != 0; ++waited) ::usleep(10000);
  REQUIRE(::access(trapped.c_str(), F_OK) == 0);
  CHECK(children.stop_background() == 0);                 // its trap: a clean stop
  CHECK_FALSE(children.stop_background().has_value());    // none any more
}

TEST_CASE("sync children: a background child that ends first stops the step beside it") {
  Console console;
  Children children(console);
  REQUIRE(children.start_background(shell("sleep 0.2; exit 3")));
  const auto started = std::chrono::steady_clock::now();
  CHECK(children.run(shell("exec sleep 30")) == 128 + SIGTERM);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
  CHECK(children.background_status() == 3);
  CHECK(children.stop_background() == 3);  // its own end, not a SIGTERM's
  CHECK(Children::stop_signal() == 0);
}

TEST_CASE("sync children: a background child that is to run again does not stop the step beside it") {
  Console console;
  Children children(console);
  TempFiles files;
  const std::string runs = files.dir() + "/runs";
  // Two quick ends with 69, run again 100 ms later each time; then it stays up until stopped.
  int asked = 0;
  REQUIRE(children.start_background(
      shell("echo run >> '" + runs + "'; [ $(wc -l < '" + runs + "') -ge 3 ] || exit 69; "
            "trap 'exit 0' TERM; while :; do sleep 0.05; done"),
      [&](int status) -> std::optional<std::chrono::milliseconds> {
        ++asked;
        if (status != 69) return std::nullopt;
        return std::chrono::milliseconds(100);
      }));
  // The step beside it outlives both reruns, and ends on its own.
  CHECK(children.run(shell("sleep 1; exit 0")) == 0);
  CHECK(asked == 2);
  CHECK(files.read(runs) == "run\nrun\nrun\n");
  CHECK_FALSE(children.background_status().has_value());  // the third run goes on
  ::usleep(300000);                                       // its trap set
  CHECK(children.stop_background() == 0);
}

TEST_CASE("sync children: a background child whose rerun is declined ends the step beside it") {
  Console console;
  Children children(console);
  REQUIRE(children.start_background(shell("sleep 0.2; exit 69"),
                                    [](int) -> std::optional<std::chrono::milliseconds> { return std::nullopt; }));
  CHECK(children.run(shell("exec sleep 30")) == 128 + SIGTERM);
  CHECK(children.background_status() == 69);
  CHECK(children.stop_background() == 69);
}

TEST_CASE("sync children: stopping a background child that waits to run again leaves it stopped") {
  Console console;
  Children children(console);
  TempFiles files;
  const std::string runs = files.dir() + "/runs";
  REQUIRE(children.start_background(shell("echo run >> '" + runs + "'; exit 69"),
                                    [](int) -> std::optional<std::chrono::milliseconds> {
                                      return std::chrono::seconds(30);
                                    }));
  for (int waited = 0; waited < 500 && files.read(runs).empty(); ++waited) ::usleep(10000);
  ::usleep(100000);
  CHECK_FALSE(children.background_status().has_value());  // ended, waiting for its rerun
  CHECK_FALSE(children.stop_background().has_value());    // nothing ran to stop
  CHECK(files.read(runs) == "run\n");
}

TEST_CASE("sync children: SIGTERM to cdc-sync reaches the running child as SIGTERM") {
  Console console;
  Children children(console);
  REQUIRE(children.start(shell("exec sleep 30")));
  std::raise(SIGTERM);
  int status = -1;
  children.wait_all([&](std::size_t, int child_status) { status = child_status; });
  CHECK(status == 128 + SIGTERM);
  CHECK(Children::stop_signal() == SIGTERM);
  // A child started after the signal is stopped at once; a pause is cut short.
  CHECK(children.run(shell("exec sleep 30")) == 128 + SIGTERM);
  CHECK_FALSE(children.sleep(std::chrono::seconds(30)));
}

TEST_CASE("sync children: a relayed stderr drops the lines the filter refuses, keeps the rest whole") {
  TempFiles files;
  const std::string captured = files.write("stderr", "");
  const int saved = ::dup(STDERR_FILENO);
  const int into = ::open(captured.c_str(), O_WRONLY | O_CLOEXEC);
  REQUIRE((saved >= 0 && into >= 0));
  ::dup2(into, STDERR_FILENO);
  int status = -1;
  {
    Console console;
    Children children(console);
    ChildSpec spec = shell(
        "echo 'cdc-stream: notice: reached --until 0-1-9'; echo 'cdc-stream: error: kept'; printf 'no newline'");
    spec.relay_stderr = [](std::string_view line) { return !line.starts_with("cdc-stream: notice: reached --until"); };
    spec.argv[2] = "exec 1>&2; " + spec.argv[2];
    status = children.run(spec);
    console.note("done");
  }
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(into);
  CHECK(status == 0);
  CHECK(files.read(captured) == "cdc-stream: error: kept\nno newlinecdc-sync: done\n");
}

TEST_CASE("sync children: while errors are held, a child's error lines are kept back and the rest relayed") {
  CHECK(cdc::sync::is_error_line("cdc-plan: error: cannot connect to 127.0.0.1:1: ..."));
  CHECK_FALSE(cdc::sync::is_error_line("cdc-plan: warning: error: quoted"));
  CHECK_FALSE(cdc::sync::is_error_line("an ssh line: error: not a tool's"));
  CHECK_FALSE(cdc::sync::is_error_line(": error: no tool"));
  TempFiles files;
  const std::string captured = files.write("stderr", "");
  const int saved = ::dup(STDERR_FILENO);
  const int into = ::open(captured.c_str(), O_WRONLY | O_CLOEXEC);
  REQUIRE((saved >= 0 && into >= 0));
  ::dup2(into, STDERR_FILENO);
  int held_status = -1;
  int shown_status = -1;
  std::vector<std::string> held;
  {
    Console console;
    Children children(console);
    children.hold_errors(true);
    ChildSpec spec = shell(
        "echo 'cdc-plan: warning: slow' >&2; echo 'cdc-plan: error: cannot connect' >&2; "
        "echo 'cdc-plan: notice: refused' >&2; exit 69");
    // The spec's own filter still applies to the lines that are not errors.
    spec.relay_stderr = [](std::string_view line) { return !line.ends_with("refused"); };
    held_status = children.run(spec);
    held = children.take_held_errors();
    CHECK(children.take_held_errors().empty());
    children.hold_errors(false);
    shown_status = children.run(shell("echo 'cdc-plan: error: shown' >&2"));
  }
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(into);
  CHECK(held_status == 69);
  CHECK(shown_status == 0);
  CHECK(held == std::vector<std::string>{"cdc-plan: error: cannot connect"});
  CHECK(files.read(captured) == "cdc-plan: warning: slow\ncdc-plan: error: shown\n");
}
