#pragma once

// --archive-keep AGE|SIZE: which complete files of a binlog archive may go (man/cdc-stream.1,
// BINLOG ARCHIVE). A pure function over names, sizes and times, so it is tested without a
// directory.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace cdc::archive {

struct Retention {
  std::optional<std::int64_t> max_age_seconds;  // a complete file older than this goes
  std::optional<std::uint64_t> max_bytes;       // the oldest complete files go until the archive fits

  [[nodiscard]] bool keeps_everything() const noexcept { return !max_age_seconds && !max_bytes; }
  // "7d", "50G", "7d and 50G", "everything": for notices.
  [[nodiscard]] std::string to_string() const;
};

// Adds one --archive-keep value: an age (a number and s, min, h, d or w: "36h", "7d") or a
// size (a number and K, M, G or T, powers of 1024, with or without a trailing B or iB: "500M",
// "50G"). Errc::usage naming the accepted forms for anything else, for a bare number, for 0,
// for a second age or a second size, and for a lowercase "m", which could mean either.
[[nodiscard]] Result<void> add_limit(Retention& retention, std::string_view text);
// All the values of a repeated --archive-keep.
[[nodiscard]] Result<Retention> parse_retention(const std::vector<std::string>& values);

struct CompleteFile {
  std::string name;
  std::uint64_t size = 0;
  std::int64_t mtime = 0;  // seconds since the epoch: the time of the file's last event
};

// The complete files to delete, oldest first. `files` are the archive's complete files in
// binlog order (oldest first); `in_progress_bytes` is the size of the file being written,
// which is never deleted but counts towards max_bytes. A file goes when its mtime is more
// than max_age_seconds before `now`, or while the archive (every complete file left and the
// one in progress) is larger than max_bytes. Only a prefix goes: a file is never deleted
// while an older one is kept, so the archive stays one unbroken run of files.
[[nodiscard]] std::vector<std::string> files_to_delete(const std::vector<CompleteFile>& files,
                                                       std::uint64_t in_progress_bytes, const Retention& retention,
                                                       std::int64_t now);

}  // namespace cdc::archive
