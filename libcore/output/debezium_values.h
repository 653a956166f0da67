#pragma once

// Debezium's value of each column type (FORMATS 2.7, 2.8; cdc-formats(7), Values): what kind of
// conversion a column's type text asks for, its Kafka Connect schema, and the conversion of
// a canonical value (cdc-ndjson(5), VALUES) into Debezium's.

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ndjson/writer.h"
#include "output/debezium.h"
#include "output/type_text.h"
#include "output/value_text.h"
#include "util/result.h"

namespace cdc::output {

// How a column's canonical value (cdc-ndjson(5), VALUES) becomes Debezium's.
enum class Kind : std::uint8_t {
  verbatim,          // integers, FLOAT, DOUBLE, text, YEAR, VECTOR: the same JSON
  bigint_unsigned,   // int64 wrapping at 2^63, or a Decimal of scale 0
  decimal,           // "12.50": Decimal bytes, a string or a double
  enumeration,       // "small", or a 1-based index without ENUM metadata
  set,               // "a,c", or a bitmask
  json,              // a MySQL JSON value: its text, as a string
  date,              // "YYYY-MM-DD"
  time,              // "[-]HH:MM:SS[.f]"
  datetime,          // "YYYY-MM-DD HH:MM:SS[.f]"
  timestamp,         // "YYYY-MM-DD HH:MM:SS[.f]Z"
  binary,            // base64
  bit1,              // BIT(1): a boolean
  bits,              // BIT(n): little-endian bytes
  geometry,          // base64 of SRID + WKB: {"wkb","srid"}
  point,             // the same: {"x","y","wkb","srid"}
};

struct Column {
  std::string quoted_key;  // "\"name\":"
  std::string name;
  Kind kind = Kind::verbatim;
  bool nullable = true;
  std::uint32_t precision = 0;  // DECIMAL precision; BIT length
  std::uint32_t scale = 0;      // DECIMAL scale; temporal fsp
  std::vector<std::string> labels;  // ENUM/SET members
  std::string schema;               // the field's Connect schema, "field" included
};

class DebeziumValues {
 public:
  DebeziumValues(const DebeziumOptions& options, bool flink) : options_(options), flink_(flink) {}

  // The column's Kind and, with schemas.enable, its Connect schema; column's name,
  // nullable and labels are set already.
  void describe_column(const TypeText& type, Column& column) const;
  // One value, its raw JSON text from a canonical row image; Errc::corrupt_input naming
  // the column for a value that is not of its type.
  [[nodiscard]] Result<void> write_value(const Column& column, std::string_view raw, ndjson::Writer& out);

 private:
  Result<void> write_decimal_value(std::string_view digits, bool numeric_schema, ndjson::Writer& out);
  Result<void> write_label(const Column& column, std::string_view raw, ndjson::Writer& out);
  Result<void> write_date(const Column& column, std::string_view raw, ndjson::Writer& out);
  Result<void> write_datetime(const Column& column, std::string_view raw, ndjson::Writer& out);
  Result<void> write_timestamp(const Column& column, std::string_view raw, ndjson::Writer& out);
  Result<void> write_binary(const Column& column, std::string_view raw, ndjson::Writer& out);
  Result<void> write_geometry(const Column& column, std::string_view raw, ndjson::Writer& out);

  DebeziumOptions options_;
  bool flink_;
  // Reused per value.
  std::string text_;
  std::string bytes_;
  std::vector<std::uint8_t> magnitude_;
};

}  // namespace cdc::output
