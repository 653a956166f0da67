// cdc-sync --snapshot-command (sync/snapshot_command.h), without a server: which templates run
// per worker, the placeholders as sh reads them back (outside quotes, and handed on to a second
// shell from inside single or double quotes) for values with spaces and shell characters, the
// chunks of a plan missing from a directory, and a command in its own process group stopped
// whole (sync/children.h).

#include <doctest/doctest.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "merge_support.h"
#include "sync/children.h"
#include "sync/snapshot_command.h"
#include "unit_support.h"

using cdc::sync::expand_worker_command;
using cdc::sync::shell_word;
using cdc::sync::WorkerPlaceholders;
using merge_test::TempFiles;

namespace {

// What /bin/sh prints for the command line.
std::string shell_output(const std::string& command_line) {
  std::string out;
  FILE* pipe = ::popen(command_line.c_str(), "r");  // NOLINT(cert-env33-c): the test's own text
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, got);
  REQUIRE(::pclose(pipe) == 0);
  return out;
}

// The values, one <word> each, as printf '<%s>' prints its arguments.
std::string bracketed(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) out += "<" + word + ">";
  return out;
}

WorkerPlaceholders awkward_values() {
  WorkerPlaceholders values;
  values.index = 1;
  values.count = 3;
  values.plan = "/tmp/my sync/it's \"plan\".ndjson";
  values.chunks_dir = "/tmp/my sync/$HOME `x` \\n/chunks";
  values.cdc_snapshot = "/opt/cdc/bin/cdc-snapshot";
  values.args = {"--host=db1", "--shard=1/3", "--output-dir=" + values.chunks_dir, values.plan, "", "/srv/my sync"};
  return values;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The process is there and not a zombie (an orphan's end may wait for a reaper).
bool is_running(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

using unit_test::chunk_line;

}  // namespace

TEST_CASE("sync snapshot command: per worker when it names {index} or {shard}, else once") {
  CHECK(cdc::sync::runs_per_worker("ssh worker{index} cdc-snapshot {args}"));
  CHECK(cdc::sync::runs_per_worker("kubectl exec pod -- cdc-snapshot --shard={shard} {plan}"));
  CHECK_FALSE(cdc::sync::runs_per_worker("parallel --pipe -N 1 --sshlogin a,b cdc-snapshot {} < {plan}"));
  CHECK_FALSE(cdc::sync::runs_per_worker("srun -n {count} cdc-snapshot {args}"));
}

TEST_CASE("sync snapshot command: shell words, bare when nothing in them is syntax") {
  CHECK(shell_word("--output-dir=/srv/cdc/chunks") == "--output-dir=/srv/cdc/chunks");
  CHECK(shell_word("0/4") == "0/4");
  CHECK(shell_word("a b") == "'a b'");
  CHECK(shell_word("it's") == "'it'\\''s'");
  CHECK(shell_word("~/x") == "'~/x'");
  CHECK(shell_word("") == "''");
}

TEST_CASE("sync snapshot command: the placeholders and other braces") {
  WorkerPlaceholders values;
  values.index = 2;
  values.count = 4;
  values.plan = "/d/plan.ndjson";
  values.chunks_dir = "/d/chunks";
  values.cdc_snapshot = "/bin/cdc-snapshot";
  values.args = {"--shard=2/4", "/d/plan.ndjson"};
  CHECK(expand_worker_command("ssh w{index} {cdc-snapshot} --shard {shard} --output-dir {dir} {plan} # of {count}",
                              values) ==
        "ssh w2 /bin/cdc-snapshot --shard 2/4 --output-dir /d/chunks /d/plan.ndjson # of 4");
  CHECK(expand_worker_command("cdc-snapshot {args}", values) == "cdc-snapshot --shard=2/4 /d/plan.ndjson");
  // GNU parallel's own, unknown names, and a brace left open stay as written.
  CHECK(expand_worker_command("parallel echo {} {#} {/} {= $_ =} {nope} {index", values) ==
        "parallel echo {} {#} {/} {= $_ =} {nope} {index");
}

TEST_CASE("sync snapshot command: sh reads back each value outside quotes") {
  const WorkerPlaceholders values = awkward_values();
  const std::string expanded = expand_worker_command("printf '<%s>' {plan} {dir} {shard} {args}", values);
  std::vector<std::string> want{values.plan, values.chunks_dir, "1/3"};
  want.insert(want.end(), values.args.begin(), values.args.end());
  CHECK(shell_output(expanded) == bracketed(want));
}

TEST_CASE("sync snapshot command: inside quotes, a second shell reads back each value") {
  const WorkerPlaceholders values = awkward_values();
  std::vector<std::string> want{values.plan};
  want.insert(want.end(), values.args.begin(), values.args.end());
  // As ssh HOST "COMMAND" hands COMMAND to the remote shell.
  const std::string doubled = expand_worker_command("sh -c \"printf '<%s>' {plan} {args}\"", values);
  CHECK(shell_output(doubled) == bracketed(want));
  const std::string singled = expand_worker_command("sh -c 'printf \"<%s>\" {plan} {args}'", values);
  CHECK(shell_output(singled) == bracketed(want));
  // A backslash outside single quotes escapes a quote: it opens nothing.
  const std::string escaped = expand_worker_command("printf '<%s>' \\\" {plan} \\'", values);
  CHECK(shell_output(escaped) == bracketed({"\"", values.plan, "'"}));
}

TEST_CASE("sync snapshot command: the plan's chunks missing from the directory, in plan order") {
  TempFiles files;
  const std::string plan = chunk_line("s", "a", 0, 2) + chunk_line("s", "a", 1, 2) + "\n" +
                           chunk_line("s", "we/ird%", 0, 1);
  auto missing = cdc::sync::missing_chunk_files(plan, files.dir());
  REQUIRE(missing);
  CHECK(*missing == std::vector<std::string>{"s.a.0.ndjson", "s.a.1.ndjson", "s.we%2Fird%25.0.ndjson"});
  auto no_dir = cdc::sync::missing_chunk_files(plan, files.dir() + "/none");
  REQUIRE(no_dir);
  CHECK(no_dir->size() == 3);
  files.write("s.a.1.ndjson", "{}\n");
  files.write("s.a.0.ndjson.partial", "{}\n");  // not published
  missing = cdc::sync::missing_chunk_files(plan, files.dir());
  REQUIRE(missing);
  CHECK(*missing == std::vector<std::string>{"s.a.0.ndjson", "s.we%2Fird%25.0.ndjson"});
  CHECK(cdc::sync::some_names(*missing, 1) == "s.a.0.ndjson and 1 more");
  CHECK(cdc::sync::some_names(*missing, 5) == "s.a.0.ndjson, s.we%2Fird%25.0.ndjson");
  auto bad = cdc::sync::missing_chunk_files(chunk_line("s", "a", 0, 1) + "{\"op\":\"low\"}\n", files.dir());
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("plan line 2") != std::string::npos);
}

TEST_CASE("sync snapshot command: SIGTERM reaches every process of a command in its own process group") {
  TempFiles files;
  const std::string pid_file = files.dir() + "/sleep.pid";
  cdc::sync::Console console;
  cdc::sync::Children children(console);
  cdc::sync::ChildSpec spec;
  // sh waits for a child of its own, as sh -c 'ssh ...; ...' does.
  spec.argv = {"sh", "-c", "sleep 30 & echo $! > '" + pid_file + "'; wait"};
  spec.own_process_group = true;
  REQUIRE(children.start(spec));
  std::string pid_text;
  for (int i = 0; i < 100 && pid_text.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    pid_text = files.read(pid_file);
  }
  REQUIRE_FALSE(pid_text.empty());
  const pid_t sleeper = std::stoi(pid_text);
  children.terminate_all();
  int status = -1;
  children.wait_all([&](std::size_t, int child_status) { status = child_status; });
  CHECK(status == 128 + SIGTERM);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = !is_running(sleeper);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(gone);
  if (!gone) ::kill(sleeper, SIGKILL);
}
