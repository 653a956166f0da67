#pragma once

// Cells of an information_schema answer by column name, as schema/table_schema.cpp (parsing the
// rows) and schema/table_schema_read.cpp (the queries) read them: a server may order or name
// the columns differently, and a NULL cell is the empty text.

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mysql/connection.h"
#include "util/result.h"
#include "util/text.h"

namespace cdc::schema::cells {

inline constexpr std::size_t kAbsent = static_cast<std::size_t>(-1);

// Index of a result column by its header, kAbsent when the server has no such column.
inline std::size_t header(const mysql::QueryResult& result, std::string_view name) {
  for (std::size_t i = 0; i < result.columns.size(); ++i)
    if (iequals(result.columns[i], name)) return i;
  return kAbsent;
}

inline Result<std::size_t> required_header(const mysql::QueryResult& result, std::string_view table, std::string_view name) {
  const std::size_t index = header(result, name);
  if (index == kAbsent) return fail(Errc::server, fmt::format("information_schema.{} has no column {}", table, name));
  return index;
}

inline const std::optional<std::string>* cell(const std::vector<std::optional<std::string>>& row, std::size_t index) {
  return index < row.size() ? &row[index] : nullptr;
}

inline std::string_view text_or_empty(const std::vector<std::optional<std::string>>& row, std::size_t index) {
  const auto* value = cell(row, index);
  return value != nullptr && value->has_value() ? std::string_view(**value) : std::string_view();
}

inline std::optional<std::uint64_t> number(const std::vector<std::optional<std::string>>& row, std::size_t index) {
  const std::string_view text = text_or_empty(row, index);
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace cdc::schema::cells
