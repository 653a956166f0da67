// Numeric row values: integers, FLOAT/DOUBLE, DECIMAL, BIT. See scalar_values.h.

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "rowimage/scalar_values.h"
#include "rowimage/value_failure.h"

namespace cdc::rowimage {

namespace {

// Writes `value` as exactly `width` decimal digits ending just before `end`, zero-padded on
// the left; returns the first written position. `value` must fit in `width` digits.
char* put_digits_backwards(char* end, std::uint32_t value, unsigned width) {
  for (unsigned i = 0; i < width; ++i) {
    *--end = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  return end;
}

// strings/decimal.c: how many bytes hold a group of 0..9 decimal digits.
constexpr std::array<std::uint8_t, 10> kDigitGroupBytes = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
constexpr std::array<std::uint32_t, 10> kPowersOf10 = {
    1, 10, 100, 1'000, 10'000, 100'000, 1'000'000, 10'000'000, 100'000'000, 1'000'000'000};
constexpr unsigned kDigitsPerGroup = 9;

}  // namespace

void decode_integer(ByteReader& in, ColumnType type, bool is_unsigned, ndjson::Writer& out) {
  std::size_t width = 0;
  std::string_view what;
  switch (type) {
    case ColumnType::tiny: width = 1; what = "TINYINT"; break;
    case ColumnType::short_int: width = 2; what = "SMALLINT"; break;
    case ColumnType::int24: width = 3; what = "MEDIUMINT"; break;
    case ColumnType::long_int: width = 4; what = "INT"; break;
    case ColumnType::longlong: width = 8; what = "BIGINT"; break;
    default:
      fail_at(in, in.offset(), "column type {} ({}) is not an integer type", column_type_name(type),
              static_cast<unsigned>(type));
      return;
  }
  const std::uint64_t raw = in.uint_le(width, what);
  if (!in.ok()) return;
  if (is_unsigned) {
    out.unsigned_integer(raw);
    return;
  }
  // Sign-extend from width bytes: move the value's sign bit to bit 63, then shift back
  // arithmetically (both are defined for every value in C++20).
  const auto unused_bits = static_cast<unsigned>(64 - 8 * width);
  out.integer(static_cast<std::int64_t>(raw << unused_bits) >> unused_bits);
}

void decode_float(ByteReader& in, ndjson::Writer& out) {
  const auto bits = static_cast<std::uint32_t>(in.uint_le(4, "FLOAT"));
  if (!in.ok()) return;
  // floating(float) prints the float's own shortest form: 0.1f is "0.1".
  out.floating(std::bit_cast<float>(bits));
}

void decode_double(ByteReader& in, ndjson::Writer& out) {
  const std::uint64_t bits = in.uint_le(8, "DOUBLE");
  if (!in.ok()) return;
  out.floating(std::bit_cast<double>(bits));
}

// The binary DECIMAL, as strings/decimal.c decimal2bin writes it and bin2decimal reads it:
//   - the integer part (precision - scale digits) and the fraction (scale digits) are cut
//     into groups of 9 digits, each stored big-endian in 4 bytes; the integer part's
//     leftmost group and the fraction's rightmost group may be partial, holding
//     precision-scale % 9 and scale % 9 digits in kDigitGroupBytes[digits] bytes;
//   - a partial fraction group holds its digits as a number: scale 2 stores .50 as 50;
//   - the top bit of the first byte is flipped (set for non-negative values), and a
//     negative value has every bit inverted, so the bytes sort like the numbers.
// The table map's precision/scale fix the size, so the value carries no length.
void decode_newdecimal(ByteReader& in, std::uint8_t precision, std::uint8_t scale,
                       ndjson::Writer& out) {
  const std::uint64_t start = in.offset();
  if (precision == 0 || precision > kMaxDecimalPrecision || scale > kMaxDecimalScale ||
      scale > precision) {
    fail_at(in, start, "DECIMAL({},{}) is not a valid precision and scale", precision, scale);
    return;
  }
  const unsigned int_digits = static_cast<unsigned>(precision - scale);
  const unsigned int_full = int_digits / kDigitsPerGroup;
  const unsigned int_partial = int_digits % kDigitsPerGroup;
  const unsigned frac_full = scale / kDigitsPerGroup;
  const unsigned frac_partial = scale % kDigitsPerGroup;
  const std::size_t size = kDigitGroupBytes[int_partial] + 4 * std::size_t{int_full} +
                           4 * std::size_t{frac_full} + kDigitGroupBytes[frac_partial];

  ByteReader value = in.sub(size, "DECIMAL");
  if (!in.ok()) return;
  // size >= 1 because precision >= 1, so the first byte exists.
  const bool negative = (value.peek_rest().front() & 0x80U) == 0;

  // Digits with the integer part zero-padded to int_digits, then the fraction; at most
  // 65 + 30 of them, after one slot kept free for a leading "0".
  std::array<char, kMaxDecimalPrecision + kMaxDecimalScale + 1> digits{};
  char* const int_begin = digits.data() + 1;
  char* cursor = int_begin;

  // Reads one group of `width` digits and appends them. The first group read has the sign
  // bit flipped back; a negative value has every bit inverted back. A group holding more
  // than `width` digits is rejected, as bin2decimal rejects it (E_DEC_BAD_NUM).
  bool first_group = true;
  const auto take_group = [&](unsigned width) {
    const std::size_t bytes = kDigitGroupBytes[width];
    std::uint64_t group = value.uint_be(bytes, "DECIMAL");
    if (first_group) {
      group ^= std::uint64_t{0x80} << (8 * (bytes - 1));
      first_group = false;
    }
    if (negative) group ^= (std::uint64_t{1} << (8 * bytes)) - 1;
    if (group >= kPowersOf10[width]) {
      fail_at(in, start, "DECIMAL({},{}) digit group {} has more than {} digits", precision, scale,
              group, width);
      return false;
    }
    cursor += width;
    put_digits_backwards(cursor, static_cast<std::uint32_t>(group), width);
    return true;
  };

  if (int_partial > 0 && !take_group(int_partial)) return;
  for (unsigned i = 0; i < int_full; ++i) {
    if (!take_group(kDigitsPerGroup)) return;
  }
  char* const frac_begin = cursor;
  for (unsigned i = 0; i < frac_full; ++i) {
    if (!take_group(kDigitsPerGroup)) return;
  }
  if (frac_partial > 0 && !take_group(frac_partial)) return;
  char* const frac_end = cursor;

  // Integer part without leading zeros, but at least "0".
  char* int_first = int_begin;
  while (int_first < frac_begin && *int_first == '0') ++int_first;
  const bool is_zero =
      int_first == frac_begin && std::all_of(frac_begin, frac_end, [](char c) { return c == '0'; });
  if (int_first == frac_begin) *--int_first = '0';  // a skipped zero, or the free slot

  // Assemble "[-]int[.frac]" in a second buffer: the point has to go between the parts.
  std::array<char, kMaxDecimalPrecision + kMaxDecimalScale + 3> text{};
  char* p = text.data();
  // All bits of 0.00 inverted would be "-0.00"; a number has one text, so it is "0.00".
  if (negative && !is_zero) *p++ = '-';
  p = std::copy(int_first, frac_begin, p);
  if (frac_end > frac_begin) {
    *p++ = '.';
    p = std::copy(frac_begin, frac_end, p);
  }
  out.string(std::string_view(text.data(), static_cast<std::size_t>(p - text.data())));
}

// MYSQL_TYPE_DECIMAL is the pre-5.0.3 DECIMAL, stored as its ASCII text padded to the
// column's display width (Field_decimal in sql/field.h). A server that still has such a
// table logs its rows (Field::pack copies the text), but the length is not in the binlog:
// Field_decimal writes no table-map metadata, and the server's own calc_field_size
// (libbinlogevents binary_log_funcs.cpp) takes the length from that metadata, i.e. 0.
// mysqlbinlog's log_event_print_value (sql/log_event.cc) has no case for it either ("Don't
// know how to handle column type"). A reader cannot find where the next column starts, so
// such a row cannot be decoded: we fail rather than guess.
void decode_old_decimal(ByteReader& in, std::uint16_t meta, ndjson::Writer& out) {
  (void)out;
  fail_at(in, in.offset(),
          "old DECIMAL (type 0) is not supported in row events: the binlog does not record its "
          "length (meta {}); ALTER the column to a current DECIMAL",
          meta);
}

// BIT(n): ceil(n / 8) bytes, big-endian, the value right-aligned. Field_bit's
// do_save_field_metadata (sql/field.cc) writes two table-map bytes, n % 8 then n / 8, so the
// 16-bit meta is (n / 8) << 8 | n % 8, and calc_field_size (libbinlogevents
// binary_log_funcs.cpp) gives n / 8 + (n % 8 ? 1 : 0) bytes.
void decode_bit(ByteReader& in, std::uint16_t meta, ndjson::Writer& out) {
  const unsigned partial_bits = meta & 0xFFU;
  const unsigned whole_bytes = static_cast<unsigned>(meta >> 8);
  const unsigned bits = whole_bytes * 8 + partial_bits;
  if (partial_bits > 7 || bits == 0 || bits > 64) {
    fail_at(in, in.offset(), "BIT metadata 0x{:04x} ({} bytes + {} bits) is not BIT(1..64)", meta,
            whole_bytes, partial_bits);
    return;
  }
  const std::uint64_t value = in.uint_be(whole_bytes + (partial_bits > 0 ? 1U : 0U), "BIT");
  if (!in.ok()) return;
  out.unsigned_integer(value);
}

}  // namespace cdc::rowimage
