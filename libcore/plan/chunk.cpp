#include "plan/chunk.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "mysql/sql_text.h"
#include "ndjson/writer.h"
#include "rowimage/fixed_binary_values.h"

namespace cdc::plan {

namespace {

constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;


bool all_of_chars(std::string_view text, std::string_view allowed) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [&](char c) {
    return (c >= '0' && c <= '9') || allowed.find(c) != std::string_view::npos;
  });
}

}  // namespace

void write_value(const KeyColumn& column, std::string_view value, ndjson::Writer& out) {
  switch (column.kind) {
    case KeyKind::signed_integer:
    case KeyKind::unsigned_integer: {
      // The server writes YEAR 0 as 0000, which JSON does not take as a number.
      const bool negative = value.starts_with('-');
      std::string_view digits = value.substr(negative ? 1 : 0);
      while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
      if (digits.size() + (negative ? 1 : 0) == value.size()) {
        out.raw_number(value);
      } else {
        out.raw_number(negative ? "-" + std::string(digits) : std::string(digits));
      }
      return;
    }
    case KeyKind::binary:
      out.string_base64(value);
      return;
    case KeyKind::timestamp:
      out.string(fmt::format("{}Z", value));
      return;
    case KeyKind::decimal:
    case KeyKind::text:
    case KeyKind::temporal:
    case KeyKind::fixed_binary:
      out.string(value);
      return;
  }
}

std::uint64_t bias_signed(std::int64_t value) noexcept { return static_cast<std::uint64_t>(value) ^ kSignBit; }

std::string unbiased_text(std::uint64_t biased, bool is_unsigned) {
  if (is_unsigned) return fmt::format("{}", biased);
  return fmt::format("{}", static_cast<std::int64_t>(biased ^ kSignBit));
}

std::optional<std::uint64_t> parse_biased(std::string_view text, bool is_unsigned) {
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (is_unsigned) {
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(first, last, value);
    if (ec != std::errc{} || end != last) return std::nullopt;
    return value;
  }
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(first, last, value);
  if (ec != std::errc{} || end != last) return std::nullopt;
  return bias_signed(value);
}

double distribution_factor(const IntegerKeyRange& range, std::uint64_t rows) noexcept {
  if (rows == 0) return std::numeric_limits<double>::infinity();
  // max - min + 1 can be 2^64: compute in long double.
  const long double span = static_cast<long double>(range.max - range.min) + 1.0L;
  return static_cast<double>(span / static_cast<long double>(rows));
}

std::optional<std::vector<KeyRange>> plan_integer_chunks(const IntegerKeyRange& range, std::uint64_t rows,
                                                      const ChunkPolicy& policy) {
  if (range.max < range.min) return std::nullopt;
  const double factor = distribution_factor(range, rows);
  if (!(factor >= policy.factor_lower && factor <= policy.factor_upper)) return std::nullopt;
  const long double width = static_cast<long double>(policy.chunk_size) * static_cast<long double>(factor);
  const std::uint64_t step =
      width >= 1.8e19L ? std::numeric_limits<std::uint64_t>::max()
                       : std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::floor(width)));
  const long double per_value = 1.0L / static_cast<long double>(factor);  // rows per key value

  std::vector<KeyRange> chunks;
  std::optional<KeyTuple> start;
  std::uint64_t lower = range.min;
  // Boundaries min + step, min + 2*step, ... while they stay <= max (never wrapping around).
  while (range.max - lower >= step && lower + step > lower) {
    const std::uint64_t boundary = lower + step;
    KeyRange chunk;
    chunk.start = start;
    chunk.end = KeyTuple{unbiased_text(boundary, range.is_unsigned)};
    chunk.rows_estimate = static_cast<std::uint64_t>(std::llround(static_cast<long double>(step) * per_value));
    chunks.push_back(std::move(chunk));
    start = KeyTuple{unbiased_text(boundary, range.is_unsigned)};
    lower = boundary;
  }
  KeyRange last;
  last.start = start;
  last.rows_estimate = static_cast<std::uint64_t>(
      std::llround((static_cast<long double>(range.max - lower) + 1.0L) * per_value));
  chunks.push_back(std::move(last));
  return chunks;
}

std::vector<KeyRange> chunks_from_boundaries(std::vector<KeyTuple> boundaries, std::uint64_t rows,
                                          std::uint64_t chunk_size) {
  std::vector<KeyRange> chunks;
  chunks.reserve(boundaries.size() + 1);
  std::optional<KeyTuple> start;
  for (auto& boundary : boundaries) {
    KeyRange chunk;
    chunk.start = std::move(start);
    chunk.end = boundary;
    chunk.rows_estimate = chunk_size;
    chunks.push_back(std::move(chunk));
    start = std::move(boundary);
  }
  KeyRange last;
  last.start = std::move(start);
  const std::uint64_t before = chunk_size * boundaries.size();
  last.rows_estimate = rows > before ? std::min(rows - before, chunk_size) : (boundaries.empty() ? rows : 0);
  chunks.push_back(std::move(last));
  return chunks;
}

Result<std::string> sql_literal(const KeyColumn& column, std::string_view value) {
  switch (column.kind) {
    case KeyKind::signed_integer:
    case KeyKind::unsigned_integer:
      if (!parse_biased(value, column.kind == KeyKind::unsigned_integer))
        return fail(Errc::corrupt_input, fmt::format("key column {}: '{}' is not an integer", column.name, value));
      return std::string(value);
    case KeyKind::decimal:
      if (!all_of_chars(value, "-+.eE"))
        return fail(Errc::corrupt_input, fmt::format("key column {}: '{}' is not a decimal", column.name, value));
      return std::string(value);
    case KeyKind::temporal:
    case KeyKind::timestamp: {
      std::string_view text = value;
      if (column.kind == KeyKind::timestamp && !text.empty() && text.back() == 'Z') text.remove_suffix(1);
      if (!all_of_chars(text, "-: ."))
        return fail(Errc::corrupt_input,
                    fmt::format("key column {}: '{}' is not a date or time", column.name, value));
      return fmt::format("'{}'", text);
    }
    case KeyKind::text:
      return mysql::text_literal(value);
    case KeyKind::binary:
      return mysql::bytes_literal(value);
    case KeyKind::fixed_binary: {
      // The server's own text, which it reads back as the column's type and compares in the
      // type's order; checked, so that only hex digits, '.', ':' and '-' go into the quotes.
      rowimage::FixedBinaryBytes bytes;
      if (!rowimage::parse_fixed_binary_text(rowimage::fixed_binary_type_named(column.column_type), value, bytes))
        return fail(Errc::corrupt_input,
                    fmt::format("key column {}: '{}' is not a value of {}", column.name, value, column.column_type));
      return fmt::format("'{}'", value);
    }
  }
  return fail(Errc::internal, "unknown key kind");
}


Result<std::string> key_compare_sql(const std::vector<KeyColumn>& key, const KeyTuple& values, std::string_view op) {
  if (values.size() != key.size())
    return fail(Errc::corrupt_input,
                fmt::format("a bound has {} values for a key of {} columns", values.size(), key.size()));
  if (op != ">" && op != ">=" && op != "<") return fail(Errc::internal, fmt::format("operator {}", op));
  std::vector<std::string> columns;
  std::vector<std::string> literals;
  for (std::size_t i = 0; i < key.size(); ++i) {
    auto literal = sql_literal(key[i], values[i]);
    if (!literal) return fail(std::move(literal).error());
    columns.push_back(mysql::quote_identifier(key[i].name));
    literals.push_back(std::move(*literal));
  }
  return mysql::row_comparison(columns, literals, op);
}

Result<std::string> chunk_condition_sql(const std::vector<KeyColumn>& key, const KeyRange& chunk) {
  std::string out;
  if (chunk.start) {
    auto lower = key_compare_sql(key, *chunk.start, ">=");
    if (!lower) return lower;
    out = std::move(*lower);
  }
  if (chunk.end) {
    auto upper = key_compare_sql(key, *chunk.end, "<");
    if (!upper) return upper;
    out = out.empty() ? std::move(*upper) : fmt::format("{} AND {}", out, *upper);
  }
  return out.empty() ? std::string("TRUE") : out;
}

records::Chunk chunk_record(const TableSplit& plan, std::size_t index) {
  const KeyRange& range = plan.chunks[index];
  records::Chunk chunk;
  chunk.db = plan.database;
  chunk.table = plan.table;
  for (const KeyColumn& column : plan.key) {
    chunk.key.push_back(column.name);
    chunk.key_types.push_back(column.column_type);
  }
  ndjson::Writer value;
  const auto bound = [&](const std::optional<KeyTuple>& tuple) {
    records::Bound out;
    if (!tuple) return out;
    out.emplace();
    for (std::size_t i = 0; i < plan.key.size() && i < tuple->size(); ++i) {
      value.clear();
      write_value(plan.key[i], (*tuple)[i], value);
      out->emplace_back(value.buffered());
    }
    return out;
  };
  chunk.start = bound(range.start);
  chunk.end = bound(range.end);
  chunk.index = index;
  chunk.count = plan.chunks.size();
  chunk.columns = plan.columns;
  chunk.identity = plan.identity;
  chunk.all_versions = plan.all_versions;
  chunk.rows_estimate = range.rows_estimate;
  return chunk;
}

void write_chunk_line(const TableSplit& plan, std::size_t index, ndjson::Writer& out) {
  records::write_chunk(chunk_record(plan, index), out);
}

}  // namespace cdc::plan
