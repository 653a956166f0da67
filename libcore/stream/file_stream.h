#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "filter/columns_option.h"
#include "filter/where_option.h"
#include "mysql/connection_options.h"
#include "output/format.h"
#include "stream/change_writer.h"
#include "util/result.h"
#include "util/time_text.h"

namespace cdc::stream {

// cdc-stream --file: decode binlog files (or stdin) into NDJSON, as mysqlbinlog reads them.
struct FileOptions {
  std::vector<std::string> files;            // "-" is stdin
  std::optional<std::uint64_t> start_position;  // first file only, as mysqlbinlog
  std::optional<std::uint64_t> stop_position;   // last file only
  // --from TIME: start at the first transaction committed at or after it (the files before
  // the one it falls in are not read); --until TIME: stop before the first committed at or after.
  std::optional<UtcTime> from_time;
  std::optional<UtcTime> until_time;
  std::string tables;                        // --tables globs
  std::string exclude;                       // --exclude globs
  std::vector<filter::WhereOption> wheres;   // --where: row filters (stream/row_filter.h)
  std::vector<filter::ColumnsOption> columns;  // --columns (filter/columns_option.h)
  bool skip_unknown_events = false;          // skip unknown, non-ignorable event types
  output::OutputOptions output;  // --format and its flags: the output stage (cdc-formats(7))
  // --catalog: the server whose information_schema completes the table maps, as a live stream's
  // does (COLUMN_TYPE texts, MariaDB's INET4/INET6/UUID; names, keys, signedness, charsets and
  // labels where the binlog has none), describing the tables as they are now; nullopt: the
  // binlog alone.
  std::optional<mysql::ConnectionOptions> catalog;
  // NDJSON: rows events of at least this many bytes of row images have their lines written on
  // a second thread (ChangeWriter::use_rows_thread); nullopt writes everything in one. The
  // tests set 0 and nullopt to compare the two writers on every event.
  std::optional<std::size_t> rows_thread_min_bytes = ChangeWriter::kRowsThreadMinBytes;
  // With the second thread, --where's rows are judged on this one from this many pieces of work
  // in flight (ChangeWriter::judge_rows_on_rows_thread); the tests set 0 to judge all here.
  std::size_t judge_here_in_flight = ChangeWriter::kJudgeHereInFlight;
};

struct FileSummary {
  std::uint64_t events = 0;
  std::uint64_t rows = 0;
  std::uint64_t transactions = 0;
  std::uint64_t skipped_events = 0;
};

// Warnings go through `warn`, and where a --from or --until TIME fell through `notice` (one
// line each, without the tool prefix).
Result<FileSummary> run_files(const FileOptions& options, int out_fd, const std::function<void(std::string_view)>& warn,
                              const std::function<void(std::string_view)>& notice = {});

}  // namespace cdc::stream
