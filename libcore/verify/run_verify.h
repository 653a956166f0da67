#pragma once

// cdc-apply --verify (cdc-apply(1), VERIFY): the copy that cdc-apply keeps compared with its
// source, chunk by chunk, while changes flow. The source's tables are found and split as
// cdc-plan does (the same chunks for the same --tables and --chunk-size); each chunk is
// compared as chunk_verdict.h says, in the table the target has it in (--database, else the
// source's database name); one op:"verify" line per chunk, then an op:"verify_summary" line
// (man/cdc-ndjson.5).

#include <cstdint>
#include <optional>
#include <string>

#include "mysql/connection_options.h"
#include "util/result.h"

namespace cdc::verify {

struct VerifyOptions {
  mysql::ConnectionOptions target;  // cdc-apply's connection options
  std::optional<std::string> postgres;  // cdc-apply's --postgres: the target is PostgreSQL (its conninfo)
  mysql::ConnectionOptions source;  // --source-defaults-file, --source-defaults-group
  std::optional<std::string> database;        // cdc-apply's --database
  std::optional<std::string> position_table;  // cdc-apply's --position-table
  std::string tables;   // --tables, as cdc-plan takes it
  std::string exclude;  // --exclude
  std::uint64_t chunk_size = 8096;  // cdc-plan's default
  unsigned wait_seconds = 60;       // --verify-wait: for the target to apply a source position
  unsigned rounds = 5;              // --verify-rounds
  std::uint64_t max_keys = 100;     // --verify-max-keys: keys listed per chunk
};

struct VerifySummary {
  std::uint64_t tables = 0;
  std::uint64_t chunks = 0;
  std::uint64_t equal = 0;
  std::uint64_t differs = 0;
  std::uint64_t unsettled = 0;
  std::uint64_t keys_total = 0;  // differing keys over every chunk
  double seconds = 0;
};

// The options that need no server checked: Errc::usage naming the option.
[[nodiscard]] Result<void> check_options(const VerifyOptions& options);

// Writes the lines to out_fd as each chunk is decided.
[[nodiscard]] Result<VerifySummary> run(const VerifyOptions& options, int out_fd);

// 0 when every chunk is equal, 1 when one differs, 75 when none differs but one is unsettled
// (run again later).
[[nodiscard]] int exit_code(const VerifySummary& summary) noexcept;

}  // namespace cdc::verify
