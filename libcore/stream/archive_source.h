#pragma once

// A binlog archive (cdc-stream --archive DIR) as a source for a live run whose position the
// server has purged (--archive-source DIR, or the run's own --archive DIR): which archived file
// and offset a position continues at, and the files from there on. Read without the archive's
// lock: another cdc-stream may be writing it; its file in progress is read up to its last
// whole event.

#include <optional>
#include <string>
#include <vector>

#include "archive/archive_dir.h"
#include "binlog/file_reader.h"
#include "gtid/position.h"
#include "util/result.h"

namespace cdc::stream {

class ArchiveSource {
 public:
  struct File {
    std::string name;  // the server's name
    std::string path;  // where to read it now
    bool in_progress = false;
  };

  [[nodiscard]] static Result<ArchiveSource> open(std::string dir);

  [[nodiscard]] const std::string& dir() const noexcept { return dir_; }
  [[nodiscard]] bool empty() const noexcept { return files_.empty(); }
  // "binlog.000003 to binlog.000009, in progress", or "nothing".
  [[nodiscard]] std::string range_text() const;

  // Where reading for `position` starts: the event boundary after the last transaction the
  // position holds, in the archive. FILE:OFFSET is itself (the start of the next file for the
  // end of a complete one); a GTID set or position is found through each file's
  // PREVIOUS_GTIDS / GTID_LIST and then the first transaction it does not hold. nullopt when
  // the archive does not go back that far, or holds nothing after the position.
  [[nodiscard]] Result<std::optional<gtid::FilePosition>> locate(const gtid::Position& position) const;

  // The files from `name` on, oldest first.
  [[nodiscard]] std::vector<File> files_from(const std::string& name) const;
  // Opens a file; the file in progress under its complete name when it was completed since.
  [[nodiscard]] static Result<binlog::FileReader> read(const File& file, const std::string& dir);

 private:
  explicit ArchiveSource(std::string dir) : dir_(std::move(dir)) {}
  Result<std::optional<gtid::FilePosition>> locate_gtid(const gtid::Position& position) const;

  std::string dir_;
  std::vector<File> files_;
  std::vector<std::uint64_t> sizes_;
};

}  // namespace cdc::stream
