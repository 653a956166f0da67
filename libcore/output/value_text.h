#pragma once

// Value renderings that Canal and Maxwell share, each the text a Java tool prints for the
// value: Double/Float.toString, BigDecimal.toString, ISO-8859-1 bytes as characters, MySQL's
// JSON text, JTS's WKT. Each appends to a reused string (no allocation once it has grown).

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "output/table_columns.h"

namespace cdc::output {

// Text of a JSON string that needs no unescaping (digits, dates, base64): without the quotes.
inline std::optional<std::string_view> plain_string(std::string_view raw) {
  if (raw.size() < 2 || raw.front() != '"' || raw.back() != '"') return std::nullopt;
  raw = raw.substr(1, raw.size() - 2);
  if (raw.find('\\') != std::string_view::npos) return std::nullopt;
  return raw;
}

// A whole number's text (integer or floating) into value; false unless all of text is one.
template <typename T>
bool parse_number(std::string_view text, T& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

// The content of a JSON string as written by ndjson::Writer (raw, quotes included), unescaped
// into out. false when raw is not a JSON string.
[[nodiscard]] bool unescape_json_string(std::string_view raw, std::string& out);

// Java's Double.toString / Float.toString (JDK 19 and later: the shortest digits that read
// back): "1.0", "-0.5", "3.1415927", "1.0E10", "4.9E-324". value_text is the canonical
// number's text (the shortest text of the double or float); false when it is not a number.
[[nodiscard]] bool append_java_double(std::string_view value_text, std::string& out);
[[nodiscard]] bool append_java_float(std::string_view value_text, std::string& out);

// Java's BigDecimal.toString of a plain decimal ("19.90", "-0.000000000000000000000000000001"):
// the same text, except that a value whose adjusted exponent is below -6 is written in
// scientific notation ("-1E-30", "0E-30"), as Jackson writes a BigDecimal. false when plain is
// not a decimal number.
[[nodiscard]] bool append_java_big_decimal(std::string_view plain, std::string& out);

// Each byte as the character U+0000..U+00FF (ISO-8859-1), in UTF-8.
void append_latin1_as_utf8(std::string_view bytes, std::string& out);

// A compact JSON value (raw, as the canonical line holds it) as MySQL prints JSON: ", " between
// elements and ": " after keys ({"a": [1, 2]}). false when the text ends inside a string.
[[nodiscard]] bool append_mysql_json_text(std::string_view compact, std::string& out);

// The WKT of a MySQL geometry value (SRID in 4 little-endian bytes, then WKB), as JTS's
// WKTWriter writes it (Maxwell's Geometry.toText()): "POINT (1 2)", "LINESTRING (0 0, 1 1)",
// "MULTIPOINT ((0 0), (1 1))", "POINT EMPTY"; ordinates in plain notation with at most 16
// fraction digits. false when the bytes are not a geometry of the seven OGC types.
[[nodiscard]] bool append_wkt(std::string_view srid_and_wkb, std::string& out);

// The 1-based index of an ENUM member (0 for the empty value an invalid member is stored as),
// nullopt when the label is not one of values (or values is empty: the members are not known).
[[nodiscard]] std::optional<std::uint64_t> enum_index(const ColumnInfo& column, std::string_view label);
// The bitmask of a SET value "a,c" (bit i for member i); nullopt when a member is not known.
[[nodiscard]] std::optional<std::uint64_t> set_mask(const ColumnInfo& column, std::string_view members);

// A Kafka topic name for a table: db "." table, every character outside [A-Za-z0-9._-]
// replaced by '_' (the characters Kafka accepts); only db when table is empty.
void append_topic_name(std::string_view db, std::string_view table, std::string& out);

// A UUID-shaped text (8-4-4-4-12 lowercase hex) derived from seed by a fixed hash: the same
// seed gives the same text in every run.
void append_uuid_from(std::string_view seed, std::string& out);

// A DATE, DATETIME or TIMESTAMP ("YYYY-MM-DD...") whose year, month or day is zero: the zero
// value "0000-00-00..." and the dates MariaDB and MySQL store without NO_ZERO_IN_DATE.
[[nodiscard]] inline bool has_zero_date_part(std::string_view text) noexcept {
  return text.size() >= 10 && (text.substr(0, 4) == "0000" || text.substr(5, 2) == "00" || text.substr(8, 2) == "00");
}

}  // namespace cdc::output
