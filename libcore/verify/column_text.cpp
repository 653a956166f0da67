#include "verify/column_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "apply/sql_dialect.h"
#include "mysql/sql_text.h"
#include "output/table_columns.h"

namespace cdc::verify {

namespace {

using output::ValueKind;

output::ColumnInfo classified(const records::ChunkColumn& column) {
  output::ColumnInfo info;
  info.type = column.type;
  // The chunk line has the collation, not the charset: 63 is binary (records/chunk.h).
  std::optional<std::string> charset;
  if (column.collation_id == 63) charset = "binary";
  else if (column.collation_id != 0) charset = "utf8mb4";
  output::classify_column(info, charset);
  return info;
}

// The first number in the type's parentheses: "datetime(6)" 6, "bit(10)" 10; fallback without.
unsigned parameter_of(const std::string& type, unsigned fallback) {
  const std::size_t open = type.find('(');
  if (open == std::string::npos) return fallback;
  unsigned value = 0;
  const char* first = type.data() + open + 1;
  const auto [end, ec] = std::from_chars(first, type.data() + type.size(), value);
  return ec == std::errc{} && end != first ? value : fallback;
}

// The pieces of the float text's normal form (column_text.h) in one dialect's functions: t is
// the value's text, lower-cased. MariaDB and PostgreSQL differ in names only. Neither has a
// per-row variable, so each piece is written out again where used and evaluated again: the
// steps are chosen to use t few times (7 per value).
struct FloatSteps {
  std::string (*unsigned_text)(const std::string& t);       // t without its '-'
  std::string (*mantissa)(const std::string& a);            // before the 'e'
  std::string (*exponent)(const std::string& a);            // after it, as an integer; 0 without
  std::string (*integer_part)(const std::string& m);        // before the '.'
  std::string (*digits)(const std::string& m);              // without the '.'
  std::string (*strip_zeros)(const std::string& digits);    // leading and trailing zeros off
  std::string (*strip_trailing)(const std::string& digits); // trailing zeros off
  std::string (*length)(const std::string& text);           // as a signed integer
  std::string (*result)(const std::string& t, const std::string& digits, const std::string& exponent);
};

const FloatSteps kMariadbSteps{
    [](const std::string& t) { return fmt::format("TRIM(LEADING '-' FROM {})", t); },
    [](const std::string& a) { return fmt::format("SUBSTRING_INDEX({},'e',1)", a); },
    [](const std::string& a) {
      return fmt::format("IF(LOCATE('e',{0})>0,CAST(SUBSTRING_INDEX({0},'e',-1) AS SIGNED),0)", a);
    },
    [](const std::string& m) { return fmt::format("SUBSTRING_INDEX({},'.',1)", m); },
    [](const std::string& m) { return fmt::format("REPLACE({},'.','')", m); },
    [](const std::string& d) { return fmt::format("TRIM(BOTH '0' FROM {})", d); },
    [](const std::string& d) { return fmt::format("TRIM(TRAILING '0' FROM {})", d); },
    // LENGTH is unsigned: a difference below zero would be an error, not a number.
    [](const std::string& s) { return fmt::format("CAST(LENGTH({}) AS SIGNED)", s); },
    [](const std::string& t, const std::string& d, const std::string& x) {
      // A NULL value: D is NULL, D='' is not true, and CONCAT gives NULL.
      return fmt::format("IF({1}='','0',CONCAT(IF(LEFT({0},1)='-','-',''),{1},'e',{2}))", t, d, x);
    },
};

const FloatSteps kPostgresSteps{
    [](const std::string& t) { return fmt::format("ltrim({},'-')", t); },
    [](const std::string& a) { return fmt::format("split_part({},'e',1)", a); },
    [](const std::string& a) { return fmt::format("COALESCE(NULLIF(split_part({},'e',2),'')::int,0)", a); },
    [](const std::string& m) { return fmt::format("split_part({},'.',1)", m); },
    [](const std::string& m) { return fmt::format("replace({},'.','')", m); },
    [](const std::string& d) { return fmt::format("btrim({},'0')", d); },
    [](const std::string& d) { return fmt::format("rtrim({},'0')", d); },
    [](const std::string& s) { return fmt::format("length({})", s); },
    [](const std::string& t, const std::string& d, const std::string& x) {
      // || with a NULL is NULL, as the value was.
      return fmt::format(
          "CASE WHEN {1}='' THEN '0' ELSE CASE WHEN left({0},1)='-' THEN '-' ELSE '' END||{1}||'e'||({2})::text END", t,
          d, x);
    },
};

// value = D x 10^X: the text is [-]I[.F][eE]; its digits I F stand for IF x 10^(E - |F|);
// D is them without their leading and trailing zeros, and X = E - |F| + the trailing zeros
// taken off = E + |I| - |IF without its trailing zeros|.
std::string float_text(const FloatSteps& steps, const std::string& lowered) {
  const std::string a = steps.unsigned_text(lowered);
  const std::string m = steps.mantissa(a);
  const std::string digits = steps.digits(m);
  const std::string exponent = fmt::format("{}+{}-{}", steps.exponent(a), steps.length(steps.integer_part(m)),
                                           steps.length(steps.strip_trailing(digits)));
  return steps.result(lowered, steps.strip_zeros(digits), exponent);
}

std::string postgres_datetime(const std::string& value, unsigned digits) {
  if (digits == 0) return fmt::format("to_char({},'YYYY-MM-DD HH24:MI:SS')", value);
  // US is always 6 digits; the column holds no more than `digits` of them.
  return fmt::format("left(to_char({},'YYYY-MM-DD HH24:MI:SS.US'),{})", value, 20 + std::min(digits, 6U));
}

std::string postgres_microseconds(const std::string& quoted) {
  return fmt::format("(extract(epoch from {})*1000000)::bigint", quoted);
}

bool is_inet(const output::ColumnInfo& info) { return info.base_type == "inet4" || info.base_type == "inet6"; }

}  // namespace

std::string postgres_quoted(std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

std::string mariadb_value_sql(const records::ChunkColumn& column, Peer peer) {
  const std::string quoted = mysql::quote_identifier(column.name);
  const output::ColumnInfo info = classified(column);
  // A text column's value in one character set, so its hash does not depend on the column's.
  const bool text = column.collation_id != 0 && column.collation_id != 63;
  if (peer == Peer::mariadb) return text ? fmt::format("CONVERT({} USING utf8mb4)", quoted) : quoted;
  switch (info.kind) {
    case ValueKind::float32: return float_text(kMariadbSteps, fmt::format("LOWER(CAST({} AS DOUBLE))", quoted));
    case ValueKind::float64: return float_text(kMariadbSteps, fmt::format("LOWER({})", quoted));
    // BIN takes an integer: +0 makes the BIT one (its bytes otherwise).
    case ValueKind::bit: return fmt::format("LPAD(BIN({}+0),{},'0')", quoted, parameter_of(info.type, 1));
    case ValueKind::year: return fmt::format("({}+0)", quoted);
    case ValueKind::time: return fmt::format("CAST(TIME_TO_SEC({})*1000000 AS SIGNED)", quoted);
    case ValueKind::binary:
    case ValueKind::geometry: return fmt::format("LOWER(HEX({}))", quoted);
    default: break;
  }
  return text ? fmt::format("CONVERT({} USING utf8mb4)", quoted) : quoted;
}

Result<void> postgres_comparable(const records::ChunkColumn& column) {
  if (classified(column).kind == ValueKind::vector)
    return fail(Errc::unsupported, fmt::format("column {} ({}): a VECTOR has no text that MariaDB and PostgreSQL "
                                               "both write; leave its table out of --tables",
                                               column.name, column.type));
  return {};
}

std::string postgres_value_sql(const records::ChunkColumn& column) {
  const std::string quoted = apply::quote_name(apply::Dialect::postgres, column.name);
  const output::ColumnInfo info = classified(column);
  switch (info.kind) {
    case ValueKind::float32: return float_text(kPostgresSteps, fmt::format("lower({}::float8::text)", quoted));
    case ValueKind::float64: return float_text(kPostgresSteps, fmt::format("lower({}::text)", quoted));
    case ValueKind::time: return postgres_microseconds(quoted) + "::text";
    case ValueKind::datetime: return postgres_datetime(quoted, parameter_of(info.type, 0));
    case ValueKind::timestamp:
      return postgres_datetime(fmt::format("({} AT TIME ZONE 'UTC')", quoted), parameter_of(info.type, 0));
    case ValueKind::binary:
    case ValueKind::geometry: return fmt::format("encode({},'hex')", quoted);
    default: break;
  }
  if (is_inet(info)) return fmt::format("host({})", quoted);
  return quoted + "::text";
}

std::string postgres_key_sql(const records::ChunkColumn& column) {
  const std::string quoted = apply::quote_name(apply::Dialect::postgres, column.name);
  const output::ColumnInfo info = classified(column);
  if (info.kind != ValueKind::time) return postgres_value_sql(column);
  // MariaDB's TIME text: [-]HH:MM:SS[.f], the hours at least two digits (up to 838).
  const std::string us = fmt::format("abs({})", postgres_microseconds(quoted));
  const auto two_digits = [](const std::string& number) {
    return fmt::format("CASE WHEN {0}<10 THEN '0' ELSE '' END||({0})::text", number);
  };
  std::string sql = fmt::format("CASE WHEN {}<0 THEN '-' ELSE '' END||{}||':'||{}||':'||{}",
                                postgres_microseconds(quoted), two_digits(us + "/3600000000"),
                                two_digits(us + "/60000000%60"), two_digits(us + "/1000000%60"));
  const unsigned digits = std::min(parameter_of(info.type, 0), 6U);
  if (digits > 0) sql += fmt::format("||'.'||left(lpad(({}%1000000)::text,6,'0'),{})", us, digits);
  return sql;
}

bool postgres_key_is_hex(const records::ChunkColumn& column) {
  const ValueKind kind = classified(column).kind;
  return kind == ValueKind::binary || kind == ValueKind::geometry;
}

bool canonical_is_number(const records::ChunkColumn& column) {
  switch (classified(column).kind) {
    case ValueKind::integer:
    case ValueKind::year:
    case ValueKind::float32:
    case ValueKind::float64: return true;
    default: return false;
  }
}

}  // namespace cdc::verify
