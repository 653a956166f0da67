#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "util/result.h"

namespace cdc::binlog {

struct RawEvent {
  // Header, body and checksum; valid until the next read, or for as long as a copy of the
  // reader's block() is held.
  std::span<const std::uint8_t> bytes;
  std::uint64_t offset = 0;  // where it starts in the file
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

  // The buffer the events are read into. A copy held elsewhere keeps the bytes of every event
  // returned from it valid and unchanged: while one is held, the reader never moves or rewrites
  // what it holds (it goes on in a fresh block), so another thread can use an event's bytes
  // without copying them (ChangeWriter::set_input). Read the copies' count on this thread only:
  // their holders must let go of them here.
  using Block = std::shared_ptr<std::vector<std::uint8_t>>;
  [[nodiscard]] const Block& block() const noexcept { return block_; }

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] std::uint64_t position() const noexcept { return position_; }
  [[nodiscard]] bool in_use() const noexcept { return in_use_; }
  // Bytes after the last whole event when the file ended inside one (in-use files only).
  [[nodiscard]] std::uint64_t torn_tail_bytes() const noexcept { return torn_tail_; }

 private:
  FileReader(int fd, bool owns_fd, std::string name);
  Result<bool> ensure(std::size_t bytes);  // false: end of input first
  // Room in block_ for `bytes` from begin_: the unread bytes slid to the front, the block grown,
  // or, when block_ is held elsewhere, both moved to a block nobody else holds.
  void make_room(std::size_t bytes);

  int fd_ = -1;
  bool owns_fd_ = false;
  std::string name_;
  Block block_;
  std::vector<Block> spare_blocks_;  // earlier blocks, reused once nobody else holds them
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
  std::uint64_t position_ = 0;  // file offset of (*block_)[begin_]
  bool in_use_ = false;
  bool first_event_ = true;
  std::uint64_t torn_tail_ = 0;
};

}  // namespace cdc::binlog
