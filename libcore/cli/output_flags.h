#pragma once

// --format, --format-option, --key, --topic, --flink, --mask and --mask-keys: the output
// stage's flags, the same on every tool that writes final change lines (cdc-stream,
// cdc-merge, cdc-sync; cdc-formats(7)).

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "output/format.h"
#include "util/result.h"

namespace cdc::cli {

class OutputFlags {
 public:
  // Adds the flags to app, in an "Output format" group.
  void add_to(CLI::App& app);
  // Adds --include-query too, for the tools that read the binlog (cdc-stream, cdc-sync).
  void add_include_query_to(CLI::App& app);
  // The options the flags ask for, checked: Errc::usage for a format option the format does
  // not know (the message lists the ones it does), a bad value, a mask without '=', or
  // --include-query with --mask.
  [[nodiscard]] Result<output::OutputOptions> options() const;
  // The flags as given, --name=value, for a child process (cdc-sync's final cdc-stream).
  [[nodiscard]] std::vector<std::string> arguments() const;

 private:
  std::string format_ = "ndjson";
  std::vector<std::string> format_options_;
  std::vector<std::string> masks_;
  bool key_ = false;
  bool topic_ = false;
  bool flink_ = false;
  bool mask_keys_ = false;
  bool include_query_ = false;
};

}  // namespace cdc::cli
