#include "util/progress.h"

#include <fmt/format.h>

#include <algorithm>

namespace cdc {

std::string human_count(std::uint64_t n) {
  const auto value = static_cast<double>(n);
  if (n >= 1000000000) return fmt::format("{:.1f}G", value / 1e9);
  if (n >= 1000000) return fmt::format("{:.1f}M", value / 1e6);
  if (n >= 10000) return fmt::format("{:.0f}k", value / 1e3);
  if (n >= 1000) return fmt::format("{:.1f}k", value / 1e3);
  return fmt::format("{}", n);
}

std::string clock_text(std::uint64_t seconds) {
  if (seconds >= 3600) return fmt::format("{}:{:02}:{:02}", seconds / 3600, seconds % 3600 / 60, seconds % 60);
  return fmt::format("{}:{:02}", seconds / 60, seconds % 60);
}

std::string progress_text(std::string_view prefix, const ChunkProgress& progress) {
  const std::uint64_t elapsed_us = std::max<std::uint64_t>(progress.elapsed_us, 1);
  const bool eta_known = progress.total && progress.done_now > 0 && *progress.total >= progress.done;
  const std::string eta =
      eta_known ? clock_text((*progress.total - progress.done) * elapsed_us / progress.done_now / 1000000) : "-";
  return fmt::format("{} {}/{} chunks, {} rows, {} rows/s, ETA {}", prefix, progress.done,
                     progress.total ? fmt::format("{}", *progress.total) : std::string("?"),
                     human_count(progress.rows), human_count(progress.rows_now * 1000000 / elapsed_us), eta);
}

}  // namespace cdc
