#include "cli/tool_cli.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "util/exit_code.h"
#include "util/fd_io.h"

namespace cdc::cli {

namespace {

// CLI11's default formatter, with "Default:" spelled the way --help texts of jq and kcat do.
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() { label("REQUIRED", "(required)"); }
};

// The parent of a process, from /proc/PID/stat ("PID (COMM) STATE PPID ..."; COMM may hold
// spaces and parentheses, so the fields are counted from the last ')'); 0 when unknown.
pid_t parent_of(pid_t pid) {
  const std::string path = fmt::format("/proc/{}/stat", pid);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[512];
  const ssize_t got = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (got <= 0) return 0;
  text[got] = '\0';
  const std::string_view stat(text, static_cast<std::size_t>(got));
  const std::size_t close = stat.rfind(')');
  if (close == std::string_view::npos || close + 4 >= stat.size()) return 0;
  return static_cast<pid_t>(std::strtol(text + close + 4, nullptr, 10));  // past ") S "
}

// A tool that cdc-sync started (CDC_SYNC_PID, sync/children.cpp; directly, or through a
// wrapper script in CDC_TOOLS_DIR) gets SIGTERM when its parent dies, however it dies: a stream
// left running would hold the state directory's lock, and a stream has no end of its own.
// One whose ancestors no longer include cdc-sync at its start was orphaned already (cdc-sync
// died between starting it and now, and may still be a zombie, so its pid alone proves
// nothing): it stops at once. A user's command (--snapshot-command, --on-phase) does not get
// the variable, nor what it starts. A wrapper in CDC_TOOLS_DIR should exec the tool: the signal
// comes on the death of the direct parent.
void end_with_cdc_sync(std::string_view tool) {
  const char* text = std::getenv("CDC_SYNC_PID");
  if (text == nullptr) return;
  const pid_t sync = static_cast<pid_t>(std::strtol(text, nullptr, 10));
  if (sync <= 0) return;
  const pid_t parent = ::getppid();
  // Up the ancestors to cdc-sync (found), to init (orphaned) or to one that cannot be read
  // (/proc hidden, another pid namespace: unknown, and the tool goes on).
  pid_t ancestor = parent;
  for (int steps = 0; ancestor > 1 && ancestor != sync && steps < 64; ++steps) ancestor = parent_of(ancestor);
  if (ancestor == 1) {
    (void)write_all(STDERR_FILENO,
                    fmt::format("{}: notice: the cdc-sync that started it (pid {}, CDC_SYNC_PID) has ended: "
                                "stopping\n",
                                tool, sync),
                    "stderr");
    ::raise(SIGTERM);
    return;
  }
  if (ancestor != sync) return;
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::raise(SIGTERM);  // the parent died before prctl took effect
}

}  // namespace

ToolCli::ToolCli(std::string tool_name, std::string purpose)
    : tool_name_(std::move(tool_name)), app_(std::move(purpose), tool_name_) {
  // A closed reader (`cdc-stream ... | head`) is a normal end: writes then fail with EPIPE,
  // which the tools treat as a quiet stop, instead of the signal killing them.
  std::signal(SIGPIPE, SIG_IGN);
  end_with_cdc_sync(tool_name_);
  app_.formatter(std::make_shared<HelpFormatter>());
  // As with the mysql client, a repeated option means its last value.
  app_.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app_.set_help_flag("-?,--help", "Print this help and exit");
  app_.get_formatter()->column_width(34);
  app_.add_flag_callback(
      "--version",
      [this] {
        version_requested_ = true;
        throw CLI::Success();
      },
      "Print the version and the libraries it was built with, then exit");
}

void ToolCli::add_connection_options(mysql::ConnectionOptions& options) {
  connection_ = &options;
  const std::string group = "Connection";
  app_.add_option("-h,--host", options.host, "Server host name or IP address. Default: localhost")
      ->group(group);
  app_.add_option("-P,--port", options.port, "TCP port, 1 to 65535. Default: 3306")
      ->group(group)
      ->transform(whole_number(1, 65535));
  app_.add_option("-u,--user", options.user, "User name. Default: the option files' user, else the login name")
      ->group(group);
  app_.add_flag("-p,--password", prompt_password_,
                "Password: -pSECRET or --password=SECRET as in the mysql client (visible in ps); "
                "-p alone prompts on the terminal. Prefer MYSQL_PWD or --defaults-file")
      ->group(group);
  app_.add_option("-S,--socket", options.socket, "Unix socket file, for connections to localhost")->group(group);
  app_.add_option("--defaults-file", options.defaults_file,
                  "Read connection options only from this option file ([client] and --defaults-group)")
      ->group(group)
      ->check(readable_file());
  app_.add_option("--defaults-group", options.defaults_group,
                  "Option-file group read besides [client], [client-server] and [client-mariadb]")
      ->group(group)
      ->capture_default_str();
  app_.add_option("--ssl-mode", ssl_mode_text_,
                  "DISABLED, PREFERRED (TLS if the server has it), REQUIRED (TLS or fail), VERIFY_CA (and "
                  "the certificate chain), VERIFY_IDENTITY (and the host name). Default: no TLS unless "
                  "--ssl-ca/--ssl-cert/--ssl-key or the option files ask for it")
      ->group(group)
      ->transform(CLI::IsMember({"DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY"},
                                CLI::ignore_case));
  app_.add_option("--ssl-ca", options.ssl_ca,
                  "File with the certificate authorities to trust; when given, the server's certificate "
                  "chain is checked in every mode that uses TLS")
      ->group(group)
      ->check(readable_file());
  app_.add_option("--ssl-cert", options.ssl_cert,
                  "Client certificate file (PEM), for accounts that REQUIRE X509, ISSUER or SUBJECT")
      ->group(group)
      ->check(readable_file());
  app_.add_option("--ssl-key", options.ssl_key, "The client certificate's private key file (PEM)")
      ->group(group)
      ->check(readable_file());
  app_.add_option("--connect-timeout", options.connect_timeout_seconds, "Seconds to wait for the connection")
      ->group(group)
      ->capture_default_str()
      ->transform(whole_number(1, 31536000));
}

void ToolCli::set_examples(std::string examples) { app_.footer(std::move(examples)); }

std::optional<int> ToolCli::parse(int argc, const char* const* argv) {
  // The mysql client's -p takes its value only when attached (-pSECRET, --password=SECRET):
  // "-p name" means prompt, then an operand. CLI11 cannot express that, so attached values
  // are taken out here and CLI11 only sees the bare flag.
  std::vector<std::string> args;
  args.reserve(static_cast<std::size_t>(argc));
  bool options_ended = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!options_ended && connection_ != nullptr) {
      if (arg.starts_with("--password=")) {
        argv_password_ = std::string(arg.substr(11));
        continue;
      }
      if (arg.starts_with("-p") && arg.size() > 2) {
        argv_password_ = std::string(arg.substr(2));
        continue;
      }
    }
    if (arg == "--") options_ended = true;
    args.emplace_back(arg);
  }
  std::vector<const char*> rebuilt;
  rebuilt.reserve(args.size() + 1);
  rebuilt.push_back(argv[0]);
  for (const std::string& arg : args) rebuilt.push_back(arg.c_str());

  try {
    app_.parse(static_cast<int>(rebuilt.size()), rebuilt.data());
  } catch (const CLI::CallForHelp&) {
    return print_and_finish(app_.help(), "the help");
  } catch (const CLI::Success&) {
    if (version_requested_ && version_text_) {
      auto text = version_text_();
      if (!text) return report(text.error());
      return print_and_finish(*text, "the version");
    }
    if (version_requested_) return print_and_finish(version_text(tool_name_), "the version");
    return static_cast<int>(ExitCode::success);
  } catch (const CLI::ParseError& error) {
    return usage_error(error.what());
  }
  return finish_password();
}

std::optional<int> ToolCli::finish_password() {
  if (connection_ == nullptr) return std::nullopt;
  if (!ssl_mode_text_.empty()) {
    static const std::pair<std::string_view, mysql::SslMode> kModes[] = {
        {"DISABLED", mysql::SslMode::disabled},   {"PREFERRED", mysql::SslMode::preferred},
        {"REQUIRED", mysql::SslMode::required},   {"VERIFY_CA", mysql::SslMode::verify_ca},
        {"VERIFY_IDENTITY", mysql::SslMode::verify_identity}};
    for (const auto& [name, mode] : kModes)
      if (name == ssl_mode_text_) connection_->ssl_mode = mode;
  }
  if (argv_password_) {
    connection_->password = argv_password_;
    return std::nullopt;
  }
  if (prompt_password_) {
    auto typed = prompt_password("Enter password: ");
    if (!typed)
      return usage_error("-p without a value needs a terminal to prompt on; use MYSQL_PWD or a "
                         "password= line in --defaults-file instead");
    connection_->password = std::move(typed);
  }
  return std::nullopt;
}

int ToolCli::usage_error(std::string_view message) const {
  diagnostic("error", message);
  const std::string hint = fmt::format("Try '{} --help' for more information.\n", tool_name_);
  (void)write_all(STDERR_FILENO, hint, "stderr");
  return static_cast<int>(ExitCode::usage);
}

int ToolCli::print_and_finish(std::string_view text, std::string_view what) const {
  if (auto written = write_all(STDOUT_FILENO, text, "stdout"); !written)
    return finish_error(written.error().with_context(fmt::format("cannot print {}", what)));
  return finish_success();
}

int ToolCli::finish_error(const Error& error) const {
  if (is_broken_pipe(error)) return static_cast<int>(ExitCode::success);
  if (error.code == Errc::usage) return usage_error(error.message);
  return report(error);
}

int ToolCli::finish_success(int exit_code) const {
  if (::close(STDOUT_FILENO) != 0 && errno != EBADF)
    return report(Error{Errc::io, fmt::format("closing stdout failed: {}", std::strerror(errno))});
  return exit_code;
}

int ToolCli::report(const Error& error) const {
  diagnostic("error", error.message);
  return exit_code_for(error.code);
}

void ToolCli::diagnostic(std::string_view kind, std::string_view message) const {
  (void)write_all(STDERR_FILENO, fmt::format("{}: {}: {}\n", tool_name_, kind, message), "stderr");
}

CLI::Validator whole_number(std::uint64_t min, std::uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        const bool digits_only =
            !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        std::uint64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (!digits_only || error != std::errc{} || end != text.data() + text.size() || value < min || value > max)
          return max == UINT64_MAX ? fmt::format("give a whole number of at least {}, not '{}'", min, text)
                                   : fmt::format("give a whole number from {} to {}, not '{}'", min, max, text);
        text = std::to_string(value);  // CLI11 would read a leading 0 as octal
        return {};
      },
      max == UINT64_MAX ? fmt::format("at least {}", min) : fmt::format("{} to {}", min, max));
}

CLI::Validator readable_file() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return fmt::format("cannot read {}: {}", path, std::strerror(errno));
        struct stat status {};
        const bool directory = ::fstat(fd, &status) == 0 && S_ISDIR(status.st_mode);
        ::close(fd);
        if (directory) return fmt::format("{} is a directory; give the file itself", path);
        return {};
      },
      "FILE");
}

std::optional<std::string> prompt_password(std::string_view prompt) {
  const int tty = ::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (tty < 0) return std::nullopt;
  termios saved{};
  const bool have_termios = ::tcgetattr(tty, &saved) == 0;
  if (have_termios) {
    termios quiet = saved;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    ::tcsetattr(tty, TCSANOW, &quiet);
  }
  (void)write_all(tty, prompt, "/dev/tty");
  std::string password;
  char c = 0;
  while (::read(tty, &c, 1) == 1 && c != '\n' && c != '\r') password.push_back(c);
  if (have_termios) ::tcsetattr(tty, TCSANOW, &saved);
  (void)write_all(tty, "\n", "/dev/tty");
  ::close(tty);
  return password;
}

}  // namespace cdc::cli
