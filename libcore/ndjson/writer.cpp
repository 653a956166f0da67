#include "ndjson/writer.h"

#include <array>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fmt/compile.h>

#include "ndjson/plain_bytes.h"
#include "ndjson/utf8.h"
#include "util/fd_io.h"

namespace cdc::ndjson {

namespace {

using plain_bytes::copy_if_plain;
using plain_bytes::kByteClass;
using plain_bytes::kEscape;
using plain_bytes::kNonAscii;
using plain_bytes::kPlain;
using plain_bytes::skip_plain;

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// RFC 8259 section 6 number grammar; only used to check raw_number() in debug builds.
[[maybe_unused]] bool is_json_number(std::string_view text) {
  std::size_t i = 0;
  const auto digits = [&] {
    const std::size_t from = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i - from;
  };
  if (i < text.size() && text[i] == '-') ++i;
  if (i < text.size() && text[i] == '0') {
    ++i;
  } else if (i >= text.size() || text[i] < '1' || text[i] > '9' || digits() == 0) {
    return false;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == text.size();
}

}  // namespace

void Writer::key(std::string_view name) {
  assert(depth_ > 0 && stack_[depth_ - 1] == Container::object && "key() outside an object");
  assert(!after_key_ && "two keys in a row");
  if (need_comma_) buf_.push_back(',');
  append_quoted(name);
  buf_.push_back(':');
  after_key_ = true;
}

void Writer::string(std::string_view text) {
  before_value();
  append_quoted(text);
  need_comma_ = true;
}

bool Writer::string_if_plain(std::string_view text) {
  // Checked and copied in one pass: the text goes into the buffer's spare capacity, after room
  // for the opening quote, and is only kept (and the writer's state changed) when every byte is
  // plain. In an array before_value() first adds a comma, which shifts the text by one.
  const std::size_t n = text.size();
  const std::size_t at = buf_.size();
  buf_.reserve(at + n + 3);
  char* const staged = buf_.data() + at + 1;
  if (!copy_if_plain(staged, text.data(), n)) return false;
  before_value();
  const std::size_t start = buf_.size();  // at, or at + 1 after a comma
  buf_.resize(start + n + 2);             // within the reserved capacity: staged stays valid
  char* const out = buf_.data() + start;
  if (start != at) std::memmove(out + 1, staged, n);
  out[0] = '"';
  out[n + 1] = '"';
  need_comma_ = true;
  return true;
}

void Writer::append_plain_quoted(std::string_view text) {
  const std::size_t at = buf_.size();
  buf_.resize(at + text.size() + 2);
  char* out = buf_.data() + at;
  out[0] = '"';
  copy_bytes(out + 1, text.data(), text.size());
  out[text.size() + 1] = '"';
}

void Writer::append_quoted(std::string_view text) {
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  // Most text (column names, ASCII values) needs no escaping: when all of it is plain, it goes
  // out with its quotes in one copy instead of run by run.
  const char* p = skip_plain(begin, end);
  if (p == end) {
    append_plain_quoted(text);
    return;
  }
  buf_.push_back('"');
  // [run, p) is text that goes out unchanged: plain ASCII and valid multi-byte sequences. It
  // is appended in one piece when something must be rewritten, or at the end.
  const char* run = begin;
  while (p < end) {
    p = skip_plain(p, end);
    if (p == end) break;
    const auto byte = static_cast<unsigned char>(*p);
    if (kByteClass[byte] == kNonAscii) {
      const Utf8Step step = utf8_step(std::string_view(p, static_cast<std::size_t>(end - p)));
      if (step.valid) {
        p += step.length;
        continue;
      }
      append_literal(std::string_view(run, static_cast<std::size_t>(p - run)));
      append_literal(kReplacement);
      p += step.length;
      run = p;
      continue;
    }
    append_literal(std::string_view(run, static_cast<std::size_t>(p - run)));
    switch (byte) {
      case '"': append_literal("\\\""); break;
      case '\\': append_literal("\\\\"); break;
      case '\b': append_literal("\\b"); break;
      case '\f': append_literal("\\f"); break;
      case '\n': append_literal("\\n"); break;
      case '\r': append_literal("\\r"); break;
      case '\t': append_literal("\\t"); break;
      default: {
        constexpr char kHex[] = "0123456789abcdef";
        const char escaped[] = {'\\', 'u', '0', '0', kHex[byte >> 4], kHex[byte & 0xFU]};
        append_literal(std::string_view(escaped, sizeof escaped));
        break;
      }
    }
    ++p;
    run = p;
  }
  append_literal(std::string_view(run, static_cast<std::size_t>(p - run)));
  buf_.push_back('"');
}

void Writer::string_base64(std::string_view bytes) {
  string_base64(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
}

void Writer::string_base64(std::span<const std::byte> bytes) {
  before_value();
  const std::size_t size = bytes.size();
  const std::size_t at = buf_.size();
  // Sized once and filled through a pointer: a BLOB can be megabytes, push_back per
  // character would be the slow part.
  buf_.resize(at + 2 + (size + 2) / 3 * 4);
  char* out = buf_.data() + at;
  const auto at_byte = [bytes](std::size_t i) { return std::to_integer<std::uint32_t>(bytes[i]); };
  *out++ = '"';
  std::size_t i = 0;
  for (; size - i >= 3; i += 3) {
    const std::uint32_t group = (at_byte(i) << 16) | (at_byte(i + 1) << 8) | at_byte(i + 2);
    *out++ = kBase64[group >> 18];
    *out++ = kBase64[(group >> 12) & 0x3FU];
    *out++ = kBase64[(group >> 6) & 0x3FU];
    *out++ = kBase64[group & 0x3FU];
  }
  if (size - i == 1) {
    const std::uint32_t group = at_byte(i) << 16;
    *out++ = kBase64[group >> 18];
    *out++ = kBase64[(group >> 12) & 0x3FU];
    *out++ = '=';
    *out++ = '=';
  } else if (size - i == 2) {
    const std::uint32_t group = (at_byte(i) << 16) | (at_byte(i + 1) << 8);
    *out++ = kBase64[group >> 18];
    *out++ = kBase64[(group >> 12) & 0x3FU];
    *out++ = kBase64[(group >> 6) & 0x3FU];
    *out++ = '=';
  }
  *out = '"';
  need_comma_ = true;
}

void Writer::raw_number(std::string_view digits) {
  assert(is_json_number(digits) && "raw_number() needs a JSON number");
  before_value();
  append_literal(digits);
  need_comma_ = true;
}

template <typename Float>
void Writer::floating_value(Float value) {
  before_value();
  if (std::isfinite(value)) {
    fmt::format_to(fmt::appender(buf_), FMT_COMPILE("{}"), value);
  } else {
    append_literal("null");
  }
  need_comma_ = true;
}

void Writer::floating(double value) { floating_value(value); }

// Not a widening to double: (double)0.1f prints as 0.10000000149011612, while the float's own
// shortest form is 0.1, which is what the server stored for FLOAT.
void Writer::floating(float value) { floating_value(value); }

void Writer::boolean(bool value) {
  before_value();
  append_literal(value ? "true" : "false");
  need_comma_ = true;
}

void Writer::null() {
  before_value();
  append_literal("null");
  need_comma_ = true;
}

void Writer::end_record() {
  assert(depth_ == 0 && "end_record() inside an object or array");
  assert(record_has_value_ && "end_record() without a value would be a blank line");
  buf_.push_back('\n');
  record_start_ = buf_.size();
  record_has_value_ = false;
  need_comma_ = false;
  after_key_ = false;
}

void Writer::abandon_record() {
  buf_.resize(record_start_);
  depth_ = 0;
  record_has_value_ = false;
  need_comma_ = false;
  after_key_ = false;
}

void Writer::clear() noexcept {
  buf_.clear();
  record_start_ = 0;
  depth_ = 0;
  record_has_value_ = false;
  need_comma_ = false;
  after_key_ = false;
}

Result<void> Writer::flush_to(int fd, std::string_view what) {
  Result<void> written = write_all(fd, ended_records(), what);
  drop_ended_records();
  return written;
}

void Writer::take_ended_records(Buffer& into) {
  if (record_start_ == buf_.size()) {
    into.clear();
    Buffer ended(std::move(buf_));
    buf_ = std::move(into);
    into = std::move(ended);
    record_start_ = 0;
    return;
  }
  into.clear();
  into.append(buf_.data(), buf_.data() + record_start_);
  drop_ended_records();
}

void Writer::drop_ended_records() noexcept {
  // Keep a record in progress: the caller may flush on size between two fields.
  const std::size_t pending = buf_.size() - record_start_;
  if (pending > 0) std::memmove(buf_.data(), buf_.data() + record_start_, pending);
  buf_.resize(pending);
  record_start_ = 0;
}

std::string quoted(std::string_view text) {
  Writer writer;
  writer.string(text);
  return std::string(writer.buffered());
}

}  // namespace cdc::ndjson
