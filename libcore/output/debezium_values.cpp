#include "output/debezium_values.h"

#include <fmt/format.h>

#include <cstring>

#include "util/base64.h"
#include "util/civil_date.h"
#include "util/text.h"

namespace cdc::output {

namespace {

bool digits_at(std::string_view text, std::size_t at, std::size_t count, unsigned& value) {
  if (at + count > text.size()) return false;
  value = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (!is_digit(text[i])) return false;
    value = value * 10 + static_cast<unsigned>(text[i] - '0');
  }
  return true;
}

// "[.ffffff]" at text[at..] to microseconds; true when the rest is empty or a fraction.
bool fraction_micros(std::string_view rest, std::int64_t& micros) {
  micros = 0;
  if (rest.empty()) return true;
  if (rest.front() != '.' || rest.size() > 7 || rest.size() < 2) return false;
  std::int64_t value = 0;
  for (std::size_t i = 1; i < rest.size(); ++i) {
    if (!is_digit(rest[i])) return false;
    value = value * 10 + (rest[i] - '0');
  }
  for (std::size_t i = rest.size() - 1; i < 6; ++i) value *= 10;
  micros = value;
  return true;
}

// "YYYY-MM-DD": nullopt for a zero date or zero parts (MySQL's 0000-00-00, 2024-00-10).
enum class DateRead { ok, zero, malformed };
DateRead read_date(std::string_view text, std::int64_t& days) {
  unsigned year = 0;
  unsigned month = 0;
  unsigned day = 0;
  if (text.size() < 10 || text[4] != '-' || text[7] != '-' || !digits_at(text, 0, 4, year) ||
      !digits_at(text, 5, 2, month) || !digits_at(text, 8, 2, day))
    return DateRead::malformed;
  if (year == 0 || month == 0 || day == 0) return DateRead::zero;
  days = days_from_civil(year, month, day);
  return DateRead::ok;
}

// "YYYY-MM-DD HH:MM:SS[.f]" to microseconds since the epoch, the wall clock read as UTC.
DateRead read_datetime(std::string_view text, std::int64_t& micros) {
  std::int64_t days = 0;
  const DateRead date = read_date(text, days);
  if (date == DateRead::malformed) return date;
  unsigned hour = 0;
  unsigned minute = 0;
  unsigned second = 0;
  if (text.size() < 19 || text[10] != ' ' || text[13] != ':' || text[16] != ':' || !digits_at(text, 11, 2, hour) ||
      !digits_at(text, 14, 2, minute) || !digits_at(text, 17, 2, second))
    return DateRead::malformed;
  std::int64_t fraction = 0;
  if (!fraction_micros(text.substr(19), fraction)) return DateRead::malformed;
  if (date == DateRead::zero) return date;
  micros = ((days * 86400) + hour * 3600 + minute * 60 + second) * 1000000 + fraction;
  return DateRead::ok;
}

// "[-]HHH:MM:SS[.f]" to microseconds (negative and past 24 h as MySQL allows).
bool read_time(std::string_view text, std::int64_t& micros) {
  const bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 4) return false;
  unsigned hours = 0;
  unsigned minute = 0;
  unsigned second = 0;
  if (!digits_at(text, 0, colon, hours) || text.size() < colon + 6 || text[colon + 3] != ':' ||
      !digits_at(text, colon + 1, 2, minute) || !digits_at(text, colon + 4, 2, second))
    return false;
  std::int64_t fraction = 0;
  if (!fraction_micros(text.substr(colon + 6), fraction)) return false;
  micros = (std::int64_t{hours} * 3600 + minute * 60 + second) * 1000000 + fraction;
  if (negative) micros = -micros;
  return true;
}

// Java's BigInteger.toByteArray() of a decimal's unscaled value: big-endian two's complement,
// as few bytes as hold the sign. scratch is reused.
void unscaled_bytes(std::string_view decimal, std::vector<std::uint8_t>& scratch, std::string& bytes) {
  scratch.clear();  // little-endian magnitude
  const bool negative = !decimal.empty() && decimal.front() == '-';
  for (const char c : decimal) {
    if (!is_digit(c)) continue;
    unsigned carry = static_cast<unsigned>(c - '0');
    for (std::uint8_t& byte : scratch) {
      const unsigned value = byte * 10U + carry;
      byte = static_cast<std::uint8_t>(value & 0xFFU);
      carry = value >> 8;
    }
    if (carry != 0) scratch.push_back(static_cast<std::uint8_t>(carry));
  }
  while (!scratch.empty() && scratch.back() == 0) scratch.pop_back();
  bytes.clear();
  if (scratch.empty()) {
    bytes.push_back('\0');
    return;
  }
  if (negative) {
    unsigned carry = 1;
    for (std::uint8_t& byte : scratch) {
      const unsigned value = static_cast<std::uint8_t>(~byte) + carry;
      byte = static_cast<std::uint8_t>(value & 0xFFU);
      carry = value >> 8;
    }
    // Sign bytes: drop 0xFF while the next byte keeps the sign bit.
    while (scratch.size() > 1 && scratch.back() == 0xFF && (scratch[scratch.size() - 2] & 0x80U) != 0)
      scratch.pop_back();
    if ((scratch.back() & 0x80U) == 0) scratch.push_back(0xFF);
  } else if ((scratch.back() & 0x80U) != 0) {
    scratch.push_back(0);
  }
  for (auto it = scratch.rbegin(); it != scratch.rend(); ++it) bytes.push_back(static_cast<char>(*it));
}

// One field of a Connect schema, in JsonConverter's member order: type, optional, name,
// version, parameters, field.
std::string field_schema(std::string_view type, bool optional, std::string_view name, std::string_view parameters,
                         std::string_view field) {
  std::string schema = fmt::format("{{\"type\":\"{}\",\"optional\":{}", type, optional ? "true" : "false");
  if (!name.empty()) schema += fmt::format(",\"name\":\"{}\",\"version\":1", name);
  if (!parameters.empty()) schema += fmt::format(",\"parameters\":{{{}}}", parameters);
  if (!field.empty()) schema += fmt::format(",\"field\":{}", ndjson::quoted(field));
  schema += '}';
  return schema;
}

std::string quoted_param(std::string_view name, std::string_view value) {
  return fmt::format("{}:{}", ndjson::quoted(name), ndjson::quoted(value));
}

}  // namespace

// The column's Kind and, with schemas.enable, its Connect schema (FORMATS 2.7, 2.8).
void DebeziumValues::describe_column(const TypeText& type, Column& column) const {
  const std::string_view base = type.base;
  const bool optional = column.nullable;
  std::string_view connect = "string";
  std::string_view logical;
  std::string parameters;
  const bool connect_times = options_.time_precision == TimePrecision::connect;
  const auto decimal_schema = [&](std::uint32_t precision, std::uint32_t scale) {
    if (flink_ || options_.decimal_handling == DecimalHandling::string) return;
    if (options_.decimal_handling == DecimalHandling::double_value) {
      connect = "double";
      return;
    }
    connect = "bytes";
    logical = "org.apache.kafka.connect.data.Decimal";
    parameters = fmt::format("\"scale\":\"{}\",\"connect.decimal.precision\":\"{}\"", scale, precision);
  };
  if (base == "tinyint") {
    connect = type.is_unsigned ? "int16" : "int8";
  } else if (base == "smallint") {
    connect = type.is_unsigned ? "int32" : "int16";
  } else if (base == "mediumint") {
    connect = "int32";
  } else if (base == "int" || base == "integer") {
    connect = type.is_unsigned ? "int64" : "int32";
  } else if (base == "bigint") {
    connect = "int64";
    if (type.is_unsigned) {
      column.kind = Kind::bigint_unsigned;
      if (flink_ || options_.bigint_unsigned == BigintUnsignedHandling::precise) {
        connect = "bytes";
        logical = "org.apache.kafka.connect.data.Decimal";
        parameters = "\"scale\":\"0\",\"connect.decimal.precision\":\"20\"";
      }
    }
  } else if (base == "float") {
    connect = type.arg_count == 1 && type.args[0] > 24 ? "double" : "float";
  } else if (base == "double" || base == "real") {
    connect = "double";
  } else if (base == "decimal" || base == "numeric" || base == "fixed") {
    column.kind = Kind::decimal;
    column.precision = type.arg_count > 0 ? type.args[0] : 10;
    column.scale = type.arg_count > 1 ? type.args[1] : 0;
    decimal_schema(column.precision, column.scale);
  } else if (base == "bool" || base == "boolean") {
    connect = "boolean";
  } else if (base == "bit") {
    column.precision = type.arg_count > 0 ? type.args[0] : 1;
    if (column.precision <= 1) {
      column.kind = Kind::bit1;
      connect = "boolean";
    } else {
      column.kind = Kind::bits;
      connect = "bytes";
      logical = "io.debezium.data.Bits";
      parameters = fmt::format("\"length\":\"{}\"", column.precision);
    }
  } else if (base == "enum" || base == "set") {
    column.kind = base == "enum" ? Kind::enumeration : Kind::set;
    logical = base == "enum" ? "io.debezium.data.Enum" : "io.debezium.data.EnumSet";
    std::string allowed;
    for (const std::string& label : column.labels) {
      if (!allowed.empty()) allowed += ',';
      allowed += label;
    }
    parameters = quoted_param("allowed", allowed);
  } else if (base == "json") {
    column.kind = Kind::json;
    logical = "io.debezium.data.Json";
  } else if (base == "uuid") {
    // MariaDB's UUID, a string as the value has it: named as Debezium's MariaDB connector names
    // it (MariaDbValueConverters). INET4/INET6 are plain strings there, as here.
    logical = "io.debezium.data.Uuid";
  } else if (base == "year") {
    connect = "int32";
    logical = "io.debezium.time.Year";
  } else if (base == "date") {
    column.kind = Kind::date;
    if (!flink_) {
      connect = "int32";
      logical = connect_times ? "org.apache.kafka.connect.data.Date" : "io.debezium.time.Date";
    }
  } else if (base == "time") {
    column.kind = Kind::time;
    column.scale = type.arg_count > 0 ? type.args[0] : 0;
    if (!flink_) {
      connect = connect_times ? "int32" : "int64";
      logical = connect_times ? "org.apache.kafka.connect.data.Time" : "io.debezium.time.MicroTime";
    }
  } else if (base == "datetime") {
    column.kind = Kind::datetime;
    column.scale = type.arg_count > 0 ? type.args[0] : 0;
    if (!flink_) {
      connect = "int64";
      logical = connect_times          ? "org.apache.kafka.connect.data.Timestamp"
                : column.scale <= 3 ? "io.debezium.time.Timestamp"
                                    : "io.debezium.time.MicroTimestamp";
    }
  } else if (base == "timestamp") {
    column.kind = Kind::timestamp;
    column.scale = type.arg_count > 0 ? type.args[0] : 0;
    if (!flink_) logical = "io.debezium.time.ZonedTimestamp";
  } else if (base == "binary" || base == "varbinary" || base == "tinyblob" || base == "blob" ||
             base == "mediumblob" || base == "longblob") {
    column.kind = Kind::binary;
    if (!flink_ && options_.binary_handling == BinaryHandling::bytes) connect = "bytes";
  } else if (base == "point") {
    column.kind = Kind::point;
  } else if (base == "geometry" || base == "linestring" || base == "polygon" || base == "multipoint" ||
             base == "multilinestring" || base == "multipolygon" || base == "geometrycollection" ||
             base == "geomcollection") {
    column.kind = Kind::geometry;
  } else if (base == "vector") {
    column.schema = fmt::format(
        R"({{"type":"array","items":{{"type":"float","optional":false}},"optional":{},"name":"io.debezium.data.FloatVector","version":1,"field":{}}})",
        optional ? "true" : "false", ndjson::quoted(column.name));
    return;
  }
  if (!options_.schemas_enable) return;
  if (column.kind == Kind::geometry || column.kind == Kind::point) {
    const bool point = column.kind == Kind::point;
    column.schema = fmt::format(
        R"({{"type":"struct","fields":[{}{{"type":"bytes","optional":{},"field":"wkb"}},{{"type":"int32","optional":true,"field":"srid"}}],"optional":{},"name":"{}","version":1,"doc":"{}","field":{}}})",
        point ? R"({"type":"double","optional":false,"field":"x"},{"type":"double","optional":false,"field":"y"},)" : "",
        point ? "true" : "false", optional ? "true" : "false",
        point ? "io.debezium.data.geometry.Point" : "io.debezium.data.geometry.Geometry",
        point ? "Geometry (POINT)" : "Geometry", ndjson::quoted(column.name));
    return;
  }
  column.schema = field_schema(connect, optional, logical, parameters, column.name);
}

Result<void> DebeziumValues::write_decimal_value(std::string_view digits, bool numeric_schema, ndjson::Writer& out) {
  if (options_.decimal_format == DecimalFormat::numeric && numeric_schema) {
    out.raw_number(digits);
    return {};
  }
  unscaled_bytes(digits, magnitude_, bytes_);
  out.string_base64(bytes_);
  return {};
}

Result<void> DebeziumValues::write_value(const Column& column, std::string_view raw, ndjson::Writer& out) {
  if (raw == "null") {
    out.null();
    return {};
  }
  const auto bad = [&]() {
    return fail(Errc::corrupt_input, fmt::format("column {}: {} is not a value of its type", column.name, raw));
  };
  switch (column.kind) {
    case Kind::verbatim: out.raw_value(raw); return {};
    case Kind::bigint_unsigned: {
      if (flink_) {
        out.raw_value(raw);
        return {};
      }
      std::uint64_t value = 0;
      if (!parse_number(raw, value)) return bad();
      if (options_.bigint_unsigned == BigintUnsignedHandling::long_value) {
        out.integer(static_cast<std::int64_t>(value));  // wraps at 2^63, as Debezium's long mode
        return {};
      }
      return write_decimal_value(raw, true, out);
    }
    case Kind::decimal: {
      const auto digits = plain_string(raw);
      if (!digits) return bad();
      if (flink_ || options_.decimal_handling == DecimalHandling::string) {
        out.raw_value(raw);
        return {};
      }
      if (options_.decimal_handling == DecimalHandling::double_value) {
        double value = 0;
        if (!parse_number(*digits, value)) return bad();
        out.floating(value);
        return {};
      }
      return write_decimal_value(*digits, true, out);
    }
    case Kind::enumeration:
    case Kind::set: return write_label(column, raw, out);
    case Kind::json: out.string(raw); return {};
    case Kind::date: return write_date(column, raw, out);
    case Kind::time: {
      const auto text = plain_string(raw);
      std::int64_t micros = 0;
      if (!text || !read_time(*text, micros)) return bad();
      if (flink_) out.raw_value(raw);
      else if (options_.time_precision == TimePrecision::connect) out.integer(micros / 1000);
      else out.integer(micros);
      return {};
    }
    case Kind::datetime: return write_datetime(column, raw, out);
    case Kind::timestamp: return write_timestamp(column, raw, out);
    case Kind::binary: return write_binary(column, raw, out);
    case Kind::bit1: out.boolean(raw != "0"); return {};
    case Kind::bits: {
      std::uint64_t value = 0;
      if (!parse_number(raw, value)) return bad();
      bytes_.clear();
      for (std::uint32_t i = 0; i < (column.precision + 7) / 8; ++i)
        bytes_.push_back(static_cast<char>((value >> (8 * i)) & 0xFFU));
      out.string_base64(bytes_);
      return {};
    }
    case Kind::geometry:
    case Kind::point: return write_geometry(column, raw, out);
  }
  return bad();
}

// A member, or the member of the 1-based index / bitmask the binlog gave without ENUM and
// SET metadata (cdc-ndjson(5), Fallbacks).
Result<void> DebeziumValues::write_label(const Column& column, std::string_view raw, ndjson::Writer& out) {
  if (raw.front() == '"') {
    out.raw_value(raw);
    return {};
  }
  std::uint64_t number = 0;
  if (!parse_number(raw, number))
    return fail(Errc::corrupt_input, fmt::format("column {}: {} is not a member", column.name, raw));
  text_.clear();
  if (column.kind == Kind::enumeration) {
    if (number >= 1 && number <= column.labels.size()) text_ = column.labels[number - 1];
    else if (number != 0 || column.labels.empty()) text_ = raw;
  } else {
    for (std::size_t bit = 0; bit < column.labels.size() && bit < 64; ++bit)
      if ((number >> bit) & 1U) {
        if (!text_.empty()) text_ += ',';
        text_ += column.labels[bit];
      }
    if (column.labels.empty()) text_ = raw;
  }
  out.string(text_);
  return {};
}

Result<void> DebeziumValues::write_date(const Column& column, std::string_view raw, ndjson::Writer& out) {
  const auto text = plain_string(raw);
  std::int64_t days = 0;
  const DateRead read = text ? read_date(*text, days) : DateRead::malformed;
  if (read == DateRead::malformed || text->size() != 10)
    return fail(Errc::corrupt_input, fmt::format("column {}: {} is not a DATE", column.name, raw));
  if (read == DateRead::zero && column.nullable) out.null();
  else if (flink_) out.ascii_string(read == DateRead::zero ? "1970-01-01" : *text);
  else out.integer(read == DateRead::zero ? 0 : days);
  return {};
}

Result<void> DebeziumValues::write_datetime(const Column& column, std::string_view raw, ndjson::Writer& out) {
  const auto text = plain_string(raw);
  std::int64_t micros = 0;
  const DateRead read = text ? read_datetime(*text, micros) : DateRead::malformed;
  if (read == DateRead::malformed)
    return fail(Errc::corrupt_input, fmt::format("column {}: {} is not a DATETIME", column.name, raw));
  if (read == DateRead::zero && column.nullable) out.null();
  else if (flink_) out.ascii_string(read == DateRead::zero ? "1970-01-01 00:00:00" : *text);
  else if (read == DateRead::zero) out.integer(0);
  else if (options_.time_precision == TimePrecision::adaptive_time_microseconds && column.scale > 3)
    out.integer(micros);
  else out.integer(micros >= 0 ? micros / 1000 : -((-micros + 999) / 1000));  // floor to ms
  return {};
}

Result<void> DebeziumValues::write_timestamp(const Column& column, std::string_view raw, ndjson::Writer& out) {
  const auto text = plain_string(raw);
  if (!text || text->size() < 19)
    return fail(Errc::corrupt_input, fmt::format("column {}: {} is not a TIMESTAMP", column.name, raw));
  const bool zero = text->back() != 'Z';  // the zero timestamp has no Z (cdc-ndjson(5))
  if (zero && column.nullable) {
    out.null();
    return {};
  }
  text_.assign(zero ? std::string_view("1970-01-01 00:00:00") : text->substr(0, 19));
  if (column.scale > 0) {
    const std::size_t dot = text->find('.');
    if (zero || dot == std::string_view::npos) text_.append(".").append(column.scale, '0');
    else text_.append(text->substr(dot, text->size() - dot - 1));
  }
  text_ += 'Z';
  if (!flink_) text_[10] = 'T';  // ISO-8601, as ZonedTimestamp writes it
  out.ascii_string(text_);
  return {};
}

Result<void> DebeziumValues::write_binary(const Column& column, std::string_view raw, ndjson::Writer& out) {
  if (flink_ || options_.binary_handling == BinaryHandling::bytes ||
      options_.binary_handling == BinaryHandling::base64) {
    out.raw_value(raw);
    return {};
  }
  const auto text = plain_string(raw);
  if (!text) return fail(Errc::corrupt_input, fmt::format("column {}: {} is not base64", column.name, raw));
  if (options_.binary_handling == BinaryHandling::base64_url_safe) {
    text_.assign(*text);
    for (char& c : text_) c = c == '+' ? '-' : c == '/' ? '_' : c;
    out.ascii_string(text_);
    return {};
  }
  const auto bytes = decode_base64(*text);
  if (!bytes) return fail(Errc::corrupt_input, fmt::format("column {}: {} is not base64", column.name, raw));
  static constexpr char kHex[] = "0123456789abcdef";
  text_.clear();
  for (const char c : *bytes) {
    text_ += kHex[(static_cast<unsigned char>(c) >> 4) & 0xFU];
    text_ += kHex[static_cast<unsigned char>(c) & 0xFU];
  }
  out.ascii_string(text_);
  return {};
}

// The canonical value is the SRID (4 bytes, little-endian) and the WKB, as MySQL stores it.
Result<void> DebeziumValues::write_geometry(const Column& column, std::string_view raw, ndjson::Writer& out) {
  const auto text = plain_string(raw);
  const auto bytes = text ? decode_base64(*text) : std::nullopt;
  if (!bytes || bytes->size() < 4)
    return fail(Errc::corrupt_input, fmt::format("column {}: {} is not a stored geometry", column.name, raw));
  std::uint32_t srid = 0;
  for (int i = 3; i >= 0; --i) srid = (srid << 8) | static_cast<unsigned char>((*bytes)[static_cast<std::size_t>(i)]);
  const std::string_view wkb = std::string_view(*bytes).substr(4);
  out.begin_object();
  if (column.kind == Kind::point && wkb.size() >= 21) {
    const bool little = wkb[0] == 1;
    const auto coordinate = [&](std::size_t at) {
      std::uint64_t word = 0;
      for (std::size_t i = 0; i < 8; ++i) {
        const auto byte = static_cast<unsigned char>(wkb[at + (little ? 7 - i : i)]);
        word = (word << 8) | byte;
      }
      double value = 0;
      std::memcpy(&value, &word, sizeof value);
      return value;
    };
    out.field("x", coordinate(5));
    out.field("y", coordinate(13));
  }
  out.field_base64("wkb", wkb);
  out.field("srid", srid);
  out.end_object();
  return {};
}

}  // namespace cdc::output
