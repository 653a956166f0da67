#pragma once

// Decoders for the fixed-size ("scalar") values of a row image: integers, FLOAT/DOUBLE,
// DECIMAL, BIT and the temporal types.
//
// Each function reads exactly one value from `in`, which is positioned at the value's first
// byte, and writes it as one JSON value into `out` (the caller has already written the key).
// NULL never reaches these functions: the caller handles it through the row's null bitmap.
//
// Errors: a truncated value fails `in` with the type's name ("DATETIME2: need 8 bytes, have
// 7 at offset ..."); a value the server cannot have written (month 13, a DECIMAL digit group
// above 999999999, an fsp of 7) fails `in` through fail(), pointing at the value's first
// byte. After a failure `out` may hold a partial value or none; the caller checks in.ok()
// and abandons the record. Nothing here allocates on the success path: text is built in
// stack buffers and handed to the writer.
//
// Output, as cdc-ndjson(5) "VALUES" documents it, so a binlog row matches a SELECT of the same row:
//   integers      number with exact digits (BIGINT UNSIGNED up to 18446744073709551615)
//   FLOAT/DOUBLE  number, shortest text that round-trips the float/double
//   DECIMAL(p,s)  string with exactly s fraction digits: "12.50", "-0.01", "0"
//   BIT(n)        number (unsigned, up to 64 bits)
//   YEAR          number: 0 or 1901..2155
//   DATE          "YYYY-MM-DD"; zero dates and zero parts as written ("0000-00-00")
//   TIME(fsp)     "[-]HH:MM:SS[.f]", hours with at least two digits ("-838:59:59")
//   DATETIME(fsp) "YYYY-MM-DD HH:MM:SS[.f]"; zero dates as written
//   TIMESTAMP     UTC "YYYY-MM-DD HH:MM:SS[.f]Z"; the zero timestamp (0 seconds) is
//                 "0000-00-00 00:00:00[.000000]" without the Z: it is not an instant
// where [.f] has exactly fsp digits and is absent for fsp 0.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "column/column_type.h"
#include "ndjson/writer.h"
#include "util/byte_reader.h"

namespace cdc::rowimage {

// DECIMAL limits: 65 digits on both servers; a scale of up to 30 on MySQL
// (include/decimal.h DECIMAL_MAX_SCALE) and 38 on MariaDB (DECIMAL(38,38) is a valid column).
inline constexpr std::uint8_t kMaxDecimalPrecision = 65;
inline constexpr std::uint8_t kMaxDecimalScale = 38;
// Fractional-second digits of TIME2/DATETIME2/TIMESTAMP2 (DATETIME_MAX_DECIMALS).
inline constexpr std::uint8_t kMaxFsp = 6;

// TINYINT (tiny, 1 byte), SMALLINT (short_int, 2), MEDIUMINT (int24, 3), INT (long_int, 4),
// BIGINT (longlong, 8): little-endian, two's complement when signed. Any other type fails.
void decode_integer(ByteReader& in, ColumnType type, bool is_unsigned, ndjson::Writer& out);

// FLOAT: 4-byte IEEE 754 single, little-endian.
void decode_float(ByteReader& in, ndjson::Writer& out);
// DOUBLE: 8-byte IEEE 754 double, little-endian.
void decode_double(ByteReader& in, ndjson::Writer& out);

// DECIMAL(precision, scale) in the server's binary form (strings/decimal.c decimal2bin).
// The table map's meta for it is (precision << 8) | scale.
void decode_newdecimal(ByteReader& in, std::uint8_t precision, std::uint8_t scale,
                       ndjson::Writer& out);

// The one digit decoder of the binary DECIMAL, for the row values above, the row scan's value
// sizes and JSON's opaque DECIMAL (json_binary.cpp).
// Bytes that hold a group of 0..9 decimal digits (strings/decimal.c dig2bytes).
inline constexpr std::array<std::uint8_t, 10> kDecimalGroupBytes = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
// How many bytes DECIMAL(precision, scale) takes (decimal_bin_size): 9 digits per 4 bytes,
// partial groups by kDecimalGroupBytes. scale <= precision.
[[nodiscard]] constexpr std::size_t decimal_binary_size(unsigned precision, unsigned scale) noexcept {
  const unsigned integer = precision - scale;
  return integer / 9 * std::size_t{4} + kDecimalGroupBytes[integer % 9] + scale / 9 * std::size_t{4} +
         kDecimalGroupBytes[scale % 9];
}
// Room for any DECIMAL's text: sign, 65 digits, point, and 8 bytes the digit writer may write
// past the text's end.
using DecimalTextBuffer = std::array<char, 1 + kMaxDecimalPrecision + 1 + kMaxDecimalScale + 8>;
struct DecimalText {
  // "[-]int[.frac]", as decimal2string prints it: the integer part without leading zeros but
  // at least "0", exactly `scale` fraction digits; '-' whenever the sign bit says negative,
  // also when every digit is 0 (see is_zero). Empty when a digit group is bad.
  std::string_view text;
  bool is_zero = false;  // every digit is 0
  // When text is empty: the first digit group holding more than bad_width digits, which
  // bin2decimal rejects (E_DEC_BAD_NUM).
  std::uint32_t bad_group = 0;
  unsigned bad_width = 0;
};
// bytes: decimal_binary_size(precision, scale) of them, with 1 <= precision <= 65 and
// scale <= min(precision, 30). The text points into buffer.
[[nodiscard]] DecimalText decode_decimal_text(const std::uint8_t* bytes, unsigned precision, unsigned scale,
                                              DecimalTextBuffer& buffer);

// The pre-5.0 DECIMAL (MYSQL_TYPE_DECIMAL, type 0). Always fails: its length is not in the
// binlog (see the definition).
void decode_old_decimal(ByteReader& in, std::uint16_t meta, ndjson::Writer& out);

// BIT(n); meta as the table map gives it: (n / 8) << 8 | (n % 8).
void decode_bit(ByteReader& in, std::uint16_t meta, ndjson::Writer& out);

// YEAR: 1 byte, 0 or the year minus 1900.
void decode_year(ByteReader& in, ndjson::Writer& out);

// DATE (MYSQL_TYPE_DATE, Field_newdate): 3 bytes little-endian, day | month << 5 | year << 9.
void decode_date(ByteReader& in, ndjson::Writer& out);

// Old TIME (type 11, before 5.6.4): 3 bytes little-endian signed integer [-]HHMMSS.
void decode_time(ByteReader& in, ndjson::Writer& out);
// TIME2(fsp) (type 19): 3 + (fsp + 1) / 2 bytes big-endian, offset-binary.
void decode_time2(ByteReader& in, std::uint8_t fsp, ndjson::Writer& out);

// Old DATETIME (type 12): 8 bytes little-endian integer YYYYMMDDhhmmss.
void decode_datetime(ByteReader& in, ndjson::Writer& out);
// DATETIME2(fsp) (type 18): 5 + (fsp + 1) / 2 bytes big-endian.
void decode_datetime2(ByteReader& in, std::uint8_t fsp, ndjson::Writer& out);

// Old TIMESTAMP (type 7): 4 bytes little-endian seconds since 1970-01-01 00:00:00 UTC.
void decode_timestamp(ByteReader& in, ndjson::Writer& out);
// TIMESTAMP2(fsp) (type 17): 4 bytes big-endian seconds, then (fsp + 1) / 2 fraction bytes.
void decode_timestamp2(ByteReader& in, std::uint8_t fsp, ndjson::Writer& out);

}  // namespace cdc::rowimage
