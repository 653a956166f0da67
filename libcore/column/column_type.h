#pragma once

#include <cstdint>
#include <string_view>

// The column vocabulary every layer shares: binlog/ decodes it from TABLE_MAP, rowimage/ decodes
// values by it, schema/ and snapshot/ fill it from the catalog. A leaf below all of them (it
// includes nothing of libcore), so they depend on it one way; in namespace cdc, as util's
// Result is, because every layer names it.
namespace cdc {

// Column types as the server writes them in TABLE_MAP events (include/field_types.h,
// enum_field_types). The numbers are on the wire.
enum class ColumnType : std::uint8_t {
  decimal = 0,        // MYSQL_TYPE_DECIMAL (old, pre-5.0 DECIMAL)
  tiny = 1,           // MYSQL_TYPE_TINY
  short_int = 2,      // MYSQL_TYPE_SHORT
  long_int = 3,       // MYSQL_TYPE_LONG
  float_type = 4,     // MYSQL_TYPE_FLOAT
  double_type = 5,    // MYSQL_TYPE_DOUBLE
  null_type = 6,      // MYSQL_TYPE_NULL
  timestamp = 7,      // MYSQL_TYPE_TIMESTAMP (pre-5.6.4, no fraction)
  longlong = 8,       // MYSQL_TYPE_LONGLONG
  int24 = 9,          // MYSQL_TYPE_INT24
  date = 10,          // MYSQL_TYPE_DATE
  time = 11,          // MYSQL_TYPE_TIME (pre-5.6.4)
  datetime = 12,      // MYSQL_TYPE_DATETIME (pre-5.6.4)
  year = 13,          // MYSQL_TYPE_YEAR
  newdate = 14,       // MYSQL_TYPE_NEWDATE (never in binlogs; kept for completeness)
  varchar = 15,       // MYSQL_TYPE_VARCHAR
  bit = 16,           // MYSQL_TYPE_BIT
  timestamp2 = 17,    // MYSQL_TYPE_TIMESTAMP2
  datetime2 = 18,     // MYSQL_TYPE_DATETIME2
  time2 = 19,         // MYSQL_TYPE_TIME2
  typed_array = 20,   // MYSQL_TYPE_TYPED_ARRAY (multi-valued index internals; not in row images)
  vector = 242,       // MYSQL_TYPE_VECTOR (MySQL 9.0+)
  invalid = 243,      // MYSQL_TYPE_INVALID
  boolean = 244,      // MYSQL_TYPE_BOOL (placeholder, never on the wire)
  json = 245,         // MYSQL_TYPE_JSON (MySQL binary JSON; MariaDB logs JSON as blob)
  newdecimal = 246,   // MYSQL_TYPE_NEWDECIMAL
  enum_type = 247,    // MYSQL_TYPE_ENUM (logged as string with real type in metadata)
  set = 248,          // MYSQL_TYPE_SET (likewise)
  tiny_blob = 249,    // MYSQL_TYPE_TINY_BLOB
  medium_blob = 250,  // MYSQL_TYPE_MEDIUM_BLOB
  long_blob = 251,    // MYSQL_TYPE_LONG_BLOB
  blob = 252,         // MYSQL_TYPE_BLOB (all BLOB/TEXT sizes; metadata has the length width)
  var_string = 253,   // MYSQL_TYPE_VAR_STRING
  string = 254,       // MYSQL_TYPE_STRING (CHAR, BINARY, and ENUM/SET via metadata)
  geometry = 255,     // MYSQL_TYPE_GEOMETRY
};

[[nodiscard]] std::string_view column_type_name(ColumnType type) noexcept;

// MariaDB's fixed-size binary types (sql/sql_type_fixedbin.h): INET4 (10.10+), INET6 (10.5+)
// and UUID (10.7+). The binary log writes them as BINARY(4) and BINARY(16), and no TABLE_MAP
// metadata names them, so only the catalog (information_schema DATA_TYPE) tells them from a
// BINARY; rowimage/fixed_binary_values.h writes them as the server does.
enum class FixedBinaryType : std::uint8_t { none, inet4, inet6, uuid };

// One column of a table as the TABLE_MAP event (and its optional metadata) describes it.
// `type` is the real type: for MYSQL_TYPE_STRING columns whose metadata says ENUM or SET,
// the table-map decoder stores enum_type / set and the real length in `meta`.
struct Column {
  ColumnType type = ColumnType::null_type;
  // Type metadata from TABLE_MAP, as the server's Field::save_field_metadata() writes it:
  //   float/double: pack length; varchar: max byte length; bit: (bytes << 8) | bits;
  //   newdecimal: (precision << 8) | scale; blob/geometry/json: length-prefix width;
  //   string/enum/set: (real type << 8) | length, already untangled into type and this field;
  //   timestamp2/datetime2/time2: fsp (0-6).
  std::uint16_t meta = 0;
  bool is_unsigned = false;
  bool nullable = true;
  // Collation id of character columns (0 when unknown); 63 is binary.
  std::uint16_t collation = 0;
  // A `string` column that is one of MariaDB's INET4/INET6/UUID, as the catalog says
  // (schema::apply_table_schema); none when it is a BINARY or nothing says otherwise.
  FixedBinaryType fixed_binary = FixedBinaryType::none;
};

}  // namespace cdc
