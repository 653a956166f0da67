#include "util/base64.h"

namespace cdc {

std::optional<std::string> decode_base64(std::string_view text) {
  std::string out;
  if (!decode_base64_into(text, out)) return std::nullopt;
  return out;
}

bool decode_base64_into(std::string_view text, std::string& out) {
  out.clear();
  unsigned buffer = 0;
  int bits = 0;
  std::size_t padding = 0;
  for (const char c : text) {
    unsigned value = 0;
    if (c >= 'A' && c <= 'Z') {
      value = static_cast<unsigned>(c - 'A');
    } else if (c >= 'a' && c <= 'z') {
      value = static_cast<unsigned>(c - 'a' + 26);
    } else if (c >= '0' && c <= '9') {
      value = static_cast<unsigned>(c - '0' + 52);
    } else if (c == '+') {
      value = 62;
    } else if (c == '/') {
      value = 63;
    } else if (c == '=') {
      ++padding;
      continue;
    } else {
      return false;
    }
    if (padding != 0) return false;  // data after '='
    buffer = (buffer << 6 | value) & 0xFFFFFFU;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xFFU));
    }
  }
  return padding <= 2 && bits < 6;
}

}  // namespace cdc
