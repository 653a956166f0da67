#include "order/key_json_text.h"

#include "ndjson/utf8.h"

namespace cdc::order::detail {

std::optional<std::string> json_string(std::string_view json) {
  if (json.size() < 2 || json.front() != '"' || json.back() != '"') return std::nullopt;
  const std::string_view body = json.substr(1, json.size() - 2);
  std::string out;
  out.reserve(body.size());
  const auto hex4 = [&](std::size_t at) -> std::optional<std::uint32_t> {
    if (at + 4 > body.size()) return std::nullopt;
    std::uint32_t value = 0;
    for (std::size_t i = at; i < at + 4; ++i) {
      const char c = body[i];
      value <<= 4;
      if (c >= '0' && c <= '9')
        value |= static_cast<std::uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        value |= static_cast<std::uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        value |= static_cast<std::uint32_t>(c - 'A' + 10);
      else
        return std::nullopt;
    }
    return value;
  };

  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '"' || static_cast<unsigned char>(c) < 0x20) return std::nullopt;
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (++i == body.size()) return std::nullopt;
    switch (body[i]) {
      case '"':
        out.push_back('"');
        break;
      case '\\':
        out.push_back('\\');
        break;
      case '/':
        out.push_back('/');
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u': {
        auto unit = hex4(i + 1);
        if (!unit) return std::nullopt;
        i += 4;
        std::uint32_t cp = *unit;
        if (cp >= 0xD800 && cp <= 0xDBFF) {  // a high surrogate needs its low half next
          if (i + 2 >= body.size() || body[i + 1] != '\\' || body[i + 2] != 'u') return std::nullopt;
          auto low = hex4(i + 3);
          if (!low || *low < 0xDC00 || *low > 0xDFFF) return std::nullopt;
          i += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (*low - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return std::nullopt;
        }
        ndjson::append_utf8(out, cp);
        break;
      }
      default:
        return std::nullopt;
    }
  }
  return out;
}

bool decode_utf8(std::string_view text, std::vector<std::uint32_t>& out) {
  out.clear();
  std::size_t i = 0;
  while (i < text.size()) {
    const auto b0 = static_cast<unsigned char>(text[i]);
    std::uint32_t cp = 0;
    std::size_t length = 0;
    std::uint32_t min = 0;
    if (b0 < 0x80) {
      out.push_back(b0);
      ++i;
      continue;
    }
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      cp = b0 & 0x1FU, length = 2, min = 0x80;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      cp = b0 & 0x0FU, length = 3, min = 0x800;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      cp = b0 & 0x07U, length = 4, min = 0x10000;
    } else {
      return false;
    }
    if (i + length > text.size()) return false;
    for (std::size_t k = 1; k < length; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      if ((b & 0xC0U) != 0x80U) return false;
      cp = cp << 6 | (b & 0x3FU);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    out.push_back(cp);
    i += length;
  }
  return true;
}

}  // namespace cdc::order::detail
