#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "output/format.h"
#include "util/result.h"

namespace cdc::stream {

// cdc-stream --file: decode binlog files (or stdin) into NDJSON, as mysqlbinlog reads them.
struct FileOptions {
  std::vector<std::string> files;            // "-" is stdin
  std::optional<std::uint64_t> start_position;  // first file only, as mysqlbinlog
  std::optional<std::uint64_t> stop_position;   // last file only
  std::string tables;                        // --tables globs
  std::string exclude;                       // --exclude globs
  bool skip_unknown_events = false;          // skip unknown, non-ignorable event types
  output::OutputOptions output;  // --format and its flags: the output stage (cdc-formats(7))
};

struct FileSummary {
  std::uint64_t events = 0;
  std::uint64_t rows = 0;
  std::uint64_t transactions = 0;
  std::uint64_t skipped_events = 0;
};

// Warnings go through `warn` (one line each, without the tool prefix).
Result<FileSummary> run_files(const FileOptions& options, int out_fd, const std::function<void(std::string_view)>& warn);

}  // namespace cdc::stream
