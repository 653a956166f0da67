#include "ndjson/line_reader.h"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cdc::ndjson {

namespace {
constexpr std::size_t kBlockBytes = std::size_t{1} << 20;
// The first read is smaller: cdc-merge reads only the first lines of most chunk outputs
// (merge/chunk_input.cpp), and 1 MiB of each would be a third of a table's bytes read for
// nothing at the default chunk size.
constexpr std::size_t kFirstReadBytes = std::size_t{16} << 10;
}

LineReader::LineReader(int fd, std::string name, std::uint64_t begin, std::uint64_t end, std::uint64_t first_line)
    : fd_(fd),
      name_(std::move(name)),
      file_pos_(begin),
      first_offset_(begin),
      end_(end),
      buffer_(new char[kBlockBytes]),
      capacity_(kBlockBytes),
      line_number_(first_line - 1),
      next_offset_(begin) {}

Error LineReader::error_here(std::string_view message) const {
  return Error{Errc::corrupt_input, fmt::format("{}:{}: {}", name_, line_number_, message)};
}

Result<void> LineReader::fill() {
  if (begin_ > 0) {
    std::memmove(buffer_.get(), buffer_.get() + begin_, filled_ - begin_);
    filled_ -= begin_;
    begin_ = 0;
  }
  if (filled_ == capacity_) {
    if (capacity_ >= kMaxLineBytes)
      return fail(Errc::corrupt_input,
                  fmt::format("{}:{}: line longer than {} bytes", name_, line_number_ + 1, kMaxLineBytes));
    const std::size_t grown = std::min(capacity_ * 2, kMaxLineBytes);
    std::unique_ptr<char[]> bigger(new char[grown]);
    std::memcpy(bigger.get(), buffer_.get(), filled_);
    buffer_ = std::move(bigger);
    capacity_ = grown;
  }
  std::size_t want = capacity_ - filled_;
  if (file_pos_ == first_offset_) want = std::min(want, kFirstReadBytes);
  if (end_ != UINT64_MAX) want = static_cast<std::size_t>(std::min<std::uint64_t>(want, end_ - file_pos_));
  if (want == 0) {
    eof_ = true;
    return {};
  }
  for (;;) {
    const ssize_t got = ::pread(fd_, buffer_.get() + filled_, want, static_cast<off_t>(file_pos_));
    if (got < 0) {
      if (errno == EINTR) continue;
      return fail(Errc::io, fmt::format("{}: read failed: {}", name_, std::strerror(errno)));
    }
    if (got == 0) eof_ = true;
    filled_ += static_cast<std::size_t>(got);
    file_pos_ += static_cast<std::uint64_t>(got);
    return {};
  }
}

Result<bool> LineReader::next() {
  std::size_t scanned = begin_;
  for (;;) {
    const void* hit = std::memchr(buffer_.get() + scanned, '\n', filled_ - scanned);
    if (hit != nullptr) {
      const std::size_t newline = static_cast<std::size_t>(static_cast<const char*>(hit) - buffer_.get());
      std::size_t length = newline - begin_;
      if (length > 0 && buffer_[newline - 1] == '\r') --length;
      line_ = std::string_view(buffer_.get() + begin_, length);
      line_offset_ = next_offset_;
      next_offset_ += newline + 1 - begin_;
      begin_ = newline + 1;
      ++line_number_;
      terminated_ = true;
      return true;
    }
    if (eof_) {
      if (begin_ == filled_) return false;
      std::size_t length = filled_ - begin_;
      if (buffer_[filled_ - 1] == '\r') --length;
      line_ = std::string_view(buffer_.get() + begin_, length);
      line_offset_ = next_offset_;
      next_offset_ += filled_ - begin_;
      begin_ = filled_;
      ++line_number_;
      terminated_ = false;
      return true;
    }
    const std::size_t consumed_before = begin_;
    const std::size_t seen = filled_ - begin_;
    if (auto filled = fill(); !filled) return fail(filled.error());
    (void)consumed_before;
    scanned = seen;  // after fill() the unconsumed bytes start at 0
  }
}

}  // namespace cdc::ndjson
