#pragma once
// The progress line cdc-snapshot and cdc-sync draw on a terminal: one format, one ETA rule,
// so a user sees the same line whichever tool reads the chunks.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cdc {

// 1234 -> "1.2k", 85000 -> "85k", 5600000 -> "5.6M", 42 -> "42".
[[nodiscard]] std::string human_count(std::uint64_t n);
// 42 -> "0:42", 3723 -> "1:02:03".
[[nodiscard]] std::string clock_text(std::uint64_t seconds);

struct ChunkProgress {
  std::uint64_t done = 0;               // chunks finished, by this run or an earlier one
  std::optional<std::uint64_t> total;   // all chunks, when known
  std::uint64_t rows = 0;               // rows of the finished chunks (and of the one being read)
  std::uint64_t done_now = 0;           // chunks this run read (the ETA extrapolates from these)
  std::uint64_t rows_now = 0;           // rows this run read (the rate)
  std::uint64_t elapsed_us = 0;         // since this run began reading
};

// "PREFIX 12/40 chunks, 1.2M rows, 850k rows/s, ETA 0:42" (without the terminal's \r and
// erase); "?" for an unknown total and "-" for an ETA not known yet.
[[nodiscard]] std::string progress_text(std::string_view prefix, const ChunkProgress& progress);

}  // namespace cdc
