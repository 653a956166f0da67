// cdc-sync's own checks of its command line (run_sync.h, apply_command_line).
#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "filter/columns_option.h"
#include "filter/where_option.h"
#include "sync/resume.h"
#include "sync/run_sync.h"

namespace cdc::sync {

namespace {

// Decimal digits only, 1 to 18 of them (so that the value fits, and 010 is ten).
bool is_decimal(std::string_view text) {
  return !text.empty() && text.size() <= 18 && text.find_first_not_of("0123456789") == std::string_view::npos;
}

// A whole decimal number of 1 or more.
std::optional<std::uint64_t> count_of(std::string_view text) {
  if (!is_decimal(text)) return std::nullopt;
  std::uint64_t value = 0;
  for (const char digit : text) value = value * 10 + static_cast<std::uint64_t>(digit - '0');
  if (value == 0) return std::nullopt;
  return value;
}

// The connection options as given, --name=value, for the tools (the password aside).
std::vector<std::string> connection_arguments(const CommandLine& line) {
  const mysql::ConnectionOptions& options = line.connection;
  std::vector<std::string> args;
  const auto add = [&](std::string_view name, const std::optional<std::string>& value) {
    if (value) args.push_back(fmt::format("--{}={}", name, *value));
  };
  add("host", options.host);
  if (options.port) args.push_back(fmt::format("--port={}", *options.port));
  add("user", options.user);
  add("socket", options.socket);
  add("defaults-file", options.defaults_file);
  if (line.defaults_group_given) args.push_back("--defaults-group=" + options.defaults_group);
  static constexpr std::string_view kModes[] = {"", "DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY"};
  if (options.ssl_mode != mysql::SslMode::unset)
    args.push_back(fmt::format("--ssl-mode={}", kModes[static_cast<int>(options.ssl_mode)]));
  add("ssl-ca", options.ssl_ca);
  add("ssl-cert", options.ssl_cert);
  add("ssl-key", options.ssl_key);
  if (line.connect_timeout_given) args.push_back(fmt::format("--connect-timeout={}", options.connect_timeout_seconds));
  return args;
}

// What every cdc-stream run gets besides --retry-for, as given.
void add_stream_options(const CommandLine& line, Options& options) {
  const auto pass = [&](std::string_view name, const std::optional<std::string>& value) {
    if (value) options.stream_options.push_back(fmt::format("{}={}", name, *value));
  };
  pass("--server-id", line.server_id);
  pass("--heartbeat", line.heartbeat);
  pass("--stats", line.stats);
  pass("--on-ddl", line.on_ddl);
  pass("--archive-source", line.archive_source);
  for (const std::string& ddl : line.accept_ddl) options.stream_options.push_back("--accept-ddl=" + ddl);
  if (line.require_read_only) options.stream_options.emplace_back("--require-read-only");
  for (const std::string& rows : options.wheres) options.stream_options.push_back("--where=" + rows);
  for (const std::string& columns : options.columns) options.stream_options.push_back("--columns=" + columns);
  if (line.watch_dns) options.stream_options.emplace_back("--watch-dns");
}

}  // namespace

Result<void> apply_command_line(const CommandLine& line, Options& options) {
  if (line.retry_for) {
    const std::string& text = *line.retry_for;
    if (!is_decimal(text))
      return fail(Errc::usage, fmt::format("--retry-for: '{}' is not a number of seconds", text));
    if (const auto seconds = count_of(text)) options.rerun_for_seconds = *seconds;
    options.stream_options.push_back("--retry-for=" + text);
    options.retry_options.push_back("--retry-for=" + text);
  }
  const auto mode = parse_mode(line.mode);
  if (!mode)
    return fail(Errc::usage, fmt::format("--mode: '{}' is not a mode: give initial, initial_only or no_data", line.mode));
  options.mode = *mode;
  if (options.dir.empty())
    return fail(Errc::usage, "give --dir DIR, the directory that keeps the state (the same --dir resumes)");
  if (options.tables.empty()) return fail(Errc::usage, "give --tables PATTERN[,...], e.g. --tables 'shop.*'");
  const auto jobs = count_of(line.jobs);
  if (!jobs) return fail(Errc::usage, fmt::format("-j: '{}' is not a number of processes (1 or more)", line.jobs));
  options.jobs = *jobs;
  if (!line.chunk_size.empty()) {
    options.chunk_size = count_of(line.chunk_size);
    if (!options.chunk_size)
      return fail(Errc::usage, fmt::format("--chunk-size: '{}' is not a number of rows (1 or more)", line.chunk_size));
  }
  if (options.mode == Mode::no_data && (line.jobs_given || options.chunk_size || !options.chunk_keys.empty()))
    return fail(Errc::usage, "-j, --chunk-size and --chunk-key shape a snapshot, and --mode no_data takes none");
  if (options.mode == Mode::no_data && line.snapshot_command_given)
    return fail(Errc::usage, "--snapshot-command reads a snapshot's chunks, and --mode no_data takes none");
  if (line.snapshot_command_given && options.snapshot_command.find_first_not_of(" \t\n") == std::string::npos)
    return fail(Errc::usage, "--snapshot-command needs a command, e.g. 'ssh worker{index} cdc-snapshot {args}'");
  if (options.mode == Mode::initial_only && line.until_given)
    return fail(Errc::usage, "--until stops the stream, and --mode initial_only has none: it ends after the snapshot");
  if (options.until && options.until->empty())
    return fail(Errc::usage, "--until needs a position (now, a GTID set or position, or FILE:OFFSET)");
  // Their syntax now, before any step; what they name is checked by cdc-plan and cdc-stream.
  for (const std::string& where : options.wheres)
    if (auto parsed = filter::parse_where_option(where); !parsed) return fail(std::move(parsed).error());
  for (const std::string& columns : options.columns)
    if (auto parsed = filter::parse_columns_option(columns); !parsed) return fail(std::move(parsed).error());
  add_stream_options(line, options);
  options.connection = connection_arguments(line);
  options.password = line.connection.password;
  return {};
}


}  // namespace cdc::sync
