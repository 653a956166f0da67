#include "util/byte_reader.h"

#include <fmt/format.h>

namespace cdc {

std::string ByteReader::failure_text() const {
  if (!failure_) return {};
  if (failure_->needed == 0) return fmt::format("{} at offset {}", failure_->what, failure_->offset);
  return fmt::format("{}: need {} bytes, have {} at offset {}", failure_->what, failure_->needed,
                     failure_->available, failure_->offset);
}

bool ByteReader::want(std::size_t count, std::string_view what) noexcept {
  if (failure_) return false;
  if (count <= size_ - position_) return true;
  failure_ = Failure{offset(), count, size_ - position_, std::string(what)};
  position_ = size_;
  return false;
}

bool ByteReader::want_integer(std::size_t width, std::string_view what) noexcept {
  if (width == 0 || width > 8) {
    fail("integer width out of range");
    return false;
  }
  return want(width, what);
}

std::uint64_t ByteReader::uint_le_checked(std::size_t width, std::string_view what) noexcept {
  if (!want_integer(width, what)) return 0;
  const std::uint64_t value = load_le(data_ + position_, width);
  position_ += width;
  return value;
}

std::uint64_t ByteReader::uint_be_checked(std::size_t width, std::string_view what) noexcept {
  if (!want_integer(width, what)) return 0;
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < width; ++i) value = (value << 8) | data_[position_ + i];
  position_ += width;
  return value;
}

std::uint64_t ByteReader::packed_integer(std::string_view what) noexcept {
  const std::uint8_t first = static_cast<std::uint8_t>(uint_le(1, what));
  if (!ok()) return 0;
  if (first < 0xfb) return first;
  switch (first) {
    case 0xfc: return uint_le(2, what);
    case 0xfd: return uint_le(3, what);
    case 0xfe: return uint_le(8, what);
    default:
      position_ -= 1;
      fail(fmt::format("{}: invalid first byte 0x{:02x}", what, first));
      return 0;
  }
}

std::span<const std::uint8_t> ByteReader::bytes_checked(std::size_t count, std::string_view what) noexcept {
  if (!want(count, what)) return {};
  const std::span<const std::uint8_t> out(data_ + position_, count);
  position_ += count;
  return out;
}

ByteReader ByteReader::sub(std::size_t count, std::string_view what) noexcept {
  const std::uint64_t start = offset();
  const auto span = bytes(count, what);
  ByteReader child(span.data(), span.size(), start);
  if (!ok()) child.failure_ = failure_;
  return child;
}

void ByteReader::fail(std::string_view what) {
  if (failure_) return;
  failure_ = Failure{offset(), 0, size_ - position_, std::string(what)};
  position_ = size_;
}

void ByteReader::adopt_failure(const ByteReader& child) {
  if (failure_ || child.ok()) return;
  failure_ = child.failure_;
  position_ = size_;
}

}  // namespace cdc
