#pragma once

// MySQL 8 partial JSON updates. With binlog_row_value_options=PARTIAL_JSON the server logs
// UPDATEs as PARTIAL_UPDATE_ROWS_EVENT (type 39); a JSON column that JSON_SET/JSON_REPLACE/
// JSON_REMOVE changed in place carries, in the after image, a diff vector instead of the new
// document. The full after value is the before image (binlog_row_image=FULL) with the diffs
// applied in order.
//
// Diff vector layout (sql-common/json_diff.cc, Json_diff_vector::write_binary / read_binary,
// read_json_diff):
//
//   uint32 length (little-endian; bytes of the diffs that follow, 4 = the JSON column's own
//   length prefix width, so a row decoder is positioned at it instead of at a document length)
//   per diff, until `length` bytes are used:
//     uint8  operation          REPLACE = 0, INSERT = 1, REMOVE = 2
//     packed path length        net_field_length (< 251: one byte; 0xfc/0xfd/0xfe: 2/3/8 bytes)
//     path                      Json_path::to_string(): $, .key, ."quoted key", [n], [last], [last-n]
//     (not for REMOVE) packed value length, then a binary JSON document (json_binary.h)
//
// Applying (json_diff.cc apply_json_diff()): paths hold only member and array-cell legs.
//   REPLACE: the value at the path must exist; it is replaced.
//   INSERT:  the parent must exist. Into an object: the key must not exist yet; the member is
//            placed in the server's key order (shorter keys first, then bytewise), as a full
//            image would store it. Into an array: at index min(n, size) (past the end appends),
//            the elements from there on shift right (Json_array::insert_alias()).
//   REMOVE:  the parent must exist and hold the member / index; it is removed.
// The server rejects a diff that does not apply; so do we (Errc::corrupt_input): the before
// image and the diffs disagree.
//
// This path is rare (only PARTIAL_JSON servers, only changed JSON columns), so it uses a small
// heap tree: only the containers a diff path goes through are expanded; every untouched
// subtree stays as bytes and is written straight by JsonBinaryDecoder.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ndjson/writer.h"
#include "rowimage/json_binary.h"
#include "util/byte_reader.h"
#include "util/result.h"

namespace cdc::rowimage {

enum class JsonDiffOperation : std::uint8_t {
  replace = 0,  // enum_json_diff_operation::REPLACE
  insert = 1,   // enum_json_diff_operation::INSERT
  remove = 2,   // enum_json_diff_operation::REMOVE
};

[[nodiscard]] std::string_view json_diff_operation_name(JsonDiffOperation operation) noexcept;

// One diff as read from the vector; path and value point into the reader's bytes.
struct JsonDiff {
  JsonDiffOperation operation = JsonDiffOperation::replace;
  std::string_view path;                // as the server wrote it
  std::uint64_t path_offset = 0;        // absolute offset of path[0]
  std::span<const std::uint8_t> value;  // binary JSON document; empty for REMOVE
  std::uint64_t value_offset = 0;       // absolute offset of value[0]
};

// One leg of a diff path.
struct JsonPathLeg {
  enum class Kind : std::uint8_t {
    member,          // .key or ."key"
    index,           // [n]
    index_from_end,  // [last] (index 0) or [last-n]
  };
  Kind kind = Kind::member;
  std::string member;       // unescaped key, for Kind::member
  std::uint64_t index = 0;  // n

  friend bool operator==(const JsonPathLeg&, const JsonPathLeg&) = default;
};

// Parses the path syntax the server writes (whitespace between tokens tolerated, as in
// json_path.cc). Wildcards, ranges and ** cannot appear in a diff and are errors.
[[nodiscard]] Result<std::vector<JsonPathLeg>> parse_json_path(std::string_view path);

// Reads one diff vector (uint32 length + diffs) from `reader`. On malformed framing the
// reader fails too (sticky).
[[nodiscard]] Result<std::vector<JsonDiff>> read_json_diff_vector(ByteReader& reader);

// Writes the after image: `before` (binary JSON, the before image of the column) with `diffs`
// applied in order. before_offset is the absolute offset of before[0], for messages.
[[nodiscard]] Result<void> apply_json_diffs(std::span<const std::uint8_t> before, std::uint64_t before_offset,
                                            std::span<const JsonDiff> diffs, ndjson::Writer& out,
                                            std::size_t writer_depth = kJsonColumnWriterDepth);

// read_json_diff_vector() + apply_json_diffs(): `diff_vector` is positioned at the vector's
// uint32 length and is left after it.
[[nodiscard]] Result<void> decode_json_partial_update(std::span<const std::uint8_t> before,
                                                      std::uint64_t before_offset, ByteReader& diff_vector,
                                                      ndjson::Writer& out,
                                                      std::size_t writer_depth = kJsonColumnWriterDepth);

// The diffs themselves as JSON, for when there is no before image to apply them to
// (binlog_row_image=MINIMAL): [{"op":"replace","path":"$.age","value":26},...], with
// "op" one of "replace", "insert", "remove" and no "value" for "remove".
[[nodiscard]] Result<void> write_json_diffs(std::span<const JsonDiff> diffs, ndjson::Writer& out,
                                            std::size_t writer_depth = kJsonColumnWriterDepth);

}  // namespace cdc::rowimage
