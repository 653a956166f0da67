#include "rowimage/fixed_binary_values.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

#include "rowimage/value_failure.h"
#include "util/text.h"

namespace cdc::rowimage {

namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// Appends the decimal digits of a byte (no leading zeros); returns the new end.
char* put_decimal(char* at, std::uint8_t value) noexcept {
  if (value >= 100) *at++ = static_cast<char>('0' + value / 100);
  if (value >= 10) *at++ = static_cast<char>('0' + value / 10 % 10);
  *at++ = static_cast<char>('0' + value % 10);
  return at;
}

// "a.b.c.d" of four bytes.
char* put_dotted_quad(char* at, const std::uint8_t* bytes) noexcept {
  for (int i = 0; i < 4; ++i) {
    if (i != 0) *at++ = '.';
    at = put_decimal(at, bytes[i]);
  }
  return at;
}

// A 16-bit group in lower-case hex without leading zeros ("0" for zero).
char* put_hex_group(char* at, unsigned group) noexcept {
  bool started = false;
  for (int shift = 12; shift >= 0; shift -= 4) {
    const unsigned digit = (group >> shift) & 0xFU;
    if (digit == 0 && !started && shift != 0) continue;
    started = true;
    *at++ = kHexDigits[digit];
  }
  return at;
}

// sql_type_inet.cc Inet6::to_string(), rule for rule (see the header).
char* put_inet6(char* at, const std::uint8_t* bytes) noexcept {
  std::array<unsigned, 8> groups{};
  for (std::size_t i = 0; i < groups.size(); ++i)
    groups[i] = static_cast<unsigned>(bytes[2 * i] << 8 | bytes[2 * i + 1]);
  // The first longest run of zero groups, however short.
  int gap_start = -1;
  int gap_length = 0;
  for (int i = 0; i < 8;) {
    if (groups[static_cast<std::size_t>(i)] != 0) {
      ++i;
      continue;
    }
    int end = i;
    while (end < 8 && groups[static_cast<std::size_t>(end)] == 0) ++end;
    if (end - i > gap_length) {
      gap_start = i;
      gap_length = end - i;
    }
    i = end;
  }
  const bool ipv4_compatible = gap_start == 0 && gap_length == 6;
  const bool ipv4_mapped = gap_start == 0 && gap_length == 5 && groups[5] == 0xFFFF;
  for (int i = 0; i < 8; ++i) {
    if (i == gap_start) {
      if (i == 0) *at++ = ':';
      *at++ = ':';
      i += gap_length - 1;
      continue;
    }
    if (i == 6 && (ipv4_compatible || ipv4_mapped)) return put_dotted_quad(at, bytes + 12);
    at = put_hex_group(at, groups[static_cast<std::size_t>(i)]);
    if (i != 7) *at++ = ':';
  }
  return at;
}

// my_uuid2str(): 8-4-4-4-12 lower-case hex.
char* put_uuid(char* at, const std::uint8_t* bytes) noexcept {
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) *at++ = '-';
    *at++ = kHexDigits[bytes[i] >> 4];
    *at++ = kHexDigits[bytes[i] & 0xFU];
  }
  return at;
}

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The bytes of any text of the type that reads as a value: "a.b.c.d" with 1-3 digits a part,
// an IPv6 address as inet_pton reads it, 8-4-4-4-12 hex digits. The caller checks that the text
// is also the canonical one.
bool parse_any_spelling(FixedBinaryType type, std::string_view text, FixedBinaryBytes& bytes) noexcept {
  switch (type) {
    case FixedBinaryType::inet4: {
      std::size_t at = 0;
      for (int part = 0; part < 4; ++part) {
        if (part != 0 && (at >= text.size() || text[at++] != '.')) return false;
        unsigned value = 0;
        std::size_t digits = 0;
        for (; at < text.size() && is_digit(text[at]) && digits < 3; ++at, ++digits)
          value = value * 10 + static_cast<unsigned>(text[at] - '0');
        if (digits == 0 || value > 255) return false;
        bytes[static_cast<std::size_t>(part)] = static_cast<std::uint8_t>(value);
      }
      return at == text.size();
    }
    case FixedBinaryType::inet6: {
      // inet_pton needs a terminated string; no text of an INET6 is longer than 45 characters.
      std::array<char, 46> terminated{};
      if (text.size() >= terminated.size()) return false;
      std::copy(text.begin(), text.end(), terminated.begin());
      return ::inet_pton(AF_INET6, terminated.data(), bytes.data()) == 1;
    }
    case FixedBinaryType::uuid: {
      if (text.size() != 36) return false;
      std::size_t byte = 0;
      for (std::size_t at = 0; at < text.size(); ++at) {
        if (at == 8 || at == 13 || at == 18 || at == 23) {
          if (text[at] != '-') return false;
          continue;
        }
        const int high = hex_value(text[at]);
        const int low = hex_value(text[++at]);  // no group has an odd number of digits
        if (high < 0 || low < 0) return false;
        bytes[byte++] = static_cast<std::uint8_t>(high << 4 | low);
      }
      return true;
    }
    case FixedBinaryType::none: return false;
  }
  return false;
}

}  // namespace

FixedBinaryType fixed_binary_type_named(std::string_view type) noexcept {
  if (iequals(type, "inet4")) return FixedBinaryType::inet4;
  if (iequals(type, "inet6")) return FixedBinaryType::inet6;
  if (iequals(type, "uuid")) return FixedBinaryType::uuid;
  return FixedBinaryType::none;
}

std::string_view fixed_binary_text(FixedBinaryType type, std::span<const std::uint8_t> bytes,
                                   FixedBinaryText& buffer) noexcept {
  const std::size_t size = fixed_binary_size(type);
  if (size == 0 || bytes.size() > size) return {};
  // The binary log leaves out trailing 0x00 bytes, as of any BINARY(n) (Field_string's pack()).
  FixedBinaryBytes padded{};
  std::copy(bytes.begin(), bytes.end(), padded.begin());
  char* const begin = buffer.data();
  char* end = begin;
  switch (type) {
    case FixedBinaryType::inet4: end = put_dotted_quad(begin, padded.data()); break;
    case FixedBinaryType::inet6: end = put_inet6(begin, padded.data()); break;
    case FixedBinaryType::uuid: end = put_uuid(begin, padded.data()); break;
    case FixedBinaryType::none: break;
  }
  return {begin, static_cast<std::size_t>(end - begin)};
}

void write_fixed_binary(FixedBinaryType type, std::span<const std::uint8_t> bytes, std::uint64_t value_offset,
                        ByteReader& in, ndjson::Writer& out) {
  FixedBinaryText buffer;
  const std::string_view text = fixed_binary_text(type, bytes, buffer);
  if (text.empty()) {
    fail_at(in, value_offset, "a value of {} bytes where the column holds {}", bytes.size(), fixed_binary_size(type));
    return;
  }
  out.ascii_string(text);  // digits, a-f, '.', ':' and '-'
}

bool parse_fixed_binary_text(FixedBinaryType type, std::string_view text, FixedBinaryBytes& bytes) noexcept {
  if (!parse_any_spelling(type, text, bytes)) return false;
  FixedBinaryText buffer;
  return fixed_binary_text(type, std::span<const std::uint8_t>(bytes.data(), fixed_binary_size(type)), buffer) == text;
}

void to_server_order(FixedBinaryType type, FixedBinaryBytes& bytes) noexcept {
  // sql_type_uuid.h: mem_need_swap() tests byte 6 as a signed char (0x01..0x5f), and
  // memory_to_record() moves the groups to these row positions.
  if (type != FixedBinaryType::uuid || bytes[6] == 0 || bytes[6] >= 0x60 || (bytes[8] & 0x80U) == 0) return;
  const FixedBinaryBytes text_order = bytes;
  std::copy_n(text_order.begin() + 10, 6, bytes.begin());      // node
  std::copy_n(text_order.begin() + 8, 2, bytes.begin() + 6);   // variant and clock sequence
  std::copy_n(text_order.begin() + 6, 2, bytes.begin() + 8);   // version and time high
  std::copy_n(text_order.begin() + 4, 2, bytes.begin() + 10);  // time middle
  std::copy_n(text_order.begin(), 4, bytes.begin() + 12);      // time low
}

}  // namespace cdc::rowimage
