#pragma once

// The command line all four tools share. This is the only module that sees CLI11: tools build
// their own options on app() and leave connection options, --help, --version, usage errors
// and exit codes to this class.

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "mysql/connection_options.h"
#include "util/error.h"

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

  // Parses argv. Returns the exit code when the tool must stop now: 0 after --help or
  // --version (printed to stdout), 2 after a usage error (printed to stderr).
  [[nodiscard]] std::optional<int> parse(int argc, const char* const* argv);

  // Prints "<tool>: error: <message>" on stderr and returns the exit code for it.
  int report(const Error& error) const;
  // Prints "<tool>: <kind>: <message>" on stderr.
  void diagnostic(std::string_view kind, std::string_view message) const;
  // Prints the message and "Try '<tool> --help'" on stderr; returns 2.
  int usage_error(std::string_view message) const;

 private:
  std::optional<int> finish_password();

  std::string tool_name_;
  CLI::App app_;
  mysql::ConnectionOptions* connection_ = nullptr;
  bool prompt_password_ = false;
  std::optional<std::string> argv_password_;
  std::string ssl_mode_text_;
};

// "cdc-plan 0.1.0" and the versions of the libraries it was built with.
[[nodiscard]] std::string version_text(std::string_view tool_name);

// Reads a line from the terminal with echo off. Fails when there is no terminal.
[[nodiscard]] std::optional<std::string> prompt_password(std::string_view prompt);

}  // namespace cdc::cli
