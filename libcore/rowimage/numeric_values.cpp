// Numeric row values: integers, FLOAT/DOUBLE, DECIMAL, BIT. See scalar_values.h.

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include <fmt/format.h>

#include "rowimage/digit_pairs.h"
#include "rowimage/scalar_values.h"
#include "rowimage/value_failure.h"

namespace cdc::rowimage {

namespace {

// The eight digits of value < 10^8 as text in a little-endian word (the first digit in the
// lowest byte), made all at once: each step splits every lane in two, 10^8 into two 4-digit
// halves (32-bit lanes), each into two 2-digit quarters (16-bit lanes), each into two digits
// (bytes). The divisions are multiplications by a reciprocal, exact for these ranges
// (checked for every value below 10^8).
[[gnu::always_inline]] inline std::uint64_t eight_digits_le(std::uint32_t value) {
  const std::uint64_t v = value;
  const std::uint64_t high4 = (v * 109'951'163) >> 40;  // v / 10000
  const std::uint64_t fours = high4 | ((v - high4 * 10'000) << 32);
  const std::uint64_t high2 = ((fours * 10'486) >> 20) & 0x0000'007F'0000'007FU;  // each / 100
  const std::uint64_t twos = high2 | ((fours - high2 * 100) << 16);
  const std::uint64_t tens = ((twos * 103) >> 10) & 0x000F'000F'000F'000FU;  // each / 10
  return (tens | ((twos - tens * 10) << 8)) | 0x3030'3030'3030'3030U;
}

// Bytes put_padded may write past the end it returns.
constexpr std::size_t kPutSlack = 8;
static_assert(std::tuple_size_v<DecimalTextBuffer> >= 1 + kMaxDecimalPrecision + 1 + kMaxDecimalScale + kPutSlack,
              "a DECIMAL's text buffer must leave room for what put_padded writes past the end");

// Writes `value` as exactly `width` (1..9) decimal digits, zero-padded on the left; returns
// the end. `value` must fit in `width` digits. May write kPutSlack bytes past the end.
[[gnu::always_inline]] inline char* put_padded(char* p, std::uint32_t value, unsigned width) {
  if constexpr (std::endian::native == std::endian::little) {
    if (width == 9) {
      *p++ = static_cast<char>('0' + value / 100'000'000);
      value %= 100'000'000;
      width = 8;
    }
    // The leading 8 - width digits are zeros: shift them out, store all 8 bytes.
    const std::uint64_t text = eight_digits_le(value) >> (8 * (8 - width));
    std::memcpy(p, &text, 8);
    return p + width;
  } else {
    char* const end = p + width;
    char* q = end;
    while (q - p >= 2) {
      q -= 2;
      std::memcpy(q, &kDigitPairs[2 * (value % 100)], 2);
      value /= 100;
    }
    if (q != p) *p = static_cast<char>('0' + value);
    return end;
  }
}

constexpr std::array<std::uint32_t, 10> kPowersOf10 = {
    1, 10, 100, 1'000, 10'000, 100'000, 1'000'000, 10'000'000, 100'000'000, 1'000'000'000};
constexpr unsigned kDigitsPerGroup = 9;

// value's digits without leading zeros (0 < value < 10^9). The digit count comes from the
// bit length: bits * 1233 / 4096 is floor(log10(2^bits)), one too many when value is below
// that power of 10.
[[gnu::always_inline]] inline char* put_significant(char* p, std::uint32_t value) {
  const auto guess = static_cast<unsigned>(std::bit_width(value) * 1233) >> 12;  // 0..9
  const unsigned width = guess + 1 - (value < kPowersOf10[guess] ? 1U : 0U);
  return put_padded(p, value, width);
}

// The digit groups of one DECIMAL value, in order, with their stored bits restored: the
// first group's top bit flipped back, and for a negative value every bit inverted back.
class DecimalGroups {
 public:
  DecimalGroups(const std::uint8_t* bytes, bool negative)
      : p_(bytes), invert_(negative ? 0xFFFF'FFFFU : 0U) {}

  // The next group of `width` (1..9) digits.
  [[gnu::always_inline]] std::uint32_t next(unsigned width) {
    const unsigned bytes = kDecimalGroupBytes[width];
    std::uint32_t group = 0;
    switch (bytes) {
      case 4: group = std::uint32_t{p_[0]} << 24 | std::uint32_t{p_[1]} << 16 | std::uint32_t{p_[2]} << 8 | p_[3]; break;
      case 3: group = std::uint32_t{p_[0]} << 16 | std::uint32_t{p_[1]} << 8 | p_[2]; break;
      case 2: group = std::uint32_t{p_[0]} << 8 | p_[1]; break;
      default: group = p_[0]; break;
    }
    p_ += bytes;
    const unsigned unused_bits = 32 - 8 * bytes;
    group ^= ((first_ << 24) ^ invert_) >> unused_bits;
    first_ = 0;
    return group;
  }

 private:
  const std::uint8_t* p_;
  std::uint32_t invert_;
  std::uint32_t first_ = 0x80;  // the sign bit, flipped in the first group only
};

// The binary DECIMAL, as strings/decimal.c decimal2bin writes it and bin2decimal reads it:
//   - the integer part (precision - scale digits) and the fraction (scale digits) are cut
//     into groups of 9 digits, each stored big-endian in 4 bytes; the integer part's
//     leftmost group and the fraction's rightmost group may be partial, holding
//     precision-scale % 9 and scale % 9 digits in kDecimalGroupBytes[digits] bytes;
//   - a partial fraction group holds its digits as a number: scale 2 stores .50 as 50;
//   - the top bit of the first byte is flipped (set for non-negative values), and a
//     negative value has every bit inverted, so the bytes sort like the numbers.
// The precision and scale fix the size, so the value carries no length.
//
// One pass over the groups, integer part (partial group first) then fraction (partial group
// last), writing "[-]int[.frac]" as they come. buffer[0] is kept for the sign, known only once
// every digit is seen. Inlined into decode_newdecimal, the row values' hot path.
[[gnu::always_inline]] inline DecimalText decimal_text(const std::uint8_t* bytes, unsigned precision, unsigned scale,
                                                       DecimalTextBuffer& buffer) {
  const unsigned int_digits = precision - scale;
  const unsigned int_full = int_digits / kDigitsPerGroup;
  const unsigned int_partial = int_digits % kDigitsPerGroup;
  const unsigned frac_full = scale / kDigitsPerGroup;
  const unsigned frac_partial = scale % kDigitsPerGroup;
  // precision >= 1, so the first byte exists.
  const bool negative = (bytes[0] & 0x80U) == 0;

  char* const digits = buffer.data() + 1;
  char* q = digits;
  DecimalGroups groups(bytes, negative);
  std::uint32_t any_digit = 0;  // nonzero unless every digit is 0
  const auto bad_group = [](std::uint32_t group, unsigned width) {
    DecimalText bad;
    bad.bad_group = group;
    bad.bad_width = width;
    return bad;
  };

  if (int_partial > 0) {
    const std::uint32_t group = groups.next(int_partial);
    if (group >= kPowersOf10[int_partial]) return bad_group(group, int_partial);
    if (group != 0) q = put_significant(q, group);
    any_digit |= group;
  }
  for (unsigned i = 0; i < int_full; ++i) {
    const std::uint32_t group = groups.next(kDigitsPerGroup);
    if (group >= kPowersOf10[kDigitsPerGroup]) return bad_group(group, kDigitsPerGroup);
    if (q != digits) {
      q = put_padded(q, group, kDigitsPerGroup);
    } else if (group != 0) {
      q = put_significant(q, group);
    }
    any_digit |= group;
  }
  if (q == digits) *q++ = '0';
  if (scale > 0) {
    *q++ = '.';
    for (unsigned i = 0; i < frac_full; ++i) {
      const std::uint32_t group = groups.next(kDigitsPerGroup);
      if (group >= kPowersOf10[kDigitsPerGroup]) return bad_group(group, kDigitsPerGroup);
      q = put_padded(q, group, kDigitsPerGroup);
      any_digit |= group;
    }
    if (frac_partial > 0) {
      const std::uint32_t group = groups.next(frac_partial);
      if (group >= kPowersOf10[frac_partial]) return bad_group(group, frac_partial);
      q = put_padded(q, group, frac_partial);
      any_digit |= group;
    }
  }

  char* first = digits;
  if (negative) *--first = '-';
  DecimalText out;
  out.text = std::string_view(first, static_cast<std::size_t>(q - first));
  out.is_zero = any_digit == 0;
  return out;
}

}  // namespace

DecimalText decode_decimal_text(const std::uint8_t* bytes, unsigned precision, unsigned scale,
                                DecimalTextBuffer& buffer) {
  return decimal_text(bytes, precision, scale, buffer);
}

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

// DECIMAL: the binary form decimal_text() describes, as a JSON string.
void decode_newdecimal(ByteReader& in, std::uint8_t precision, std::uint8_t scale,
                       ndjson::Writer& out) {
  const std::uint64_t start = in.offset();
  if (precision == 0 || precision > kMaxDecimalPrecision || scale > kMaxDecimalScale ||
      scale > precision) {
    fail_at(in, start, "DECIMAL({},{}) is not a valid precision and scale", precision, scale);
    return;
  }
  const std::span<const std::uint8_t> bytes = in.bytes(decimal_binary_size(precision, scale), "DECIMAL");
  if (!in.ok()) return;
  DecimalTextBuffer buffer;
  const DecimalText decimal = decimal_text(bytes.data(), precision, scale, buffer);
  if (decimal.text.empty()) {
    fail_at(in, start, "DECIMAL({},{}) digit group {} has more than {} digits", precision, scale,
            std::uint64_t{decimal.bad_group}, decimal.bad_width);
    return;
  }
  // All bits of 0.00 inverted would be "-0.00"; a number has one text, so it is "0.00".
  std::string_view text = decimal.text;
  if (decimal.is_zero && text.front() == '-') text.remove_prefix(1);
  out.ascii_string(text);
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
