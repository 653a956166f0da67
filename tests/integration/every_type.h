#pragma once

// The column types and edge values both round-trip tests use (binlog_roundtrip_test: the binlog
// decoder against the server's own text; snapshot_roundtrip_test: cdc-snapshot against the
// binlog decoder), so that a type added here is covered by both. Each test adds its own
// columns after these (GEOMETRY last in both: its charset slot shifts later string columns).

#include <string>
#include <vector>

namespace cdc::test {

// How a column's expected value is derived from what the server returns.
enum class Expect { number, year, text, utc_timestamp, hex_of_base64, float_value, double_value };

struct TypeColumn {
  std::string name;
  std::string definition;
  std::string select;  // expression returning the server's text for the value
  Expect expect;
};

// id (INT PRIMARY KEY) first, then one column per type and charset.
inline const std::vector<TypeColumn>& every_type_columns() {
  static const std::vector<TypeColumn> kColumns = {
      {"id", "INT NOT NULL PRIMARY KEY", "id", Expect::number},
      {"ti", "TINYINT", "ti", Expect::number},
      {"tiu", "TINYINT UNSIGNED", "tiu", Expect::number},
      {"si", "SMALLINT", "si", Expect::number},
      {"siu", "SMALLINT UNSIGNED", "siu", Expect::number},
      {"mi", "MEDIUMINT", "mi", Expect::number},
      {"miu", "MEDIUMINT UNSIGNED", "miu", Expect::number},
      {"i", "INT", "i", Expect::number},
      {"iu", "INT UNSIGNED", "iu", Expect::number},
      {"bi", "BIGINT", "bi", Expect::number},
      {"biu", "BIGINT UNSIGNED", "biu", Expect::number},
      {"f", "FLOAT", "f", Expect::float_value},
      {"d", "DOUBLE", "d", Expect::double_value},
      {"dec1", "DECIMAL(10,2)", "dec1", Expect::text},
      {"dec2", "DECIMAL(65,30)", "dec2", Expect::text},
      {"dec3", "DECIMAL(5,0)", "dec3", Expect::text},
      {"dt", "DATE", "dt", Expect::text},
      {"tm", "TIME", "tm", Expect::text},
      {"tm6", "TIME(6)", "tm6", Expect::text},
      {"dtm", "DATETIME", "dtm", Expect::text},
      {"dtm3", "DATETIME(3)", "dtm3", Expect::text},
      {"dtm6", "DATETIME(6)", "dtm6", Expect::text},
      {"ts", "TIMESTAMP NULL", "ts", Expect::utc_timestamp},
      {"ts6", "TIMESTAMP(6) NULL", "ts6", Expect::utc_timestamp},
      {"yr", "YEAR", "yr", Expect::year},
      {"ch", "CHAR(10) CHARACTER SET utf8mb4", "ch", Expect::text},
      {"vc", "VARCHAR(300) CHARACTER SET utf8mb4", "vc", Expect::text},
      {"l1", "VARCHAR(20) CHARACTER SET latin1", "l1", Expect::text},
      {"u2", "VARCHAR(20) CHARACTER SET ucs2", "u2", Expect::text},
      {"u16", "CHAR(5) CHARACTER SET utf16", "u16", Expect::text},
      {"u32", "VARCHAR(5) CHARACTER SET utf32", "u32", Expect::text},
      {"tx", "TEXT CHARACTER SET utf8mb4", "tx", Expect::text},
      {"bn", "BINARY(4)", "HEX(bn)", Expect::hex_of_base64},
      {"vb", "VARBINARY(20)", "HEX(vb)", Expect::hex_of_base64},
      {"bl", "BLOB", "HEX(bl)", Expect::hex_of_base64},
      {"bt1", "BIT(1)", "CAST(bt1 AS UNSIGNED)", Expect::number},
      {"bt9", "BIT(9)", "CAST(bt9 AS UNSIGNED)", Expect::number},
      {"bt64", "BIT(64)", "CAST(bt64 AS UNSIGNED)", Expect::number},
      {"en", "ENUM('small','medium','large')", "en", Expect::text},
      {"st", "SET('a','b','c','d')", "st", Expect::text},
      {"js", "JSON", "js", Expect::text},
  };
  return kColumns;
}

// Four rows of values for every_type_columns() after id, as SQL (cf. ../shared/fixtures/sql):
// limits of every integer, zero dates, DECIMAL(65,30), fractional seconds, negative TIME,
// latin1/ucs2 text, empty SET; the third is all NULL.
inline const std::vector<std::string>& every_type_values() {
  static const std::vector<std::string> kValues = {
      "-128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808, "
      "18446744073709551615, 3.1415927, 2.718281828459045, -12345678.90, "
      "'99999999999999999999999999999999999.999999999999999999999999999999', 99999, "
      "'1000-01-01', '-838:59:59', '-00:00:00.000001', '1000-01-01 00:00:00', '2024-09-04 10:52:12.189', "
      "'9999-12-31 23:59:59.999999', '1970-01-01 00:00:01', '2038-01-19 03:14:07.999999', 1901, "
      "'abc', REPEAT('x', 300), 'caf\xc3\xa9 \xc3\xbc', '\xc3\xa9t\xc3\xa9', 'h\xf0\x9f\x98\x80', 'z\xc3\xbc', "
      "'line1\\nline2 \"q\" \\\\ tab\\t', x'00ff0000', x'', x'89504e470d0a1a0a', b'1', b'100000001', "
      "b'1111111111111111111111111111111111111111111111111111111111111111', 'large', '', "
      "'{\"a\": [1, 2.5, null, true], \"b\": {\"c\": \"d\"}}'",
      "127, 0, 32767, 0, 8388607, 0, 2147483647, 0, 9223372036854775807, 0, -0.5, -1e300, 0.00, "
      "'-0.000000000000000000000000000001', -99999, '0000-00-00', '838:59:59', '00:00:00', '0000-00-00 00:00:00', "
      "'0000-00-00 00:00:00.000', '2000-02-29 12:00:00.5', NULL, '2000-01-01 00:00:00.000001', 2155, "
      "'', '', '', '', '', '', '', x'01', x'ff', x'', b'0', b'0', b'0', 'small', 'a,b,c,d', '[]'",
      "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
      "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL",
      "0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1e-38, 5e-324, 0.01, 0, 0, '2024-02-29', '12:34:56', '-12:34:56.5', "
      "'2024-02-29 23:59:59', '2024-02-29 23:59:59.999', '2024-02-29 23:59:59.000001', '2024-02-29 23:59:59', "
      "'2024-02-29 23:59:59.123456', 0, 'pad  ', 'trailing  ', '\xc3\x80\xc3\xbf', '\xe4\xb8\xad', "
      "'\xc3\xb6', '\xf0\x9f\x8e\x89', 'emoji \xf0\x9f\x8e\x89', x'00000000', x'0000', x'00', b'1', b'111111111', "
      "b'1000000000000000000000000000000000000000000000000000000000000000', 'medium', 'b,d', '\"just a string\"'",
  };
  return kValues;
}

}  // namespace cdc::test
