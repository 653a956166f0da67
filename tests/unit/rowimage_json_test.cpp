#include <doctest/doctest.h>

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

namespace {

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
Bytes hex(std::string_view text) {
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

std::string repeat(std::string_view text, std::size_t times) {
  std::string out;
  for (std::size_t i = 0; i < times; ++i) out += text;
  return out;
}

Bytes to_bytes(std::string_view text) { return Bytes(text.begin(), text.end()); }

// The decoded text, or "error: <message>". writer_depth 0: the value is the whole record.
std::string decode(const Bytes& document, std::size_t writer_depth = 0) {
  Writer writer;
  const cdc::Result<void> result = cdc::rowimage::decode_json_binary(document, 1000, writer, writer_depth);
  if (!result) return "error: " + result.error().message;
  return std::string(writer.buffered());
}

Errc decode_error_code(const Bytes& document, std::size_t writer_depth = 0) {
  Writer writer;
  const cdc::Result<void> result = cdc::rowimage::decode_json_binary(document, 0, writer, writer_depth);
  REQUIRE_FALSE(result.has_value());
  return result.error().code;
}

bool is_valid_json(std::string_view text) {
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
};

Jv jnull() { return Jv{}; }
Jv jbool(bool value) {
  Jv v;
  v.literal = value ? 1 : 2;
  return v;
}
Jv jint(Jv::Kind kind, std::int64_t value) {
  Jv v;
  v.kind = kind;
  v.i = value;
  return v;
}
Jv juint(Jv::Kind kind, std::uint64_t value) {
  Jv v;
  v.kind = kind;
  v.u = value;
  return v;
}
Jv jdouble(double value) {
  Jv v;
  v.kind = Jv::Kind::dbl;
  v.d = value;
  return v;
}
Jv jstring(std::string text) {
  Jv v;
  v.kind = Jv::Kind::string;
  v.text = std::move(text);
  return v;
}
Jv jopaque(std::uint8_t field_type, std::string payload) {
  Jv v;
  v.kind = Jv::Kind::opaque;
  v.field_type = field_type;
  v.text = std::move(payload);
  return v;
}
Jv jobject(std::vector<std::pair<std::string, Jv>> members) {
  Jv v;
  v.kind = Jv::Kind::object;
  v.members = std::move(members);
  return v;
}
Jv jarray(std::vector<Jv> elements) {
  Jv v;
  v.kind = Jv::Kind::array;
  v.elements = std::move(elements);
  return v;
}
Jv large(Jv v) {
  v.force_large = true;
  return v;
}

void append_le(std::string& out, std::uint64_t value, std::size_t width) {
  for (std::size_t i = 0; i < width; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void append_varlen(std::string& out, std::size_t length) {
  do {
    auto byte = static_cast<std::uint8_t>(length & 0x7f);
    length >>= 7;
    if (length != 0) byte |= 0x80;
    out.push_back(static_cast<char>(byte));
  } while (length != 0);
}

bool inlined(const Jv& v, bool large) {
  switch (v.kind) {
    case Jv::Kind::literal:
    case Jv::Kind::int16:
    case Jv::Kind::uint16: return true;
    case Jv::Kind::int32:
    case Jv::Kind::uint32: return large;
    default: return false;
  }
}

std::uint8_t type_of(const Jv& v, bool large) {
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

std::string body_of(const Jv& v, bool* used_large);

std::string container_body(const Jv& v, bool large) {
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

std::string body_of(const Jv& v, bool* used_large) {
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

Bytes encode(const Jv& v) {
  bool large = false;
  const std::string body = body_of(v, &large);
  // Sized up front: push_back then insert trips a GCC 12 -Warray-bounds false positive.
  Bytes out(1 + body.size());
  out[0] = type_of(v, large);
  std::copy(body.begin(), body.end(), out.begin() + 1);
  return out;
}

// The server's member order (json_dom.h Json_key_comparator): length first, then bytes.
bool key_before(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

// JSON text -> Jv with the types the server would pick (smallest integer type that fits).
Jv from_dom(simdjson::dom::element element) {
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

Jv from_json(std::string_view text) {
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(text);
  simdjson::dom::element root;
  REQUIRE(parser.parse(padded).get(root) == simdjson::SUCCESS);
  return from_dom(root);
}

Bytes encode_json(std::string_view text) { return encode(from_json(text)); }

// MySQL's binary DECIMAL (strings/decimal.cc decimal2bin) from text like "-123.45", with the
// precision/scale bytes in front, as Json_decimal::get_binary() writes it.
std::string decimal_payload(std::string_view text, unsigned precision, unsigned scale) {
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
std::string packed_bytes(std::int64_t packed) {
  std::string out;
  append_le(out, static_cast<std::uint64_t>(packed), 8);
  return out;
}
std::int64_t datetime_packed(std::int64_t year, std::int64_t month, std::int64_t day, std::int64_t hour,
                             std::int64_t minute, std::int64_t second, std::int64_t micros) {
  const std::int64_t ymd = ((year * 13 + month) << 5) | day;
  const std::int64_t hms = (hour << 12) | (minute << 6) | second;
  return (((ymd << 17) | hms) << 24) + micros;
}
std::int64_t time_packed(bool negative, std::int64_t hour, std::int64_t minute, std::int64_t second,
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

void append_packed(std::string& out, std::size_t value) {
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

Bytes diff_vector(const std::vector<DiffSpec>& diffs) {
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
std::string apply_diffs(const Bytes& before, const Bytes& vector) {
  ByteReader reader(vector, 5000);
  Writer writer;
  const cdc::Result<void> result = cdc::rowimage::decode_json_partial_update(before, 100, reader, writer, 0);
  if (!result) return "error: " + result.error().message;
  CHECK(reader.empty());
  return std::string(writer.buffered());
}

// Nested arrays [[[...]]] `depth` deep.
Jv nested_arrays(std::size_t depth) {
  Jv v = jarray({});
  for (std::size_t i = 1; i < depth; ++i) v = jarray({v});
  return v;
}

// ---------------------------------------------------------------------------------------------

TEST_CASE("json: hand-written small and large documents") {
  struct Case {
    std::string name;
    std::string bytes;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"small object",
       "00"        // type: small object
       "02 00"     // count 2
       "18 00"     // size 24 (from the byte after the type)
       "12 00 01 00"  // key 0: offset 18, length 1
       "13 00 02 00"  // key 1: offset 19, length 2
       "05 01 00"  // value 0: int16 1, inlined
       "0c 15 00"  // value 1: string at offset 21
       "61 62 63"  // keys "a", "bc"
       "02 78 79",  // "xy": length 2, bytes
       R"({"a":1,"bc":"xy"})"},
      {"large array",
       "03"              // type: large array
       "03 00 00 00"     // count 3
       "19 00 00 00"     // size 25
       "05 01 00 00 00"  // int16 1, inlined in a 4-byte slot
       "07 70 11 01 00"  // int32 70000, inlined (large format only)
       "0c 17 00 00 00"  // string at offset 23
       "01 7a",          // "z"
       R"([1,70000,"z"])"},
      {"small array with a non-inlined int32",
       "02"        // type: small array
       "01 00"     // count 1
       "0b 00"     // size 11
       "07 07 00"  // int32 at offset 7 (not inlined in the small format)
       "70 11 01 00",
       "[70000]"},
      {"literals inlined", "02 03 00 0d 00 04 00 00 04 01 00 04 02 00", "[null,true,false]"},
      {"empty object", "00 00 00 04 00", "{}"},
      {"empty large array", "03 00 00 00 00 08 00 00 00", "[]"},
      {"top-level int64 min", "09 00 00 00 00 00 00 00 80", "-9223372036854775808"},
      {"top-level uint64 max", "0a ff ff ff ff ff ff ff ff", "18446744073709551615"},
      {"top-level double 0.1", "0b 9a 99 99 99 99 99 b9 3f", "0.1"},
      {"top-level string", "0c 03 61 22 62", R"("a\"b")"},
      {"top-level literal true", "04 01", "true"},
      {"trailing bytes after the root are ignored", "04 02 ff ff", "false"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(decode(hex(c.bytes)) == c.expected);
  }
}

// Bytes copied from the row images of two server-written binlogs in the shared fixture corpus
// (../shared/fixtures/binlog/rust_mysql_common, see its EXPECTED.md).
TEST_CASE("json: documents written by MySQL 8.0.22 and 9.0.1") {
  struct Case {
    std::string name;
    std::string bytes;
    std::string expected;
  };
  const std::vector<Case> cases = {
      // json.binlog.000001 (8.0.22), WRITE_ROWS at 1059, document at file offset 1099:
      // INSERT INTO t (json_col) VALUES ('{"age":24,"data":"xxxxxxxxxx","name":"Joe"}')
      {"json.binlog.000001 row 1",
       "00 0300 3300 1900 0300 1c00 0400 2000 0400 05 1800 0c 2400 0c 2f00 616765 64617461 6e616d65"
       "0a 78787878787878787878 03 4a6f65",
       R"({"age":24,"data":"xxxxxxxxxx","name":"Joe"})"},
      // json-opaque.binlog (9.0.1), table foo.test (a json), eight inserts; document offsets
      // 772, 882, 999, 1116, 1233, 1348, 1464, 1587.
      {"opaque VARCHAR", "0001000f000b0001000f0c00610f0155", R"({"a":"base64:type15:VQ=="})"},
      {"opaque DATE", "00010016000b0001000f0c00620a080000000000e48b19", R"({"b":"2012-03-18"})"},
      {"opaque DATETIME", "00010016000b0001000f0c00630c08000000adb7e48b19", R"({"c":"2012-03-18 11:30:45.000000"})"},
      {"opaque TIME", "00010016000b0001000f0c00630b08f1fb09ee77050000", R"({"c":"87:31:46.654321"})"},
      {"opaque DECIMAL 123.456", "00010014000b0001000f0c0064f6060603807b01c8", R"({"d":123.456})"},
      {"opaque DECIMAL 9.00", "00010015000b0001000f0c0065f6070b028000000900", R"({"e":9.00})"},
      {"array of inlined scalars", "0001001c000b000100020c006504001000050000050100040100040200",
       R"({"e":[0,1,true,false]})"},
      {"null member", "0001000c000b00010004000065", R"({"e":null})"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(decode(hex(c.bytes)) == c.expected);
  }
}

TEST_CASE("json: every scalar type") {
  struct Case {
    std::string name;
    Jv value;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"null", jnull(), "null"},
      {"true", jbool(true), "true"},
      {"false", jbool(false), "false"},
      {"int16 min", jint(Jv::Kind::int16, INT16_MIN), "-32768"},
      {"int16 max", jint(Jv::Kind::int16, INT16_MAX), "32767"},
      {"uint16 max", juint(Jv::Kind::uint16, UINT16_MAX), "65535"},
      {"int32 min", jint(Jv::Kind::int32, INT32_MIN), "-2147483648"},
      {"int32 max", jint(Jv::Kind::int32, INT32_MAX), "2147483647"},
      {"uint32 max", juint(Jv::Kind::uint32, UINT32_MAX), "4294967295"},
      {"int64 min", jint(Jv::Kind::int64, INT64_MIN), "-9223372036854775808"},
      {"int64 max", jint(Jv::Kind::int64, INT64_MAX), "9223372036854775807"},
      {"uint64 max", juint(Jv::Kind::uint64, UINT64_MAX), "18446744073709551615"},
      {"double 0.1", jdouble(0.1), "0.1"},
      // MySQL prints 1.0 (my_gcvt + ".0"); we print the shortest round-trip form.
      {"double 1.0", jdouble(1.0), "1"},
      {"double -2.5", jdouble(-2.5), "-2.5"},
      {"double 1e300", jdouble(1e300), "1e+300"},
      {"double min subnormal", jdouble(5e-324), "5e-324"},
      {"double max", jdouble(std::numeric_limits<double>::max()), "1.7976931348623157e+308"},
      {"double 1/3", jdouble(1.0 / 3.0), "0.3333333333333333"},
      {"empty string", jstring(""), R"("")"},
      {"unicode string", jstring("h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80"), "\"h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80\""},
      {"escapes", jstring("a\"b\\c\nd\te\x01"), R"("a\"b\\c\nd\te\u0001")"},
      {"invalid UTF-8 is replaced", jstring("a\xff"), "\"a\xEF\xBF\xBD\""},
      {"top-level empty object", jobject({}), "{}"},
      {"top-level empty array", jarray({}), "[]"},
      {"large empty object", large(jobject({})), "{}"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(decode(encode(c.value)) == c.expected);
    // Inside a small and a large array too (inlined where the format inlines).
    CHECK(decode(encode(jarray({c.value}))) == "[" + c.expected + "]");
    CHECK(decode(encode(large(jarray({c.value})))) == "[" + c.expected + "]");
    CHECK(decode(encode(large(jobject({{"k", c.value}})))) == R"({"k":)" + c.expected + "}");
  }
}

TEST_CASE("json: strings with 1-, 2- and 3-byte length prefixes") {
  struct Case {
    std::string name;
    std::size_t length;
    std::size_t prefix_bytes;
  };
  const std::vector<Case> cases = {
      {"127 chars", 127, 1}, {"128 chars", 128, 2}, {"16383 chars", 16383, 2}, {"16384 chars", 16384, 3},
      {"70000 chars (large object)", 70000, 3},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    std::string text(c.length, 'x');
    text[0] = 'A';
    text.back() = 'Z';
    const Bytes top = encode(jstring(text));
    CHECK(top.size() == 1 + c.prefix_bytes + c.length);
    CHECK(decode(top) == "\"" + text + "\"");
    // In an object; at 70000 bytes the encoder must switch to the large format.
    const Bytes object = encode(jobject({{"s", jstring(text)}, {"n", jint(Jv::Kind::int16, 7)}}));
    CHECK(object[0] == (c.length > 65000 ? 0x01 : 0x00));
    CHECK(decode(object) == R"({"s":")" + text + R"(","n":7})");
  }
}

TEST_CASE("json: JSON text round-trips through the test encoder") {
  struct Case {
    std::string name;
    std::string json;
    std::string expected;  // compact, members in the server's order
  };
  const std::vector<Case> cases = {
      {"flat object", R"({"b": 1, "a": "x"})", R"({"a":"x","b":1})"},
      {"key order is length first", R"({"bb": 1, "a": 2, "ccc": 3, "ab": 4})", R"({"a":2,"ab":4,"bb":1,"ccc":3})"},
      {"nested", R"({"a": {"b": [1, {"c": null}, []], "d": {}}, "e": [true, false]})",
       R"({"a":{"b":[1,{"c":null},[]],"d":{}},"e":[true,false]})"},
      {"integers of every width", "[0, -1, 32767, 32768, -32769, 2147483647, 2147483648, -9223372036854775808, "
                                  "18446744073709551615]",
       "[0,-1,32767,32768,-32769,2147483647,2147483648,-9223372036854775808,18446744073709551615]"},
      {"doubles", "[0.5, -1.25, 1e-7, 6.02214076e23]", "[0.5,-1.25,1e-07,6.02214076e+23]"},
      {"unicode keys and values", "{\"\xC3\xA9t\xC3\xA9\": \"\xE2\x98\x83\", \"k\": \"\\u0000\"}",
       "{\"k\":\"\\u0000\",\"\xC3\xA9t\xC3\xA9\":\"\xE2\x98\x83\"}"},
      {"escaped key", R"({"a\"b": 1, "\\": 2})", R"({"\\":2,"a\"b":1})"},
      {"deep mix", R"([[[[{"a": [[{"b": "c"}]]}]]]])", R"([[[[{"a":[[{"b":"c"}]]}]]]])"},
      {"scalar root", "42", "42"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(decode(encode_json(c.json)) == c.expected);
    // The same document forced into the large format decodes the same.
    Jv forced = from_json(c.json);
    if (forced.kind == Jv::Kind::object || forced.kind == Jv::Kind::array) {
      forced.force_large = true;
      CHECK(decode(encode(forced)) == c.expected);
    }
  }
}

TEST_CASE("json: large format everywhere and a document over 64 KiB") {
  // Every container large, every level: int32 inlined, strings pointed at with 4-byte offsets.
  Jv inner = large(jobject({{"i", jint(Jv::Kind::int32, -70000)}, {"u", juint(Jv::Kind::uint32, 70000)}}));
  const Jv doc = large(jarray({inner, large(jarray({jstring("s"), jint(Jv::Kind::int64, 1)})), jnull()}));
  CHECK(decode(encode(doc)) == R"([{"i":-70000,"u":70000},["s",1],null])");

  // 1000 members of 100 bytes: too big for 16-bit offsets, so the encoder picks large.
  std::vector<std::pair<std::string, Jv>> members;
  std::string expected = "{";
  for (int i = 0; i < 1000; ++i) {
    const std::string key = fmt::format("k{:04}", i);
    members.emplace_back(key, jstring(std::string(100, static_cast<char>('a' + i % 26))));
    expected += fmt::format(R"({}"{}":"{}")", i == 0 ? "" : ",", key, std::string(100, static_cast<char>('a' + i % 26)));
  }
  expected += "}";
  const Bytes big = encode(jobject(members));
  CHECK(big[0] == 0x01);
  CHECK(big.size() > 0x10000);
  CHECK(decode(big) == expected);
}

TEST_CASE("json: opaque DECIMAL, temporal and other types") {
  const std::string kNines = std::string(35, '9') + "." + std::string(30, '9');
  const std::string kDigits65 = "-" + repeat("1234567890", 3) + "12345." + repeat("1234567890", 3);
  struct Case {
    std::string name;
    std::uint8_t field_type;
    std::string payload;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"DECIMAL(6,3) 123.456", 246, decimal_payload("123.456", 6, 3), "123.456"},
      {"DECIMAL(11,2) 9.00", 246, decimal_payload("9", 11, 2), "9.00"},
      {"DECIMAL(3,2) -1.50", 246, decimal_payload("-1.50", 3, 2), "-1.50"},
      {"DECIMAL(4,4) 0.0001", 246, decimal_payload("0.0001", 4, 4), "0.0001"},
      {"DECIMAL(10,0) 0", 246, decimal_payload("0", 10, 0), "0"},
      {"DECIMAL(5,0) -12345", 246, decimal_payload("-12345", 5, 0), "-12345"},
      {"DECIMAL(65,30) max", 246, decimal_payload(kNines, 65, 30), kNines},
      {"DECIMAL(65,30) negative, many groups", 246, decimal_payload(kDigits65, 65, 30), kDigits65},
      {"DECIMAL(20,10) leading zeros dropped", 246, decimal_payload("1.5", 20, 10), "1.5000000000"},
      {"DATE", 10, packed_bytes(datetime_packed(2024, 9, 4, 0, 0, 0, 0)), R"("2024-09-04")"},
      {"DATE zero", 10, packed_bytes(0), R"("0000-00-00")"},
      {"DATETIME with micros", 12, packed_bytes(datetime_packed(2024, 9, 4, 10, 52, 12, 189000)),
       R"("2024-09-04 10:52:12.189000")"},
      {"DATETIME without micros keeps six zeros", 12, packed_bytes(datetime_packed(1999, 12, 31, 23, 59, 59, 0)),
       R"("1999-12-31 23:59:59.000000")"},
      {"TIMESTAMP", 7, packed_bytes(datetime_packed(1985, 10, 13, 10, 22, 23, 567000)),
       R"("1985-10-13 10:22:23.567000")"},
      {"TIME", 11, packed_bytes(time_packed(false, 15, 22, 33, 670000)), R"("15:22:33.670000")"},
      {"TIME negative, three-digit hours", 11, packed_bytes(time_packed(true, 838, 59, 59, 0)),
       R"("-838:59:59.000000")"},
      {"VAR_STRING is a plain string", 253, "text", R"("text")"},
      {"BLOB", 252, std::string("\x00\x01\xfe\xff", 4), R"("base64:type252:AAH+/w==")"},
      {"BIT", 16, "U", R"("base64:type16:VQ==")"},
      {"YEAR", 13, "\x07", R"("base64:type13:Bw==")"},
      {"empty GEOMETRY", 255, "", R"("base64:type255:")"},
      // mysys base64_encode(): a newline before the group that would start column 77.
      {"long BLOB wraps at 76 characters", 252, std::string(60, 'x'),
       "\"base64:type252:" + repeat("eHh4", 19) + "\\n" + "eHh4\""},
      {"57 bytes fill one line exactly", 252, std::string(57, 'x'), "\"base64:type252:" + repeat("eHh4", 19) + "\""},
      {"two line breaks", 252, std::string(120, 'x'),
       "\"base64:type252:" + repeat("eHh4", 19) + "\\n" + repeat("eHh4", 19) + "\\n" + repeat("eHh4", 2) + "\""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(decode(encode(jopaque(c.field_type, c.payload))) == c.expected);
    CHECK(decode(encode(jobject({{"v", jopaque(c.field_type, c.payload)}}))) == R"({"v":)" + c.expected + "}");
  }
}

TEST_CASE("json: an empty document is null") {
  CHECK(decode(Bytes{}) == "null");
  Writer writer;
  ByteReader reader(std::string_view("\x04\x01rest"), 0);
  CHECK(cdc::rowimage::decode_json_binary(reader, 0, writer, 0).has_value());
  CHECK(writer.buffered() == "null");
  CHECK(reader.position() == 0);
}

TEST_CASE("json: the ByteReader overload consumes exactly the value") {
  const Bytes doc = encode_json(R"({"a": [1, 2]})");
  Bytes framed = doc;
  framed.push_back(0x99);  // the next column
  ByteReader reader(framed, 4000);
  Writer writer;
  REQUIRE(cdc::rowimage::decode_json_binary(reader, doc.size(), writer, 0).has_value());
  CHECK(writer.buffered() == R"({"a":[1,2]})");
  CHECK(reader.remaining() == 1);

  ByteReader short_reader(doc, 4000);
  Writer other;
  const cdc::Result<void> result = cdc::rowimage::decode_json_binary(short_reader, doc.size() + 1, other, 0);
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().code == Errc::corrupt_input);
  CHECK(result.error().message.find("JSON value") != std::string::npos);
  CHECK_FALSE(short_reader.ok());
}

TEST_CASE("json: a document cut short fails at every length") {
  struct Case {
    std::string name;
    std::string json;
  };
  const std::vector<Case> cases = {
      {"object", R"({"a": 1, "bb": "text", "c": [1, 2.5, null], "d": {"e": 70000}})"},
      {"array", R"([18446744073709551615, -9223372036854775808, "x", {}, []])"},
      {"string", R"("hello")"},
      {"double", "0.25"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const Bytes full = encode_json(c.json);
    REQUIRE(decode(full).rfind("error", 0) != 0);
    for (std::size_t size = 1; size < full.size(); ++size) {
      CAPTURE(size);
      const Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(size));
      const std::string text = decode(cut);
      CHECK(text.rfind("error: JSON: ", 0) == 0);
    }
  }
  // The same for a large-format document and for opaque values.
  Jv opaque_doc = large(jarray({jopaque(246, decimal_payload("1.5", 5, 2)), jopaque(12, packed_bytes(1 << 24))}));
  const Bytes full = encode(opaque_doc);
  for (std::size_t size = 1; size < full.size(); ++size) {
    CAPTURE(size);
    CHECK(decode(Bytes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(size))).rfind("error", 0) == 0);
  }
}

TEST_CASE("json: malformed documents fail with what was wrong and where") {
  struct Case {
    std::string name;
    std::string bytes;
    std::string message;  // a substring of the error
  };
  // Offsets in messages are absolute: decode() places the document at offset 1000, so the
  // root value's data starts at 1001.
  const std::vector<Case> cases = {
      {"bad type byte at the root", "0d 00", "value at offset 1001 has unknown type 0x0d"},
      {"bad type byte in an entry", "02 01 00 08 00 0e 07 00 00", "value at offset 1008 has unknown type 0x0e"},
      {"bad literal", "04 03", "literal at offset 1001 is 0x03"},
      {"bad inlined literal", "02 01 00 07 00 04 09 00", "literal at offset 1006 is 0x09"},
      {"object size past the end", "00 01 00 40 00 0a 00 01 00 04 00 00 61", "object at offset 1001 declares 64 bytes, only 12 left"},
      {"header bigger than the object", "02 05 00 06 00 04 00 00", "5 entries need a 19-byte header, more than its 6 bytes"},
      {"count and size cut", "01 01 00 00", "need 8 bytes for its count and size, have 3"},
      {"value offset past the end", "02 01 00 09 00 0c 20 00 00 00", "value 0 at 32 lies outside its value area [7, 9)"},
      {"value offset inside the header", "02 01 00 09 00 0c 02 00 00 00", "value 0 at 2 lies outside its value area [7, 9)"},
      {"key offset inside the header", "00 01 00 0c 00 02 00 01 00 04 00 00 61", "key 0 at 2 (length 1) lies outside its key area [11, 12)"},
      {"key running past the end", "00 01 00 0c 00 0b 00 05 00 04 00 00 61", "key 0 at 11 (length 5) lies outside"},
      {"keys overlapping",
       "00 02 00 14 00"  // small object, 2 members, size 20
       "12 00 02 00"     // key 0 at 18, length 2
       "13 00 01 00"     // key 1 at 19: inside key 0
       "04 00 00 04 01 00 61 62",
       "key 1 at 19 overlaps key 0 at 18 (length 2)"},
      {"string length past the container", "02 01 00 0a 00 0c 07 00 05 61 62", "string at offset 1008: length 5 runs past"},
      {"string length never ends", "0c ff ff", "bad length at offset 1001"},
      {"string length over 32 bits", "0c ff ff ff ff 7f", "bad length"},
      {"int64 cut", "09 01 02 03", "int64 at offset 1001: need 8 bytes, have 3"},
      {"non-inlined int32 cut", "02 01 00 09 00 07 07 00 01 02", "int32 at offset 1008: need 4 bytes, have 2"},
      {"NaN double", "0b 00 00 00 00 00 00 f8 7f", "NaN or infinite"},
      {"opaque without its type", "02 01 00 08 00 0f 07 00 00", "length"},
      {"opaque with no bytes", "0f", "no field type byte"},
      {"DECIMAL precision over 65", "0f f6 04 42 00 00 00", "precision 66, scale 0 out of range"},
      {"DECIMAL scale over precision", "0f f6 03 02 03 00", "precision 2, scale 3 out of range"},
      {"DECIMAL wrong byte count", "0f f6 03 05 02 80", "DECIMAL(5,2) at offset 1003: 1 value bytes, expected 3"},
      {"DECIMAL digit group out of range", "0f f6 03 02 00 ff", "DECIMAL(2,0) at offset 1003: a digit group is out of range"},
      {"DATETIME not 8 bytes", "0f 0c 04 00 00 00 00", "DATETIME at offset 1003: 4 bytes, expected 8"},
      {"TIME not 8 bytes", "0f 0b 00", "TIME at offset 1003: 0 bytes, expected 8"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::string text = decode(hex(c.bytes));
    CAPTURE(text);
    CHECK(text.rfind("error: JSON: ", 0) == 0);
    CHECK(text.find(c.message) != std::string::npos);
  }
  CHECK(decode_error_code(hex("0d")) == Errc::corrupt_input);
}

TEST_CASE("json: nesting depth is limited") {
  using cdc::rowimage::json_max_depth;
  using cdc::rowimage::kJsonMaxDepth;
  CHECK(kJsonMaxDepth == 100);
  CHECK(json_max_depth(0) == std::min<std::size_t>(100, Writer::kMaxDepth));
  CHECK(json_max_depth(Writer::kMaxDepth) == 0);
  CHECK(json_max_depth(Writer::kMaxDepth + 5) == 0);

  // As deep as the writer allows at writer depth 0: fine; one more level fails cleanly.
  const std::size_t limit = json_max_depth(0);
  const std::string deepest = decode(encode(nested_arrays(limit)));
  CHECK(deepest == std::string(limit, '[') + std::string(limit, ']'));
  CHECK(decode(encode(nested_arrays(limit + 1))).rfind("error: JSON: nested deeper than", 0) == 0);
  // A column value sits two levels down in a record; with a writer deep enough that still
  // leaves room for all of MySQL's 100 levels.
  const std::size_t column_limit = json_max_depth(cdc::rowimage::kJsonColumnWriterDepth);
  CHECK(column_limit == std::min<std::size_t>(100, Writer::kMaxDepth - cdc::rowimage::kJsonColumnWriterDepth));
  CHECK(decode(encode(nested_arrays(column_limit)), cdc::rowimage::kJsonColumnWriterDepth).rfind("error", 0) != 0);
  CHECK(decode(encode(nested_arrays(column_limit + 1)), cdc::rowimage::kJsonColumnWriterDepth).rfind("error", 0) == 0);

  // Past MySQL's own limit of 100 the document is corrupt, whatever room the writer has.
  const Bytes too_deep = encode(nested_arrays(kJsonMaxDepth + 1));
  CHECK(decode(too_deep).rfind("error", 0) == 0);
  JsonBinaryDecoder decoder(1000, 1000);
  CHECK(decoder.check_depth(kJsonMaxDepth - 1, 0));
  CHECK_FALSE(decoder.check_depth(kJsonMaxDepth, 77));
  CHECK(decoder.error().code == Errc::corrupt_input);
  CHECK(decoder.error().message == "JSON: nested deeper than 100 levels at offset 77");
  // Within MySQL's limit but past the writer's: unsupported, not corrupt.
  if (Writer::kMaxDepth < kJsonMaxDepth) {
    CHECK(decode_error_code(encode(nested_arrays(Writer::kMaxDepth + 1))) == Errc::unsupported);
  }
}

TEST_CASE("json: entries that share bytes cannot blow up the output") {
  // 40 levels of [x, x] where both entries point at the same child: 2^40 leaves if followed.
  std::string body = container_body(jarray({}), false);  // innermost: []
  for (int level = 0; level < 40; ++level) {
    std::string outer;
    append_le(outer, 2, 2);                     // count 2
    append_le(outer, 10 + body.size(), 2);      // size
    outer += "\x02";                            // small array ...
    append_le(outer, 10, 2);                    // ... at offset 10
    outer += "\x02";                            // the same child again
    append_le(outer, 10, 2);
    outer += body;
    body = outer;
    if (body.size() > 0xfff0) break;
  }
  Bytes doc{0x02};
  doc.insert(doc.end(), body.begin(), body.end());
  const std::string text = decode(doc);
  CHECK(text.rfind("error: JSON: value at offset", 0) == 0);
  CHECK(text.find("reuses bytes") != std::string::npos);
}

TEST_CASE("json: random corruption never crashes and never writes invalid JSON") {
  const std::vector<Bytes> seeds = {
      encode_json(R"({"a": 1, "bb": [1, 2, {"c": "text"}], "d": -70000, "e": 1.5, "f": null})"),
      encode(large(jobject({{"x", jopaque(246, decimal_payload("-12.34", 6, 2))},
                            {"y", jopaque(12, packed_bytes(datetime_packed(2020, 1, 2, 3, 4, 5, 6)))},
                            {"z", jarray({jint(Jv::Kind::int32, 5), jstring("s"), jopaque(252, "blob")})}}))),
      hex("0001001c000b000100020c006504001000050000050100040100040200"),
  };
  std::mt19937 rng(20240904);
  std::size_t decoded = 0;
  for (const Bytes& seed : seeds) {
    for (int round = 0; round < 3000; ++round) {
      Bytes doc = seed;
      const int flips = std::uniform_int_distribution<int>(1, 4)(rng);
      for (int f = 0; f < flips; ++f) {
        const std::size_t at = std::uniform_int_distribution<std::size_t>(0, doc.size() - 1)(rng);
        doc[at] = static_cast<std::uint8_t>(std::uniform_int_distribution<int>(0, 255)(rng));
      }
      if (round % 7 == 0) doc.resize(std::uniform_int_distribution<std::size_t>(0, doc.size())(rng));
      Writer writer;
      if (cdc::rowimage::decode_json_binary(doc, 0, writer, 0)) {
        ++decoded;
        const std::string text(writer.buffered());
        CAPTURE(text);
        CHECK(is_valid_json(text));
      }
    }
  }
  CHECK(decoded > 0);
}

// ---------------------------------------------------------------------------------------------
// Partial updates

TEST_CASE("json: diff paths parse") {
  using Kind = JsonPathLeg::Kind;
  struct Case {
    std::string name;
    std::string path;
    std::vector<JsonPathLeg> legs;
  };
  const std::vector<Case> cases = {
      {"root", "$", {}},
      {"member", "$.age", {{Kind::member, "age", 0}}},
      {"member then index", "$.a[2]", {{Kind::member, "a", 0}, {Kind::index, "", 2}}},
      {"quoted key", R"($."a b")", {{Kind::member, "a b", 0}}},
      {"quoted key with escapes", R"($."x\"y\\z\n\u00e9\ud83d\ude00")",
       {{Kind::member, "x\"y\\z\n\xC3\xA9\xF0\x9F\x98\x80", 0}}},
      {"last", "$[last]", {{Kind::index_from_end, "", 0}}},
      {"last minus", "$[last-3]", {{Kind::index_from_end, "", 3}}},
      {"whitespace", " $ . a [ 1 ] [ last - 2 ]", {{Kind::member, "a", 0}, {Kind::index, "", 1}, {Kind::index_from_end, "", 2}}},
      {"deep", "$.a.b[0].c[10]",
       {{Kind::member, "a", 0}, {Kind::member, "b", 0}, {Kind::index, "", 0}, {Kind::member, "c", 0}, {Kind::index, "", 10}}},
      {"unicode unquoted key", "$.\xC3\xA9t\xC3\xA9", {{Kind::member, "\xC3\xA9t\xC3\xA9", 0}}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const auto parsed = cdc::rowimage::parse_json_path(c.path);
    REQUIRE(parsed.has_value());
    CHECK(*parsed == c.legs);
  }

  struct Bad {
    std::string name;
    std::string path;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {"no dollar", ".a", "must start with '$'"},
      {"empty", "", "must start with '$'"},
      {"wildcard member", "$.*", "wildcards"},
      {"wildcard cell", "$[*]", "wildcards"},
      {"ellipsis", "$**.a", "'**'"},
      {"range", "$[1 to 3]", "']' expected"},
      {"no index", "$[]", "array index expected"},
      {"index overflow", "$[99999999999999999999]", "too large"},
      {"unterminated quote", R"($."abc)", "unterminated"},
      {"bad escape", R"($."a\qb")", "bad escape"},
      {"lone surrogate", R"($."\udc00")", "surrogate"},
      {"member name missing", "$.", "member name missing"},
      {"garbage", "$a", "'.' or '[' expected"},
  };
  for (const Bad& c : bad) {
    CAPTURE(c.name);
    const auto parsed = cdc::rowimage::parse_json_path(c.path);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == Errc::corrupt_input);
    CHECK(parsed.error().message.find(c.message) != std::string::npos);
  }
}

// json.binlog.000001 (8.0.22): the PARTIAL_UPDATE_ROWS_EVENT at 3750 sets $.age to 26 on the
// row whose full UPDATE set age 25; its first diff vector starts at file offset 3790.
// UPDATE t SET json_col = JSON_REPLACE(json_col, '$.age', 26) WHERE id = 1 (as the file says).
TEST_CASE("json: the diff vector from MySQL 8.0.22 partial update event") {
  const Bytes vector = hex("0b000000"     // length 11
                           "00"           // REPLACE
                           "05 242e616765"  // path "$.age"
                           "03 051a00");  // value: int16 26
  ByteReader reader(vector, 3790);
  const auto diffs = cdc::rowimage::read_json_diff_vector(reader);
  REQUIRE(diffs.has_value());
  REQUIRE(diffs->size() == 1);
  CHECK((*diffs)[0].operation == JsonDiffOperation::replace);
  CHECK((*diffs)[0].path == "$.age");
  CHECK((*diffs)[0].path_offset == 3796);
  CHECK((*diffs)[0].value_offset == 3802);
  CHECK(reader.empty());

  Writer listed;
  REQUIRE(cdc::rowimage::write_json_diffs(*diffs, listed, 0).has_value());
  CHECK(listed.buffered() == R"([{"op":"replace","path":"$.age","value":26}])");

  // The before image: the document the full UPDATE wrote (age 25).
  const Bytes before = hex("00 0300 3300 1900 0300 1c00 0400 2000 0400 05 1900 0c 2400 0c 2f00 616765 64617461 6e616d65"
                           "0a 78787878787878787878 03 4a6f65");
  REQUIRE(decode(before) == R"({"age":25,"data":"xxxxxxxxxx","name":"Joe"})");
  CHECK(apply_diffs(before, vector) == R"({"age":26,"data":"xxxxxxxxxx","name":"Joe"})");
}

TEST_CASE("json: applying diffs") {
  constexpr auto kReplace = JsonDiffOperation::replace;
  constexpr auto kInsert = JsonDiffOperation::insert;
  constexpr auto kRemove = JsonDiffOperation::remove;
  struct Case {
    std::string name;
    std::string before;
    std::vector<DiffSpec> diffs;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"replace a member", R"({"a": 1, "b": 2})", {{kReplace, "$.a", "10"}}, R"({"a":10,"b":2})"},
      {"replace with an object", R"({"a": 1, "b": 2})", {{kReplace, "$.b", R"({"z": [1, "x"]})"}},
       R"({"a":1,"b":{"z":[1,"x"]}})"},
      {"replace an array element", R"({"a": [1, 2, 3]})", {{kReplace, "$.a[1]", R"("x")"}}, R"({"a":[1,"x",3]})"},
      {"replace the last element", R"({"a": [1, 2, 3]})", {{kReplace, "$.a[last]", "null"}}, R"({"a":[1,2,null]})"},
      {"replace last-2", R"([1, 2, 3])", {{kReplace, "$[last-2]", "true"}}, "[true,2,3]"},
      {"replace deep", R"({"a": {"b": [{"c": 1}, {"c": 2}]}, "z": "keep"})", {{kReplace, "$.a.b[1].c", "3.5"}},
       R"({"a":{"b":[{"c":1},{"c":3.5}]},"z":"keep"})"},
      {"insert into an object keeps the server's key order", R"({"a": 1, "ccc": 3})", {{kInsert, "$.bb", "2"}},
       R"({"a":1,"bb":2,"ccc":3})"},
      {"insert a shorter key first", R"({"bb": 1, "ab": 2})", {{kInsert, "$.z", "0"}}, R"({"z":0,"ab":2,"bb":1})"},
      {"insert same length sorts bytewise", R"({"a": 1, "c": 3})", {{kInsert, "$.b", "2"}}, R"({"a":1,"b":2,"c":3})"},
      {"insert into an empty object", R"({"o": {}})", {{kInsert, "$.o.k", R"("v")"}}, R"({"o":{"k":"v"}})"},
      {"insert into an array", "[1, 2, 3]", {{kInsert, "$[1]", "9"}}, "[1,9,2,3]"},
      {"insert at 0", "[1, 2, 3]", {{kInsert, "$[0]", "9"}}, "[9,1,2,3]"},
      {"insert at size appends", "[1, 2, 3]", {{kInsert, "$[3]", "9"}}, "[1,2,3,9]"},
      {"insert past the end appends", "[1, 2, 3]", {{kInsert, "$[100]", "9"}}, "[1,2,3,9]"},
      {"insert at last goes before the last element", "[1, 2, 3]", {{kInsert, "$[last]", "9"}}, "[1,2,9,3]"},
      {"insert at last-n past the start goes first", "[1, 2, 3]", {{kInsert, "$[last-7]", "9"}}, "[9,1,2,3]"},
      {"insert into an empty array", R"({"a": []})", {{kInsert, "$.a[0]", R"({"x": 1})"}}, R"({"a":[{"x":1}]})"},
      {"remove a member", R"({"a": 1, "b": 2, "c": 3})", {{kRemove, "$.b", ""}}, R"({"a":1,"c":3})"},
      {"remove an array element", R"({"a": [1, 2, 3]})", {{kRemove, "$.a[0]", ""}}, R"({"a":[2,3]})"},
      {"remove the last element", "[1, 2, 3]", {{kRemove, "$[last]", ""}}, "[1,2]"},
      {"several diffs in order",
       R"({"a": [1, 2], "b": {"c": 1}})",
       {{kInsert, "$.a[0]", "0"}, {kReplace, "$.a[2]", "20"}, {kRemove, "$.b.c", ""}, {kInsert, "$.b.d", "[]"},
        {kInsert, "$.b.d[0]", R"("x")"}},
       R"({"a":[0,1,20],"b":{"d":["x"]}})"},
      {"a path into a value an earlier diff wrote", R"({"a": 1})",
       {{kReplace, "$.a", R"({"k": [1]})"}, {kInsert, "$.a.k[1]", "2"}, {kInsert, "$.a.m", "3"}},
       R"({"a":{"k":[1,2],"m":3}})"},
      {"quoted keys", R"({"a b": 1, "x\"y": 2, "é": 3})",
       {{kReplace, R"($."a b")", "10"}, {kReplace, R"($."x\"y")", "20"}, {kReplace, R"($."\u00e9")", "30"}},
       R"({"é":30,"a b":10,"x\"y":20})"},
      {"untouched subtrees keep everything", R"({"big": {"n": [1.5, -70000, 18446744073709551615, "s"]}, "t": 0})",
       {{kReplace, "$.t", "1"}}, R"({"t":1,"big":{"n":[1.5,-70000,18446744073709551615,"s"]}})"},
      {"no diffs", R"({"a": 1})", {}, R"({"a":1})"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(apply_diffs(encode_json(c.before), diff_vector(c.diffs)) == c.expected);
  }

  // Opaque values in an untouched part stay exactly as the decoder prints them.
  const Bytes before = encode(jobject({{"d", jopaque(246, decimal_payload("9", 11, 2))}, {"n", jint(Jv::Kind::int16, 1)}}));
  CHECK(apply_diffs(before, diff_vector({{kReplace, "$.n", "2"}})) == R"({"d":9.00,"n":2})");
  // The large format is expanded the same way.
  CHECK(apply_diffs(encode(large(jobject({{"a", jint(Jv::Kind::int32, 70000)}, {"b", large(jarray({jnull()}))}}))),
              diff_vector({{kInsert, "$.b[1]", "1"}})) == R"({"a":70000,"b":[null,1]})");
  // An empty before document is null; replacing '$' (never written by the server) replaces it.
  CHECK(apply_diffs(Bytes{}, diff_vector({{kReplace, "$", "[1]"}})) == "[1]");
}

TEST_CASE("json: diffs that do not apply are rejected") {
  constexpr auto kReplace = JsonDiffOperation::replace;
  constexpr auto kInsert = JsonDiffOperation::insert;
  constexpr auto kRemove = JsonDiffOperation::remove;
  struct Case {
    std::string name;
    std::string before;
    DiffSpec diff;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"replace a missing member", R"({"a": 1})", {kReplace, "$.b", "1"}, "nothing to replace"},
      {"replace past the end", "[1]", {kReplace, "$[1]", "1"}, "nothing to replace"},
      {"replace last-n before the start", "[1]", {kReplace, "$[last-1]", "1"}, "nothing to replace"},
      {"insert an existing member", R"({"a": 1})", {kInsert, "$.a", "2"}, "already exists"},
      {"insert under a missing parent", R"({"a": 1})", {kInsert, "$.b.c", "2"}, "does not exist"},
      {"insert a member into an array", "[1]", {kInsert, "$.a", "2"}, "matching the last leg"},
      {"insert a cell into an object", R"({"a": 1})", {kInsert, "$[0]", "2"}, "matching the last leg"},
      {"remove a missing member", R"({"a": 1})", {kRemove, "$.b", ""}, "no such member"},
      {"remove past the end", "[1]", {kRemove, "$[5]", ""}, "no such array element"},
      {"path through a scalar", R"({"a": 1})", {kReplace, "$.a.b", "1"}, "nothing to replace"},
      {"no auto-wrapping of scalars", R"({"a": 1})", {kReplace, "$.a[0]", "1"}, "nothing to replace"},
      {"insert at the root", "[1]", {kInsert, "$", "1"}, "no path legs"},
      {"remove the root", "[1]", {kRemove, "$", ""}, "no path legs"},
      {"bad path", R"({"a": 1})", {kReplace, "$.a[*]", "1"}, "wildcards"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::string text = apply_diffs(encode_json(c.before), diff_vector({c.diff}));
    CAPTURE(text);
    CHECK(text.rfind("error: JSON diff 0 (", 0) == 0);
    CHECK(text.find(c.message) != std::string::npos);
  }

  // A path longer than any document may nest is refused before it is walked.
  std::string deep = "$";
  for (int i = 0; i < 200; ++i) deep += "[0]";
  const std::string text = apply_diffs(encode_json("[1]"), diff_vector({{kReplace, deep, "1"}}));
  CHECK(text.find("deeper than a document may nest") != std::string::npos);
  // A corrupt before image surfaces the decoder's error.
  CHECK(apply_diffs(hex("00 01 00 40 00"), diff_vector({{kReplace, "$.a", "1"}})).find("declares 64 bytes") !=
        std::string::npos);
  // So does a corrupt diff value, when it is written.
  std::string vector_bytes;
  append_le(vector_bytes, 7, 4);
  vector_bytes += std::string("\x00\x03$.a\x01\x0d", 7);  // REPLACE $.a with a value of type 0x0d
  CHECK(apply_diffs(encode_json(R"({"a": 1})"), to_bytes(vector_bytes)).find("unknown type 0x0d") != std::string::npos);
}

TEST_CASE("json: diff vector framing errors") {
  struct Case {
    std::string name;
    std::string bytes;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"length cut", "0b 00", "need 4 bytes, have 2"},
      {"length past the end", "0b 00 00 00 00 05", "JSON diff vector: need 11 bytes, have 2"},
      {"unknown operation", "03 00 00 00 03 01 24", "unknown JSON diff operation 3"},
      {"path past the vector", "03 00 00 00 02 05 24", "JSON diff path: need 5 bytes, have 1"},
      {"value length missing", "03 00 00 00 00 01 24", "JSON diff value length"},
      {"value past the vector", "05 00 00 00 00 01 24 09 04", "JSON diff value: need 9 bytes, have 1"},
      {"NULL path length", "03 00 00 00 00 fb 24", "invalid first byte 0xfb"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const Bytes bytes = hex(c.bytes);
    ByteReader reader(bytes, 0);
    const auto diffs = cdc::rowimage::read_json_diff_vector(reader);
    REQUIRE_FALSE(diffs.has_value());
    CHECK(diffs.error().code == Errc::corrupt_input);
    CAPTURE(diffs.error().message);
    CHECK(diffs.error().message.find(c.message) != std::string::npos);
    CHECK_FALSE(reader.ok());
  }

  // An empty vector is no diffs; the 2-byte packed length form is read.
  const Bytes empty_vector = hex("00 00 00 00 ff");
  ByteReader empty(empty_vector, 0);
  const auto none = cdc::rowimage::read_json_diff_vector(empty);
  REQUIRE(none.has_value());
  CHECK(none->empty());
  CHECK(empty.remaining() == 1);

  const std::string long_key(300, 'k');
  const Bytes vector = diff_vector({{JsonDiffOperation::insert, "$." + long_key, "1"}});
  CHECK(vector[5] == 0xfc);  // path length 302 as 0xfc + 2 bytes
  CHECK(apply_diffs(encode_json("{}"), vector) == R"({")" + long_key + R"(":1})");
}

}  // namespace
