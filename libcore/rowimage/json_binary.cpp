#include "rowimage/json_binary.h"

#include <array>
#include <bit>
#include <cmath>
#include <iterator>
#include <utility>

#include <fmt/format.h>

#include "rowimage/scalar_values.h"
#include "util/bits.h"

namespace cdc::rowimage {

namespace {

// enum_field_types values that opaque JSON scalars carry (include/field_types.h).
constexpr std::uint8_t kFieldTimestamp = 7;     // MYSQL_TYPE_TIMESTAMP
constexpr std::uint8_t kFieldDate = 10;         // MYSQL_TYPE_DATE
constexpr std::uint8_t kFieldTime = 11;         // MYSQL_TYPE_TIME
constexpr std::uint8_t kFieldDatetime = 12;     // MYSQL_TYPE_DATETIME
constexpr std::uint8_t kFieldNewDecimal = 246;  // MYSQL_TYPE_NEWDECIMAL
constexpr std::uint8_t kFieldVarString = 253;   // MYSQL_TYPE_VAR_STRING

// The literal null that an empty document stands for (json_binary.cc parse_binary()).
constexpr std::array<std::uint8_t, 1> kNullLiteral = {static_cast<std::uint8_t>(JsonbLiteral::null)};

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Little-endian unsigned integer of `width` bytes at bytes[at]; the caller checked the bounds.
std::uint64_t read_le(std::span<const std::uint8_t> bytes, std::size_t at, std::size_t width) {
  return load_le(bytes.data() + at, width);
}

bool is_large(JsonbType type) { return type == JsonbType::large_object || type == JsonbType::large_array; }

std::size_t offset_size(bool large) { return large ? 4 : 2; }
std::size_t key_entry_size(bool large) { return 2 + offset_size(large); }
std::size_t value_entry_size(bool large) { return 1 + offset_size(large); }

// json_binary.cc inlined_type(): these live in the value entry instead of being pointed at.
bool is_inlined(JsonbType type, bool large) {
  switch (type) {
    case JsonbType::literal:
    case JsonbType::int16:
    case JsonbType::uint16: return true;
    case JsonbType::int32:
    case JsonbType::uint32: return large;
    default: return false;
  }
}

std::string_view kind_name(bool is_object) { return is_object ? "object" : "array"; }

std::string_view scalar_name(JsonbType type) {
  switch (type) {
    case JsonbType::literal: return "literal";
    case JsonbType::int16: return "int16";
    case JsonbType::uint16: return "uint16";
    case JsonbType::int32: return "int32";
    case JsonbType::uint32: return "uint32";
    case JsonbType::int64: return "int64";
    case JsonbType::uint64: return "uint64";
    case JsonbType::double_type: return "double";
    case JsonbType::string: return "string";
    case JsonbType::opaque: return "opaque value";
    default: return "value";
  }
}

std::string_view temporal_name(std::uint8_t field_type) {
  switch (field_type) {
    case kFieldDate: return "DATE";
    case kFieldTime: return "TIME";
    case kFieldTimestamp: return "TIMESTAMP";
    default: return "DATETIME";
  }
}

}  // namespace

JsonBinaryValue json_binary_root(std::span<const std::uint8_t> document, std::uint64_t base_offset) {
  if (document.empty()) {
    // json_binary.cc parse_binary(): an empty value (INSERT IGNORE / non-strict NULL into a
    // NOT NULL column) is read as the null literal.
    return JsonBinaryValue{JsonbType::literal, kNullLiteral, base_offset, false};
  }
  return JsonBinaryValue{static_cast<JsonbType>(document[0]), document.subspan(1), base_offset + 1, false};
}

Result<void> JsonBinaryDecoder::result() const {
  if (error_) return cdc::fail(*error_);
  return {};
}

bool JsonBinaryDecoder::fail(Errc code, std::string message) {
  if (!error_) error_ = Error{code, std::move(message)};
  return false;
}

bool JsonBinaryDecoder::check_depth(std::size_t depth, std::uint64_t offset) {
  if (!ok()) return false;
  if (depth < max_depth_ && depth < kJsonMaxDepth) return true;
  if (depth >= kJsonMaxDepth) {
    return fail(Errc::corrupt_input,
                fmt::format("JSON: nested deeper than {} levels at offset {}", kJsonMaxDepth, offset));
  }
  return fail(Errc::unsupported,
              fmt::format("JSON: nested deeper than {} levels at offset {}: valid for MySQL (limit {}), but "
                          "more than the NDJSON writer has room for here",
                          max_depth_, offset, kJsonMaxDepth));
}

bool JsonBinaryDecoder::charge(std::size_t bytes, std::uint64_t offset) {
  if (bytes <= budget_) {
    budget_ -= bytes;
    return true;
  }
  return fail(Errc::corrupt_input,
              fmt::format("JSON: value at offset {} reuses bytes of other values (decoding would visit "
                          "more bytes than the document holds)",
                          offset));
}

std::optional<JsonBinaryContainer> JsonBinaryDecoder::container(const JsonBinaryValue& value) {
  if (!ok()) return std::nullopt;
  if (!value.is_object() && !value.is_array()) {
    fail(Errc::corrupt_input, fmt::format("JSON: value at offset {} is not an object or array (type 0x{:02x})",
                                          value.offset, static_cast<unsigned>(value.type)));
    return std::nullopt;
  }
  JsonBinaryContainer out;
  out.is_object = value.is_object();
  out.large = is_large(value.type);
  out.offset = value.offset;
  const std::string_view what = kind_name(out.is_object);
  const std::size_t osz = offset_size(out.large);
  if (value.data.size() < 2 * osz) {
    fail(Errc::corrupt_input, fmt::format("JSON: {} at offset {}: need {} bytes for its count and size, have {}",
                                          what, value.offset, 2 * osz, value.data.size()));
    return std::nullopt;
  }
  const std::uint64_t count = read_le(value.data, 0, osz);
  const std::uint64_t size = read_le(value.data, osz, osz);
  if (size > value.data.size()) {
    fail(Errc::corrupt_input, fmt::format("JSON: {} at offset {} declares {} bytes, only {} left", what,
                                          value.offset, size, value.data.size()));
    return std::nullopt;
  }
  const std::uint64_t entry_size = (out.is_object ? key_entry_size(out.large) : 0) + value_entry_size(out.large);
  const std::uint64_t header = 2 * osz + count * entry_size;  // count < 2^32: no overflow
  if (header > size) {
    fail(Errc::corrupt_input, fmt::format("JSON: {} at offset {}: {} entries need a {}-byte header, more than "
                                          "its {} bytes",
                                          what, value.offset, count, header, size));
    return std::nullopt;
  }
  out.count = static_cast<std::uint32_t>(count);
  out.bytes = value.data.first(static_cast<std::size_t>(size));
  out.header_size = static_cast<std::size_t>(header);
  return out;
}

std::optional<std::string_view> JsonBinaryDecoder::key(const JsonBinaryContainer& object, std::uint32_t index) {
  if (!ok()) return std::nullopt;
  if (!object.is_object || index >= object.count) {
    fail(Errc::internal, fmt::format("JSON: key {} asked of a container with {} entries", index, object.count));
    return std::nullopt;
  }
  const std::size_t osz = offset_size(object.large);
  const std::size_t entry = 2 * osz + std::size_t{index} * key_entry_size(object.large);
  const std::uint64_t at = read_le(object.bytes, entry, osz);
  const std::uint64_t length = read_le(object.bytes, entry + osz, 2);
  const std::uint64_t size = object.bytes.size();
  if (at < object.header_size || at > size || length > size - at) {
    fail(Errc::corrupt_input, fmt::format("JSON: object at offset {}: key {} at {} (length {}) lies outside its key "
                                          "area [{}, {})",
                                          object.offset, index, at, length, object.header_size, size));
    return std::nullopt;
  }
  if (index > 0) {
    // The server writes the keys back to back in entry order (append_key_entries()).
    const std::size_t previous = entry - key_entry_size(object.large);
    const std::uint64_t previous_at = read_le(object.bytes, previous, osz);
    const std::uint64_t previous_length = read_le(object.bytes, previous + osz, 2);
    if (at < previous_at + previous_length) {
      fail(Errc::corrupt_input, fmt::format("JSON: object at offset {}: key {} at {} overlaps key {} at {} "
                                            "(length {})",
                                            object.offset, index, at, index - 1, previous_at, previous_length));
      return std::nullopt;
    }
  }
  return std::string_view(reinterpret_cast<const char*>(object.bytes.data() + at), static_cast<std::size_t>(length));
}

std::optional<JsonBinaryValue> JsonBinaryDecoder::element(const JsonBinaryContainer& container,
                                                          std::uint32_t index) {
  if (!ok()) return std::nullopt;
  if (index >= container.count) {
    fail(Errc::internal, fmt::format("JSON: value {} asked of a container with {} entries", index, container.count));
    return std::nullopt;
  }
  const std::size_t osz = offset_size(container.large);
  const std::size_t keys = container.is_object ? std::size_t{container.count} * key_entry_size(container.large) : 0;
  const std::size_t entry = 2 * osz + keys + std::size_t{index} * value_entry_size(container.large);
  const auto type = static_cast<JsonbType>(container.bytes[entry]);
  if (is_inlined(type, container.large)) {
    return JsonBinaryValue{type, container.bytes.subspan(entry + 1, osz), container.offset + entry + 1, true};
  }
  const std::uint64_t at = read_le(container.bytes, entry + 1, osz);
  if (at < container.header_size || at >= container.bytes.size()) {
    fail(Errc::corrupt_input, fmt::format("JSON: {} at offset {}: value {} at {} lies outside its value area "
                                          "[{}, {})",
                                          kind_name(container.is_object), container.offset, index, at,
                                          container.header_size, container.bytes.size()));
    return std::nullopt;
  }
  const auto start = static_cast<std::size_t>(at);
  return JsonBinaryValue{type, container.bytes.subspan(start), container.offset + start, false};
}

bool JsonBinaryDecoder::write(const JsonBinaryValue& value, std::size_t depth, ndjson::Writer& out) {
  if (!ok()) return false;
  if (value.is_object() || value.is_array()) return write_container(value, depth, out);
  return write_scalar(value, out);
}

bool JsonBinaryDecoder::write_container(const JsonBinaryValue& value, std::size_t depth, ndjson::Writer& out) {
  // Recursion is bounded here: every nested object/array raises depth, and depth is capped.
  if (!check_depth(depth, value.offset)) return false;
  const std::optional<JsonBinaryContainer> container = this->container(value);
  if (!container || !charge(container->header_size, container->offset)) return false;
  if (container->is_object) {
    out.begin_object();
    for (std::uint32_t i = 0; i < container->count; ++i) {
      const std::optional<std::string_view> name = key(*container, i);
      if (!name || !charge(name->size(), container->offset)) return false;
      out.key(*name);
      const std::optional<JsonBinaryValue> member = element(*container, i);
      if (!member || !write(*member, depth + 1, out)) return false;
    }
    out.end_object();
  } else {
    out.begin_array();
    for (std::uint32_t i = 0; i < container->count; ++i) {
      const std::optional<JsonBinaryValue> item = element(*container, i);
      if (!item || !write(*item, depth + 1, out)) return false;
    }
    out.end_array();
  }
  return true;
}

std::optional<std::uint32_t> JsonBinaryDecoder::variable_length(std::span<const std::uint8_t> data, std::size_t at,
                                                                std::uint64_t offset, std::size_t* used) {
  // json_binary.cc read_variable_length(): 7 bits a byte, low group first; UINT32_MAX takes 5.
  std::uint64_t length = 0;
  for (std::size_t i = 0; i < 5 && at + i < data.size(); ++i) {
    const std::uint8_t byte = data[at + i];
    length |= static_cast<std::uint64_t>(byte & 0x7fU) << (7 * i);
    if ((byte & 0x80U) == 0) {
      if (length > UINT32_MAX) break;
      *used = i + 1;
      return static_cast<std::uint32_t>(length);
    }
  }
  fail(Errc::corrupt_input, fmt::format("JSON: bad length at offset {} (cut short or over 32 bits)", offset + at));
  return std::nullopt;
}

bool JsonBinaryDecoder::write_scalar(const JsonBinaryValue& value, ndjson::Writer& out) {
  const std::span<const std::uint8_t> data = value.data;
  std::size_t width = 0;
  switch (value.type) {
    case JsonbType::literal: width = 1; break;
    case JsonbType::int16:
    case JsonbType::uint16: width = 2; break;
    case JsonbType::int32:
    case JsonbType::uint32: width = 4; break;
    case JsonbType::int64:
    case JsonbType::uint64:
    case JsonbType::double_type: width = 8; break;
    case JsonbType::string:
    case JsonbType::opaque: break;
    default:
      return fail(Errc::corrupt_input, fmt::format("JSON: value at offset {} has unknown type 0x{:02x}", value.offset,
                                                   static_cast<unsigned>(value.type)));
  }
  if (width > 0) {
    if (data.size() < width) {
      return fail(Errc::corrupt_input, fmt::format("JSON: {} at offset {}: need {} bytes, have {}",
                                                   scalar_name(value.type), value.offset, width, data.size()));
    }
    if (!value.inlined && !charge(width, value.offset)) return false;
  }
  switch (value.type) {
    case JsonbType::literal:
      switch (static_cast<JsonbLiteral>(data[0])) {
        case JsonbLiteral::null: out.null(); return true;
        case JsonbLiteral::true_value: out.boolean(true); return true;
        case JsonbLiteral::false_value: out.boolean(false); return true;
      }
      return fail(Errc::corrupt_input, fmt::format("JSON: literal at offset {} is 0x{:02x}, not null/true/false",
                                                   value.offset, static_cast<unsigned>(data[0])));
    case JsonbType::int16: out.integer(static_cast<std::int16_t>(read_le(data, 0, 2))); return true;
    case JsonbType::uint16: out.unsigned_integer(read_le(data, 0, 2)); return true;
    case JsonbType::int32: out.integer(static_cast<std::int32_t>(read_le(data, 0, 4))); return true;
    case JsonbType::uint32: out.unsigned_integer(read_le(data, 0, 4)); return true;
    case JsonbType::int64: out.integer(static_cast<std::int64_t>(read_le(data, 0, 8))); return true;
    case JsonbType::uint64: out.unsigned_integer(read_le(data, 0, 8)); return true;
    case JsonbType::double_type: {
      // Shortest round-trip text, not MySQL's my_gcvt() form: see the header.
      const double number = std::bit_cast<double>(read_le(data, 0, 8));
      if (!std::isfinite(number)) {
        return fail(Errc::corrupt_input,
                    fmt::format("JSON: double at offset {} is NaN or infinite, which MySQL never stores", value.offset));
      }
      out.floating(number);
      return true;
    }
    case JsonbType::string: {
      std::size_t used = 0;
      const std::optional<std::uint32_t> length = variable_length(data, 0, value.offset, &used);
      if (!length) return false;
      if (*length > data.size() - used) {
        return fail(Errc::corrupt_input, fmt::format("JSON: string at offset {}: length {} runs past its container "
                                                     "({} bytes left)",
                                                     value.offset, *length, data.size() - used));
      }
      if (!charge(used + *length, value.offset)) return false;
      out.string(std::string_view(reinterpret_cast<const char*>(data.data() + used), *length));
      return true;
    }
    case JsonbType::opaque: return write_opaque(value, out);
    default: return false;  // unreachable: rejected above
  }
}

bool JsonBinaryDecoder::write_opaque(const JsonBinaryValue& value, ndjson::Writer& out) {
  const std::span<const std::uint8_t> data = value.data;
  if (data.empty()) {
    return fail(Errc::corrupt_input, fmt::format("JSON: opaque value at offset {}: no field type byte", value.offset));
  }
  const std::uint8_t field_type = data[0];
  std::size_t used = 0;
  const std::optional<std::uint32_t> length = variable_length(data, 1, value.offset, &used);
  if (!length) return false;
  if (*length > data.size() - 1 - used) {
    return fail(Errc::corrupt_input, fmt::format("JSON: opaque value at offset {}: length {} runs past its "
                                                 "container ({} bytes left)",
                                                 value.offset, *length, data.size() - 1 - used));
  }
  if (!charge(1 + used + *length, value.offset)) return false;
  const std::span<const std::uint8_t> payload = data.subspan(1 + used, *length);
  const std::uint64_t payload_offset = value.offset + 1 + used;

  // json_dom.cc Json_wrapper::type() maps these field types to J_DECIMAL / J_DATE / J_TIME /
  // J_DATETIME / J_TIMESTAMP; wrapper_to_string() prints everything else as base64.
  switch (field_type) {
    case kFieldNewDecimal: return write_decimal(payload, payload_offset, out);
    case kFieldDate:
    case kFieldTime:
    case kFieldDatetime:
    case kFieldTimestamp: return write_temporal(field_type, payload, payload_offset, out);
    case kFieldVarString:
      // wrapper_to_string(): "Treat strings saved in opaque as plain json strings" (MySQL 8.0.3x+).
      out.string(std::string_view(reinterpret_cast<const char*>(payload.data()), payload.size()));
      return true;
    default: break;
  }

  // "base64:type<N>:<base64>" (wrapper_to_string(), J_OPAQUE). mysys base64_encode() starts a
  // new line before every group once 76 characters are on the current one.
  scratch_.clear();
  scratch_.reserve(20 + (payload.size() + 2) / 3 * 4 * 77 / 76);
  fmt::format_to(std::back_inserter(scratch_), "base64:type{}:", field_type);
  std::size_t line = 0;
  for (std::size_t i = 0; i < payload.size(); i += 3) {
    if (line == 76) {
      scratch_.push_back('\n');
      line = 0;
    }
    const std::size_t left = payload.size() - i;
    const std::uint32_t group = (std::uint32_t{payload[i]} << 16) |
                                (left > 1 ? std::uint32_t{payload[i + 1]} << 8 : 0U) |
                                (left > 2 ? std::uint32_t{payload[i + 2]} : 0U);
    scratch_.push_back(kBase64[group >> 18]);
    scratch_.push_back(kBase64[(group >> 12) & 0x3fU]);
    scratch_.push_back(left > 1 ? kBase64[(group >> 6) & 0x3fU] : '=');
    scratch_.push_back(left > 2 ? kBase64[group & 0x3fU] : '=');
    line += 4;
  }
  out.string(scratch_);
  return true;
}

// Json_decimal::convert_from_binary(): precision byte, scale byte, then the value in the
// binary DECIMAL format (strings/decimal.cc decimal2bin: sign bit flipped, negative values
// stored inverted, 9 digits per 4 bytes, partial groups at both ends). Printed as
// decimal2string() prints it: leading zeros dropped, at least one integer digit, exactly
// `scale` fraction digits.
bool JsonBinaryDecoder::write_decimal(std::span<const std::uint8_t> bytes, std::uint64_t offset,
                                      ndjson::Writer& out) {
  if (bytes.size() < 2) {
    return fail(Errc::corrupt_input,
                fmt::format("JSON: DECIMAL at offset {}: need 2 bytes for precision and scale, have {}", offset,
                            bytes.size()));
  }
  const unsigned precision = bytes[0];
  const unsigned scale = bytes[1];
  if (precision > kMaxDecimalPrecision || scale > kMaxDecimalScale || scale > precision) {
    return fail(Errc::corrupt_input,
                fmt::format("JSON: DECIMAL at offset {}: precision {}, scale {} out of range", offset, precision, scale));
  }
  const std::size_t expected = decimal_binary_size(precision, scale);
  const std::span<const std::uint8_t> value = bytes.subspan(2);
  if (value.size() != expected) {
    return fail(Errc::corrupt_input, fmt::format("JSON: DECIMAL({},{}) at offset {}: {} value bytes, expected {}",
                                                 precision, scale, offset, value.size(), expected));
  }
  if (value.empty()) {  // precision 0: bin2decimal() reads the number zero
    out.raw_number("0");
    return true;
  }
  DecimalTextBuffer buffer;
  const DecimalText decimal = decode_decimal_text(value.data(), precision, scale, buffer);
  if (decimal.text.empty()) {
    return fail(Errc::corrupt_input,
                fmt::format("JSON: DECIMAL({},{}) at offset {}: a digit group is out of range", precision, scale, offset));
  }
  // '-' whenever the sign bit says negative, also for a zero (unlike the row values).
  out.raw_number(decimal.text);
  return true;
}

// Json_datetime::from_packed(): the 8-byte little-endian "packed" longlong of my_time.cc
// (TIME_from_longlong_{datetime,date,time}_packed), printed by my_TIME_to_str(t, ptr, 6).
bool JsonBinaryDecoder::write_temporal(std::uint8_t field_type, std::span<const std::uint8_t> bytes,
                                       std::uint64_t offset, ndjson::Writer& out) {
  if (bytes.size() != 8) {
    return fail(Errc::corrupt_input, fmt::format("JSON: {} at offset {}: {} bytes, expected 8",
                                                 temporal_name(field_type), offset, bytes.size()));
  }
  const auto packed = static_cast<std::int64_t>(read_le(bytes, 0, 8));
  const bool negative = packed < 0;
  const std::uint64_t magnitude = negative ? 0 - static_cast<std::uint64_t>(packed) : static_cast<std::uint64_t>(packed);
  const std::uint64_t micros = magnitude % (1U << 24);
  const std::uint64_t whole = magnitude >> 24;

  std::array<char, 96> buffer{};
  fmt::format_to_n_result<char*> end{};
  if (field_type == kFieldTime) {
    // hour: 10 bits from bit 12, minute: 6 bits from bit 6, second: 6 bits.
    end = fmt::format_to_n(buffer.data(), buffer.size(), "{}{:02}:{:02}:{:02}.{:06}", negative ? "-" : "",
                           (whole >> 12) % (1U << 10), (whole >> 6) % (1U << 6), whole % (1U << 6), micros);
  } else {
    // ymd = whole >> 17 (year*13+month in its upper bits, day in the low 5); hms in the low 17.
    const std::uint64_t ymd = whole >> 17;
    const std::uint64_t year_month = ymd >> 5;
    const std::uint64_t hms = whole % (1U << 17);
    const std::uint64_t year = year_month / 13;
    const std::uint64_t month = year_month % 13;
    const std::uint64_t day = ymd % (1U << 5);
    if (field_type == kFieldDate) {
      end = fmt::format_to_n(buffer.data(), buffer.size(), "{:04}-{:02}-{:02}", year, month, day);
    } else {
      end = fmt::format_to_n(buffer.data(), buffer.size(), "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:06}", year, month,
                             day, hms >> 12, (hms >> 6) % (1U << 6), hms % (1U << 6), micros);
    }
  }
  const std::size_t size = end.size < buffer.size() ? end.size : buffer.size();
  out.string(std::string_view(buffer.data(), size));
  return true;
}

Result<void> decode_json_binary(std::span<const std::uint8_t> document, std::uint64_t base_offset,
                                ndjson::Writer& out, std::size_t writer_depth) {
  // Budget: a well-formed document visits each of its bytes at most once; +1 for the null
  // literal an empty document stands for.
  JsonBinaryDecoder decoder(json_max_depth(writer_depth), document.size() + 1);
  decoder.write(json_binary_root(document, base_offset), 0, out);
  return decoder.result();
}

Result<void> decode_json_binary(ByteReader& reader, std::size_t length, ndjson::Writer& out,
                                std::size_t writer_depth) {
  const std::uint64_t at = reader.offset();
  const std::span<const std::uint8_t> document = reader.bytes(length, "JSON value");
  if (!reader.ok()) return cdc::fail(Errc::corrupt_input, reader.failure_text());
  return decode_json_binary(document, at, out, writer_depth);
}

}  // namespace cdc::rowimage
