#pragma once

// One row of a rows event as the image members of a change line (records/row.h,
// cdc-ndjson(5)): "key", "before", "after" and, for MySQL JSON diffs without a before document,
// "json_diffs". The line around them (op, table, position, time) is the caller's.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "binlog/events/rows_event.h"
#include "ndjson/writer.h"
#include "rowimage/row_image.h"
#include "util/byte_reader.h"

namespace cdc::rowimage {

// What every row of one rows event shares, worked out once per event: which images a row has
// and the shape of each (every row of an event has the same present-columns bitmaps).
struct RowsShape {
  bool has_before = false;
  bool has_after = false;
  // PARTIAL_UPDATE_ROWS: each after image starts with its JSON-diff header.
  bool partial_update = false;
  std::span<const std::uint8_t> columns_after;
  ImageShape before;
  ImageShape after;
  // Each image the rows have holds at least one column, so every row takes bytes. A corrupt
  // event without any would never reach the end of its rows.
  bool has_columns = false;
  // Every image is FULL (all columns present) and there are no JSON diffs: a row's images are
  // sized, then written in one pass each, rather than sliced column by column first.
  bool full_images = false;
  // Which images the line shows (rows_shape sets both): an update that cdc-stream --where
  // writes as a delete or an insert (stream/row_filter.h) still reads both images, the one
  // not shown written null and the key taken from the one shown.
  bool show_before = true;
  bool show_after = true;
};
[[nodiscard]] RowsShape rows_shape(const binlog::RowsEvent& event, const TablePlan& plan);

// Reads the next row from `rows` and writes ,"key":..,"before":..,"after":..[,"json_diffs":..]
// into the object `out` has open. The key is the primary key's columns from the after image
// (the before image where a minimal after image lacks one; null without primary-key
// metadata), and the images copy the key values already written instead of decoding them
// twice. Returns how many JSON diffs had no before document to apply to (written as
// json_diffs: the line is then partial). Failures are left in `rows`; the record is then the
// caller's to abandon.
//
// With `spans`, where each member's value and each image's column values went in out's buffer
// (offsets from its start), for an output stage that reads the line without scanning it
// (output::RowLine); and, when asked and the row has both images and a primary key, the
// before image's key object written into spans->before_key, which the line does not hold (a
// key change shows as the two differing).
struct RowSpans {
  bool want_before_key = false;  // set by the caller: write before_key
  // Set by the caller to note each image's values: appended to *values (never cleared here, so
  // the rows of a batch share one vector), in column order, each image's at [begin, end).
  std::vector<WrittenValue>* values = nullptr;
  std::size_t key_begin = 0, key_end = 0;
  std::size_t before_begin = 0, before_end = 0;
  std::size_t after_begin = 0, after_end = 0;
  std::size_t before_values_begin = 0, before_values_end = 0;
  std::size_t after_values_begin = 0, after_values_end = 0;
  ndjson::Writer before_key;  // cleared per row; empty when not written
};
// The bytes of one row's before and after images (0 for an image the rows do not have).
struct RowSizes {
  std::uint32_t before = 0;  // an image is part of one event, whose size is 32 bits
  std::uint32_t after = 0;
};
// `sized`: the row's image sizes as count_rows() found them in these very bytes, so a row of
// FULL images is not sized a second time (ignored where they do not fit what is left).
std::size_t write_row_change(ByteReader& rows, const TablePlan& plan, const RowsShape& shape, ndjson::Writer& out,
                             RowScratch& scratch, RowSpans* spans = nullptr, const RowSizes* sized = nullptr);

// Moves `rows` past its next row without writing it (a row cdc-stream --where drops): sized
// as write_row_change sizes it (`sized` as there); a row that does not size fails `rows` with
// write_row_change's message.
void skip_row_change(ByteReader& rows, const TablePlan& plan, const RowsShape& shape, RowScratch& scratch,
                     const RowSizes* sized = nullptr);

// How many rows `rows` holds, found by scanning each row's images as write_row_change does,
// without writing anything (a reader that hands the writing to another thread still needs the
// count). nullopt when a row does not scan: write_row_change then fails on that row with the
// message, after the rows before it.
//
// With `sizes`, rows of FULL images also append their image sizes there, one per row, for
// write_row_change (on success only: on failure `sizes` is as it was).
[[nodiscard]] std::optional<std::uint64_t> count_rows(ByteReader rows, const TablePlan& plan, const RowsShape& shape,
                                                      RowScratch& scratch, std::vector<RowSizes>* sizes = nullptr);

}  // namespace cdc::rowimage
