#pragma once

// Bounds-checked reading of wire bytes with a sticky error.
//
// Every read checks the bounds; a read past the end returns zero (or an empty span), records
// the first failure with its absolute offset and the byte counts, and makes every later read
// fail too. Decoders therefore read a whole structure and check ok() once, which keeps the
// hot path free of branches on every field, and no decoder ever touches a raw pointer.
//
// Integers on the binlog wire are little-endian, except inside some row values (DECIMAL,
// DATETIME2, TIME2, TIMESTAMP2, BIT, the ENUM/SET packs), which are big-endian.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "util/bits.h"
#include "util/error.h"

namespace cdc {

class ByteReader {
 public:
  struct Failure {
    std::uint64_t offset = 0;   // absolute offset where the failed read started
    std::size_t needed = 0;     // bytes the read wanted (0 for a semantic failure)
    std::size_t available = 0;  // bytes that were left
    std::string what;           // what was being read, or what was wrong
  };

  ByteReader() = default;
  // base_offset is the absolute position of data[0] (in the file or stream), for messages.
  ByteReader(const std::uint8_t* data, std::size_t size, std::uint64_t base_offset = 0) noexcept
      : data_(data), size_(size), base_offset_(base_offset) {}
  explicit ByteReader(std::span<const std::uint8_t> bytes, std::uint64_t base_offset = 0) noexcept
      : ByteReader(bytes.data(), bytes.size(), base_offset) {}
  explicit ByteReader(std::string_view bytes, std::uint64_t base_offset = 0) noexcept
      : ByteReader(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), base_offset) {}

  [[nodiscard]] bool ok() const noexcept { return !failure_; }
  [[nodiscard]] const std::optional<Failure>& failure() const noexcept { return failure_; }
  // "need 5 bytes, have 3 at offset 1234 (DATETIME2)" or "<what> at offset 1234".
  [[nodiscard]] std::string failure_text() const;

  [[nodiscard]] std::size_t remaining() const noexcept { return size_ - position_; }
  [[nodiscard]] bool empty() const noexcept { return position_ == size_; }
  [[nodiscard]] std::size_t position() const noexcept { return position_; }
  [[nodiscard]] std::uint64_t offset() const noexcept { return base_offset_ + position_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

  std::uint8_t u8() noexcept { return static_cast<std::uint8_t>(uint_le(1, "1-byte integer")); }
  std::uint16_t u16() noexcept { return static_cast<std::uint16_t>(uint_le(2, "2-byte integer")); }
  std::uint32_t u24() noexcept { return static_cast<std::uint32_t>(uint_le(3, "3-byte integer")); }
  std::uint32_t u32() noexcept { return static_cast<std::uint32_t>(uint_le(4, "4-byte integer")); }
  std::uint64_t u48() noexcept { return uint_le(6, "6-byte integer"); }
  std::uint64_t u64() noexcept { return uint_le(8, "8-byte integer"); }

  // width is 1..8; anything else is a bug in the caller and fails the reader.
  // The in-bounds case is inline: row values are read a few bytes at a time, and a call per
  // value cost more than the read. Everything else goes to the checked out-of-line version.
  std::uint64_t uint_le(std::size_t width, std::string_view what = "integer") noexcept {
    if (width - 1 < 8 && !failure_ && width <= size_ - position_) [[likely]] {
      const std::uint64_t value = load_le(data_ + position_, width);
      position_ += width;
      return value;
    }
    return uint_le_checked(width, what);
  }
  std::uint64_t uint_be(std::size_t width, std::string_view what = "integer") noexcept {
    if (width - 1 < 8 && !failure_ && width <= size_ - position_) [[likely]] {
      std::uint64_t value = 0;
      for (std::size_t i = 0; i < width; ++i) value = (value << 8) | data_[position_ + i];
      position_ += width;
      return value;
    }
    return uint_be_checked(width, what);
  }

  // The protocol's length-encoded integer: < 0xfb is the value; 0xfc, 0xfd, 0xfe are followed
  // by 2, 3 and 8 bytes. 0xfb (NULL) and 0xff are not integers and fail the reader.
  std::uint64_t packed_integer(std::string_view what = "packed integer") noexcept;

  std::span<const std::uint8_t> bytes(std::size_t count, std::string_view what = "bytes") noexcept {
    if (!failure_ && count <= size_ - position_) [[likely]] {
      const std::span<const std::uint8_t> out(data_ + position_, count);
      position_ += count;
      return out;
    }
    return bytes_checked(count, what);
  }
  std::string_view chars(std::size_t count, std::string_view what = "string") noexcept {
    const auto span = bytes(count, what);
    return {reinterpret_cast<const char*>(span.data()), span.size()};
  }
  // Consumes count bytes and returns a reader over exactly them, with offsets kept absolute.
  ByteReader sub(std::size_t count, std::string_view what = "structure") noexcept;
  void skip(std::size_t count, std::string_view what = "bytes") noexcept { (void)bytes(count, what); }
  // Everything left; the reader is then at its end.
  std::span<const std::uint8_t> rest() noexcept { return bytes(remaining()); }
  // Looks without consuming.
  [[nodiscard]] std::span<const std::uint8_t> peek_rest() const noexcept {
    return {data_ + position_, size_ - position_};
  }

  // Records a semantic failure ("decimal precision 70 > 65") at the current offset.
  void fail(std::string_view what);
  // Adopts the failure of a sub-reader so the parent reports it.
  void adopt_failure(const ByteReader& child);

 private:
  [[nodiscard]] bool want(std::size_t count, std::string_view what) noexcept;
  // want() for an integer of `width` bytes, which must be 1..8.
  [[nodiscard]] bool want_integer(std::size_t width, std::string_view what) noexcept;
  std::uint64_t uint_le_checked(std::size_t width, std::string_view what) noexcept;
  std::uint64_t uint_be_checked(std::size_t width, std::string_view what) noexcept;
  std::span<const std::uint8_t> bytes_checked(std::size_t count, std::string_view what) noexcept;

  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t position_ = 0;
  std::uint64_t base_offset_ = 0;
  std::optional<Failure> failure_;
};

}  // namespace cdc
