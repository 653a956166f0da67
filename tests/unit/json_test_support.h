#pragma once

// Helpers of the binary JSON and JSON diff tests: a test-only binary JSON encoder (so that
// documents can be built from text and round-tripped), diff vectors, and decode wrappers.


#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "ndjson/writer.h"
#include "rowimage/json_binary.h"
#include "rowimage/json_diff.h"
#include "util/byte_reader.h"

#include <doctest/doctest.h>

namespace json_test {

using cdc::ByteReader;
using cdc::Errc;
using cdc::ndjson::Writer;
using cdc::rowimage::JsonBinaryDecoder;
using cdc::rowimage::JsonDiff;
using cdc::rowimage::JsonDiffOperation;
using cdc::rowimage::JsonPathLeg;
using Bytes = std::vector<std::uint8_t>;

// ---------------------------------------------------------------------------------------------
// Helpers

// "00 01 0f" (spaces and newlines ignored) -> bytes.
inline Bytes hex(std::string_view text) {
  Bytes out;
  int high = -1;
  for (const char c : text) {
    int nibble = -1;
    if (c >= '0' && c <= '9') nibble = c - '0';
    if (c >= 'a' && c <= 'f') nibble = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') nibble = c - 'A' + 10;
    if (nibble < 0) continue;
    if (high < 0) {
      high = nibble;
    } else {
      out.push_back(static_cast<std::uint8_t>(high * 16 + nibble));
      high = -1;
    }
  }
  REQUIRE(high < 0);
  return out;
}

inline std::string repeat(std::string_view text, std::size_t times) {
  std::string out;
  for (std::size_t i = 0; i < times; ++i) out += text;
  return out;
}

inline Bytes to_bytes(std::string_view text) { return Bytes(text.begin(), text.end()); }

// The decoded text, or "error: <message>". writer_depth 0: the value is the whole record.
inline std::string decode(const Bytes& document, std::size_t writer_depth = 0) {
  Writer writer;
  const cdc::Result<void> result = cdc::rowimage::decode_json_binary(document, 1000, writer, writer_depth);
  if (!result) return "error: " + result.error().message;
  return std::string(writer.buffered());
}

inline Errc decode_error_code(const Bytes& document, std::size_t writer_depth = 0) {
  Writer writer;
  const cdc::Result<void> result = cdc::rowimage::decode_json_binary(document, 0, writer, writer_depth);
  REQUIRE_FALSE(result.has_value());
  return result.error().code;
}

inline bool is_valid_json(std::string_view text) {
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(text);
  return parser.parse(padded).error() == simdjson::SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// A test-only encoder: builds binary JSON the way sql-common/json_binary.cc serialize() does
// (small format unless something does not fit in 16 bits, keys and values after the header,
// literal/int16/uint16 inlined, int32/uint32 inlined in the large format only).

struct Jv {
  enum class Kind { literal, int16, uint16, int32, uint32, int64, uint64, dbl, string, opaque, object, array };
  Kind kind = Kind::literal;
  std::uint8_t literal = 0;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double d = 0;
  std::string text;  // string bytes or opaque payload
  std::uint8_t field_type = 0;
  std::vector<std::pair<std::string, Jv>> members;  // written in this order
  std::vector<Jv> elements;
  bool force_large = false;

  // Special members defined below, where Jv is complete: clang 14 instantiates pair<string,
  // Jv> for the implicit ones while Jv is still incomplete.
  Jv();
  Jv(const Jv&);
  Jv(Jv&&) noexcept;
  Jv& operator=(const Jv&);
  Jv& operator=(Jv&&) noexcept;
  ~Jv();
};
inline Jv::Jv() = default;
inline Jv::Jv(const Jv&) = default;
inline Jv::Jv(Jv&&) noexcept = default;
inline Jv& Jv::operator=(const Jv&) = default;
inline Jv& Jv::operator=(Jv&&) noexcept = default;
inline Jv::~Jv() = default;

inline Jv jnull() { return Jv{}; }
inline Jv jbool(bool value) {
  Jv v;
  v.literal = value ? 1 : 2;
  return v;
}
inline Jv jint(Jv::Kind kind, std::int64_t value) {
  Jv v;
  v.kind = kind;
  v.i = value;
  return v;
}
inline Jv juint(Jv::Kind kind, std::uint64_t value) {
  Jv v;
  v.kind = kind;
  v.u = value;
  return v;
}
inline Jv jdouble(double value) {
  Jv v;
  v.kind = Jv::Kind::dbl;
  v.d = value;
  return v;
}
inline Jv jstring(std::string text) {
  Jv v;
  v.kind = Jv::Kind::string;
  v.text = std::move(text);
  return v;
}
inline Jv jopaque(std::uint8_t field_type, std::string payload) {
  Jv v;
  v.kind = Jv::Kind::opaque;
  v.field_type = field_type;
  v.text = std::move(payload);
  return v;
}
inline Jv jobject(std::vector<std::pair<std::string, Jv>> members) {
  Jv v;
  v.kind = Jv::Kind::object;
  v.members = std::move(members);
  return v;
}
inline Jv jarray(std::vector<Jv> elements) {
  Jv v;
  v.kind = Jv::Kind::array;
  v.elements = std::move(elements);
  return v;
}
inline Jv large(Jv v) {
  v.force_large = true;
  return v;
}

inline void append_le(std::string& out, std::uint64_t value, std::size_t width) {
  for (std::size_t i = 0; i < width; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

inline void append_varlen(std::string& out, std::size_t length) {
  do {
    auto byte = static_cast<std::uint8_t>(length & 0x7f);
    length >>= 7;
    if (length != 0) byte |= 0x80;
    out.push_back(static_cast<char>(byte));
  } while (length != 0);
}

inline bool inlined(const Jv& v, bool large) {
  switch (v.kind) {
    case Jv::Kind::literal:
    case Jv::Kind::int16:
    case Jv::Kind::uint16: return true;
    case Jv::Kind::int32:
    case Jv::Kind::uint32: return large;
    default: return false;
  }
}

inline std::uint8_t type_of(const Jv& v, bool large) {
  switch (v.kind) {
    case Jv::Kind::object: return large ? 0x01 : 0x00;
    case Jv::Kind::array: return large ? 0x03 : 0x02;
    case Jv::Kind::literal: return 0x04;
    case Jv::Kind::int16: return 0x05;
    case Jv::Kind::uint16: return 0x06;
    case Jv::Kind::int32: return 0x07;
    case Jv::Kind::uint32: return 0x08;
    case Jv::Kind::int64: return 0x09;
    case Jv::Kind::uint64: return 0x0a;
    case Jv::Kind::dbl: return 0x0b;
    case Jv::Kind::string: return 0x0c;
    case Jv::Kind::opaque: return 0x0f;
  }
  return 0xff;
}

inline std::string body_of(const Jv& v, bool* used_large);

inline std::string container_body(const Jv& v, bool large) {
  const bool object = v.kind == Jv::Kind::object;
  const std::size_t count = object ? v.members.size() : v.elements.size();
  const std::size_t osz = large ? 4 : 2;
  const std::size_t header = 2 * osz + count * ((object ? 2 + osz : 0) + 1 + osz);
  std::string key_entries;
  std::string keys;
  std::size_t cursor = header;
  if (object) {
    for (const auto& member : v.members) cursor += member.first.size();
    std::size_t key_at = header;
    for (const auto& member : v.members) {
      append_le(key_entries, key_at, osz);
      append_le(key_entries, member.first.size(), 2);
      keys += member.first;
      key_at += member.first.size();
    }
  }
  std::string value_entries;
  std::string values;
  for (std::size_t i = 0; i < count; ++i) {
    const Jv& child = object ? v.members[i].second : v.elements[i];
    if (inlined(child, large)) {
      value_entries.push_back(static_cast<char>(type_of(child, large)));
      std::uint64_t slot = 0;
      switch (child.kind) {
        case Jv::Kind::literal: slot = child.literal; break;
        // The server sign-extends an inlined int16 into the 4-byte large slot.
        case Jv::Kind::int16:
        case Jv::Kind::int32: slot = static_cast<std::uint64_t>(child.i); break;
        default: slot = child.u; break;
      }
      append_le(value_entries, slot, osz);
    } else {
      bool child_large = false;
      const std::string child_body = body_of(child, &child_large);
      value_entries.push_back(static_cast<char>(type_of(child, child_large)));
      append_le(value_entries, cursor, osz);
      values += child_body;
      cursor += child_body.size();
    }
  }
  std::string out;
  append_le(out, count, osz);
  append_le(out, cursor, osz);
  return out + key_entries + value_entries + keys + values;
}

inline std::string body_of(const Jv& v, bool* used_large) {
  std::string out;
  *used_large = false;
  switch (v.kind) {
    case Jv::Kind::object:
    case Jv::Kind::array: {
      const std::size_t count = v.kind == Jv::Kind::object ? v.members.size() : v.elements.size();
      if (!v.force_large && count <= 0xffff) {
        std::string small = container_body(v, false);
        // Everything in a small container is addressed with 16 bits: its size bounds them all.
        if (small.size() <= 0xffff) return small;
      }
      *used_large = true;
      return container_body(v, true);
    }
    case Jv::Kind::literal: out.push_back(static_cast<char>(v.literal)); break;
    case Jv::Kind::int16: append_le(out, static_cast<std::uint64_t>(v.i), 2); break;
    case Jv::Kind::uint16: append_le(out, v.u, 2); break;
    case Jv::Kind::int32: append_le(out, static_cast<std::uint64_t>(v.i), 4); break;
    case Jv::Kind::uint32: append_le(out, v.u, 4); break;
    case Jv::Kind::int64: append_le(out, static_cast<std::uint64_t>(v.i), 8); break;
    case Jv::Kind::uint64: append_le(out, v.u, 8); break;
    case Jv::Kind::dbl: append_le(out, std::bit_cast<std::uint64_t>(v.d), 8); break;
    case Jv::Kind::string:
      append_varlen(out, v.text.size());
      out += v.text;
      break;
    case Jv::Kind::opaque:
      out.push_back(static_cast<char>(v.field_type));
      append_varlen(out, v.text.size());
      out += v.text;
      break;
  }
  return out;
}

inline Bytes encode(const Jv& v) {
  bool large = false;
  const std::string body = body_of(v, &large);
  // Sized up front: push_back then insert trips a GCC 12 -Warray-bounds false positive.
  Bytes out(1 + body.size());
  out[0] = type_of(v, large);
  std::copy(body.begin(), body.end(), out.begin() + 1);
  return out;
}

// The server's member order (json_dom.h Json_key_comparator): length first, then bytes.
inline bool key_before(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

// JSON text -> Jv with the types the server would pick (smallest integer type that fits).
inline Jv from_dom(simdjson::dom::element element) {
  switch (element.type()) {
    case simdjson::dom::element_type::ARRAY: {
      std::vector<Jv> elements;
      for (const simdjson::dom::element child : simdjson::dom::array(element)) elements.push_back(from_dom(child));
      return jarray(std::move(elements));
    }
    case simdjson::dom::element_type::OBJECT: {
      std::vector<std::pair<std::string, Jv>> members;
      for (const simdjson::dom::key_value_pair field : simdjson::dom::object(element)) {
        members.emplace_back(std::string(field.key), from_dom(field.value));
      }
      std::stable_sort(members.begin(), members.end(),
                       [](const auto& a, const auto& b) { return key_before(a.first, b.first); });
      return jobject(std::move(members));
    }
    case simdjson::dom::element_type::INT64: {
      const std::int64_t value = std::int64_t(element);
      if (value >= INT16_MIN && value <= INT16_MAX) return jint(Jv::Kind::int16, value);
      if (value >= INT32_MIN && value <= INT32_MAX) return jint(Jv::Kind::int32, value);
      return jint(Jv::Kind::int64, value);
    }
    case simdjson::dom::element_type::UINT64: return juint(Jv::Kind::uint64, std::uint64_t(element));
    case simdjson::dom::element_type::DOUBLE: return jdouble(double(element));
    case simdjson::dom::element_type::STRING: return jstring(std::string(std::string_view(element)));
    case simdjson::dom::element_type::BOOL: return jbool(bool(element));
    case simdjson::dom::element_type::NULL_VALUE: return jnull();
    default: break;
  }
  FAIL("unexpected simdjson element type");
  return jnull();
}

inline Jv from_json(std::string_view text) {
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(text);
  simdjson::dom::element root;
  REQUIRE(parser.parse(padded).get(root) == simdjson::SUCCESS);
  return from_dom(root);
}

inline Bytes encode_json(std::string_view text) { return encode(from_json(text)); }

// MySQL's binary DECIMAL (strings/decimal.cc decimal2bin) from text like "-123.45", with the
// precision/scale bytes in front, as Json_decimal::get_binary() writes it.
inline std::string decimal_payload(std::string_view text, unsigned precision, unsigned scale) {
  constexpr std::size_t kDigitBytes[] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) text.remove_prefix(1);
  const std::size_t point = text.find('.');
  std::string integer(text.substr(0, point));
  std::string fraction(point == std::string_view::npos ? "" : text.substr(point + 1));
  integer.erase(0, integer.find_first_not_of('0') == std::string::npos ? integer.size() : integer.find_first_not_of('0'));
  REQUIRE(integer.size() <= precision - scale);
  REQUIRE(fraction.size() <= scale);
  const std::size_t integer_digits = precision - scale;
  integer.insert(0, integer_digits - integer.size(), '0');
  fraction.append(scale - fraction.size(), '0');
  std::string bin;
  const auto put_group = [&](std::string_view digits) {
    std::uint32_t value = 0;
    for (const char c : digits) value = value * 10 + static_cast<std::uint32_t>(c - '0');
    const std::size_t width = digits.size() == 9 ? 4 : kDigitBytes[digits.size()];
    for (std::size_t i = width; i > 0; --i) bin.push_back(static_cast<char>((value >> (8 * (i - 1))) & 0xff));
  };
  const std::size_t lead = integer_digits % 9;
  if (lead > 0) put_group(std::string_view(integer).substr(0, lead));
  for (std::size_t at = lead; at < integer.size(); at += 9) put_group(std::string_view(integer).substr(at, 9));
  for (std::size_t at = 0; at + 9 <= fraction.size(); at += 9) put_group(std::string_view(fraction).substr(at, 9));
  if (scale % 9 > 0) put_group(std::string_view(fraction).substr(scale - scale % 9));
  if (!bin.empty()) {
    bin[0] = static_cast<char>(bin[0] ^ 0x80);
    if (negative) {
      for (char& c : bin) c = static_cast<char>(~c);
    }
  }
  std::string payload;
  payload.push_back(static_cast<char>(precision));
  payload.push_back(static_cast<char>(scale));
  return payload + bin;
}

// my_time.cc TIME_to_longlong_{datetime,time}_packed, as 8 little-endian bytes.
inline std::string packed_bytes(std::int64_t packed) {
  std::string out;
  append_le(out, static_cast<std::uint64_t>(packed), 8);
  return out;
}
inline std::int64_t datetime_packed(std::int64_t year, std::int64_t month, std::int64_t day, std::int64_t hour,
                             std::int64_t minute, std::int64_t second, std::int64_t micros) {
  const std::int64_t ymd = ((year * 13 + month) << 5) | day;
  const std::int64_t hms = (hour << 12) | (minute << 6) | second;
  return (((ymd << 17) | hms) << 24) + micros;
}
inline std::int64_t time_packed(bool negative, std::int64_t hour, std::int64_t minute, std::int64_t second,
                         std::int64_t micros) {
  const std::int64_t packed = (((hour << 12) | (minute << 6) | second) << 24) + micros;
  return negative ? -packed : packed;
}

// Diff vector bytes (Json_diff_vector::write_binary).
struct DiffSpec {
  JsonDiffOperation operation;
  std::string path;
  std::string value_json;  // JSON text of the value, encoded with the test encoder
};

inline void append_packed(std::string& out, std::size_t value) {
  if (value < 251) {
    out.push_back(static_cast<char>(value));
  } else if (value < 0x10000) {
    out.push_back(static_cast<char>(0xfc));
    append_le(out, value, 2);
  } else if (value < 0x1000000) {
    out.push_back(static_cast<char>(0xfd));
    append_le(out, value, 3);
  } else {
    out.push_back(static_cast<char>(0xfe));
    append_le(out, value, 8);
  }
}

inline Bytes diff_vector(const std::vector<DiffSpec>& diffs) {
  std::string body;
  for (const DiffSpec& diff : diffs) {
    body.push_back(static_cast<char>(diff.operation));
    append_packed(body, diff.path.size());
    body += diff.path;
    if (diff.operation != JsonDiffOperation::remove) {
      const Bytes value = encode_json(diff.value_json);
      append_packed(body, value.size());
      body.append(value.begin(), value.end());
    }
  }
  std::string out;
  append_le(out, body.size(), 4);
  out += body;
  return to_bytes(out);
}

// Before document + diff vector -> after text, or "error: ...".
inline std::string apply_diffs(const Bytes& before, const Bytes& vector) {
  ByteReader reader(vector, 5000);
  Writer writer;
  const cdc::Result<void> result = cdc::rowimage::decode_json_partial_update(before, 100, reader, writer, 0);
  if (!result) return "error: " + result.error().message;
  CHECK(reader.empty());
  return std::string(writer.buffered());
}

// Nested arrays [[[...]]] `depth` deep.
inline Jv nested_arrays(std::size_t depth) {
  Jv v = jarray({});
  for (std::size_t i = 1; i < depth; ++i) v = jarray({v});
  return v;
}

}  // namespace json_test
