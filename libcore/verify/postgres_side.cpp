#include "verify/postgres_side.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include <simdjson.h>

#include "apply/applied_state.h"
#include "apply/sql_dialect.h"
#include "util/base64.h"
#include "verify/column_text.h"

namespace cdc::verify {

namespace {

// standard_conforming_strings: '\x..' and '...' literals as written here. The others make the
// texts of column_text.h: UTF-8, UTC, ISO dates, TIME literals read as hours, and the
// shortest digits of a float (extra_float_digits 1, PostgreSQL 12's default).
constexpr const char* kSession =
    "SET standard_conforming_strings=on; SET client_encoding='UTF8'; SET TimeZone='UTC'; SET DateStyle='ISO, YMD'; "
    "SET IntervalStyle='postgres'; SET extra_float_digits=1; SET client_min_messages=warning";

// Rows per FETCH: a few MB of keys and hashes at most.
constexpr std::size_t kFetchRows = 10000;

Unexpected bad_bound(const plan::KeyColumn& column, std::string_view value) {
  return fail(Errc::corrupt_input, fmt::format("key column {}: the bound {} is not a value of {}", column.name, value,
                                               column.column_type));
}

bool only_chars(std::string_view text, std::string_view allowed) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [&](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0 || allowed.find(c) != std::string_view::npos;
  });
}

// A bound's value (its JSON text, as the chunk line has it) as a PostgreSQL literal.
Result<std::string> bound_literal(const plan::KeyColumn& column, std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element value;
  if (parser.parse(json.data(), json.size()).get(value) != simdjson::SUCCESS) return bad_bound(column, json);
  if (column.kind == plan::KeyKind::signed_integer || column.kind == plan::KeyKind::unsigned_integer) {
    if (!value.is_int64() && !value.is_uint64()) return bad_bound(column, json);
    return std::string(json);
  }
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) return bad_bound(column, json);
  switch (column.kind) {
    case plan::KeyKind::decimal:
      if (!only_chars(text, "-.")) return bad_bound(column, json);
      return std::string(text);
    case plan::KeyKind::timestamp:
      if (text.ends_with('Z')) text.remove_suffix(1);  // the session is in UTC
      [[fallthrough]];
    case plan::KeyKind::temporal:
      if (!only_chars(text, "-: .")) return bad_bound(column, json);
      return postgres_quoted(text);
    case plan::KeyKind::binary: {
      const auto bytes = decode_base64(text);
      if (!bytes) return bad_bound(column, json);
      std::string literal = "'\\x";
      for (const char byte : *bytes) literal += fmt::format("{:02x}", static_cast<unsigned char>(byte));
      return literal + "'::bytea";
    }
    default: break;
  }
  return fail(Errc::internal, fmt::format("key column {}: its order is not PostgreSQL's", column.name));
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool decode_hex(std::string& text) {
  if (text.size() % 2 != 0) return false;
  for (std::size_t i = 0; i < text.size(); i += 2) {
    const int high = hex_digit(text[i]);
    const int low = hex_digit(text[i + 1]);
    if (high < 0 || low < 0) return false;
    text[i / 2] = static_cast<char>(high * 16 + low);
  }
  text.resize(text.size() / 2);
  return true;
}

std::uint64_t hex_u64(std::string_view text) {
  std::uint64_t value = 0;
  for (const char c : text) value = value * 16 + static_cast<std::uint64_t>(hex_digit(c));
  return value;
}

std::string decimal_text(unsigned __int128 value) {
  if (value == 0) return "0";
  std::string text;
  while (value != 0) {
    text.push_back(static_cast<char>('0' + static_cast<int>(value % 10)));
    value /= 10;
  }
  std::reverse(text.begin(), text.end());
  return text;
}

// The key columns' order is the same on PostgreSQL (with cdc-apply's type mapping) as on the
// source: numbers, dates and times, bytes.
bool orders_alike(plan::KeyKind kind) {
  switch (kind) {
    case plan::KeyKind::signed_integer:
    case plan::KeyKind::unsigned_integer:
    case plan::KeyKind::decimal:
    case plan::KeyKind::temporal:
    case plan::KeyKind::timestamp:
    case plan::KeyKind::binary: return true;
    case plan::KeyKind::text:
    case plan::KeyKind::fixed_binary: return false;
  }
  return false;
}

}  // namespace

PostgresTargetSide::PostgresTargetSide(postgres::Connection connection, std::optional<std::string> schema,
                                       std::string position_table, std::chrono::milliseconds wait)
    : connection_(std::move(connection)),
      schema_(std::move(schema)),
      position_table_(std::move(position_table)),
      position_sql_(apply::read_position_sql(position_table_)),
      wait_(wait) {}

Result<std::unique_ptr<PostgresTargetSide>> PostgresTargetSide::open(const std::string& conninfo,
                                                                     std::optional<std::string> schema,
                                                                     std::string position_table,
                                                                     std::chrono::milliseconds wait) {
  auto connection = postgres::Connection::open(conninfo, "cdc-apply-verify");
  if (!connection) return fail(connection.error().with_context("the target"));
  if (auto set = connection->query(kSession); !set) return fail(set.error());
  // md5 and octet_length read text in the database's encoding; the source's is UTF-8.
  auto encoding = connection->query("SHOW server_encoding");
  if (!encoding) return fail(encoding.error());
  const std::string name = !encoding->empty() && !(*encoding)[0].empty() ? (*encoding)[0][0].value_or("") : "";
  if (name != "UTF8")
    return fail(Errc::config, fmt::format("the target database's encoding is {}, not UTF8: its text would not hash "
                                          "as the source's UTF-8 does",
                                          name));
  return std::unique_ptr<PostgresTargetSide>(
      new PostgresTargetSide(std::move(*connection), std::move(schema), std::move(position_table), wait));
}

Result<gtid::Position> PostgresTargetSide::position_of(postgres::Rows rows) const {
  mysql::QueryResult result;
  result.rows = std::move(rows);
  return held_position(result, position_table_);
}

Result<gtid::Position> PostgresTargetSide::position() {
  auto rows = connection_.query(position_sql_);
  if (!rows) return fail(rows.error());
  return position_of(std::move(*rows));
}

Result<std::optional<gtid::Position>> PostgresTargetSide::wait_for(const gtid::Position& wanted) {
  return wait_.wait_for(wanted, [this] { return position(); });
}

Result<void> PostgresTargetSide::set_table(const plan::TableSplit& split, const RowKeys* keys) {
  for (const records::ChunkColumn& column : split.columns)
    if (auto comparable = postgres_comparable(column); !comparable)
      return fail(comparable.error().with_context(fmt::format("{}.{}", split.database, split.table)));
  keys_ = keys;
  ranges_in_sql_ = std::all_of(split.key.begin(), split.key.end(),
                               [](const plan::KeyColumn& column) { return orders_alike(column.kind); });
  if (!ranges_in_sql_ && keys->orders().empty())
    return fail(Errc::unsupported,
                fmt::format("{}.{}: its key orders otherwise on PostgreSQL, and its order on the source (the key's "
                            "type or collation) is not one cdc reproduces, so its chunks cannot be told apart",
                            split.database, split.table));
  ranges_.clear();
  pass_digests_.clear();
  pass_taken_.clear();
  pass_position_.reset();
  if (!ranges_in_sql_) {
    for (std::size_t i = 0; i < split.chunks.size(); ++i) {
      auto range = sort_range(plan::chunk_record(split, i));
      if (!range) return fail(range.error());
      ranges_.push_back(std::move(*range));
    }
  }
  hex_.clear();
  for (const std::string& name : keys->listed()) {
    bool hex = false;
    if (!keys->keyless())
      for (const records::ChunkColumn& column : split.columns)
        if (column.name == name) hex = postgres_key_is_hex(column);
    hex_.push_back(hex);
  }
  return {};
}

std::string PostgresTargetSide::schema_of(const records::Chunk& chunk) const { return schema_ ? *schema_ : chunk.db; }

std::optional<std::size_t> PostgresTargetSide::chunk_holding(std::span<const order::KeyRange> ranges,
                                                              std::string_view sort_key) {
  // The last chunk whose range starts at or before the key; its end tells.
  const auto after = std::upper_bound(ranges.begin(), ranges.end(), sort_key,
                                      [](std::string_view key, const order::KeyRange& range) {
                                        return range.start && key < *range.start;
                                      });
  if (after == ranges.begin()) return std::nullopt;
  const auto at = static_cast<std::size_t>(after - ranges.begin()) - 1;
  if (!ranges[at].contains(sort_key)) return std::nullopt;
  return at;
}

Result<std::string> PostgresTargetSide::range_sql(const records::Chunk& chunk, std::span<const plan::KeyColumn> key) {
  std::string names;
  for (std::size_t i = 0; i < key.size(); ++i)
    names += (i == 0 ? "" : ",") + apply::quote_name(apply::Dialect::postgres, key[i].name);
  std::string sql;
  for (const auto& [bound, op] : {std::pair{&chunk.start, ">="}, std::pair{&chunk.end, "<"}}) {
    if (!*bound) continue;
    if ((*bound)->size() != key.size())
      return fail(Errc::corrupt_input, fmt::format("{}: a bound without one value per key column", chunk.describe()));
    std::string values;
    for (std::size_t i = 0; i < key.size(); ++i) {
      auto literal = bound_literal(key[i], (**bound)[i]);
      if (!literal) return fail(literal.error());
      values += (i == 0 ? "" : ",") + *literal;
    }
    if (!sql.empty()) sql += " AND ";
    // PostgreSQL compares rows column by column, as the source's (k1,k2) >= (..) does.
    sql += key.size() == 1 ? fmt::format("{} {} {}", names, op, values)
                           : fmt::format("({}) {} ({})", names, op, values);
  }
  return sql;
}

Result<order::KeyRange> PostgresTargetSide::sort_range(const records::Chunk& chunk) const {
  order::KeyRange range;
  for (const auto& [bound, out] : {std::pair{&chunk.start, &range.start}, std::pair{&chunk.end, &range.end}}) {
    if (!*bound) continue;
    std::vector<std::string_view> values((*bound)->begin(), (*bound)->end());
    std::string key;
    if (auto appended = order::append_row_sort_key(keys_->orders(), values, key); !appended)
      return fail(appended.error().with_context(chunk.describe()));
    *out = std::move(key);
  }
  return range;
}

Result<void> PostgresTargetSide::decode_keys(std::vector<std::optional<std::string>>& values) const {
  for (std::size_t i = 0; i < hex_.size() && i < values.size(); ++i)
    if (hex_[i] && values[i] && !decode_hex(*values[i]))
      return fail(Errc::corrupt_input, fmt::format("the key column {} is not hex", keys_->listed()[i]));
  return {};
}

Result<gtid::Position> PostgresTargetSide::read(const std::string& sql, const OnRows& on_rows) {
  const auto body = [&]() -> Result<gtid::Position> {
    // REPEATABLE READ: the snapshot of the first statement, the position's, is every later one's.
    auto held = connection_.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;" + position_sql_);
    if (!held) return fail(held.error());
    auto position = position_of(std::move(*held));
    if (!position) return fail(position.error());
    const std::string fetch = fmt::format("FETCH FORWARD {} FROM cdc_verify", kFetchRows);
    std::string statement = "DECLARE cdc_verify NO SCROLL CURSOR FOR " + sql + ";" + fetch;
    for (;;) {
      auto batch = connection_.query(statement);
      if (!batch) return fail(batch.error());
      const bool last = batch->size() < kFetchRows;
      if (auto taken = on_rows(*batch); !taken) return fail(taken.error());
      if (last) break;
      statement = fetch;
    }
    if (auto done = connection_.query("COMMIT"); !done) return fail(done.error());
    return position;
  };
  auto position = body();
  if (!position && connection_.usable()) (void)connection_.query("ROLLBACK");
  return position;
}

Result<DigestRead> PostgresTargetSide::digest(const records::Chunk& chunk) {
  if (keys_ == nullptr) return fail(Errc::internal, "the table was not set before its chunks");
  DigestRead read_digest;
  if (ranges_in_sql_) {
    auto condition = range_sql(chunk, keys_->columns());
    if (!condition) return fail(condition.error());
    bool answered = false;
    auto position = read(sql_.digest_sql(schema_of(chunk), chunk.table, chunk.columns, *condition),
                         [&](postgres::Rows& rows) -> Result<void> {
                           if (rows.empty()) return {};
                           if (rows.size() != 1 || rows[0].size() != 3 || !rows[0][0] || !rows[0][1] || !rows[0][2])
                             return fail(Errc::internal, "the digest query did not answer one row of three values");
                           read_digest.digest.rows = std::stoull(*rows[0][0]);
                           read_digest.digest.high = *rows[0][1];
                           read_digest.digest.low = *rows[0][2];
                           answered = true;
                           return {};
                         });
    if (!position) return fail(position.error());
    if (!answered) return fail(Errc::internal, "the digest query answered no row");
    read_digest.position = std::move(*position);
    return read_digest;
  }
  // A text key: the last pass's digest, unless this chunk took it already (then a new pass).
  if (chunk.index >= ranges_.size())
    return fail(Errc::internal, fmt::format("{}: a chunk the table's split does not have", chunk.describe()));
  if (!pass_position_ || pass_taken_[chunk.index])
    if (auto passed = read_every_chunk(chunk); !passed) return fail(passed.error());
  pass_taken_[chunk.index] = true;
  read_digest.digest = pass_digests_[chunk.index];
  read_digest.position = *pass_position_;
  return read_digest;
}

Result<void> PostgresTargetSide::read_every_chunk(const records::Chunk& chunk) {
  struct Sums {
    std::uint64_t rows = 0;
    unsigned __int128 high = 0;
    unsigned __int128 low = 0;
  };
  std::vector<Sums> sums(ranges_.size());
  pass_position_.reset();
  RowKeys::Scratch scratch;
  std::string sort_key;
  auto position = read(sql_.rows_sql(schema_of(chunk), chunk.table, chunk.columns, keys_->listed(), false, ""),
                       [&](postgres::Rows& rows) -> Result<void> {
                         for (auto& values : rows) {
                           if (auto decoded = decode_keys(values); !decoded) return fail(decoded.error());
                           if (auto keyed = keys_->sort_key(values, scratch, sort_key); !keyed)
                             return fail(keyed.error());
                           const std::optional<std::string>& hash = values.back();
                           if (!hash || hash->size() != 32)
                             return fail(Errc::internal, "a row hash of other than 32 digits");
                           const auto at = chunk_holding(ranges_, sort_key);
                           if (!at) continue;
                           Sums& chunk_sums = sums[*at];
                           ++chunk_sums.rows;
                           chunk_sums.high += hex_u64(std::string_view(*hash).substr(0, 16));
                           chunk_sums.low += hex_u64(std::string_view(*hash).substr(16));
                         }
                         return {};
                       });
  if (!position) return fail(position.error());
  pass_digests_.clear();
  for (const Sums& chunk_sums : sums)
    pass_digests_.push_back(Digest{chunk_sums.rows, decimal_text(chunk_sums.high), decimal_text(chunk_sums.low)});
  pass_taken_.assign(ranges_.size(), false);
  pass_position_ = std::move(*position);
  return {};
}

Result<RowsRead> PostgresTargetSide::rows(const records::Chunk& chunk, std::span<const KeyDifference>) {
  if (keys_ == nullptr) return fail(Errc::internal, "the table was not set before its chunks");
  std::string condition;
  std::optional<order::KeyRange> range;
  if (ranges_in_sql_) {
    auto in_sql = range_sql(chunk, keys_->columns());
    if (!in_sql) return fail(in_sql.error());
    condition = std::move(*in_sql);
  } else {
    auto sorted = sort_range(chunk);
    if (!sorted) return fail(sorted.error());
    range = std::move(*sorted);
  }
  RowsRead read_rows;
  RowKeys::Scratch scratch;
  std::string sort_key;
  auto position = read(
      sql_.rows_sql(schema_of(chunk), chunk.table, chunk.columns, keys_->listed(), keys_->keyless(), condition),
      [&](postgres::Rows& rows) -> Result<void> {
        for (auto& values : rows) {
          if (auto decoded = decode_keys(values); !decoded) return fail(decoded.error());
          // The whole table is read: only the chunk's rows are kept, and made RowHashes.
          if (range) {
            if (auto keyed = keys_->sort_key(values, scratch, sort_key); !keyed) return fail(keyed.error());
            if (!range->contains(sort_key)) continue;
          }
          auto row = keys_->row(values);
          if (!row) return fail(row.error());
          read_rows.rows.push_back(std::move(*row));
        }
        return {};
      });
  if (!position) return fail(position.error());
  read_rows.position = std::move(*position);
  return read_rows;
}

}  // namespace cdc::verify
