#include "mysql/sql_text.h"

#include <fmt/format.h>

namespace cdc::mysql {

std::string quote_identifier(std::string_view name) {
  std::string out = "`";
  for (const char c : name) {
    if (c == '`') out.push_back('`');
    out.push_back(c);
  }
  out.push_back('`');
  return out;
}

std::string hex_digits(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    out.push_back(kDigits[byte >> 4]);
    out.push_back(kDigits[byte & 0x0F]);
  }
  return out;
}

std::string text_literal(std::string_view utf8) { return "_utf8mb4 " + bytes_literal(utf8); }

std::string bytes_literal(std::string_view bytes) {
  std::string out = "X'";
  out += hex_digits(bytes);
  out += '\'';
  return out;
}

std::string row_comparison(const std::vector<std::string>& columns, const std::vector<std::string>& values,
                           std::string_view op) {
  const std::string_view strict = op.substr(0, 1);
  std::string out;
  for (std::size_t i = 0; i < columns.size() && i < values.size(); ++i) {
    if (i > 0) out += " OR ";
    out += '(';
    for (std::size_t j = 0; j < i; ++j) out += fmt::format("{} = {} AND ", columns[j], values[j]);
    out += fmt::format("{} {} {}", columns[i], i + 1 == columns.size() ? op : strict, values[i]);
    out += ')';
  }
  return columns.size() == 1 ? out : fmt::format("({})", out);
}

}  // namespace cdc::mysql
