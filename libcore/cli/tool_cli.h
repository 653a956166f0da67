#pragma once

// The command line all four tools share. This is the only module that sees CLI11: tools build
// their own options on app() and leave connection options, --help, --version, usage errors
// and exit codes to this class.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mysql/connection_options.h"
#include "util/error.h"
#include "util/result.h"

namespace cdc::cli {

class ToolCli {
 public:
  ToolCli(std::string tool_name, std::string purpose);

  CLI::App& app() { return app_; }
  [[nodiscard]] const std::string& tool_name() const { return tool_name_; }

  // -h/--host, -P/--port, -u/--user, -p/--password, -S/--socket, --defaults-file,
  // --defaults-group, --ssl-mode, --ssl-ca, --ssl-cert, --ssl-key, --connect-timeout, as the
  // mysql client has them.
  void add_connection_options(mysql::ConnectionOptions& options);
  // Shown after the options in --help: two or three pipelines.
  void set_examples(std::string examples);
  // Replaces what --version prints (default: version_text()); an error is reported as usual.
  void set_version_text(std::function<Result<std::string>()> make_text) { version_text_ = std::move(make_text); }

  // Parses argv. Returns the exit code when the tool must stop now: 0 after --help or
  // --version (printed to stdout), 2 after a usage error (printed to stderr).
  [[nodiscard]] std::optional<int> parse(int argc, const char* const* argv);

  // Prints "<tool>: error: <message>" on stderr and returns the exit code for it.
  int report(const Error& error) const;
  // Prints "<tool>: <kind>: <message>" on stderr.
  void diagnostic(std::string_view kind, std::string_view message) const;
  // Prints the message and "Try '<tool> --help'" on stderr; returns 2.
  int usage_error(std::string_view message) const;

  // The end of every tool's main. On failure: a reader that went away (EPIPE on stdout, as
  // `| head` does) is a normal end, exit 0; a usage error gets the --help hint, exit 2; any
  // other error its exit code. On success stdout is closed first, so that a write the
  // system deferred (a full disk, NFS) still fails, exit 74; then exit_code.
  template <typename T>
  [[nodiscard]] int finish(const Result<T>& outcome, int exit_code = 0) const {
    if (!outcome) return finish_error(outcome.error());
    return finish_success(exit_code);
  }
  [[nodiscard]] int finish_error(const Error& error) const;
  [[nodiscard]] int finish_success(int exit_code = 0) const;

 private:
  std::optional<int> finish_password();
  // Writes --help or --version to stdout and ends as finish() does (74 when stdout is full).
  int print_and_finish(std::string_view text, std::string_view what) const;

  std::string tool_name_;
  CLI::App app_;
  mysql::ConnectionOptions* connection_ = nullptr;
  bool prompt_password_ = false;
  bool version_requested_ = false;
  std::optional<std::string> argv_password_;
  std::string ssl_mode_text_;
  std::function<Result<std::string>()> version_text_;
};

// A CLI11 transform for a whole decimal number from min to max (use it with ->transform:
// it writes the number back without leading zeros). CLI11's own conversion takes "-1" and
// 99999999999999999999 for an unsigned option as its largest value and "010" as octal;
// this refuses the first two with the range in the message and reads the third as 10.
[[nodiscard]] CLI::Validator whole_number(std::uint64_t min, std::uint64_t max);

// A CLI11 check for a file this process can read (not a directory, not unreadable): the
// client library skips an option file it cannot open without a word.
[[nodiscard]] CLI::Validator readable_file();

// "cdc-plan 0.1.0" and the versions of the libraries it was built with.
[[nodiscard]] std::string version_text(std::string_view tool_name);

// Reads a line from the terminal with echo off. Fails when there is no terminal.
[[nodiscard]] std::optional<std::string> prompt_password(std::string_view prompt);

}  // namespace cdc::cli
