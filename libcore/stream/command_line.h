#pragma once

// cdc-stream's command line (man/cdc-stream.1, OPTIONS): the options as tools/cdc-stream
// declares and parses them, then the checks between them and the choice of what to run: the
// binlog archive alone, the decoding of files, or a live stream. The tool only declares flags.

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "stream/archive_run.h"
#include "stream/file_stream.h"
#include "stream/live_stream.h"
#include "util/result.h"

namespace cdc::stream {

struct CommandLine {
  LiveOptions live;    // the connection and live options, --from and --until as given
  FileOptions files;   // --file, --start-position, --stop-position
  std::string on_ddl = "emit";
  bool catalog = false;
  std::optional<std::string> archive_dir;
  std::vector<std::string> archive_keep;
  std::string tables;
  std::string exclude;
  std::vector<std::string> wheres;
  std::vector<std::string> columns;
  bool skip_unknown_events = false;
  // The long options given ("--state"), for the checks of what goes with what.
  std::vector<std::string> given;
  // --format, one of its options or --include-query was given.
  bool format_given = false;
  // The output stage --format and its options chose (cli::OutputFlags::options()).
  output::OutputOptions output;
};

// What to run.
using StreamRun = std::variant<ArchiveOptions, FileOptions, LiveOptions>;

// The command line checked, one option against another: Errc::usage with the one-line message
// for the first that does not go with the others (--file with --state, --archive alone with
// change options, --start-position without --file, ...), or a --where, --columns or
// --archive-keep that does not parse.
[[nodiscard]] Result<StreamRun> resolve_command_line(CommandLine line);

}  // namespace cdc::stream
