#pragma once

// Reads NDJSON records from a file descriptor as a stream.
//
// Memory is bounded by the longest line, not by the input: cdc-merge reads snapshot and
// stream files that are far larger than RAM. (STYLE item 6 suggests simdjson iterate_many;
// it wants the whole input in one padded buffer, which a pipe cannot give us, so each line
// goes through a reused dom::parser instead. The torn-last-line check that iterate_many's
// truncated_bytes() provides is done by hand below.)
//
// Input rules, shared by every tool that reads NDJSON:
// * Records are separated by '\n'. One '\r' before it is tolerated (files edited on Windows)
//   and is not part of line().
// * Blank and whitespace-only lines (space, tab, '\r') are skipped, but they count for line
//   numbers, which are 1-based physical lines as an editor shows them.
// * Each record must be one JSON object. Anything else is Errc::corrupt_input:
//   "<input>:<line>: malformed JSON: <simdjson's error text>" or
//   "<input>:<line>: expected a JSON object, got array" (string, number, boolean, null).
//   The whole line is validated before next() returns it (UTF-8 included).
// * A line longer than max_line_bytes (counting a '\r', not the '\n') is
//   "<input>:<line>: line longer than N bytes", reported as soon as that many bytes arrive
//   without a newline, so a runaway line cannot exhaust memory.
// * The last line may lack its '\n'. If it is a complete JSON value it is accepted (and
//   checked like any other line); if it does not parse, it is
//   "<input>:<line>: torn last line: input ends mid-record after N bytes (the writer was
//   probably interrupted)". Records end with '}', so a torn object never parses as complete.
// * A failed read is Errc::io "<input>: read failed: <strerror>".
// Errors are sticky: after one, next() returns the same error again.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "util/result.h"

namespace cdc::ndjson {

class Reader {
 public:
  static constexpr std::size_t kDefaultMaxLineBytes = std::size_t{256} << 20;

  // Does not take ownership of fd. input_name prefixes every message ("-" is fine for
  // stdin, but "stdin" reads better).
  Reader(int fd, std::string input_name, std::size_t max_line_bytes = kDefaultMaxLineBytes);

  // record() points into the parser's document, which would move with the parser.
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;
  Reader(Reader&&) = delete;
  Reader& operator=(Reader&&) = delete;
  ~Reader() = default;

  // true: a record is ready; false: clean end of input.
  [[nodiscard]] Result<bool> next();

  // Whether next() can answer without waiting: a whole line is buffered, the input ended, or
  // its descriptor has bytes to read now (poll). For callers that release what they hold
  // before they wait on a pipe.
  [[nodiscard]] bool ready() const;

  // The record and the raw text of its line (without '\r\n'); valid until the next call to
  // next(), and only after next() returned true. After an error, line() is the offending
  // line where there is one, so tools can quote it.
  [[nodiscard]] simdjson::dom::object record() const noexcept { return record_; }
  [[nodiscard]] std::string_view line() const noexcept { return line_; }
  [[nodiscard]] std::uint64_t line_number() const noexcept { return line_number_; }
  [[nodiscard]] const std::string& input_name() const noexcept { return input_name_; }

  // For callers that find a bad field in a well-formed record: the same
  // "<input>:<line>: <message>" format and category as the reader's own errors.
  [[nodiscard]] Error error_at_line(std::string_view message) const;

 private:
  Result<bool> next_record();
  Result<bool> accept_line(std::size_t length, bool terminated);
  Result<void> fill();

  int fd_;
  std::string input_name_;
  std::size_t max_line_bytes_;

  // [begin_, end_) holds bytes read but not yet consumed; scanned_ is how far from begin_ we
  // already looked for '\n'. The allocation is capacity_ + SIMDJSON_PADDING bytes, because
  // the parser may read that far past the end of the last line.
  std::unique_ptr<char[]> buffer_;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::size_t scanned_ = 0;
  bool eof_ = false;

  std::uint64_t line_number_ = 0;
  std::string_view line_;
  std::optional<Error> failed_;

  simdjson::dom::parser parser_;
  simdjson::dom::object record_;
};

}  // namespace cdc::ndjson
