#pragma once

// Builds NDJSON records (one JSON value per line, "\n"-terminated) into a reused buffer.
//
// Output policy, relied on by every tool that emits NDJSON and by cdc-ndjson(5):
//
// * Escaping follows RFC 8259 section 7: '"' and '\\' are escaped; U+0000..U+001F become
//   \b \f \n \r \t or \u00xx (lowercase hex). DEL (0x7F), '/' and valid non-ASCII UTF-8 are
//   written as they are, so output stays byte-identical to the input text where it can.
// * Invalid UTF-8: every maximal ill-formed subsequence (see utf8_step() in utf8.h: overlong
//   forms, encoded surrogates D800..DFFF, code points above U+10FFFF, truncated sequences,
//   stray continuation bytes, C0/C1/F5..FF) is replaced by one U+FFFD. Output is therefore
//   always valid UTF-8 and every JSON parser accepts it. This is lossy on purpose: string()
//   is for text. Bytes that are not text (BINARY, BLOB, a string column in a charset we do
//   not convert) must go through string_base64(), which is lossless.
// * floating() writes the shortest text that parses back to the same double/float (fmt's
//   "{}"), so 0.1f is "0.1" and 1.0 is "1": JSON has one number type. NaN and +-Inf have no
//   JSON form and are written as null.
// * Keys are escaped exactly like string values and written in call order: the writer never
//   reorders, so key order is the caller's stable order.
//
// Commas and nesting are tracked by the writer; a call out of place (a value in an object
// without a key, end_array() closing an object, more than kMaxDepth levels) is a bug in the
// caller and asserts. Nothing here fails at runtime except flush_to().
//
// Usage:
//   writer.begin_object();
//   writer.field("v", 1);
//   writer.field("table", name);
//   writer.end_object();
//   writer.end_record();
//   if (writer.bytes_buffered() >= kFlushThreshold) {
//     if (auto flushed = writer.flush_to(1, "stdout"); !flushed) return fail(flushed.error());
//   }

#include <array>
#include <cassert>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

#include "util/result.h"

namespace cdc::ndjson {

class Writer {
 public:
  // Row images nest at most a few levels; 64 leaves room for JSON columns copied verbatim.
  static constexpr std::size_t kMaxDepth = 128;  // MySQL JSON nests up to 100 inside a record

  Writer() = default;

  // The structural calls are inline: a row line makes dozens of them.
  void begin_object() {
    before_value();
    push(Container::object);
  }
  void end_object() { pop(Container::object); }
  void begin_array() {
    before_value();
    push(Container::array);
  }
  void end_array() { pop(Container::array); }
  void key(std::string_view name);

  // Pre-serialized pieces, for parts of a record that repeat on every line (constant keys, a
  // table's column names, an event's position): escaping them once instead of per row is most
  // of what makes cdc-stream fast. The caller vouches for the text: raw_key() takes one
  // escaped key with its colon ("\"name\":"), raw_members() one or more whole members
  // ("\"a\":1,\"b\":\"x\""), both as quoted_key()/a Writer would have written them.
  void raw_key(std::string_view quoted_key_colon) {
    assert(depth_ > 0 && stack_[depth_ - 1] == Container::object && "raw_key() outside an object");
    assert(!after_key_ && "two keys in a row");
    if (need_comma_) buf_.push_back(',');
    append_literal(quoted_key_colon);
    after_key_ = true;
  }
  // raw_key() for a key stored with its leading comma (",\"name\":"): the comma is kept or
  // dropped as the position needs, in the same copy.
  void raw_comma_key(std::string_view comma_quoted_key_colon) {
    assert(depth_ > 0 && stack_[depth_ - 1] == Container::object && "raw_comma_key() outside an object");
    assert(!after_key_ && "two keys in a row");
    append_literal(need_comma_ ? comma_quoted_key_colon : comma_quoted_key_colon.substr(1));
    after_key_ = true;
  }
  void raw_members(std::string_view members) {
    assert(depth_ > 0 && stack_[depth_ - 1] == Container::object && "raw_members() outside an object");
    assert(!after_key_ && "raw_members() after a key");
    if (need_comma_) buf_.push_back(',');
    append_literal(members);
    need_comma_ = true;
  }
  // raw_members() and then raw_key() in one copy: whole members followed by a key and its
  // colon ("\"a\":1,\"k\":"); the key's value comes next.
  void raw_members_key(std::string_view members_comma_key_colon) {
    assert(depth_ > 0 && stack_[depth_ - 1] == Container::object && "raw_members_key() outside an object");
    assert(!after_key_ && "raw_members_key() after a key");
    if (need_comma_) buf_.push_back(',');
    append_literal(members_comma_key_colon);
    after_key_ = true;
  }

  // Writes again, as the next value, text this writer already wrote into the record in
  // progress: buffered().substr(from, size), e.g. a key column's value that the row image
  // repeats (cheaper than decoding the value twice). The text must be one whole JSON value.
  void copy_value(std::size_t from, std::size_t size) {
    assert(from >= record_start_ && from + size <= buf_.size() && "copy_value() outside the record in progress");
    before_value();
    const std::size_t at = buf_.size();
    buf_.resize(at + size);
    // After the resize: it may have moved the buffer. The source ends before `at`.
    copy_bytes(buf_.data() + at, buf_.data() + from, size);
    need_comma_ = true;
  }

  void string(std::string_view text);
  // string(text) when every byte of text is printable ASCII other than '"' and '\\' (nothing
  // to escape, nothing to validate or convert), and true; otherwise writes nothing and returns
  // false. Lets a caller that would convert text (a legacy charset) skip its own scan.
  bool string_if_plain(std::string_view text);
  // A string the caller built from characters that never need escaping (digits, '-', ':',
  // '.', ' ', 'Z': numbers and dates as text), so no scan is needed. Asserted in debug builds.
  void ascii_string(std::string_view text) {
    assert(is_plain_ascii(text));
    before_value();
    append_plain_quoted(text);
    need_comma_ = true;
  }
  void string_base64(std::span<const std::byte> bytes);
  void string_base64(std::string_view bytes);
  // The caller vouches that digits is a valid JSON number (e.g. DECIMAL text from the binlog
  // decoder); checked only in debug builds.
  void raw_number(std::string_view digits);
  // The caller vouches that json is one whole JSON value as a Writer or simdjson's minify
  // wrote it (a value read from another line, passed on unchanged).
  void raw_value(std::string_view json) {
    assert(!json.empty() && "raw_value() needs a JSON value");
    before_value();
    append_literal(json);
    need_comma_ = true;
  }
  // raw_value() of the pieces' concatenation, without putting them together first.
  void raw_value_parts(std::span<const std::string_view> parts) {
    assert(!parts.empty() && "raw_value_parts() needs a JSON value");
    before_value();
    for (const std::string_view part : parts) append_literal(part);
    need_comma_ = true;
  }
  void integer(std::int64_t value) {
    before_value();
    const fmt::format_int text(value);
    append_literal(std::string_view(text.data(), text.size()));
    need_comma_ = true;
  }
  void unsigned_integer(std::uint64_t value) {
    before_value();
    const fmt::format_int text(value);
    append_literal(std::string_view(text.data(), text.size()));
    need_comma_ = true;
  }
  void floating(double value);
  void floating(float value);
  void boolean(bool value);
  void null();

  // Ends the current record with exactly one '\n'. The top-level value must be complete.
  void end_record();
  // Drops the record being built (e.g. a row whose decoding failed halfway), keeping the
  // records already ended.
  void abandon_record();

  // key(name) followed by the value.
  void field(std::string_view name, std::string_view text) {
    key(name);
    string(text);
  }
  // Without this, a string literal would pick the bool overload (pointer-to-bool is a
  // standard conversion, string_view's constructor a user-defined one).
  void field(std::string_view name, const char* text) { field(name, std::string_view(text)); }
  void field(std::string_view name, bool value) {
    key(name);
    boolean(value);
  }
  void field(std::string_view name, std::nullptr_t) {
    key(name);
    null();
  }
  void field(std::string_view name, double value) {
    key(name);
    floating(value);
  }
  void field(std::string_view name, float value) {
    key(name);
    floating(value);
  }
  // One template for every integer type, so field("n", 5) is not ambiguous between
  // int64_t, uint64_t and double.
  template <std::integral T>
    requires(!std::same_as<T, bool> && !std::same_as<T, char>)
  void field(std::string_view name, T value) {
    key(name);
    if constexpr (std::is_signed_v<T>) {
      integer(static_cast<std::int64_t>(value));
    } else {
      unsigned_integer(static_cast<std::uint64_t>(value));
    }
  }
  void field_base64(std::string_view name, std::span<const std::byte> bytes) {
    key(name);
    string_base64(bytes);
  }
  void field_base64(std::string_view name, std::string_view bytes) {
    key(name);
    string_base64(bytes);
  }
  void field_raw_number(std::string_view name, std::string_view digits) {
    key(name);
    raw_number(digits);
  }
  void field_null(std::string_view name) {
    key(name);
    null();
  }

  // Everything written since the last clear()/flush_to(), including a record in progress.
  [[nodiscard]] std::string_view buffered() const noexcept { return {buf_.data(), buf_.size()}; }
  [[nodiscard]] std::size_t bytes_buffered() const noexcept { return buf_.size(); }
  // Capacity of the reused buffer; exposed so tests can check that it stops growing.
  [[nodiscard]] std::size_t capacity() const noexcept { return buf_.capacity(); }
  // Discards the buffer and any record in progress; the allocation is kept for reuse.
  void clear() noexcept;

  // The ended records (whole lines), without a record in progress; and dropping them, the
  // record in progress kept (for a caller that passes the lines on itself, libcore/output).
  [[nodiscard]] std::string_view ended_records() const noexcept { return {buf_.data(), record_start_}; }
  void drop_ended_records() noexcept;
  // The ended records moved into `into` (its contents replaced) and dropped here, the record
  // in progress kept: without one, the buffers are swapped rather than copied, and `into`'s
  // allocation is this writer's from then on.
  using Buffer = fmt::memory_buffer;
  void take_ended_records(Buffer& into);

  // Writes the ended records to fd and clears the buffer. A record in progress stays
  // buffered, so flushing mid-record is safe. The buffer is cleared even when the write
  // fails: we cannot know how much reached fd, and a retry could duplicate records. A reader
  // that went away is Errc::io "<what>: broken pipe" (see is_broken_pipe()).
  [[nodiscard]] Result<void> flush_to(int fd, std::string_view what);

 private:
  enum class Container : std::uint8_t { object, array };

  // floating() for double and float: the type's own shortest text, null when not finite.
  template <typename Float>
  void floating_value(Float value);

  static bool is_plain_ascii(std::string_view text) noexcept {
    for (const char c : text)
      if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
    return true;
  }

  void before_value() {
    if (depth_ == 0) {
      assert(!record_has_value_ && "one top-level value per record: call end_record() first");
      record_has_value_ = true;
      return;
    }
    if (stack_[depth_ - 1] == Container::object) {
      // key() already wrote the comma and the colon.
      assert(after_key_ && "a value inside an object needs key() first");
      after_key_ = false;
      return;
    }
    if (need_comma_) buf_.push_back(',');
  }
  void push(Container container) {
    assert(depth_ < kMaxDepth && "nesting deeper than Writer::kMaxDepth");
    // With NDEBUG the assert is gone; stop rather than write past stack_.
    if (depth_ >= kMaxDepth) std::abort();
    stack_[depth_++] = container;
    buf_.push_back(container == Container::object ? '{' : '[');
    need_comma_ = false;
  }
  void pop(Container container) {
    assert(depth_ > 0 && stack_[depth_ - 1] == container && "end_object/end_array does not match");
    assert(!after_key_ && "key() without a value");
    if (depth_ > 0) --depth_;
    buf_.push_back(container == Container::object ? '}' : ']');
    need_comma_ = true;
  }
  void append_quoted(std::string_view text);
  // '"' text '"' in one copy; text must need no escaping.
  void append_plain_quoted(std::string_view text);
  void append_literal(std::string_view text) {
    // One size check and a copy: fmt's append() copies in a loop meant for any iterator.
    const std::size_t at = buf_.size();
    buf_.resize(at + text.size());
    copy_bytes(buf_.data() + at, text.data(), text.size());
  }
  // Most pieces are a few bytes (a key, a number, a short value): for up to 16 bytes two
  // overlapping fixed-size copies, which compile to plain moves, beat a call into memcpy.
  static void copy_bytes(char* to, const char* from, std::size_t n) {
    if (n >= 8 && n <= 16) {
      std::uint64_t head;
      std::uint64_t tail;
      std::memcpy(&head, from, 8);
      std::memcpy(&tail, from + n - 8, 8);
      std::memcpy(to, &head, 8);
      std::memcpy(to + n - 8, &tail, 8);
    } else if (n >= 4 && n < 8) {
      std::uint32_t head;
      std::uint32_t tail;
      std::memcpy(&head, from, 4);
      std::memcpy(&tail, from + n - 4, 4);
      std::memcpy(to, &head, 4);
      std::memcpy(to + n - 4, &tail, 4);
    } else if (n < 4) {
      for (std::size_t i = 0; i < n; ++i) to[i] = from[i];
    } else {
      std::memcpy(to, from, n);
    }
  }

  Buffer buf_;
  std::array<Container, kMaxDepth> stack_{};
  std::size_t depth_ = 0;
  std::size_t record_start_ = 0;  // where the record in progress begins in buf_
  bool need_comma_ = false;       // the innermost container already holds a member
  bool after_key_ = false;        // key() was written; its value must come next
  bool record_has_value_ = false; // one top-level value per record
};

// text as one JSON string, quotes included, escaped as Writer::string() escapes it; with a
// ':' appended it is what Writer::raw_key() takes. For building pre-serialized pieces once.
std::string quoted(std::string_view text);

}  // namespace cdc::ndjson
