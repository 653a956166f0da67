#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "util/result.h"

namespace cdc::binlog {

struct RawEvent {
  std::span<const std::uint8_t> bytes;  // header, body and checksum; valid until the next read
  std::uint64_t offset = 0;             // where it starts in the file
};

// Reads a binlog (or relay log) file as a stream of whole events: from disk or from a pipe
// ("-"), with memory bounded by the largest event, never by the file.
class FileReader {
 public:
  // Opens the file and checks the magic. Errors name the file and say what it looks like.
  [[nodiscard]] static Result<FileReader> open(const std::string& path);

  FileReader(FileReader&& other) noexcept;
  FileReader& operator=(FileReader&&) = delete;
  FileReader(const FileReader&) = delete;
  ~FileReader();

  // The next event, or nullopt at the end of the file. A file that ends inside an event is
  // an error unless the server still had it open (its format description carries
  // LOG_EVENT_BINLOG_IN_USE_F): then the server was writing that event, and the file ends
  // cleanly at the last whole one.
  Result<std::optional<RawEvent>> next();

  // Skips forward to `offset` (which must be an event boundary the caller trusts, as
  // mysqlbinlog --start-position). Only forward.
  Result<void> skip_to(std::uint64_t offset);

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] std::uint64_t position() const noexcept { return position_; }
  [[nodiscard]] bool in_use() const noexcept { return in_use_; }
  // Bytes after the last whole event when the file ended inside one (in-use files only).
  [[nodiscard]] std::uint64_t torn_tail_bytes() const noexcept { return torn_tail_; }

 private:
  FileReader(int fd, bool owns_fd, std::string name);
  Result<bool> ensure(std::size_t bytes);  // false: end of input first

  int fd_ = -1;
  bool owns_fd_ = false;
  std::string name_;
  std::vector<std::uint8_t> buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
  std::uint64_t position_ = 0;  // file offset of buffer_[begin_]
  bool in_use_ = false;
  bool first_event_ = true;
  std::uint64_t torn_tail_ = 0;
};

}  // namespace cdc::binlog
