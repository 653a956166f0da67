#pragma once

// A column's type as the "table" line writes it (information_schema's COLUMN_TYPE, lower
// case: "int(11) unsigned", "decimal(8,2)", "datetime(3)", "enum('a','b')"), read into what
// the formats map types by: the base word, the numbers in parentheses, and "unsigned".

#include <cstdint>
#include <string_view>

namespace cdc::output {

struct TypeText {
  std::string_view base;          // "int", "decimal", "varchar", "enum", "datetime"
  std::uint32_t arg_count = 0;    // numbers given in parentheses (ENUM/SET members are not)
  std::uint32_t args[2] = {0, 0};  // decimal(8,2): {8, 2}; datetime(3): {3}; varchar(32): {32}
  bool is_unsigned = false;
};

[[nodiscard]] TypeText parse_type_text(std::string_view type) noexcept;

}  // namespace cdc::output
