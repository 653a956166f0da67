// cdc-sync's own checks of its command line (run_sync.h, apply_command_line).
#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string_view>

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
  return {};
}


}  // namespace cdc::sync
