#pragma once

// The row lines: "r" (cdc-snapshot, cdc-merge) and the changes "c", "u", "d" (cdc-stream).
// Their row images are written by the hot paths themselves (stream/change_writer,
// snapshot/row_values, merge), member by member with pre-serialized keys; what they share is
// here, once: the envelope's bytes and the member keys, in the order the lines have them:
//
//   {"op":"r","v":1,"db":..,"table":..,"key":{..},"before":null,"after":{..},"ts_ms":N}
//   {"op":"c"|"u"|"d","v":1,"db":..,"table":..,"key":{..}|null,"before":{..}|null,
//    "after":{..}|null,["json_diffs":{..},]["partial":true,]["query":"..."|null,]
//    "pos":{"file":..,"offset":N,"index":N,"gtid":..|null},"server_id":N,"thread":N|null,"ts_ms":N}
//
// Readers that look at lines by their bytes (cdc-merge) rely on these exact forms too.

#include <cstdint>
#include <string>
#include <string_view>

namespace cdc::records {

enum class ChangeOp : unsigned char { insert, update, erase };

// Every line starts with its "op": the bytes before the op's value.
inline constexpr std::string_view kOpLineStart = R"({"op":")";
// The bytes every "r" line starts with.
inline constexpr std::string_view kRowLineStart = R"({"op":"r",)";

// Member keys as Writer::raw_comma_key() takes them (the comma is dropped where none is due).
namespace comma_key {
inline constexpr std::string_view key = R"(,"key":)";
inline constexpr std::string_view before = R"(,"before":)";
inline constexpr std::string_view after = R"(,"after":)";
inline constexpr std::string_view pos = R"(,"pos":)";
inline constexpr std::string_view index = R"(,"index":)";
inline constexpr std::string_view ts_ms = R"(,"ts_ms":)";
}  // namespace comma_key
// A change line's "query" member (cdc-stream --include-query) up to its value.
inline constexpr std::string_view kQueryKey = R"("query":)";
// What an "r" line has between its key and its after image.
inline constexpr std::string_view kRowBeforeAfter = R"(,"before":null,"after":)";

// "op":"c", "op":"u" or "op":"d": a change line's first member, as Writer::raw_members() takes it.
// Inline: it is called for every row.
[[nodiscard]] constexpr std::string_view change_op_member(ChangeOp op) noexcept {
  switch (op) {
    case ChangeOp::insert: return R"("op":"c")";
    case ChangeOp::update: return R"("op":"u")";
    case ChangeOp::erase: return R"("op":"d")";
  }
  return R"("op":"u")";
}

// "v":1,"db":..,"table":..: the members after "op" that every row line of a table repeats,
// serialized once per table.
[[nodiscard]] std::string table_members(std::string_view db, std::string_view table);
// "op":"r","v":1,"db":..,"table":..: an "r" line's members before its key.
[[nodiscard]] std::string row_head_members(std::string_view db, std::string_view table);
// {"op":"r","v":1,"db":QDB,"table":QTABLE,"key": -- the bytes an "r" line of the table starts
// with, up to its key object; quoted_db and quoted_table as ndjson::quoted() gives them.
[[nodiscard]] std::string row_line_prefix(std::string_view quoted_db, std::string_view quoted_table);
// "ts_ms":N
[[nodiscard]] std::string ts_member(std::int64_t ts_ms);

}  // namespace cdc::records
