#include "column/column_type.h"

namespace cdc {

std::string_view column_type_name(ColumnType type) noexcept {
  switch (type) {
    case ColumnType::decimal: return "DECIMAL";
    case ColumnType::tiny: return "TINY";
    case ColumnType::short_int: return "SHORT";
    case ColumnType::long_int: return "LONG";
    case ColumnType::float_type: return "FLOAT";
    case ColumnType::double_type: return "DOUBLE";
    case ColumnType::null_type: return "NULL";
    case ColumnType::timestamp: return "TIMESTAMP";
    case ColumnType::longlong: return "LONGLONG";
    case ColumnType::int24: return "INT24";
    case ColumnType::date: return "DATE";
    case ColumnType::time: return "TIME";
    case ColumnType::datetime: return "DATETIME";
    case ColumnType::year: return "YEAR";
    case ColumnType::newdate: return "NEWDATE";
    case ColumnType::varchar: return "VARCHAR";
    case ColumnType::bit: return "BIT";
    case ColumnType::timestamp2: return "TIMESTAMP2";
    case ColumnType::datetime2: return "DATETIME2";
    case ColumnType::time2: return "TIME2";
    case ColumnType::typed_array: return "TYPED_ARRAY";
    case ColumnType::vector: return "VECTOR";
    case ColumnType::invalid: return "INVALID";
    case ColumnType::boolean: return "BOOL";
    case ColumnType::json: return "JSON";
    case ColumnType::newdecimal: return "NEWDECIMAL";
    case ColumnType::enum_type: return "ENUM";
    case ColumnType::set: return "SET";
    case ColumnType::tiny_blob: return "TINY_BLOB";
    case ColumnType::medium_blob: return "MEDIUM_BLOB";
    case ColumnType::long_blob: return "LONG_BLOB";
    case ColumnType::blob: return "BLOB";
    case ColumnType::var_string: return "VAR_STRING";
    case ColumnType::string: return "STRING";
    case ColumnType::geometry: return "GEOMETRY";
  }
  return "UNKNOWN";
}

}  // namespace cdc
