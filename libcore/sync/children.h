#pragma once

// The tools cdc-sync runs, as child processes: started with posix_spawn, waited for with
// waitpid when a SIGCHLD wakes the wait (never polled with sleeps), and stopped with SIGTERM
// when cdc-sync gets SIGINT or SIGTERM. Children run in cdc-sync's process group (a SIGKILL
// to the group ends them all), read /dev/null, inherit the environment (MYSQL_PWD) and the
// --dir lock, and get the default dispositions of the signals cdc-sync handles or ignores. A
// child may have a process group of its own instead (ChildSpec::own_process_group).

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/result.h"

namespace cdc::sync {

// cdc-sync's standard error: its own notes and errors, the progress line drawn in place, and
// the children's lines it relays. A note first clears a progress line that is shown.
class Console {
 public:
  void note(std::string_view message);   // "cdc-sync: MESSAGE"
  void error(std::string_view message);  // "cdc-sync: error: MESSAGE"
  void progress(std::string_view line);  // "\r" LINE "\x1b[K", left in place
  void end_progress();                   // a newline after a progress line: it stays
  void clear_progress();                 // "\r\x1b[K" after a progress line: it goes
  void relay(std::string_view bytes);    // a child's whole lines

 private:
  bool progress_shown_ = false;
};

struct ChildSpec {
  std::vector<std::string> argv;  // argv[0]: the program, a path (or a name looked up in PATH)
  std::string stdout_file;        // "": cdc-sync's stdout; else created or emptied
  bool stdout_to_stderr = false;
  std::string stderr_file;        // "": cdc-sync's stderr; else created or emptied
  // Through a pipe that cdc-sync relays to its stderr line by line, dropping the lines for
  // which this returns false (a terminal on stderr then is cdc-sync's alone).
  std::function<bool(std::string_view line)> relay_stderr;
  std::vector<std::string> environment;  // NAME=VALUE added to cdc-sync's
  // In a process group of its own, which SIGTERM is sent to: a shell command's every process
  // gets it, not only the shell (sh -c does not exec the command it runs).
  bool own_process_group = false;
  // A tool of cdc's ends when cdc-sync dies, however it dies (CDC_SYNC_PID, cli::ToolCli); a
  // user's command (--snapshot-command, --on-phase) keeps a life of its own, and so do the
  // processes it starts.
  bool ends_with_cdc_sync = true;
};

class Children {
 public:
  // Installs the SIGINT, SIGTERM and SIGCHLD handlers; one instance per process.
  explicit Children(Console& console);
  Children(const Children&) = delete;
  Children& operator=(const Children&) = delete;
  ~Children();

  // Starts a child; Errc::io when it cannot be started (the program is missing, a file cannot
  // be opened). A child started after a stop signal came is sent SIGTERM at once.
  [[nodiscard]] Result<pid_t> start(const ChildSpec& spec);
  // Waits until every started child has ended. on_exit(index, status) is called as each
  // ends, index in start order; tick() every tick_every when given. The status is the exit
  // status, or 128 + the signal that killed it.
  void wait_all(const std::function<void(std::size_t index, int status)>& on_exit,
                const std::function<void()>& tick = {},
                std::chrono::milliseconds tick_every = std::chrono::milliseconds(200));
  // start + wait_all for one child: its status, 127 (with a message) when it could not start.
  [[nodiscard]] int run(const ChildSpec& spec);
  // SIGTERM to every running child (not to the background one).
  void terminate_all() noexcept;

  // What to do when the background child ends by itself with this status: the pause after
  // which it is started again, as it was, or nullopt for its end to stand.
  using BackgroundRerun = std::function<std::optional<std::chrono::milliseconds>(int status)>;
  // One child that runs beside the others: wait_all does not wait for it, and when it ends
  // first, wait_all sends SIGTERM to the children it waits for, so that the step ends too
  // (the stream of the tables synced so far, while an addition reads the new tables: its end
  // is cdc-sync's), unless rerun says to start it again (a server that was down when it
  // started): then the step goes on, and it runs again after the pause. A stop signal reaches
  // it as it reaches the others, and no rerun follows one.
  [[nodiscard]] Result<pid_t> start_background(const ChildSpec& spec, BackgroundRerun rerun = {});
  // Its status once it has ended (reaped here when it has), nullopt while it runs, waits to
  // run again, or when none was started.
  [[nodiscard]] std::optional<int> background_status();
  // SIGTERM to it, then waits for it: its status (that of its own end when it came first);
  // nullopt when none was started, or it was waiting to run again.
  std::optional<int> stop_background();
  // Sleeps, or less when a stop signal comes: false then.
  bool sleep(std::chrono::seconds duration);

  // While on, a child started without a stderr file has its standard error relayed (through
  // its relay_stderr filter, if any), and its error lines ("TOOL: error: ...") are held back
  // instead of shown: cdc-sync's reruns of a tool that exits 69 do not repeat the error its
  // first run gave (Runner::retrying). take_held_errors() hands them over, in the order they
  // came, and forgets them.
  void hold_errors(bool on) noexcept { holding_errors_ = on; }
  [[nodiscard]] bool holding_errors() const noexcept { return holding_errors_; }
  [[nodiscard]] std::vector<std::string> take_held_errors() { return std::exchange(held_errors_, {}); }

  // The stop signal that came (SIGINT or SIGTERM), 0 for none.
  [[nodiscard]] static int stop_signal() noexcept;

 private:
  struct Running;
  void wake_wait(std::chrono::milliseconds timeout);
  void drain_relays(bool at_end);
  bool reap_background();
  // The time left until the background child is to run again; -1 ms when it is not waiting.
  [[nodiscard]] std::chrono::milliseconds until_background_rerun() const;


  Console& console_;
  std::vector<std::unique_ptr<Running>> running_;
  std::unique_ptr<Running> background_;
  std::optional<int> background_status_;
  ChildSpec background_spec_;
  BackgroundRerun background_rerun_;
  std::optional<std::chrono::steady_clock::time_point> background_rerun_at_;
  bool holding_errors_ = false;
  std::vector<std::string> held_errors_;
  struct sigaction previous_[3] {};  // SIGINT, SIGTERM, SIGCHLD as they were
};

// Whether a line of a tool's standard error is its error: "TOOL: error: MESSAGE", TOOL one word.
[[nodiscard]] bool is_error_line(std::string_view line) noexcept;

// "SIGTERM", "SIGINT".
[[nodiscard]] std::string_view signal_name(int signal) noexcept;

// The directory of the running executable (/proc/self/exe).
[[nodiscard]] std::string executable_dir();

}  // namespace cdc::sync
