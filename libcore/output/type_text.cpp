#include "output/type_text.h"

#include "util/text.h"

namespace cdc::output {

TypeText parse_type_text(std::string_view type) noexcept {
  TypeText parsed;
  std::size_t end = 0;
  while (end < type.size() && type[end] != '(' && type[end] != ' ') ++end;
  parsed.base = type.substr(0, end);
  std::size_t pos = end;
  if (pos < type.size() && type[pos] == '(') {
    ++pos;
    // Numbers only: "enum('a','b')" has quoted members, read from the line's "values".
    while (pos < type.size() && is_digit(type[pos]) && parsed.arg_count < 2) {
      std::uint32_t value = 0;
      for (; pos < type.size() && is_digit(type[pos]); ++pos)
        value = value * 10 + static_cast<std::uint32_t>(type[pos] - '0');
      parsed.args[parsed.arg_count++] = value;
      if (pos < type.size() && type[pos] == ',') ++pos;
    }
    // Past the closing parenthesis, quoted members included.
    bool quoted = false;
    while (pos < type.size() && (quoted || type[pos] != ')')) {
      if (type[pos] == '\'') quoted = !quoted;
      ++pos;
    }
    if (pos < type.size()) ++pos;
  }
  const std::string_view rest = type.substr(pos);
  parsed.is_unsigned = rest.find("unsigned") != std::string_view::npos;
  return parsed;
}

}  // namespace cdc::output
