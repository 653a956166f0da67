#include "util/civil_date.h"
#include "snapshot/row_values.h"

#include <fmt/format.h>

#include <array>

#include "column/column_type.h"
#include "rowimage/scalar_values.h"
#include "util/byte_reader.h"

namespace cdc::snapshot {

namespace {

// Protocol column flags (mysql_com.h).
constexpr std::uint32_t kUnsignedFlag = 32;
constexpr std::uint32_t kEnumFlag = 256;
constexpr std::uint32_t kSetFlag = 2048;

ColumnType type_of(std::uint8_t type) { return static_cast<ColumnType>(type); }


// Big-endian store of the low `width` bytes of value at p.
std::uint8_t* put_be(std::uint8_t* p, std::uint64_t value, unsigned width) {
  for (unsigned i = 0; i < width; ++i) p[i] = static_cast<std::uint8_t>(value >> (8 * (width - 1 - i)));
  return p + width;
}

// The fraction of TIME2/DATETIME2/TIMESTAMP2 for fsp digits (my_datetime_packed_to_binary):
// 1-2 digits in one byte (hundredths), 3-4 in two (1/10000 s), 5-6 in three (micros).
std::uint8_t* put_fraction(std::uint8_t* p, std::int64_t micros, unsigned fsp) {
  switch (fsp) {
    case 1:
    case 2: return put_be(p, static_cast<std::uint64_t>(micros / 10'000), 1);
    case 3:
    case 4: return put_be(p, static_cast<std::uint64_t>(micros / 100), 2);
    case 5:
    case 6: return put_be(p, static_cast<std::uint64_t>(micros), 3);
    default: return p;
  }
}

Result<void> decoded(ByteReader& in) {
  if (!in.ok()) return fail(Errc::corrupt_input, in.failure_text());
  return {};
}

Result<void> write_temporal(const ColumnWriter& column, const mysql::Connection::StreamTime& t, ndjson::Writer& out) {
  std::array<std::uint8_t, 16> bytes{};
  std::uint8_t* p = bytes.data();
  const unsigned fsp = column.fsp;
  switch (type_of(column.type)) {
    case ColumnType::date:
    case ColumnType::newdate: {
      p = bytes.data() + 3;
      const std::uint32_t raw = t.day | t.month << 5 | t.year << 9;  // Field_newdate, little-endian
      bytes[0] = static_cast<std::uint8_t>(raw);
      bytes[1] = static_cast<std::uint8_t>(raw >> 8);
      bytes[2] = static_cast<std::uint8_t>(raw >> 16);
      ByteReader in(std::span<const std::uint8_t>(bytes.data(), 3), 0);
      rowimage::decode_date(in, out);
      return decoded(in);
    }
    case ColumnType::datetime: {
      // DATETIME2 (my_datetime_packed_to_binary).
      const std::uint64_t ymd = (std::uint64_t{t.year} * 13 + t.month) << 5 | t.day;
      const std::uint64_t hms = std::uint64_t{t.hour} << 12 | t.minute << 6 | t.second;
      p = put_be(p, (ymd << 17 | hms) + 0x80'0000'0000ULL, 5);
      p = put_fraction(p, static_cast<std::int64_t>(t.micros), fsp);
      ByteReader in(std::span<const std::uint8_t>(bytes.data(), static_cast<std::size_t>(p - bytes.data())), 0);
      rowimage::decode_datetime2(in, static_cast<std::uint8_t>(fsp), out);
      return decoded(in);
    }
    case ColumnType::timestamp: {
      // TIMESTAMP2: big-endian seconds since the epoch (UTC: the session's time zone is
      // +00:00); the zero timestamp is 0.
      std::int64_t seconds = 0;
      if (t.year != 0 || t.month != 0 || t.day != 0)
        seconds = days_from_civil(t.year, t.month, t.day) * 86'400 + t.hour * 3600 + t.minute * 60 + t.second;
      p = put_be(p, static_cast<std::uint64_t>(seconds), 4);
      p = put_fraction(p, static_cast<std::int64_t>(t.micros), fsp);
      ByteReader in(std::span<const std::uint8_t>(bytes.data(), static_cast<std::size_t>(p - bytes.data())), 0);
      rowimage::decode_timestamp2(in, static_cast<std::uint8_t>(fsp), out);
      return decoded(in);
    }
    case ColumnType::time: {
      // TIME2 (my_time_packed_to_binary): packed = (hms << 24) + micros, negated when
      // negative; integer part >> 24 (arithmetic), fraction the C remainder.
      const std::int64_t hms = std::int64_t{t.hour} << 12 | std::int64_t{t.minute} << 6 | t.second;
      std::int64_t packed = (hms << 24) + static_cast<std::int64_t>(t.micros);
      if (t.negative) packed = -packed;
      if (fsp >= 5) {
        p = put_be(p, static_cast<std::uint64_t>(packed + (std::int64_t{0x800000} << 24)), 6);
      } else {
        p = put_be(p, static_cast<std::uint64_t>((packed >> 24) + 0x800000), 3);
        const std::int64_t fraction = packed % (std::int64_t{1} << 24);
        if (fsp == 1 || fsp == 2) p = put_be(p, static_cast<std::uint64_t>(fraction / 10'000) & 0xFF, 1);
        if (fsp == 3 || fsp == 4) p = put_be(p, static_cast<std::uint64_t>(fraction / 100) & 0xFFFF, 2);
      }
      ByteReader in(std::span<const std::uint8_t>(bytes.data(), static_cast<std::size_t>(p - bytes.data())), 0);
      rowimage::decode_time2(in, static_cast<std::uint8_t>(fsp), out);
      return decoded(in);
    }
    default:
      return fail(Errc::internal, "not a temporal column");
  }
}

bool is_temporal(ColumnType type) {
  return type == ColumnType::date || type == ColumnType::newdate || type == ColumnType::datetime ||
         type == ColumnType::timestamp || type == ColumnType::time;
}

// Which columns write_value() writes inline (see FastPath); each case is the general path's
// own branch for that column, so the bytes are the same.
FastPath fast_path(const ColumnWriter& column) {
  switch (type_of(column.type)) {
    case ColumnType::tiny:
    case ColumnType::short_int:
    case ColumnType::int24:
    case ColumnType::long_int:
    case ColumnType::longlong:
      return (column.flags & kUnsignedFlag) != 0 ? FastPath::unsigned_int : FastPath::signed_int;
    case ColumnType::year: return FastPath::unsigned_int;
    case ColumnType::string:
    case ColumnType::varchar:
    case ColumnType::var_string:
    case ColumnType::blob:
    case ColumnType::tiny_blob:
    case ColumnType::medium_blob:
    case ColumnType::long_blob:
      if (rowimage::is_binary_collation(column.collation) || (column.flags & (kEnumFlag | kSetFlag)) != 0 ||
          !rowimage::is_ascii_compatible(column.charset))
        return FastPath::none;
      return type_of(column.type) == ColumnType::string ? FastPath::char_text : FastPath::text;
    default: return FastPath::none;
  }
}

}  // namespace

Result<std::vector<ColumnWriter>> plan_columns(const std::vector<StreamColumn>& columns) {
  std::vector<ColumnWriter> out;
  out.reserve(columns.size());
  for (const StreamColumn& column : columns) {
    ColumnWriter writer;
    writer.type = column.type;
    writer.flags = column.flags;
    writer.fsp = static_cast<std::uint8_t>(column.decimals > rowimage::kMaxFsp ? 0 : column.decimals);
    writer.collation = column.charsetnr;
    writer.charset = rowimage::charset_of(column.charsetnr);
    switch (type_of(column.type)) {
      case ColumnType::tiny:
      case ColumnType::short_int:
      case ColumnType::int24:
      case ColumnType::long_int:
      case ColumnType::longlong:
      case ColumnType::year:
      case ColumnType::float_type:
      case ColumnType::double_type:
      case ColumnType::newdecimal:
      case ColumnType::bit:
      case ColumnType::date:
      case ColumnType::newdate:
      case ColumnType::datetime:
      case ColumnType::timestamp:
      case ColumnType::time:
      case ColumnType::null_type:
      case ColumnType::string:
      case ColumnType::varchar:
      case ColumnType::var_string:
      case ColumnType::enum_type:
      case ColumnType::set:
      case ColumnType::blob:
      case ColumnType::tiny_blob:
      case ColumnType::medium_blob:
      case ColumnType::long_blob:
      case ColumnType::geometry:
        break;
      default:
        return fail(Errc::unsupported,
                    fmt::format("column {} has type {} ({}), which cdc-snapshot cannot read yet", column.name,
                                column_type_name(type_of(column.type)), column.type));
    }
    writer.fast = fast_path(writer);
    out.push_back(writer);
  }
  return out;
}

Result<void> write_value_general(const ColumnWriter& column, const StreamCell& cell, ndjson::Writer& out,
                                 rowimage::TextScratch& scratch) {
  if (cell.is_null) {
    out.null();
    return {};
  }
  const ColumnType type = type_of(column.type);
  switch (type) {
    case ColumnType::tiny:
    case ColumnType::short_int:
    case ColumnType::int24:
    case ColumnType::long_int:
    case ColumnType::longlong:
      if ((column.flags & kUnsignedFlag) != 0)
        out.unsigned_integer(static_cast<std::uint64_t>(cell.integer));
      else
        out.integer(cell.integer);
      return {};
    case ColumnType::year: out.unsigned_integer(static_cast<std::uint64_t>(cell.integer)); return {};
    case ColumnType::float_type: out.floating(cell.real32); return {};
    case ColumnType::double_type: out.floating(cell.real64); return {};
    case ColumnType::newdecimal:
      // The server's text has exactly the scale's digits, like decode_newdecimal's.
      out.ascii_string(cell.bytes);
      return {};
    case ColumnType::bit: {
      if (cell.bytes.size() > 8)
        return fail(Errc::corrupt_input, fmt::format("BIT value of {} bytes", cell.bytes.size()));
      std::uint64_t value = 0;
      for (const char c : cell.bytes) value = value << 8 | static_cast<unsigned char>(c);
      out.unsigned_integer(value);
      return {};
    }
    case ColumnType::null_type: out.null(); return {};
    case ColumnType::geometry: out.string_base64(cell.bytes); return {};
    default: break;
  }
  if (is_temporal(type)) return write_temporal(column, cell.time, out);
  // The string family: ENUM/SET labels, text, bytes.
  if (rowimage::is_binary_collation(column.collation)) {
    if ((column.flags & (kEnumFlag | kSetFlag)) != 0) {
      out.string(cell.bytes);  // as write_label() writes a binary ENUM's label
    } else {
      out.string_base64(cell.bytes);
    }
    return {};
  }
  if ((column.flags & (kEnumFlag | kSetFlag)) != 0) {
    out.string(rowimage::to_utf8(cell.bytes, column.charset, scratch));
    return {};
  }
  std::string_view text = cell.bytes;
  if (type == ColumnType::string) text = rowimage::trim_char_padding(text, column.charset);
  rowimage::write_text(text, column.charset, out, scratch);
  return {};
}

}  // namespace cdc::snapshot
