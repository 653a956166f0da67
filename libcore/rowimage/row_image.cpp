#include "rowimage/row_image.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "rowimage/column_value.h"
#include "rowimage/fixed_binary_values.h"
#include "rowimage/json_binary.h"
#include "rowimage/json_diff.h"
#include "rowimage/scalar_values.h"
#include "ndjson/utf8.h"
#include "util/bits.h"

namespace cdc::rowimage {

namespace {

constexpr std::size_t kNoSize = static_cast<std::size_t>(-1);

std::string_view as_chars(std::span<const std::uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace

void TablePlan::build(const binlog::TableMap& map) {
  map_ = &map;
  generation_ = map.generation;
  const std::size_t columns = map.columns.size();
  keys_.clear();
  key_ends_.clear();
  charsets_.clear();
  layouts_.clear();
  std::string name;
  for (std::size_t i = 0; i < columns; ++i) {
    const Column& column = map.columns[i];
    keys_ += ',';
    keys_ += ndjson::quoted(column_name(map, i, name));
    keys_ += ':';
    key_ends_.push_back(static_cast<std::uint32_t>(keys_.size()));
    charsets_.push_back(charset_of(column.collation));
    Layout layout;
    layout.json = column.type == ColumnType::json;
    layout.is_unsigned = column.is_unsigned;
    switch (column.type) {
      case ColumnType::tiny: layout.integer_width = 1; break;
      case ColumnType::short_int: layout.integer_width = 2; break;
      case ColumnType::int24: layout.integer_width = 3; break;
      case ColumnType::long_int: layout.integer_width = 4; break;
      case ColumnType::longlong: layout.integer_width = 8; break;
      default: break;
    }
    switch (column.type) {
      case ColumnType::string:
      case ColumnType::varchar:
      case ColumnType::var_string:
        layout.prefix_width = column.meta < 256 ? 1 : 2;
        break;
      case ColumnType::blob:
      case ColumnType::tiny_blob:
      case ColumnType::medium_blob:
      case ColumnType::long_blob:
      case ColumnType::json:
      case ColumnType::geometry:
      case ColumnType::vector:
        if (column.meta >= 1 && column.meta <= 4)
          layout.prefix_width = static_cast<std::uint8_t>(column.meta);
        else
          layout.size = Layout::kUnsized;
        break;
      default: {
        // Every other type has a size fixed by its metadata; value_size() does not look at
        // the bytes for those.
        const std::size_t size = value_size(ByteReader(), column);
        layout.size = size >= Layout::kUnsized ? Layout::kUnsized : static_cast<std::uint32_t>(size);
        break;
      }
    }
    const bool text_type = column.type == ColumnType::string || column.type == ColumnType::varchar ||
                           column.type == ColumnType::var_string || column.type == ColumnType::tiny_blob ||
                           column.type == ColumnType::blob || column.type == ColumnType::medium_blob ||
                           column.type == ColumnType::long_blob;
    if (text_type && layout.prefix_width != 0) {
      // The charsets for which write_text() tries string_if_plain() first (TEXT as CHAR and
      // VARCHAR: write_string_value). Their CHAR pad is one 0x20 byte (trim_char_padding), and
      // plain ASCII is valid UTF-8, so a value without charset metadata (collation 0, where a
      // BLOB looks like a TEXT) is not lossy either.
      const Charset charset = charsets_.back();
      // INET4/INET6/UUID are bytes whatever their collation says (decode_value_as).
      layout.ascii_text = column.fixed_binary == FixedBinaryType::none && !is_binary_collation(column.collation) &&
                          is_ascii_compatible(charset) && trim_char_padding(" ", charset).empty();
      layout.trim_char = column.type == ColumnType::string;
    }
    layouts_.push_back(layout);
  }
  key_columns_end_ = 0;
  for (const std::uint32_t column : map.primary_key)
    key_columns_end_ = std::max(key_columns_end_, std::size_t{column} + 1);
  line_columns_.clear();
}

void TablePlan::keep_columns(const std::vector<bool>& kept) {
  line_columns_.assign(layouts_.size(), kOmitted);
  std::uint32_t next = 0;
  for (std::size_t i = 0; i < layouts_.size() && i < kept.size(); ++i)
    if (kept[i]) line_columns_[i] = next++;
}

ImageShape image_shape(const TablePlan& plan, std::span<const std::uint8_t> present) {
  ImageShape shape;
  shape.present = present;
  std::size_t present_count = 0;
  for (std::size_t i = 0; i < plan.column_count(); ++i)
    if (lsb_bit(present, i)) ++present_count;
  // The null bitmap covers only the present columns (log_event.cc unpack_row).
  shape.null_bytes = (present_count + 7) / 8;
  shape.all_present = present_count == plan.column_count();
  return shape;
}

void scan_row_image(ByteReader& in, const binlog::TableMap& map, std::span<const std::uint8_t> present,
                    std::vector<ColumnSlice>& slices, RowScratch& scratch, std::span<const std::uint8_t> partial_json) {
  scan_row_image(in, scratch.plan_for(map), present, slices, scratch, partial_json);
}

void scan_row_image(ByteReader& in, const TablePlan& plan, std::span<const std::uint8_t> present,
                    std::vector<ColumnSlice>& slices, RowScratch& scratch, std::span<const std::uint8_t> partial_json) {
  scan_row_image(in, plan, image_shape(plan, present), slices, scratch, partial_json);
}

void scan_row_image(ByteReader& in, const TablePlan& plan, const ImageShape& shape, std::vector<ColumnSlice>& slices,
                    RowScratch& scratch, std::span<const std::uint8_t> partial_json) {
  const binlog::TableMap& map = plan.map();
  std::size_t json_index = 0;
  const std::size_t columns = plan.column_count();
  slices.resize(columns);
  // After a failure the columns not reached read as absent, as if nothing was scanned.
  const auto clear_from = [&slices](std::size_t first) {
    std::fill(slices.begin() + static_cast<std::ptrdiff_t>(first), slices.end(), ColumnSlice{});
  };
  const auto nulls = in.bytes(shape.null_bytes, "null bitmap");
  if (!in.ok()) {
    clear_from(0);
    return;
  }
  // The values are sized from the plan and checked against what is left of the event here, on
  // a local cursor, instead of through a checked read per value; `in` catches up at the end.
  // Anything unusual (a value that cannot be sized or runs past the event) goes back to `in`
  // at that column so the failure reads exactly as value_size() and the checks word it.
  const std::span<const std::uint8_t> rest = in.peek_rest();
  const std::uint64_t base = in.offset();
  std::size_t at = 0;
  std::size_t present_index = 0;
  for (std::size_t i = 0; i < columns; ++i) {
    ColumnSlice& slice = slices[i];
    if (!shape.all_present && !lsb_bit(shape.present, i)) {
      slice = ColumnSlice{};
      continue;
    }
    const TablePlan::Layout& layout = plan.layout(i);
    slice.present = true;
    slice.offset = base + at;
    slice.is_null = lsb_bit(nulls, present_index);
    slice.json_diff = false;
    slice.bytes = {};
    ++present_index;
    if (layout.json && !partial_json.empty()) {
      slice.json_diff = json_index / 8 < partial_json.size() && lsb_bit(partial_json, json_index);
      ++json_index;
    }
    if (slice.is_null) continue;
    std::size_t size = layout.size;
    if (layout.prefix_width != 0 && layout.prefix_width <= rest.size() - at) {
      const std::uint64_t length = load_le(rest.data() + at, layout.prefix_width);
      size = length <= rest.size() ? layout.prefix_width + static_cast<std::size_t>(length) : rest.size() + 1;
    } else if (layout.prefix_width != 0) {
      size = TablePlan::Layout::kUnsized;  // the length itself is cut off: value_size() says so
    }
    if (size != TablePlan::Layout::kUnsized && size <= rest.size() - at) {
      slice.bytes = rest.subspan(at, size);
      at += size;
      continue;
    }
    clear_from(i + 1);
    in.skip(at);
    const std::size_t value_bytes = value_size(in, map.columns[i]);
    if (value_bytes == kNoSize) {
      in.fail(fmt::format("column {} ({}): cannot size a {} value", i + 1, column_name(map, i, scratch.name),
                          column_type_name(map.columns[i].type)));
      return;
    }
    in.fail(fmt::format("column {} ({} {}): value of {} bytes runs past the event ({} left)", i + 1,
                        column_name(map, i, scratch.name), column_type_name(map.columns[i].type), value_bytes,
                        in.remaining()));
    return;
  }
  in.skip(at);
}

namespace {

template <bool kAllPresent>
std::optional<std::size_t> image_size(std::span<const std::uint8_t> rest, const TablePlan& plan,
                                      const ImageShape& shape) {
  if (rest.size() < shape.null_bytes) return std::nullopt;
  const std::span<const std::uint8_t> nulls = rest.first(shape.null_bytes);
  std::size_t at = shape.null_bytes;
  std::size_t present_index = 0;
  const std::size_t columns = plan.column_count();
  for (std::size_t i = 0; i < columns; ++i) {
    if constexpr (!kAllPresent)
      if (!lsb_bit(shape.present, i)) continue;
    if (lsb_bit(nulls, present_index++)) continue;
    const TablePlan::Layout& layout = plan.layout(i);
    std::size_t size = layout.size;  // kUnsized is past any event: the last check fails it
    if (layout.prefix_width != 0) {
      if (layout.prefix_width > rest.size() - at) return std::nullopt;
      // A length of at most 4 bytes: the sum cannot wrap.
      size = layout.prefix_width + static_cast<std::size_t>(load_le(rest.data() + at, layout.prefix_width));
    }
    if (size > rest.size() - at) return std::nullopt;
    at += size;
  }
  return at;
}

}  // namespace

std::optional<std::size_t> row_image_size(std::span<const std::uint8_t> rest, const TablePlan& plan,
                                          const ImageShape& shape) {
  return shape.all_present ? image_size<true>(rest, plan, shape) : image_size<false>(rest, plan, shape);
}

namespace {

// The values most columns hold, written straight from their bytes (a non-NULL value, sized):
// CHAR/VARCHAR text in a charset where plain ASCII is its own UTF-8, when it is plain ASCII
// (what decode_value_as -> write_string_value -> write_text does for it), and integers (what
// decode_integer() does, without its reader, switch and checks). False, with nothing written,
// for anything else: decode_column_value() then decodes it in full.
inline bool write_common_value(const TablePlan::Layout& layout, std::span<const std::uint8_t> bytes,
                               ndjson::Writer& out) {
  if (layout.ascii_text) {
    std::string_view text = as_chars(bytes.subspan(layout.prefix_width));
    if (layout.trim_char)
      while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    return out.string_if_plain(text);
  }
  if (layout.integer_width == 0 || bytes.size() != layout.integer_width) return false;
  const std::uint64_t raw = load_le(bytes.data(), layout.integer_width);
  if (layout.is_unsigned) {
    out.unsigned_integer(raw);
  } else {
    const auto unused_bits = static_cast<unsigned>(64 - 8 * layout.integer_width);
    out.integer(static_cast<std::int64_t>(raw << unused_bits) >> unused_bits);
  }
  return true;
}

// A non-NULL value decoded in full; a value that does not decode fails `errors` with the
// column named.
void decode_column_value(const TablePlan& plan, std::size_t index, const ColumnSlice& slice, ndjson::Writer& out,
                         RowScratch& scratch, ByteReader& errors) {
  const binlog::TableMap& map = plan.map();
  ByteReader value(slice.bytes, slice.offset);
  decode_value_as(value, map, index, plan.charset(index), out, scratch);
  if (!value.ok())
    errors.fail(fmt::format("column {} ({} {}): {}", index + 1, column_name(map, index, scratch.name),
                            column_type_name(map.columns[index].type), value.failure_text()));
}

// The bytes of the non-NULL value of a column laid out as `layout` at `at`, in an image that
// row_image_size() has sized whole (so the length prefix is there and the value fits).
std::size_t sized_value(const TablePlan::Layout& layout, const std::uint8_t* at) noexcept {
  return layout.prefix_width != 0 ? layout.prefix_width + static_cast<std::size_t>(load_le(at, layout.prefix_width))
                                  : layout.size;
}

}  // namespace

void slice_full_row_image(std::span<const std::uint8_t> image, std::uint64_t offset, const TablePlan& plan,
                          std::size_t count, std::vector<ColumnSlice>& slices) {
  const std::size_t null_bytes = (plan.column_count() + 7) / 8;
  const std::span<const std::uint8_t> nulls = image.first(null_bytes);
  slices.resize(plan.column_count());
  std::size_t at = null_bytes;
  for (std::size_t i = 0; i < count; ++i) {
    ColumnSlice& slice = slices[i];
    slice = ColumnSlice{};
    slice.present = true;
    slice.offset = offset + at;
    slice.is_null = lsb_bit(nulls, i);
    if (slice.is_null) continue;
    const std::size_t size = sized_value(plan.layout(i), image.data() + at);
    slice.bytes = image.subspan(at, size);
    at += size;
  }
}

void write_full_row_image(std::span<const std::uint8_t> image, std::uint64_t offset, const TablePlan& plan,
                          ndjson::Writer& out, RowScratch& scratch, ByteReader& errors,
                          std::span<const WrittenValue> written) {
  const std::size_t columns = plan.column_count();
  const std::size_t null_bytes = (columns + 7) / 8;
  const std::span<const std::uint8_t> nulls = image.first(null_bytes);
  std::size_t at = null_bytes;
  std::size_t next_written = 0;  // written is in column order: one pass over it
  out.begin_object();
  for (std::size_t i = 0; i < columns && errors.ok(); ++i) {
    if (plan.omitted(i)) {
      if (!lsb_bit(nulls, i)) at += sized_value(plan.layout(i), image.data() + at);
      continue;
    }
    out.raw_comma_key(plan.key(i));
    while (next_written < written.size() && written[next_written].column < i) ++next_written;
    const bool copy = next_written < written.size() && written[next_written].column == i;
    if (lsb_bit(nulls, i)) {
      if (copy)
        out.copy_value(written[next_written].from, written[next_written].size);
      else
        out.null();
      continue;
    }
    const TablePlan::Layout& layout = plan.layout(i);
    const std::size_t size = sized_value(layout, image.data() + at);
    const std::span<const std::uint8_t> bytes = image.subspan(at, size);
    if (copy) {
      out.copy_value(written[next_written].from, written[next_written].size);
    } else if (!write_common_value(layout, bytes, out)) {
      ColumnSlice slice;
      slice.present = true;
      slice.offset = offset + at;
      slice.bytes = bytes;
      decode_column_value(plan, i, slice, out, scratch, errors);
    }
    at += size;
  }
  out.end_object();
}

std::size_t write_row_image(const binlog::TableMap& map, const std::vector<ColumnSlice>& slices, ndjson::Writer& out,
                            RowScratch& scratch, ByteReader& errors, const std::vector<ColumnSlice>* before) {
  return write_row_image(scratch.plan_for(map), slices, out, scratch, errors, before);
}

std::size_t write_row_image(const TablePlan& plan, const std::vector<ColumnSlice>& slices, ndjson::Writer& out,
                            RowScratch& scratch, ByteReader& errors, const std::vector<ColumnSlice>* before,
                            std::span<const WrittenValue> written, std::vector<WrittenValue>* values) {
  const binlog::TableMap& map = plan.map();
  std::size_t unresolved = 0;
  std::size_t next_written = 0;  // written is in column order: one pass over it
  // Room for a value per column at once, the unused rest dropped at the end: no growth check
  // per value on this hot path.
  const std::size_t first_value = values != nullptr ? values->size() : 0;
  WrittenValue* next_value = nullptr;
  if (values != nullptr) {
    values->resize(first_value + slices.size());
    next_value = values->data() + first_value;
  }
  out.begin_object();
  for (std::size_t i = 0; i < slices.size() && errors.ok(); ++i) {
    const ColumnSlice& slice = slices[i];
    if (!slice.present || plan.omitted(i)) continue;
    if (slice.json_diff && !slice.is_null) {
      const ColumnSlice* document = before != nullptr && i < before->size() ? &(*before)[i] : nullptr;
      if (document == nullptr || !document->present || document->is_null) {
        ++unresolved;  // no before document to apply the diffs to (binlog_row_image=MINIMAL)
        continue;
      }
      out.raw_comma_key(plan.key(i));
      const std::size_t from = out.bytes_buffered();
      const std::size_t prefix = map.columns[i].meta;
      ByteReader diffs(slice.bytes, slice.offset);
      auto applied = decode_json_partial_update(document->bytes.subspan(prefix), document->offset + prefix, diffs, out);
      if (!applied)
        errors.fail(fmt::format("column {} ({} JSON diff): {}", i + 1, column_name(map, i, scratch.name),
                                applied.error().message));
      if (next_value != nullptr) *next_value++ = {plan.line_column(i), from, out.bytes_buffered() - from};
      continue;
    }
    out.raw_comma_key(plan.key(i));
    const std::size_t from = out.bytes_buffered();
    while (next_written < written.size() && written[next_written].column < i) ++next_written;
    if (next_written < written.size() && written[next_written].column == i)
      out.copy_value(written[next_written].from, written[next_written].size);
    else
      write_column_value(plan, i, slice, out, scratch, errors);
    if (next_value != nullptr) *next_value++ = {plan.line_column(i), from, out.bytes_buffered() - from};
  }
  out.end_object();
  if (values != nullptr) values->resize(static_cast<std::size_t>(next_value - values->data()));
  return unresolved;
}

void write_json_diffs(const binlog::TableMap& map, const std::vector<ColumnSlice>& slices,
                      const std::vector<ColumnSlice>* before, ndjson::Writer& out, RowScratch& scratch,
                      ByteReader& errors) {
  out.begin_object();
  for (std::size_t i = 0; i < slices.size() && errors.ok(); ++i) {
    const ColumnSlice& slice = slices[i];
    if (!slice.present || !slice.json_diff || slice.is_null) continue;
    const ColumnSlice* document = before != nullptr && i < before->size() ? &(*before)[i] : nullptr;
    if (document != nullptr && document->present && !document->is_null) continue;  // applied in "after"
    out.key(column_name(map, i, scratch.name));
    ByteReader reader(slice.bytes, slice.offset);
    auto diffs = read_json_diff_vector(reader);
    if (!diffs) {
      errors.fail(fmt::format("column {} ({} JSON diff): {}", i + 1, column_name(map, i, scratch.name),
                              diffs.error().message));
      break;
    }
    auto written = rowimage::write_json_diffs(*diffs, out);
    if (!written) errors.fail(written.error().message);
  }
  out.end_object();
}

std::span<const std::uint8_t> read_partial_json_header(ByteReader& in, const binlog::TableMap& map,
                                                       std::span<const std::uint8_t> present) {
  // PARTIAL_UPDATE_ROWS after images start with value_options; with PARTIAL_JSON_UPDATES (1)
  // a bitmap follows with one bit per JSON column of the image (log_event.cc
  // Rows_log_event::write_row / unpack_row with value_options).
  constexpr std::uint64_t kPartialJsonUpdates = 1;
  const std::uint64_t options = in.packed_integer("partial update value options");
  if (!in.ok() || (options & kPartialJsonUpdates) == 0) return {};
  std::size_t json_columns = 0;
  for (std::size_t i = 0; i < map.columns.size(); ++i)
    if (lsb_bit(present, i) && map.columns[i].type == ColumnType::json) ++json_columns;
  return in.bytes((json_columns + 7) / 8, "partial JSON bitmap");
}

void write_column_value(const binlog::TableMap& map, std::size_t index, const ColumnSlice& slice,
                        ndjson::Writer& out, RowScratch& scratch, ByteReader& errors) {
  write_column_value(scratch.plan_for(map), index, slice, out, scratch, errors);
}

void write_column_value(const TablePlan& plan, std::size_t index, const ColumnSlice& slice, ndjson::Writer& out,
                        RowScratch& scratch, ByteReader& errors) {
  if (!slice.present || slice.is_null) {
    out.null();
    return;
  }
  if (write_common_value(plan.layout(index), slice.bytes, out)) return;
  decode_column_value(plan, index, slice, out, scratch, errors);
}

}  // namespace cdc::rowimage
