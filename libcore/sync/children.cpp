#include "sync/children.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "util/fault_plan.h"
#include "util/fd_io.h"

extern char** environ;  // NOLINT: POSIX

namespace {
constexpr char kParentVariable[] = "CDC_SYNC_PID";
}  // namespace

namespace cdc::sync {

namespace {

// What the signal handlers see: the wake-up pipe of the waits, the stop signal that came, and
// the children to pass it on to, as kill(2) takes them: a pid, or minus a process group's id
// (0: a free slot).
int g_wake_read = -1;
int g_wake_write = -1;
volatile std::sig_atomic_t g_stop_signal = 0;
constexpr std::size_t kMaxChildren = 4096;
std::array<std::atomic<pid_t>, kMaxChildren> g_children{};

void wake_up() noexcept {
  const char byte = 0;
  (void)!::write(g_wake_write, &byte, 1);  // a full pipe already wakes the wait
}

extern "C" void on_stop_signal(int signal) {
  const int saved_errno = errno;
  g_stop_signal = signal;
  for (auto& child : g_children)
    if (const pid_t target = child.load(std::memory_order_relaxed); target != 0) ::kill(target, SIGTERM);
  wake_up();
  errno = saved_errno;
}

extern "C" void on_child_exit(int) {
  const int saved_errno = errno;
  wake_up();
  errno = saved_errno;
}

int status_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

Unexpected spawn_error(std::string_view what, int error) {
  return fail(Errc::io, fmt::format("{}: {}", what, std::strerror(error)));
}

}  // namespace

void Console::note(std::string_view message) {
  clear_progress();
  (void)write_all(STDERR_FILENO, fmt::format("cdc-sync: {}\n", message), "stderr");
}

void Console::error(std::string_view message) { note(fmt::format("error: {}", message)); }

void Console::progress(std::string_view line) {
  (void)write_all(STDERR_FILENO, fmt::format("\r\x1b[K{}", line), "stderr");
  progress_shown_ = true;
}

void Console::end_progress() {
  if (progress_shown_) (void)write_all(STDERR_FILENO, "\n", "stderr");
  progress_shown_ = false;
}

void Console::clear_progress() {
  if (progress_shown_) (void)write_all(STDERR_FILENO, "\r\x1b[K", "stderr");
  progress_shown_ = false;
}

void Console::relay(std::string_view bytes) {
  clear_progress();
  (void)write_all(STDERR_FILENO, bytes, "stderr");
}

struct Children::Running {
  pid_t pid = 0;
  pid_t kill_target = 0;  // pid, or -pid for a child in its own process group
  std::size_t slot = 0;
  int relay_fd = -1;
  std::string relay_buffer;
  std::function<bool(std::string_view)> keep_line;
  bool done = false;
};

Children::Children(Console& console) : console_(console) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {
    g_wake_read = fds[0];
    g_wake_write = fds[1];
  }
  g_stop_signal = 0;
  // Installed even when SIGINT came ignored (a background job of a script): cdc-sync must
  // pass it on and stop its tools.
  struct sigaction action {};
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  action.sa_handler = on_stop_signal;
  ::sigaction(SIGINT, &action, &previous_[0]);
  ::sigaction(SIGTERM, &action, &previous_[1]);
  action.sa_handler = on_child_exit;
  action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  ::sigaction(SIGCHLD, &action, &previous_[2]);
}

Children::~Children() {
  (void)stop_background();
  ::sigaction(SIGINT, &previous_[0], nullptr);
  ::sigaction(SIGTERM, &previous_[1], nullptr);
  ::sigaction(SIGCHLD, &previous_[2], nullptr);
  for (const auto& child : running_)
    if (child->relay_fd >= 0) ::close(child->relay_fd);
  if (g_wake_read >= 0) ::close(g_wake_read);
  if (g_wake_write >= 0) ::close(g_wake_write);
  g_wake_read = g_wake_write = -1;
}

int Children::stop_signal() noexcept { return g_stop_signal; }

Result<pid_t> Children::start(const ChildSpec& spec) {
  (void)fault::at("sync.tool");
  std::size_t slot = 0;
  while (slot < kMaxChildren && g_children[slot].load() != 0) ++slot;
  if (slot == kMaxChildren) return fail(Errc::usage, fmt::format("more than {} processes at once", kMaxChildren));

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t signals;
  sigemptyset(&signals);
  posix_spawnattr_setsigmask(&attributes, &signals);
  for (const int signal : {SIGINT, SIGTERM, SIGCHLD, SIGPIPE}) sigaddset(&signals, signal);
  posix_spawnattr_setsigdefault(&attributes, &signals);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;  // NOLINT(google-runtime-int): the API's type
  if (spec.own_process_group) {
    posix_spawnattr_setpgroup(&attributes, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  posix_spawnattr_setflags(&attributes, flags);

  // The lines relayed: the spec's filter, and while errors are held, every line but the errors.
  std::function<bool(std::string_view)> keep_line = spec.relay_stderr;
  if (holding_errors_ && spec.stderr_file.empty())
    keep_line = [this, keep = spec.relay_stderr](std::string_view line) {
      if (is_error_line(line)) {
        held_errors_.emplace_back(line);
        return false;
      }
      return !keep || keep(line);
    };

  constexpr int kCreate = O_WRONLY | O_CREAT | O_TRUNC;  // NOLINT(hicpp-signed-bitwise)
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  int relay[2] = {-1, -1};
  if (keep_line && ::pipe2(relay, O_CLOEXEC) != 0) return spawn_error("cannot make a pipe", errno);
  if (!spec.stdout_file.empty())
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, spec.stdout_file.c_str(), kCreate, 0666);
  else if (spec.stdout_to_stderr)  // into the relay too when there is one, in the order written
    posix_spawn_file_actions_adddup2(&actions, keep_line ? relay[1] : STDERR_FILENO, STDOUT_FILENO);
  if (keep_line) {
    posix_spawn_file_actions_adddup2(&actions, relay[1], STDERR_FILENO);
  } else if (!spec.stderr_file.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, spec.stderr_file.c_str(), kCreate, 0666);
  }

  std::vector<char*> argv;
  for (const std::string& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));  // NOLINT
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (char** entry = environ; *entry != nullptr; ++entry)
    if (std::string_view(*entry).substr(0, sizeof kParentVariable) != std::string(kParentVariable) + "=")
      envp.push_back(*entry);
  for (const std::string& entry : spec.environment) envp.push_back(const_cast<char*>(entry.c_str()));  // NOLINT
  // The tools end with cdc-sync, however it ends (cli::ToolCli reads it): a cdc-sync killed
  // alone (kill -9 of its pid, the OOM killer) would leave its stream running, holding DIR's
  // lock, and the rerun could not start.
  const std::string parent = fmt::format("{}={}", kParentVariable, ::getpid());
  if (spec.ends_with_cdc_sync) envp.push_back(const_cast<char*>(parent.c_str()));  // NOLINT
  envp.push_back(nullptr);

  pid_t pid = 0;
  const bool by_path = spec.argv[0].find('/') != std::string::npos;
  const int spawned = by_path ? ::posix_spawn(&pid, argv[0], &actions, &attributes, argv.data(), envp.data())
                              : ::posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (relay[1] >= 0) ::close(relay[1]);
  if (spawned != 0) {
    if (relay[0] >= 0) ::close(relay[0]);
    return spawn_error(fmt::format("cannot run {}", spec.argv[0]), spawned);
  }
  const pid_t kill_target = spec.own_process_group ? -pid : pid;
  g_children[slot].store(kill_target);
  // A stop signal that came before the slot was filled did not reach this child.
  if (g_stop_signal != 0) ::kill(kill_target, SIGTERM);
  auto child = std::make_unique<Running>();
  child->pid = pid;
  child->kill_target = kill_target;
  child->slot = slot;
  if (relay[0] >= 0) {
    ::fcntl(relay[0], F_SETFL, O_NONBLOCK);
    child->relay_fd = relay[0];
    child->keep_line = std::move(keep_line);
  }
  running_.push_back(std::move(child));
  return pid;
}

Result<pid_t> Children::start_background(const ChildSpec& spec, BackgroundRerun rerun) {
  if (background_) return fail(Errc::internal, "a background child runs already");
  // Started as any child, then moved out of the list wait_all waits for. Its stderr is never
  // held back: only wait_all's children are drained.
  const bool holding = std::exchange(holding_errors_, false);
  auto started = start(spec);
  holding_errors_ = holding;
  if (!started) return started;
  background_ = std::move(running_.back());
  running_.pop_back();
  background_status_.reset();
  background_spec_ = spec;
  background_rerun_ = std::move(rerun);
  background_rerun_at_.reset();
  return started;
}

bool Children::reap_background() {
  if (!background_) return false;
  if (background_rerun_at_) {
    if (g_stop_signal != 0) {  // no rerun after a stop: it ended as it was asked to
      background_rerun_at_.reset();
      return false;
    }
    if (std::chrono::steady_clock::now() < *background_rerun_at_) return false;
    background_rerun_at_.reset();
    background_.reset();
    auto rerun = std::move(background_rerun_);
    if (auto started = start_background(background_spec_, std::move(rerun)); !started) {
      console_.error(started.error().message);
      background_status_ = 127;
      return true;
    }
    return false;
  }
  if (background_->done) return false;
  int wait_status = 0;
  const pid_t ended = ::waitpid(background_->pid, &wait_status, WNOHANG);
  if (ended != background_->pid && !(ended < 0 && errno == ECHILD)) return false;
  background_->done = true;
  g_children[background_->slot].store(0);
  const int status = ended == background_->pid ? status_of(wait_status) : 1;
  if (background_rerun_ && g_stop_signal == 0) {
    if (const auto pause = background_rerun_(status)) {
      background_rerun_at_ = std::chrono::steady_clock::now() + *pause;
      return false;
    }
  }
  background_status_ = status;
  return true;
}

std::chrono::milliseconds Children::until_background_rerun() const {
  if (!background_rerun_at_) return std::chrono::milliseconds(-1);
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*background_rerun_at_ -
                                                                          std::chrono::steady_clock::now());
  return std::max(left, std::chrono::milliseconds(0));
}

std::optional<int> Children::background_status() {
  reap_background();
  return background_status_;
}

std::optional<int> Children::stop_background() {
  if (!background_) return std::nullopt;
  background_rerun_at_.reset();  // waiting to run again: it stays stopped
  if (!background_->done) ::kill(background_->kill_target, SIGTERM);
  while (!background_->done && !reap_background()) wake_wait(std::chrono::milliseconds(200));
  background_.reset();
  background_rerun_ = {};
  return background_status_;
}

void Children::drain_relays(bool at_end) {
  for (const auto& child : running_) {
    if (child->relay_fd < 0) continue;
    char buffer[4096];
    ssize_t got = 0;
    while ((got = ::read(child->relay_fd, buffer, sizeof buffer)) > 0)
      child->relay_buffer.append(buffer, static_cast<std::size_t>(got));
    const bool closed = got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR);
    std::string out;
    std::size_t newline = 0;
    while ((newline = child->relay_buffer.find('\n')) != std::string::npos) {
      const std::string_view line(child->relay_buffer.data(), newline);
      if (child->keep_line(line)) out.append(child->relay_buffer, 0, newline + 1);
      child->relay_buffer.erase(0, newline + 1);
    }
    if ((closed || (at_end && child->done)) && !child->relay_buffer.empty()) {
      if (child->keep_line(child->relay_buffer)) out += child->relay_buffer;
      child->relay_buffer.clear();
    }
    if (!out.empty()) console_.relay(out);
    if (closed || (at_end && child->done)) {
      ::close(child->relay_fd);
      child->relay_fd = -1;
    }
  }
}

void Children::wake_wait(std::chrono::milliseconds timeout) {
  std::vector<pollfd> fds;
  fds.push_back(pollfd{g_wake_read, POLLIN, 0});
  for (const auto& child : running_)
    if (child->relay_fd >= 0) fds.push_back(pollfd{child->relay_fd, POLLIN, 0});
  (void)::poll(fds.data(), fds.size(), timeout.count() < 0 ? -1 : static_cast<int>(timeout.count()));
  char buffer[256];
  while (::read(g_wake_read, buffer, sizeof buffer) > 0) {
  }
}

void Children::wait_all(const std::function<void(std::size_t, int)>& on_exit, const std::function<void()>& tick,
                        std::chrono::milliseconds tick_every) {
  using Clock = std::chrono::steady_clock;
  auto next_tick = Clock::now() + tick_every;
  for (;;) {
    bool all_done = true;
    for (std::size_t index = 0; index < running_.size(); ++index) {
      Running& child = *running_[index];
      if (child.done) continue;
      int wait_status = 0;
      const pid_t ended = ::waitpid(child.pid, &wait_status, WNOHANG);
      if (ended == child.pid || (ended < 0 && errno == ECHILD)) {
        child.done = true;
        g_children[child.slot].store(0);
        drain_relays(true);
        on_exit(index, ended == child.pid ? status_of(wait_status) : 1);
      } else {
        all_done = false;
      }
    }
    // The background child ended first: the step it ran beside is stopped too.
    if (reap_background()) terminate_all();
    if (all_done) break;
    auto timeout = std::chrono::milliseconds(-1);
    if (tick) timeout = std::max(std::chrono::milliseconds(0),
                                 std::chrono::duration_cast<std::chrono::milliseconds>(next_tick - Clock::now()));
    if (const auto rerun = until_background_rerun(); rerun.count() >= 0 && (timeout.count() < 0 || rerun < timeout))
      timeout = rerun;
    wake_wait(timeout);
    drain_relays(false);
    if (tick && Clock::now() >= next_tick) {
      tick();
      next_tick = Clock::now() + tick_every;
    }
  }
  drain_relays(true);
  running_.clear();
}

int Children::run(const ChildSpec& spec) {
  auto started = start(spec);
  if (!started) {
    console_.error(started.error().message);
    return 127;
  }
  int status = 0;
  wait_all([&](std::size_t, int child_status) { status = child_status; });
  return status;
}

void Children::terminate_all() noexcept {
  for (const auto& child : running_)
    if (!child->done) ::kill(child->kill_target, SIGTERM);
}

bool Children::sleep(std::chrono::seconds duration) {
  const auto until = std::chrono::steady_clock::now() + duration;
  while (g_stop_signal == 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return true;
    wake_wait(left);
  }
  return false;
}

bool is_error_line(std::string_view line) noexcept {
  const std::size_t colon = line.find(": ");
  return colon != std::string_view::npos && colon > 0 && line.substr(0, colon).find(' ') == std::string_view::npos &&
         line.substr(colon + 2).starts_with("error: ");
}

std::string_view signal_name(int signal) noexcept {
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "a signal";
  }
}

std::string executable_dir() {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string(".") : self.parent_path().string();
}

}  // namespace cdc::sync
