#include "merge/row_blocks.h"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "merge/apply_pass.h"
#include "merge/deltas.h"
#include "ndjson/json_scan.h"
#include "ndjson/line_reader.h"
#include "records/row.h"
#include "util/fd_io.h"

namespace cdc::merge {

namespace {

constexpr std::string_view kNewline = "\n";
// Read past a block's end for the rest of its last line: most lines end within this.
constexpr std::size_t kLineTailBytes = std::size_t{4} << 10;
// Views gathered before a write: what one writev() takes (IOV_MAX on Linux).
constexpr std::size_t kMaxVectors = 1024;

// pread() of up to size bytes at offset; 0 at the end of the file.
Result<std::size_t> read_at(const Segment& segment, char* into, std::size_t size, std::uint64_t offset) {
  return read_some_at(segment.fd, into, size, offset, segment.name);
}

// The line number of the line at offset: only for an error's message, so counted then.
std::uint64_t line_number_at(const Segment& segment, std::uint64_t offset) {
  std::uint64_t line = segment.first_line;
  std::string buffer(std::size_t{64} << 10, '\0');
  for (std::uint64_t at = segment.begin; at < offset;) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), offset - at));
    auto got = read_at(segment, buffer.data(), want, at);
    if (!got || *got == 0) break;
    line += static_cast<std::uint64_t>(std::count(buffer.data(), buffer.data() + *got, '\n'));
    at += *got;
  }
  return line;
}

}  // namespace

void Slice::build_index() {
  digit_bits.assign(kDigitBits / 64, 0);
  for (const EffectEntry& entry : entries) {
    // {"name":DIGITS}: the name a string without escapes, as a row's fast path reads it.
    const std::string_view identity = entry.identity;
    const std::size_t colon = identity.rfind("\":");
    if (identity.size() < 4 || identity.front() != '{' || identity.back() != '}' || colon == std::string_view::npos)
      continue;
    const std::string_view digits = identity.substr(colon + 2, identity.size() - colon - 3);
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    const std::uint64_t bit = digits_value(digits) & (kDigitBits - 1);
    digit_bits[bit >> 6] |= std::uint64_t{1} << (bit & 63);
  }
  std::size_t size = 16;
  while (size < entries.size() * 2) size *= 2;
  slots.assign(size, 0);
  mask = size - 1;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::uint64_t h = hash_identity(entries[i].identity);
    for (std::uint64_t at = h & mask;; at = (at + 1) & mask) {
      if (slots[at] == 0) {
        slots[at] = (h & 0xFFFFFFFF00000000ULL) | (i + 1);
        break;
      }
    }
  }
}

void GatherWriter::add(const Effect& effect) {
  if (effect.image_size == 0) {
    add(effect.line);
  } else {
    const std::string_view line = effect.line;
    add(line.substr(0, effect.head_size));
    add(std::string_view(effect.image, effect.image_size));
    add(line.substr(effect.head_size));
    effects_.push_back(&effect);
  }
  if (vectors_.size() >= kMaxVectors && failure_) failure_ = flush();
}

Result<void> GatherWriter::flush() {
  if (!failure_) return failure_;
  if (vectors_.empty()) return {};
  Result<void> wrote;
  if (out_.has_converter()) {
    for (const iovec& vector : vectors_) out_.append(std::string_view(static_cast<const char*>(vector.iov_base), vector.iov_len));
    wrote = out_.maybe_flush();
  } else {
    wrote = out_.flush();  // what the sink holds goes first
    if (wrote) wrote = write_all(out_.fd(), vectors_, out_.name());
  }
  vectors_.clear();
  for (const Effect* effect : effects_) pages_.read(*effect);
  effects_.clear();
  return wrote;
}

void RowBlock::copy(std::size_t offset, std::size_t length) {
  if (!pieces_.empty()) {
    Piece& last = pieces_.back();
    if (last.entry == Piece::kCopy && last.offset + last.length == offset) {
      last.length += static_cast<std::uint32_t>(length);
      return;
    }
  }
  pieces_.push_back(Piece{static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(length), Piece::kCopy});
}

Result<bool> RowBlock::read_more(const Segment& segment, std::uint64_t limit) {
  const std::uint64_t at = offset_ + filled_;
  limit = std::min(limit, segment.end);
  if (at >= limit) return false;
  const auto want = static_cast<std::size_t>(limit - at);
  if (filled_ + want > capacity_) {
    const std::size_t grown = std::max(capacity_ * 2, filled_ + want);
    std::unique_ptr<char[]> bigger(new char[grown]);
    std::memcpy(bigger.get(), bytes_.get(), filled_);
    bytes_ = std::move(bigger);
    capacity_ = grown;
  }
  auto got = read_at(segment, bytes_.get() + filled_, want, at);
  if (!got) return fail(got.error());
  filled_ += *got;
  return *got > 0;
}

std::optional<std::string_view> RowBlock::identity_of(std::string_view line, const TableInfo& table) {
  key_digits_.reset();
  const std::string_view prefix = table.row_prefix;
  if (table.identity_is_key) {
    // cdc-snapshot's lines start with the same bytes up to the key object, and most keys are
    // one integer: its digits up to the '}' end the object, as skip_json_value would find.
    const std::string_view key_start = table.row_key_start;
    if (!key_start.empty() && ndjson::starts_with_bytes(line, key_start)) {
      std::size_t end = key_start.size();
      std::uint64_t value = 0;
      bool digits_only = true;
      for (; end < line.size() && ((line[end] >= '0' && line[end] <= '9') || line[end] == '-'); ++end) {
        if (line[end] == '-') digits_only = false;
        value = value * 10 + static_cast<std::uint64_t>(line[end] - '0');
      }
      if (end > key_start.size() && end < line.size() && line[end] == '}') {
        if (digits_only) key_digits_ = value;
        return line.substr(prefix.size(), end + 1 - prefix.size());
      }
    }
    if (line.size() > prefix.size() && ndjson::starts_with_bytes(line, prefix)) {
      std::size_t end = prefix.size();
      if (line[end] == '{' && ndjson::skip_json_value(line, end)) return line.substr(prefix.size(), end - prefix.size());
    }
    return ndjson::find_member(line, "\"key\"");
  }
  std::optional<std::string_view> after;
  if (line.size() > prefix.size() && ndjson::starts_with_bytes(line, prefix)) {
    std::size_t pos = prefix.size();
    if (ndjson::skip_json_value(line, pos) &&
        line.substr(pos, records::kRowBeforeAfter.size()) == records::kRowBeforeAfter) {
      const std::size_t start = pos + records::kRowBeforeAfter.size();
      std::size_t end = start;
      if (start < line.size() && line[start] == '{' && ndjson::skip_json_value(line, end))
        after = line.substr(start, end - start);
    }
  }
  if (!after) after = ndjson::find_member(line, "\"after\"");
  if (!after) return std::nullopt;
  if (!table.identity) return after;
  values_.assign(table.quoted_identity.size(), {});
  ndjson::MemberScanner scanner(*after);
  std::string_view key;
  std::string_view value;
  while (scanner.next(key, value))
    for (std::size_t i = 0; i < table.quoted_identity.size(); ++i)
      if (key == table.quoted_identity[i]) values_[i] = value;
  for (const std::string_view v : values_)
    if (v.empty()) return std::nullopt;
  identity_.clear();
  append_object(table.quoted_identity, values_, identity_);
  return std::string_view(identity_);
}

Result<void> RowBlock::read(const Segment& segment, std::uint64_t from, std::uint64_t to, const TableInfo& table,
                            const Slice* slice) {
  pieces_.clear();
  copied_rows_ = 0;
  filled_ = 0;
  if (!bytes_) {
    capacity_ = kBytes + kLineTailBytes;
    bytes_.reset(new char[capacity_]);
  }
  to = std::min(to, segment.end);
  if (from >= to) return {};
  // The byte before from tells whether a line starts at from.
  offset_ = from > segment.begin ? from - 1 : from;
  if (auto got = read_more(segment, to); !got) return fail(got.error());
  std::size_t at = 0;  // where the next line starts
  if (from > segment.begin) {
    const void* newline = std::memchr(bytes_.get(), '\n', filled_);
    if (newline == nullptr) return {};  // the line that starts before from goes on past to
    at = static_cast<std::size_t>(static_cast<const char*>(newline) - bytes_.get()) + 1;
  }
  const bool apply = slice != nullptr && !slice->entries.empty();
  while (offset_ + at < to) {
    const char* line_start = bytes_.get() + at;
    const void* newline = std::memchr(line_start, '\n', filled_ - at);
    for (std::size_t searched = filled_; newline == nullptr;) {
      if (filled_ - at > ndjson::LineReader::kMaxLineBytes)
        return fail(Errc::corrupt_input, fmt::format("{}:{}: line longer than {} bytes", segment.name,
                                                     line_number_at(segment, offset_ + at),
                                                     ndjson::LineReader::kMaxLineBytes));
      auto got = read_more(segment, offset_ + filled_ + std::max(kLineTailBytes, filled_ - at));
      if (!got) return fail(got.error());
      if (!*got) break;  // the segment ends without a newline
      line_start = bytes_.get() + at;
      newline = std::memchr(bytes_.get() + searched, '\n', filled_ - searched);
      searched = filled_;
    }
    const std::size_t line_end =
        newline != nullptr ? static_cast<std::size_t>(static_cast<const char*>(newline) - bytes_.get()) : filled_;
    std::size_t length = line_end - at;
    const bool plain = newline != nullptr && !(length > 0 && line_start[length - 1] == '\r');
    if (newline != nullptr && !plain) --length;
    const std::size_t next = newline != nullptr ? line_end + 1 : line_end;
    const std::string_view line(line_start, length);
    if (segment.only_written_rows && !ndjson::starts_with_bytes(line, table.row_prefix))
      return fail(Errc::corrupt_input,
                  fmt::format("{}:{}: not an op:\"r\" line of {}.{} as cdc-snapshot writes them, where its high line's "
                              "\"rows_bytes\" says the chunk's rows are: the file was changed after it was written; "
                              "snapshot the chunk again",
                              segment.name, line_number_at(segment, offset_ + at), table.db, table.table));
    if (line.empty() || ndjson::trim_json_space(line).empty()) {
      at = next;
      continue;
    }
    if (apply) {
      const auto id = identity_of(line, table);
      if (!id)
        return fail(Errc::corrupt_input,
                    fmt::format("{}:{}: an op:\"r\" line of {}.{} without its {}: not cdc-snapshot output", segment.name,
                                line_number_at(segment, offset_ + at), table.db, table.table,
                                table.identity_is_key ? "\"key\" object" : "\"after\" row or identity columns"));
      if ((!key_digits_ || slice->may_hold_digits(*key_digits_)) && slice->owns(*id)) {
        if (const std::int64_t hit = slice->find(*id); hit >= 0) {
          pieces_.push_back(
              Piece{static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(length), static_cast<std::int32_t>(hit)});
          at = next;
          continue;
        }
      }
    }
    // The line and its '\n' as read, unless a '\r' was dropped or the segment ends without one.
    if (plain) {
      copy(at, next - at);
    } else {
      copy(at, length);
      pieces_.push_back(Piece{0, 0, Piece::kNewline});
    }
    ++copied_rows_;
    at = next;
  }
  return {};
}

std::uint64_t RowBlock::write(Slice* slice, GatherWriter& out) const {
  std::uint64_t rows = copied_rows_;
  for (const Piece& piece : pieces_) {
    if (piece.entry == Piece::kCopy) {
      out.add(std::string_view(bytes_.get() + piece.offset, piece.length));
      continue;
    }
    if (piece.entry == Piece::kNewline) {
      out.add(kNewline);
      continue;
    }
    const auto index = static_cast<std::size_t>(piece.entry);
    Effect& effect = slice->entries[index].effect;
    if (effect.kind == EffectKind::absent) continue;
    if (effect.kind == EffectKind::present) {
      // The first row with the identity becomes the effect's line; any later one is dropped.
      if (slice->used[index] == 0) {
        slice->used[index] = 1;
        out.add(effect);
        ++rows;
      }
      continue;
    }
    if (effect.count < 0) {  // counted: this copy was deleted
      ++effect.count;
      continue;
    }
    out.add(std::string_view(bytes_.get() + piece.offset, piece.length));
    out.add(kNewline);
    ++rows;
  }
  return rows;
}

std::uint64_t write_added_rows(const Slice& slice, GatherWriter& out) {
  std::uint64_t rows = 0;
  for (std::size_t i = 0; i < slice.entries.size(); ++i) {
    const Effect& effect = slice.entries[i].effect;
    if (effect.kind == EffectKind::present && slice.used[i] == 0) {
      out.add(effect);
      ++rows;
    } else if (effect.kind == EffectKind::counted) {
      for (std::int64_t n = 0; n < effect.count; ++n) {
        out.add(effect);
        ++rows;
      }
    }
  }
  return rows;
}

}  // namespace cdc::merge
