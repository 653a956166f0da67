#pragma once

// Reads lines of one input, or of a byte range of it, without parsing them: for readers that
// look at most lines only by a prefix (cdc-merge's passes over chunk outputs), where splitting
// lines must cost no more than a memchr. Reads with pread() into one buffer of 1 MiB (grown for
// a longer line), so memory stays bounded; the first read is of 16 KiB, for readers that stop
// after a few lines. Not mmap(): on the project's virtual machines,
// scanning a mapped file costs four times the CPU of reading it into a buffer that stays in the
// cache (635 MB of chunk outputs: 0.59 s mapped in 1 MiB windows, 0.16 s read; the page-table
// work of mapping and unmapping and the TLB misses of touching every page once). Follows the
// NDJSON input rules of ndjson/reader.h for line endings and numbering ('\n' separates records,
// one '\r' before it is dropped, line numbers are physical 1-based lines); blank lines are
// returned as empty views for the caller to skip. Unlike ndjson::Reader it does not parse:
// callers parse the few lines they need.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "util/result.h"

namespace cdc::ndjson {

class LineReader {
 public:
  static constexpr std::size_t kMaxLineBytes = std::size_t{256} << 20;

  // Reads fd from byte `begin` (with pread: the fd's offset is not used) up to `end`;
  // first_line is the line number of the line at `begin`. Does not own fd.
  LineReader(int fd, std::string name, std::uint64_t begin = 0, std::uint64_t end = UINT64_MAX,
             std::uint64_t first_line = 1);
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // true: line() is the next line (valid until the next call); false: end of the range.
  [[nodiscard]] Result<bool> next();

  [[nodiscard]] std::string_view line() const noexcept { return line_; }
  [[nodiscard]] std::uint64_t line_number() const noexcept { return line_number_; }
  // Byte offset of the current line's start, and of the byte after its '\n'.
  [[nodiscard]] std::uint64_t line_offset() const noexcept { return line_offset_; }
  [[nodiscard]] std::uint64_t next_offset() const noexcept { return next_offset_; }
  // False when the current line is the last of the input and has no '\n'.
  [[nodiscard]] bool terminated() const noexcept { return terminated_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

  // "<name>:<line>: <message>" as Errc::corrupt_input.
  [[nodiscard]] Error error_here(std::string_view message) const;

 private:
  Result<void> fill();

  int fd_;
  std::string name_;
  std::uint64_t file_pos_;  // next byte to read from the file
  std::uint64_t first_offset_;  // begin: nothing read yet while file_pos_ is here
  std::uint64_t end_;
  std::unique_ptr<char[]> buffer_;
  std::size_t capacity_;
  std::size_t begin_ = 0;  // [begin_, filled_) unconsumed
  std::size_t filled_ = 0;
  bool eof_ = false;
  std::string_view line_;
  std::uint64_t line_number_;
  std::uint64_t line_offset_ = 0;
  std::uint64_t next_offset_;
  bool terminated_ = true;
};

}  // namespace cdc::ndjson
