#pragma once

// MySQL's binary JSON (the bytes of a JSON column, MYSQL_TYPE_JSON = 245) decoded straight
// into an ndjson::Writer as a JSON value, not as a string (man/cdc-ndjson.5, VALUES).
//
// Format (sql-common/json_binary.cc, the comment at the top of json_binary.h):
//
//   document  ::= type value                       (an empty document means JSON null)
//   type      ::= 0x00 small object | 0x01 large object | 0x02 small array | 0x03 large array
//               | 0x04 literal | 0x05 int16 | 0x06 uint16 | 0x07 int32 | 0x08 uint32
//               | 0x09 int64 | 0x0a uint64 | 0x0b double | 0x0c string | 0x0f opaque
//   object    ::= count size key-entry* value-entry* key* value*
//   array     ::= count size value-entry* value*
//   count, size, offsets: uint16 in the small format, uint32 in the large one, little-endian;
//               offsets count from the first byte of the object/array (after its type byte)
//   key-entry ::= key-offset uint16-key-length
//   value-entry ::= type (offset | inlined value): literal, int16 and uint16 are inlined in
//               both formats, int32 and uint32 only in the large one
//   literal   ::= 0x00 null | 0x01 true | 0x02 false
//   string    ::= length(7 bits a byte, low group first, high bit = more) utf8mb4-bytes
//   opaque    ::= field-type(uint8, enum_field_types) length(as for string) bytes
//
// Canonical output, the same for every path that emits a JSON column:
//   - compact (no spaces), object members in stored order (the server stores them sorted by
//     key length, then bytewise), strings escaped by the writer;
//   - int16..int64 / uint16..uint64: exact integers;
//   - double: the shortest text that round-trips (Writer::floating). MySQL prints doubles
//     through my_gcvt() and appends ".0" when that shows neither '.' nor 'e' (json_dom.cc
//     wrapper_to_string(), J_DOUBLE), e.g. 1.0 and 1e300; we canonicalize to 1 and 1e+300;
//   - opaque DECIMAL (246): a JSON number with exactly its scale's fraction digits ("9.00"),
//     as decimal2string() prints it;
//   - opaque DATE (10): "YYYY-MM-DD"; DATETIME (12) and TIMESTAMP (7): "YYYY-MM-DD
//     HH:MM:SS.ffffff"; TIME (11): "[-]HH:MM:SS.ffffff" (hours may exceed 99). The six
//     fraction digits are always written, zero or not: json_dom.cc wrapper_to_string() calls
//     my_TIME_to_str(t, ptr, 6);
//   - opaque VAR_STRING (253): the bytes as a string (wrapper_to_string() treats it as J_STRING);
//   - any other opaque type (BLOB 252, BIT 16, GEOMETRY 255, YEAR 13, VARCHAR 15, ...):
//     the string "base64:type<N>:<base64>", with MySQL's base64_encode() line breaks (a "\n"
//     after every 76 base64 characters when more follow), exactly as MySQL's JSON text shows it.
//
// Safety: every count, size, offset and length is checked against its enclosing object or
// array; nesting is limited (MySQL's JSON_DOCUMENT_MAX_DEPTH, 100) so recursion is bounded;
// and the total number of bytes the decoder visits may not exceed the document's size, so a
// crafted document whose entries all point at the same bytes cannot make the output grow
// exponentially. Malformed input is an Errc::corrupt_input error naming what was wrong and
// its absolute offset. On error the writer holds a partial value: the caller abandons the
// record (Writer::abandon_record()).
//
// Allocation: none per value. The only heap use is the writer's buffer and, for the rare
// non-temporal opaque value, one scratch string per decode call for its base64 text.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "ndjson/writer.h"
#include "util/byte_reader.h"
#include "util/error.h"
#include "util/result.h"

namespace cdc::rowimage {

// Node types (sql-common/json_binary.cc, JSONB_TYPE_*). On the wire.
enum class JsonbType : std::uint8_t {
  small_object = 0x00,  // JSONB_TYPE_SMALL_OBJECT
  large_object = 0x01,  // JSONB_TYPE_LARGE_OBJECT
  small_array = 0x02,   // JSONB_TYPE_SMALL_ARRAY
  large_array = 0x03,   // JSONB_TYPE_LARGE_ARRAY
  literal = 0x04,       // JSONB_TYPE_LITERAL
  int16 = 0x05,         // JSONB_TYPE_INT16
  uint16 = 0x06,        // JSONB_TYPE_UINT16
  int32 = 0x07,         // JSONB_TYPE_INT32
  uint32 = 0x08,        // JSONB_TYPE_UINT32
  int64 = 0x09,         // JSONB_TYPE_INT64
  uint64 = 0x0a,        // JSONB_TYPE_UINT64
  double_type = 0x0b,   // JSONB_TYPE_DOUBLE
  string = 0x0c,        // JSONB_TYPE_STRING
  opaque = 0x0f,        // JSONB_TYPE_OPAQUE
};

// Values of a literal node (JSONB_NULL_LITERAL, JSONB_TRUE_LITERAL, JSONB_FALSE_LITERAL).
enum class JsonbLiteral : std::uint8_t { null = 0x00, true_value = 0x01, false_value = 0x02 };

// MySQL refuses documents nested deeper than this (JSON_DOCUMENT_MAX_DEPTH,
// sql-common/json_syntax_check.h); objects and arrays count, scalars do not.
inline constexpr std::size_t kJsonMaxDepth = 100;

// Containers the writer already has open when a row decoder writes a column value: the
// record object and the "before"/"after" row object.
inline constexpr std::size_t kJsonColumnWriterDepth = 2;

// How deep a JSON value written at writer depth `writer_depth` may nest: MySQL's 100, or less
// when the writer (Writer::kMaxDepth) has no room for that. Deeper documents that MySQL accepts
// fail with Errc::unsupported rather than overflowing the writer.
[[nodiscard]] constexpr std::size_t json_max_depth(std::size_t writer_depth) noexcept {
  const std::size_t room =
      writer_depth < ndjson::Writer::kMaxDepth ? ndjson::Writer::kMaxDepth - writer_depth : 0;
  return room < kJsonMaxDepth ? room : kJsonMaxDepth;
}

// Decodes one binary JSON document (a JSON column value without the column's length prefix)
// and writes it to `out` as one JSON value. base_offset is the absolute offset of
// document[0], for error messages.
[[nodiscard]] Result<void> decode_json_binary(std::span<const std::uint8_t> document,
                                              std::uint64_t base_offset, ndjson::Writer& out,
                                              std::size_t writer_depth = kJsonColumnWriterDepth);

// The same, reading `length` bytes from `reader` (positioned after the column's length
// prefix). A short reader fails both the reader (sticky) and the result.
[[nodiscard]] Result<void> decode_json_binary(ByteReader& reader, std::size_t length, ndjson::Writer& out,
                                              std::size_t writer_depth = kJsonColumnWriterDepth);

// ---------------------------------------------------------------------------------------------
// Lower level: walking a document lazily. json_diff uses this to expand only the containers a
// diff path goes through and to write every untouched subtree straight from its bytes.

// One value inside a binary document, not decoded yet.
struct JsonBinaryValue {
  JsonbType type = JsonbType::literal;
  // From the value's first byte to the end of the enclosing object/array (MySQL bounds every
  // read the same way); for an inlined value, the rest of its value entry.
  std::span<const std::uint8_t> data;
  std::uint64_t offset = 0;  // absolute offset of data[0]
  bool inlined = false;      // stored inside its value entry (its bytes belong to the header)

  [[nodiscard]] bool is_object() const noexcept {
    return type == JsonbType::small_object || type == JsonbType::large_object;
  }
  [[nodiscard]] bool is_array() const noexcept {
    return type == JsonbType::small_array || type == JsonbType::large_array;
  }
};

// An object or array whose header (count, size, entries) has been checked.
struct JsonBinaryContainer {
  bool is_object = false;
  bool large = false;
  std::uint32_t count = 0;
  std::span<const std::uint8_t> bytes;  // exactly the container's declared size
  std::uint64_t offset = 0;             // absolute offset of bytes[0]
  std::size_t header_size = 0;          // count/size fields + key entries + value entries
};

// The root value of a document; an empty document is the literal null.
[[nodiscard]] JsonBinaryValue json_binary_root(std::span<const std::uint8_t> document, std::uint64_t base_offset);

// Walks values of one or more documents with a sticky error, like ByteReader: after the first
// failure every call fails and error() describes the first one.
class JsonBinaryDecoder {
 public:
  // max_depth: how many nested objects/arrays write() may open (see json_max_depth());
  // byte_budget: how many document bytes write() may visit in total (the sum of the sizes of
  // the documents involved), which stops shared-offset documents from exploding.
  JsonBinaryDecoder(std::size_t max_depth, std::size_t byte_budget) noexcept
      : max_depth_(max_depth), budget_(byte_budget) {}

  [[nodiscard]] bool ok() const noexcept { return !error_; }
  // Only meaningful when !ok().
  [[nodiscard]] const Error& error() const noexcept { return *error_; }
  [[nodiscard]] Result<void> result() const;

  // Checks an object or array header; nullopt (and a failure) for anything else.
  std::optional<JsonBinaryContainer> container(const JsonBinaryValue& value);
  // Key `index` of an object, checked to lie after the header, inside the object, and after
  // the previous key (keys never overlap).
  std::optional<std::string_view> key(const JsonBinaryContainer& object, std::uint32_t index);
  // Value `index` of an object or array (inlined or pointed at).
  std::optional<JsonBinaryValue> element(const JsonBinaryContainer& container, std::uint32_t index);

  // Writes `value` and everything under it. depth: objects/arrays already open above it
  // within the JSON value being written (0 for a document's root).
  bool write(const JsonBinaryValue& value, std::size_t depth, ndjson::Writer& out);

  // Records a failure; returns false so callers can `return decoder.fail(...)`.
  bool fail(Errc code, std::string message);

  [[nodiscard]] std::size_t max_depth() const noexcept { return max_depth_; }
  // Fails (Errc::corrupt_input past MySQL's limit, Errc::unsupported past the writer's) when
  // opening a container at `depth` + 1 levels is not allowed.
  bool check_depth(std::size_t depth, std::uint64_t offset);

 private:
  bool charge(std::size_t bytes, std::uint64_t offset);
  bool write_container(const JsonBinaryValue& value, std::size_t depth, ndjson::Writer& out);
  bool write_scalar(const JsonBinaryValue& value, ndjson::Writer& out);
  bool write_opaque(const JsonBinaryValue& value, ndjson::Writer& out);
  bool write_decimal(std::span<const std::uint8_t> bytes, std::uint64_t offset, ndjson::Writer& out);
  bool write_temporal(std::uint8_t field_type, std::span<const std::uint8_t> bytes, std::uint64_t offset,
                      ndjson::Writer& out);
  // Reads the 7-bits-per-byte length of a string or opaque value at data[at]; sets *used.
  std::optional<std::uint32_t> variable_length(std::span<const std::uint8_t> data, std::size_t at,
                                               std::uint64_t offset, std::size_t* used);

  std::size_t max_depth_;
  std::size_t budget_;
  std::optional<Error> error_;
  std::string scratch_;  // base64 text of opaque values
};

}  // namespace cdc::rowimage
