#pragma once

// cdc-merge's work (man/cdc-merge.1, "The merge"): turn chunks read at
// different moments, plus the binlog changes that cover them, into one snapshot consistent
// at H*, the highest high watermark.
//
//   pass 1   read every chunk output once: low and high lines parsed, "r" lines skipped by a
//            prefix check; structure checked (scan_chunk_outputs, group_tables)
//   deltas   read cdc-stream's lines once into per-chunk effects (read_deltas), spilling
//            sorted zstd runs past --memory-limit
//   pass 2   per chunk, its rows with the effects applied (write_group), then one op:"high"
//
// --span stops after pass 1 and prints the lowest low and the highest high; --check-deltas
// stops after the deltas pass, having checked them without applying them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "output/format.h"
#include "util/result.h"

namespace cdc::merge {

inline constexpr std::uint64_t kDefaultMemoryLimit = std::uint64_t{6} << 20;
// Threads for the deltas pass (two parts of the deltas at once) and the output pass.
inline constexpr unsigned kDefaultThreads = 2;

struct Options {
  std::vector<std::string> inputs;    // chunk outputs; "-" = stdin (at most one "-" overall)
  std::optional<std::string> deltas;  // cdc-stream output; "-" = stdin
  bool span = false;                  // print "FROM UNTIL" and stop
  bool check_deltas = false;          // check that the deltas cover the chunks, write nothing
  std::optional<std::string> until;   // H* instead of the highest high
  bool subset = false;                // merge only the given chunks of a table
  std::uint64_t memory_limit = kDefaultMemoryLimit;
  std::string spill_dir;              // empty: $TMPDIR, else /tmp
  std::optional<std::string> output;  // written as FILE.partial, then renamed
  output::OutputOptions format;       // --format and its flags: the output stage (cdc-formats(7))
  unsigned threads = kDefaultThreads;  // 1: no thread beside the main one
};

struct Summary {
  std::uint64_t chunks = 0;
  std::uint64_t rows = 0;
  std::uint64_t changes_applied = 0;
  std::uint64_t changes_after_high = 0;
  std::uint64_t spill_runs = 0;
  std::uint64_t passes = 0;  // output passes over chunk rows (one per group unless split)
};

// "256M", "4K", "1G", "1048576": bytes, with binary K/M/G/T suffixes. Errc::usage otherwise.
[[nodiscard]] Result<std::uint64_t> parse_size(std::string_view text);

// Errors: Errc::usage (exit 2) for contradictory options, Errc::io (74) for files that cannot
// be opened or written, Errc::corrupt_input (65) for invalid inputs (each message names
// FILE:LINE and the fix), Errc::unsupported (1) for a key order cdc-merge cannot reproduce.
[[nodiscard]] Result<Summary> run(const Options& options, int stdin_fd, int stdout_fd, int stderr_fd);

}  // namespace cdc::merge
