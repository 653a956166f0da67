#include "sync/tools.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdlib>
#include <vector>

#include "sync/children.h"
#include "sync/state_dir.h"
#include "util/fd_io.h"

extern char** environ;  // NOLINT: POSIX

namespace cdc::sync {

namespace {

bool has_tools(const std::string& dir) {
  return is_executable(dir + "/cdc-plan") && is_executable(dir + "/cdc-snapshot") &&
         is_executable(dir + "/cdc-stream");
}

}  // namespace

bool is_executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

Result<std::string> find_tools() {
  const char* from_env = std::getenv("CDC_TOOLS_DIR");
  const std::string own = executable_dir();
  std::vector<std::string> candidates;
  if (from_env != nullptr && *from_env != '\0') candidates.emplace_back(from_env);
  candidates.push_back(own);
  for (const std::string& dir : candidates)
    if (has_tools(dir)) return logical_absolute(dir);
  if (from_env != nullptr && *from_env != '\0')
    return fail(Errc::server, fmt::format("the cdc tools are not in CDC_TOOLS_DIR={} (cdc-plan, cdc-snapshot, "
                                          "cdc-merge, cdc-stream)",
                                          from_env));
  return fail(Errc::server,
              fmt::format("the cdc tools are not next to {}/cdc-sync: set CDC_TOOLS_DIR to their directory", own));
}

Result<std::string> version_report(std::string_view own_version) {
  auto tools = find_tools();
  if (!tools) return fail(tools.error());
  while (!own_version.empty() && own_version.back() == '\n') own_version.remove_suffix(1);
  std::string report = fmt::format("{}\nruns the tools in {}:\n", own_version, *tools);
  for (const char* name : {"cdc-plan", "cdc-snapshot", "cdc-merge", "cdc-stream"}) {
    const std::string path = fmt::format("{}/{}", *tools, name);
    if (!is_executable(path)) {
      report += fmt::format("  {}: missing\n", name);
      continue;
    }
    // The tool's first --version line, through a pipe.
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return fail(Errc::io, "cannot make a pipe");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    std::string flag = "--version";
    char* argv[] = {const_cast<char*>(path.c_str()), flag.data(), nullptr};  // NOLINT
    pid_t pid = 0;
    if (::posix_spawn(&pid, path.c_str(), &actions, nullptr, argv, environ) != 0) pid = 0;
    posix_spawn_file_actions_destroy(&actions);
    ::close(pipe_fds[1]);
    std::string text;
    char buffer[4096];
    for (;;) {
      auto got = read_some(pipe_fds[0], buffer, sizeof buffer, name);
      if (!got || *got == 0) break;
      text.append(buffer, *got);
    }
    ::close(pipe_fds[0]);
    if (pid > 0) ::waitpid(pid, nullptr, 0);
    report += fmt::format("  {}\n", text.substr(0, text.find('\n')));
  }
  return report;
}

}  // namespace cdc::sync
