#include "verify/row_keys.h"

#include <fmt/format.h>

#include "mysql/sql_text.h"
#include "ndjson/writer.h"
#include "util/text.h"

namespace cdc::verify {

namespace {

// How a column of a table without a key is written in its reported rows: numbers as numbers,
// bytes (binary strings, BIT, GEOMETRY) as base64, anything else as text.
plan::KeyKind display_kind(const records::ChunkColumn& column) {
  const std::string type = to_lower(column.type);
  const bool integer = type.find("int") != std::string::npos && type.find("point") == std::string::npos;
  if (integer || type.starts_with("year"))
    return type.find("unsigned") != std::string::npos ? plan::KeyKind::unsigned_integer : plan::KeyKind::signed_integer;
  if (column.collation_id == 63 || type.starts_with("bit") || type.find("geometry") != std::string::npos ||
      type.find("point") != std::string::npos || type.find("polygon") != std::string::npos ||
      type.find("linestring") != std::string::npos)
    return plan::KeyKind::binary;
  return plan::KeyKind::text;
}

}  // namespace

RowKeys RowKeys::of(const plan::TableSplit& split, Peer peer) {
  RowKeys keys;
  if (split.key.empty()) {
    keys.keyless_ = true;
    for (const records::ChunkColumn& column : split.columns) {
      plan::KeyKind kind = display_kind(column);
      if (peer == Peer::postgres)
        kind = canonical_is_number(column) ? plan::KeyKind::signed_integer : plan::KeyKind::text;
      keys.columns_.push_back(plan::KeyColumn{column.name, column.type, kind});
    }
  } else {
    keys.columns_ = split.key;
    for (const plan::KeyColumn& column : split.key) {
      std::uint32_t collation_id = 0;
      for (const records::ChunkColumn& described : split.columns)
        if (described.name == column.name) collation_id = described.collation_id;
      auto order = order::KeyColumnOrder::make(column.column_type, collation_id);
      if (!order) {
        keys.orders_.clear();
        break;
      }
      keys.orders_.push_back(*order);
    }
  }
  for (const plan::KeyColumn& column : keys.columns_) keys.names_.push_back(column.name);
  return keys;
}

Result<RowHash> RowKeys::row(std::span<const std::optional<std::string>> values) const {
  if (values.size() != columns_.size() + 1 || !values.back())
    return fail(Errc::corrupt_input, fmt::format("a row of {} values where the rows query has {}", values.size(),
                                                 columns_.size() + 1));
  RowHash row;
  row.hash = *values.back();
  if (!keyless_)
    for (std::size_t i = 0; i < columns_.size(); ++i) row.values.push_back(values[i].value_or(""));
  ndjson::Writer out;
  std::vector<std::string> texts;  // each value's JSON text, for its sort key
  out.begin_object();
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    out.key(columns_[i].name);
    const std::size_t from = out.bytes_buffered();
    if (!values[i]) {
      if (!keyless_) return fail(Errc::corrupt_input, fmt::format("the key column {} is NULL", columns_[i].name));
      out.null();
    } else {
      plan::write_value(columns_[i], *values[i], out);
    }
    texts.emplace_back(out.buffered().substr(from));
  }
  out.end_object();
  row.key_json = std::string(out.buffered());
  if (orders_.empty()) {
    row.sort_key = row.key_json;
    return row;
  }
  std::vector<std::string_view> views(texts.begin(), texts.end());
  if (auto appended = order::append_row_sort_key(orders_, views, row.sort_key); !appended) {
    // A value the order cannot read: the text orders it, so it is still compared, exactly.
    row.sort_key = "\xff" + row.key_json;
  }
  return row;
}

Result<void> RowKeys::sort_key(std::span<const std::optional<std::string>> values, Scratch& scratch,
                               std::string& out) const {
  if (orders_.empty() || values.size() != columns_.size() + 1)
    return fail(Errc::internal, "a sort key asked for a row of another shape, or a key without its order");
  // Each value's JSON text, as row() writes it, then its sort key.
  scratch.json.clear();
  scratch.ends.clear();
  scratch.json.begin_object();
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    if (!values[i]) return fail(Errc::corrupt_input, fmt::format("the key column {} is NULL", columns_[i].name));
    scratch.json.key(columns_[i].name);
    scratch.ends.push_back(scratch.json.bytes_buffered());
    plan::write_value(columns_[i], *values[i], scratch.json);
    scratch.ends.push_back(scratch.json.bytes_buffered());
  }
  const std::string_view text = scratch.json.buffered();
  scratch.views.clear();
  for (std::size_t i = 0; i < scratch.ends.size(); i += 2)
    scratch.views.push_back(text.substr(scratch.ends[i], scratch.ends[i + 1] - scratch.ends[i]));
  out.clear();
  return order::append_row_sort_key(orders_, scratch.views, out);
}

Result<std::string> RowKeys::only_sql(std::span<const KeyDifference> keys) const {
  if (keys.empty() || keyless_) return std::string();
  std::string sql = "(";
  if (columns_.size() == 1) sql += mysql::quote_identifier(columns_[0].name) + " IN (";
  for (std::size_t k = 0; k < keys.size(); ++k) {
    if (keys[k].values.size() != columns_.size())
      return fail(Errc::internal, fmt::format("the key {} has no value per key column", keys[k].key_json));
    if (k != 0) sql += columns_.size() == 1 ? "," : " OR ";
    if (columns_.size() > 1) sql += '(';
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      auto literal = plan::sql_literal(columns_[i], keys[k].values[i]);
      if (!literal) return fail(literal.error());
      if (columns_.size() == 1) {
        sql += *literal;
        continue;
      }
      if (i != 0) sql += " AND ";
      sql += fmt::format("{} = {}", mysql::quote_identifier(columns_[i].name), *literal);
    }
    if (columns_.size() > 1) sql += ')';
  }
  sql += columns_.size() == 1 ? "))" : ")";
  return sql;
}

}  // namespace cdc::verify
