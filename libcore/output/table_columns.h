#pragma once

// The tables a converter has been told about by "table" lines (cdc-ndjson(5), table), with
// each column's type text read once into what Canal and Maxwell need per value: its kind,
// integer width and signedness, ENUM/SET members, and its name as the canonical lines quote it
// (the row objects are walked as raw text, so a member is matched by its quoted key).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <simdjson.h>

#include "util/result.h"

namespace cdc::output {

// How a column's canonical value (cdc-ndjson(5), VALUES) is to be read.
enum class ValueKind : std::uint8_t {
  integer,      // TINYINT ... BIGINT [UNSIGNED]: a number
  float32,      // FLOAT: a number, the shortest float text
  float64,      // DOUBLE, REAL: a number
  decimal,      // DECIMAL, NUMERIC: a string with the scale's digits
  bit,          // BIT(n): a number
  year,         // YEAR: a number
  date,         // "YYYY-MM-DD"
  time,         // "[-]HH:MM:SS[.f]"
  datetime,     // "YYYY-MM-DD HH:MM:SS[.f]"
  timestamp,    // the same in UTC with a "Z" (none on the zero value)
  text,         // CHAR, VARCHAR, TEXT: a string
  binary,       // BINARY, VARBINARY, BLOB: base64
  enumeration,  // ENUM: the member, or its index number without the members in the binlog
  set,          // SET: "a,c", or its bitmask number
  json,         // MySQL JSON: the value itself (MariaDB's JSON is a LONGTEXT: text)
  geometry,     // base64 of SRID + WKB
  vector,       // MySQL 9 VECTOR: an array of numbers
  other,        // a type this build does not know: passed on as it is
};

struct ColumnInfo {
  std::string name;
  std::string quoted_name;  // as ndjson::quoted() writes it: "\"name\""
  std::string member_key;   // quoted_name and ':', for Writer::raw_key()
  std::string key_member;   // Maxwell's Kafka key member: "\"pk.<name lower-cased>\":"
  std::string type;         // the table line's type text: "int(11) unsigned"
  std::string base_type;    // its leading word: "int", "varchar", "enum"
  ValueKind kind = ValueKind::other;
  int integer_bits = 0;  // 8, 16, 24, 32 or 64 for integer columns
  bool is_unsigned = false;
  std::vector<std::string> values;  // ENUM/SET members in definition order
};

struct TableInfo {
  std::string db;
  std::string table;
  std::string db_table_members;  // "database":"..","table":"..", as Maxwell's messages start
  std::vector<ColumnInfo> columns;
  std::optional<std::vector<std::string>> key;  // primary key names; nullopt: none or not known
  std::vector<std::size_t> key_columns;         // their indexes in columns

  // The index of the column whose quoted name is quoted_name; hint is where it is expected
  // (the row objects list the columns in table order). nullopt for a name the table does not have.
  [[nodiscard]] std::optional<std::size_t> find(std::string_view quoted_name, std::size_t hint) const noexcept;
};

// Reads a column's type text ("int(10) unsigned", "enum('a','b')") and its charset into
// kind, width and signedness.
void classify_column(ColumnInfo& column, const std::optional<std::string>& charset);

class TableCatalog {
 public:
  // A "table" line: adds or replaces the table's description (a repeated line is fine).
  [[nodiscard]] Result<const TableInfo*> add(simdjson::dom::object table_line);
  // The description of db.table, or Errc::corrupt_input when no table line came before.
  [[nodiscard]] Result<const TableInfo*> find(std::string_view db, std::string_view table) const;

 private:
  std::unordered_map<std::string, TableInfo> tables_;  // by "db" '\0' "table"
  mutable std::string lookup_key_;
};

}  // namespace cdc::output
