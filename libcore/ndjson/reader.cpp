#include "ndjson/reader.h"

#include <poll.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "util/fd_io.h"

namespace cdc::ndjson {

namespace {

// One pipe's worth (Linux default pipe size); large enough that the per-read cost vanishes,
// small enough that short inputs cost little.
constexpr std::size_t kReadBlock = std::size_t{64} << 10;

bool is_blank(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

std::string_view type_name(simdjson::dom::element_type type) {
  switch (type) {
    case simdjson::dom::element_type::ARRAY: return "array";
    case simdjson::dom::element_type::OBJECT: return "object";
    case simdjson::dom::element_type::INT64:
    case simdjson::dom::element_type::UINT64:
    case simdjson::dom::element_type::DOUBLE: return "number";
    case simdjson::dom::element_type::STRING: return "string";
    case simdjson::dom::element_type::BOOL: return "boolean";
    case simdjson::dom::element_type::NULL_VALUE: return "null";
  }
  return "unknown value";
}

}  // namespace

Reader::Reader(int fd, std::string input_name, std::size_t max_line_bytes)
    : fd_(fd), input_name_(std::move(input_name)), max_line_bytes_(max_line_bytes) {}

Error Reader::error_at_line(std::string_view message) const {
  return Error{Errc::corrupt_input, fmt::format("{}:{}: {}", input_name_, line_number_, message)};
}

Result<bool> Reader::next() {
  if (failed_) return fail(*failed_);
  Result<bool> result = next_record();
  if (!result) failed_ = result.error();
  return result;
}

Result<bool> Reader::next_record() {
  for (;;) {
    const std::size_t pending = end_ - begin_;
    if (scanned_ < pending) {
      const char* const data = buffer_.get() + begin_;
      const void* newline = std::memchr(data + scanned_, '\n', pending - scanned_);
      if (newline != nullptr) {
        const auto length = static_cast<std::size_t>(static_cast<const char*>(newline) - data);
        Result<bool> accepted = accept_line(length, /*terminated=*/true);
        begin_ += length + 1;
        scanned_ = 0;
        if (!accepted || *accepted) return accepted;
        continue;  // blank line
      }
      // Remember how far we looked, so a long line arriving in many reads is scanned once.
      scanned_ = pending;
    }
    if (pending > max_line_bytes_) {
      ++line_number_;
      line_ = {};
      return fail(error_at_line(fmt::format("line longer than {} bytes", max_line_bytes_)));
    }
    if (eof_) {
      if (pending == 0) return false;
      Result<bool> accepted = accept_line(pending, /*terminated=*/false);
      begin_ = end_;
      scanned_ = 0;
      return accepted;  // false for a blank last line: that is the clean end too
    }
    if (Result<void> filled = fill(); !filled) return fail(std::move(filled).error());
  }
}

Result<bool> Reader::accept_line(std::size_t length, bool terminated) {
  ++line_number_;
  line_ = {};
  if (length > max_line_bytes_) {
    return fail(error_at_line(fmt::format("line longer than {} bytes", max_line_bytes_)));
  }
  std::string_view text(buffer_.get() + begin_, length);
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  line_ = text;
  if (is_blank(text)) return false;

  // No copy: fill() keeps SIMDJSON_PADDING allocated bytes after end_, hence after any line.
  simdjson::dom::element root;
  const simdjson::error_code error = parser_.parse(text.data(), text.size(), false).get(root);
  if (error == simdjson::MEMALLOC || error == simdjson::CAPACITY) {
    // Not the input's syntax, so neither "malformed" nor "torn" would be true.
    return fail(error_at_line(
        fmt::format("cannot parse a line of {} bytes: {}", length, simdjson::error_message(error))));
  }
  if (error && !terminated) {
    return fail(error_at_line(
        fmt::format("torn last line: input ends mid-record after {} bytes (the writer was probably "
                    "interrupted)",
                    length)));
  }
  if (error) return fail(error_at_line(fmt::format("malformed JSON: {}", simdjson::error_message(error))));
  if (root.get_object().get(record_) != simdjson::SUCCESS) {
    return fail(error_at_line(fmt::format("expected a JSON object, got {}", type_name(root.type()))));
  }
  return true;
}

bool Reader::ready() const {
  if (eof_ || (end_ > begin_ && std::memchr(buffer_.get() + begin_, '\n', end_ - begin_) != nullptr)) return true;
  pollfd want{fd_, POLLIN, 0};
  return ::poll(&want, 1, 0) != 0;  // readable, at its end, or an error: next() will say
}

Result<void> Reader::fill() {
  // Move the unfinished line to the front; afterwards begin_ stays 0 while that line keeps
  // growing, so a long line is moved once, not once per read.
  const std::size_t pending = end_ - begin_;
  if (begin_ > 0) {
    if (pending > 0) std::memmove(buffer_.get(), buffer_.get() + begin_, pending);
    begin_ = 0;
    end_ = pending;
  }
  if (capacity_ - end_ < kReadBlock) {
    // Double, but not far beyond what the longest allowed line needs.
    const std::size_t enough_for_longest = max_line_bytes_ + 1 + kReadBlock;
    const std::size_t wanted = std::max(end_ + kReadBlock, std::min(capacity_ * 2, enough_for_longest));
    // make_unique zero-fills: the parser reads padding bytes, and defined contents keep
    // valgrind and MSan quiet.
    auto bigger = std::make_unique<char[]>(wanted + simdjson::SIMDJSON_PADDING);
    if (end_ > 0) std::memcpy(bigger.get(), buffer_.get(), end_);
    buffer_ = std::move(bigger);
    capacity_ = wanted;
  }
  Result<std::size_t> got = read_some(fd_, buffer_.get() + end_, capacity_ - end_, input_name_);
  if (!got) return fail(std::move(got).error());
  if (*got == 0) eof_ = true;
  end_ += *got;
  return {};
}

}  // namespace cdc::ndjson
