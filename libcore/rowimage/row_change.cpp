#include "rowimage/row_change.h"

#include <utility>
#include <vector>

#include "records/kinds.h"
#include "records/row.h"
#include "util/bits.h"

namespace cdc::rowimage {

namespace {

// Writes the key object {..} (null without primary-key metadata) and notes in
// scratch.key_values where each value taken from `slices` was written, for write_row_image to
// copy.
void write_key_object(const TablePlan& plan, const std::vector<ColumnSlice>& slices,
                      const std::vector<ColumnSlice>* fallback, ndjson::Writer& out, RowScratch& scratch,
                      ByteReader& errors) {
  std::vector<WrittenValue>& key_values = scratch.key_values;
  key_values.clear();
  const binlog::TableMap& map = plan.map();
  if (map.primary_key.empty()) {
    out.null();  // no primary key in the binlog's metadata: see cdc-stream(1), KEYS
    return;
  }
  out.begin_object();
  for (const std::uint32_t column : map.primary_key) {
    out.raw_comma_key(plan.key(column));
    // A minimal after image may lack the key columns; the before image then has them.
    const bool use_fallback = !slices[column].present && fallback != nullptr && (*fallback)[column].present;
    const std::size_t from = out.bytes_buffered();
    write_column_value(plan, column, use_fallback ? (*fallback)[column] : slices[column], out, scratch, errors);
    if (!use_fallback) {
      // Kept in column order for write_row_image (a key's columns need not be in table order).
      key_values.push_back({column, from, out.bytes_buffered() - from});
      for (std::size_t k = key_values.size() - 1; k > 0 && key_values[k - 1].column > column; --k)
        std::swap(key_values[k - 1], key_values[k]);
    }
  }
  out.end_object();
}

}  // namespace

RowsShape rows_shape(const binlog::RowsEvent& event, const TablePlan& plan) {
  RowsShape shape;
  shape.has_before = event.has_before();
  shape.has_after = event.has_after();
  shape.partial_update = event.kind == binlog::RowsKind::partial_update;
  shape.columns_after = event.columns_after;
  if (shape.has_before) shape.before = image_shape(plan, event.columns_before);
  if (shape.has_after) shape.after = image_shape(plan, event.columns_after);
  const auto any = [&event](std::span<const std::uint8_t> bitmap) {
    for (std::size_t i = 0; i < event.column_count && i / 8 < bitmap.size(); ++i)
      if (lsb_bit(bitmap, i)) return true;
    return false;
  };
  shape.has_columns =
      (!shape.has_before || any(event.columns_before)) && (!shape.has_after || any(event.columns_after));
  shape.full_images = shape.has_columns && !shape.partial_update && (!shape.has_before || shape.before.all_present) &&
                      (!shape.has_after || shape.after.all_present) &&
                      plan.key_columns_end() <= plan.column_count();
  return shape;
}

namespace {

// Reads the next row's images into scratch.before and scratch.after; failures are left in `rows`.
void scan_row_change(ByteReader& rows, const TablePlan& plan, const RowsShape& shape, RowScratch& scratch) {
  if (shape.has_before) scan_row_image(rows, plan, shape.before, scratch.before, scratch);
  if (shape.has_after && rows.ok()) {
    const auto partial_json = shape.partial_update
                                  ? read_partial_json_header(rows, plan.map(), shape.columns_after)
                                  : std::span<const std::uint8_t>{};
    scan_row_image(rows, plan, shape.after, scratch.after, scratch, partial_json);
  }
}

// The bytes of the row at the front of `rest`: its before and after images, sized without
// being sliced (not for PARTIAL_UPDATE_ROWS); nullopt when one does not size.
std::optional<RowSizes> size_row(std::span<const std::uint8_t> rest, const TablePlan& plan, const RowsShape& shape) {
  RowSizes sizes;
  if (shape.has_before) {
    const auto size = row_image_size(rest, plan, shape.before);
    if (!size) return std::nullopt;
    sizes.before = static_cast<std::uint32_t>(*size);
  }
  if (shape.has_after) {
    const auto size = row_image_size(rest.subspan(sizes.before), plan, shape.after);
    if (!size) return std::nullopt;
    sizes.after = static_cast<std::uint32_t>(*size);
  }
  return sizes;
}

}  // namespace

std::optional<std::uint64_t> count_rows(ByteReader rows, const TablePlan& plan, const RowsShape& shape,
                                        RowScratch& scratch, std::vector<RowSizes>* sizes) {
  if (!rows.empty() && !shape.has_columns) return std::nullopt;  // no row would take bytes
  std::uint64_t count = 0;
  if (!shape.partial_update) {
    // Sized only: where each value is does not matter here.
    const std::span<const std::uint8_t> rest = rows.peek_rest();
    std::vector<RowSizes>* const noted = shape.full_images ? sizes : nullptr;
    const std::size_t noted_before = noted != nullptr ? noted->size() : 0;
    for (std::size_t at = 0; at < rest.size(); ++count) {
      const auto row = size_row(rest.subspan(at), plan, shape);
      if (!row) {
        if (noted != nullptr) noted->resize(noted_before);
        return std::nullopt;
      }
      if (noted != nullptr) noted->push_back(*row);
      at += std::size_t{row->before} + row->after;
    }
    return count;
  }
  while (!rows.empty()) {
    scan_row_change(rows, plan, shape, scratch);
    if (!rows.ok()) return std::nullopt;
    ++count;
  }
  return count;
}

void skip_row_change(ByteReader& rows, const TablePlan& plan, const RowsShape& shape, RowScratch& scratch,
                     const RowSizes* sized) {
  if (!shape.partial_update) {
    const std::span<const std::uint8_t> rest = rows.peek_rest();
    const auto sizes = sized != nullptr && std::size_t{sized->before} + sized->after <= rest.size()
                           ? std::optional<RowSizes>(*sized)
                           : size_row(rest, plan, shape);
    if (sizes) {
      rows.skip(std::size_t{sizes->before} + sizes->after);
      return;
    }
  }
  scan_row_change(rows, plan, shape, scratch);  // fails with the message where the row does not size
}

namespace {

// write_row_change() of a row of FULL images without JSON diffs, for a caller that wants no
// spans: each image sized whole, the key's columns sliced, then each image written in one
// pass. False, with nothing written, when an image does not size: the slicing path then
// fails on it with its message.
bool write_full_row_change(ByteReader& rows, const TablePlan& plan, const RowsShape& shape, ndjson::Writer& out,
                           RowScratch& scratch, const RowSizes* sized) {
  const std::span<const std::uint8_t> rest = rows.peek_rest();
  const auto sizes = sized != nullptr && std::size_t{sized->before} + sized->after <= rest.size()
                         ? std::optional<RowSizes>(*sized)
                         : size_row(rest, plan, shape);
  if (!sizes) return false;
  const std::size_t before_size = sizes->before;
  const std::size_t after_size = sizes->after;
  const std::uint64_t offset = rows.offset();
  // Past the row before writing it, as the slicing path is: a value's failure names the
  // same offset either way.
  rows.skip(before_size + after_size);
  const std::span<const std::uint8_t> before = rest.first(before_size);
  const std::span<const std::uint8_t> after = rest.subspan(before_size, after_size);
  // The key comes from the after image, or the before image of a delete (or of an update
  // shown as one).
  const bool key_from_after = shape.has_after && shape.show_after;
  std::vector<ColumnSlice>& key_slices = key_from_after ? scratch.after : scratch.before;
  slice_full_row_image(key_from_after ? after : before, key_from_after ? offset + before_size : offset, plan,
                       plan.key_columns_end(), key_slices);
  out.raw_comma_key(records::comma_key::key);
  write_key_object(plan, key_slices, nullptr, out, scratch, rows);
  if (rows.ok()) {
    out.raw_comma_key(records::comma_key::before);
    if (shape.has_before && shape.show_before)
      write_full_row_image(before, offset, plan, out, scratch, rows,
                           key_from_after ? std::span<const WrittenValue>{} : scratch.key_values);
    else
      out.null();
  }
  if (rows.ok()) {
    out.raw_comma_key(records::comma_key::after);
    if (key_from_after)
      write_full_row_image(after, offset + before_size, plan, out, scratch, rows, scratch.key_values);
    else
      out.null();
  }
  return true;
}

}  // namespace

std::size_t write_row_change(ByteReader& rows, const TablePlan& plan, const RowsShape& shape, ndjson::Writer& out,
                             RowScratch& scratch, RowSpans* spans, const RowSizes* sized) {
  if (shape.full_images && spans == nullptr && write_full_row_change(rows, plan, shape, out, scratch, sized)) return 0;
  scan_row_change(rows, plan, shape, scratch);
  std::size_t unresolved_diffs = 0;
  // Where a member's value starts or ended, for an output stage.
  const auto mark = [&](std::size_t RowSpans::*at) {
    if (spans != nullptr) spans->*at = out.bytes_buffered();
  };
  const bool show_before = shape.has_before && shape.show_before;
  const bool key_from_after = shape.has_after && shape.show_after;  // and the after image is shown
  if (rows.ok()) {
    out.raw_comma_key(records::comma_key::key);
    mark(&RowSpans::key_begin);
    write_key_object(plan, key_from_after ? scratch.after : scratch.before,
                     key_from_after && shape.has_before ? &scratch.before : nullptr, out, scratch, rows);
    mark(&RowSpans::key_end);
  }
  std::vector<WrittenValue>* const values = spans != nullptr ? spans->values : nullptr;
  // Where the values noted so far end, for an image's range.
  const auto mark_value = [&](std::size_t RowSpans::*at) {
    if (spans != nullptr) spans->*at = values != nullptr ? values->size() : 0;
  };
  if (rows.ok()) {
    out.raw_comma_key(records::comma_key::before);
    mark(&RowSpans::before_begin);
    mark_value(&RowSpans::before_values_begin);
    if (show_before)
      write_row_image(plan, scratch.before, out, scratch, rows, nullptr,
                      key_from_after ? std::span<const WrittenValue>{} : scratch.key_values, values);
    else
      out.null();
    mark(&RowSpans::before_end);
    mark_value(&RowSpans::before_values_end);
  }
  if (rows.ok()) {
    out.raw_comma_key(records::comma_key::after);
    mark(&RowSpans::after_begin);
    mark_value(&RowSpans::after_values_begin);
    if (key_from_after)
      unresolved_diffs = write_row_image(plan, scratch.after, out, scratch, rows,
                                         shape.has_before ? &scratch.before : nullptr, scratch.key_values, values);
    else
      out.null();
    mark(&RowSpans::after_end);
    mark_value(&RowSpans::after_values_end);
  }
  if (spans != nullptr) {
    spans->before_key.clear();
    // Last: it reuses scratch.key_values, which the images above copied the key from.
    if (spans->want_before_key && rows.ok() && show_before && key_from_after && !plan.map().primary_key.empty())
      write_key_object(plan, scratch.before, nullptr, spans->before_key, scratch, rows);
  }
  if (rows.ok() && unresolved_diffs > 0) {
    // No before document to apply MySQL's JSON diffs to: the diffs themselves.
    out.key(records::field::json_diffs);
    write_json_diffs(plan.map(), scratch.after, &scratch.before, out, scratch, rows);
  }
  return unresolved_diffs;
}

}  // namespace cdc::rowimage
