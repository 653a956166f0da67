#include "gtid/uuid.h"

#include <fmt/format.h>

#include "gtid/text_helpers.h"

namespace cdc::gtid {

namespace {

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// 8-4-4-4-12 hex digits: dashes sit at these text positions.
constexpr bool is_dash_position(std::size_t pos) noexcept {
  return pos == 8 || pos == 13 || pos == 18 || pos == 23;
}

}  // namespace

Result<Uuid> Uuid::parse(std::string_view text) {
  if (text.size() != kTextLength) {
    return fail(Errc::usage, fmt::format("a UUID has 36 characters (like 3e11fa47-71ca-11e1-9e33-c80aa9429562), "
                                         "found {}",
                                         text.size()));
  }
  Uuid uuid;
  std::size_t byte_index = 0;
  for (std::size_t pos = 0; pos < kTextLength; ++pos) {
    if (is_dash_position(pos)) {
      if (text[pos] != '-') {
        return fail(Errc::usage, fmt::format("expected '-' at position {} of the UUID, found {}", pos,
                                             detail::describe_char(text[pos])));
      }
      continue;
    }
    const int high = hex_value(text[pos]);
    if (high < 0) {
      return fail(Errc::usage, fmt::format("expected a hex digit at position {} of the UUID, found {}", pos,
                                           detail::describe_char(text[pos])));
    }
    ++pos;  // the low nibble never sits on a dash position: every section has an even length
    const int low = hex_value(text[pos]);
    if (low < 0) {
      return fail(Errc::usage, fmt::format("expected a hex digit at position {} of the UUID, found {}", pos,
                                           detail::describe_char(text[pos])));
    }
    uuid.bytes[byte_index++] = static_cast<std::uint8_t>((high << 4) | low);
  }
  return uuid;
}

void Uuid::append_to(std::string& out) const {
  static constexpr char kHex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < kByteLength; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 0x0f]);
  }
}

std::string Uuid::to_string() const {
  std::string out;
  out.reserve(kTextLength);
  append_to(out);
  return out;
}

}  // namespace cdc::gtid
