#include "stream/command_line.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "archive/retention.h"
#include "filter/columns_option.h"
#include "filter/where_option.h"
#include "util/time_text.h"

namespace cdc::stream {

namespace {

Error usage(std::string message) { return Error{Errc::usage, std::move(message)}; }

// With --file, --from and --until are times; offsets are --start-position and --stop-position.
Result<void> file_time(const std::optional<std::string>& text, std::string_view name, std::string_view offset_option,
                       std::optional<UtcTime>& time) {
  if (!text) return {};
  if (!looks_like_time(*text))
    return fail(usage(fmt::format("with --file, {} takes a time (2026-11-30T10:00:00Z); for an offset use {}", name,
                                  offset_option)));
  auto parsed = parse_time(*text);
  if (!parsed) return fail(usage(parsed.error().message));
  time = *parsed;
  return {};
}

}  // namespace

Result<StreamRun> resolve_command_line(CommandLine line) {
  const auto given = [&line](std::string_view name) {
    return std::find(line.given.begin(), line.given.end(), name) != line.given.end();
  };
  LiveOptions& live = line.live;
  FileOptions& files = line.files;
  live.output = line.output;
  files.output = line.output;
  if (live.output_path == "-") live.output_path.reset();  // stdout

  std::vector<filter::WhereOption> wheres;
  for (const std::string& text : line.wheres) {
    auto where = filter::parse_where_option(text);
    if (!where) return fail(usage(where.error().message));
    wheres.push_back(std::move(*where));
  }
  std::vector<filter::ColumnsOption> columns;
  for (const std::string& text : line.columns) {
    auto chosen = filter::parse_columns_option(text);
    if (!chosen) return fail(usage(chosen.error().message));
    columns.push_back(std::move(*chosen));
  }
  auto keep = archive::parse_retention(line.archive_keep);
  if (!keep) return fail(usage(keep.error().message));

  if (!line.archive_keep.empty() && !line.archive_dir) return fail(usage("--archive-keep goes with --archive DIR"));
  if ((line.archive_dir || live.archive_source) && !files.files.empty())
    return fail(usage("--archive and --archive-source go with a server; --file reads files"));
  if (line.archive_dir && live.archive_source)
    return fail(usage("--archive DIR is read already where the server purged a position; --archive-source is for an "
                      "archive that another cdc-stream --archive writes"));
  if (line.archive_dir && !given("--output")) {
    // The archive alone: no changes, so none of the options about them.
    for (const char* name : {"--state", "--until", "--tables", "--exclude", "--where", "--columns", "--on-ddl",
                             "--accept-ddl", "--stats", "--require-read-only", "--watch-dns", "--metrics",
                             "--skip-unknown-events", "--archive-source", "--catalog"})
      if (given(name))
        return fail(usage(std::string(name) + " is about changes, and --archive DIR alone writes none; add --output "
                                              "FILE (or --output - for stdout) to write changes too"));
    if (line.format_given)
      return fail(usage("--format, its options and --include-query are about changes, and --archive DIR alone writes "
                        "none; add --output FILE (or --output - for stdout) to write changes too"));
    return StreamRun{ArchiveOptions{live.connection, *line.archive_dir, *keep, live.from, live.server_id,
                                    live.heartbeat_seconds, live.retry_seconds}};
  }

  if (!files.files.empty()) {
    if (live.state_path || live.output_path || live.metrics_path)
      return fail(usage("--file decodes files: --state, --output and --metrics are for a server"));
    if (auto from = file_time(live.from, "--from", "--start-position", files.from_time); !from) return fail(from.error());
    if (auto until = file_time(live.until, "--until", "--stop-position", files.until_time); !until)
      return fail(until.error());
    if (files.from_time && files.start_position)
      return fail(usage("--from TIME and --start-position both say where to start: give one"));
    if (files.until_time && files.stop_position)
      return fail(usage("--until TIME and --stop-position both say where to stop: give one"));
    files.tables = line.tables;
    files.exclude = line.exclude;
    files.wheres = std::move(wheres);
    files.columns = std::move(columns);
    files.skip_unknown_events = line.skip_unknown_events;
    if (line.catalog) files.catalog = live.connection;
    return StreamRun{std::move(files)};
  }

  if (files.start_position || files.stop_position)
    return fail(usage("--start-position and --stop-position go with --file; against a server use --from and --until "
                      "FILE:OFFSET"));
  if (line.catalog) return fail(usage("--catalog goes with --file; a live stream reads the catalog already"));
  if (!live.accepted_ddls.empty() && line.on_ddl != "stop") return fail(usage("--accept-ddl goes with --on-ddl stop"));
  live.stop_on_ddl = line.on_ddl == "stop";
  live.archive_dir = line.archive_dir;
  live.archive_keep = *keep;
  live.tables = line.tables;
  live.exclude = line.exclude;
  live.wheres = std::move(wheres);
  live.columns = std::move(columns);
  live.skip_unknown_events = line.skip_unknown_events;
  return StreamRun{std::move(live)};
}

}  // namespace cdc::stream
