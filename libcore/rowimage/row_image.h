#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "binlog/events/table_map_event.h"
#include "ndjson/writer.h"
#include "rowimage/charset.h"
#include "util/byte_reader.h"

namespace cdc::rowimage {

// Where one column's value sits in the event, to write it again (the key) without decoding
// the whole row twice.
struct ColumnSlice {
  std::uint64_t offset = 0;  // absolute, for messages
  std::span<const std::uint8_t> bytes;
  bool present = false;
  bool is_null = false;
  bool json_diff = false;  // MySQL PARTIAL_UPDATE_ROWS: the value is a JSON diff vector
};

// What reading and writing a row needs per column that changes only with the TABLE_MAP, worked
// out once per map instead of once per value: the column's key already escaped (",\"name\":",
// for Writer::raw_comma_key()), its charset (charset_of() is a search), how its value is sized
// and, for integer columns, how it is read.
class TablePlan {
 public:
  // Rebuilds the plan for map, reusing this plan's storage.
  void build(const binlog::TableMap& map);
  // True when built for this map as it is now: the same slot and the same decode of it
  // (TableMap::generation). Never for maps not from a Decoder (generation 0): those may change
  // without notice, so they are rebuilt every time.
  [[nodiscard]] bool built_for(const binlog::TableMap& map) const noexcept {
    return map_ == &map && map.generation != 0 && generation_ == map.generation;
  }

  [[nodiscard]] const binlog::TableMap& map() const noexcept { return *map_; }
  [[nodiscard]] std::size_t column_count() const noexcept { return layouts_.size(); }
  // ",\"name\":", for Writer::raw_comma_key().
  [[nodiscard]] std::string_view key(std::size_t column) const noexcept {
    const std::size_t from = column == 0 ? 0 : key_ends_[column - 1];
    return std::string_view(keys_).substr(from, key_ends_[column] - from);
  }
  [[nodiscard]] Charset charset(std::size_t column) const noexcept { return charsets_[column]; }

  // How a value of the column is sized: `size` bytes when prefix_width is 0, else a
  // little-endian length of prefix_width bytes and that many bytes. kUnsized: value_size()
  // cannot size it (the scan then fails with its usual message).
  struct Layout {
    static constexpr std::uint32_t kUnsized = 0xFFFFFFFF;
    std::uint32_t size = 0;
    std::uint8_t prefix_width = 0;
    bool json = false;
    // TINYINT..BIGINT: the value's width (write_column_value reads those directly); else 0.
    std::uint8_t integer_width = 0;
    bool is_unsigned = false;
    // CHAR/VARCHAR/TEXT in a text charset where plain ASCII is its own UTF-8 (write_text's
    // shortcut): write_column_value writes such a value straight from its bytes when it is
    // plain ASCII, without the decode chain. trim_char: CHAR(n), whose pad spaces go.
    bool ascii_text = false;
    bool trim_char = false;
  };
  [[nodiscard]] const Layout& layout(std::size_t column) const noexcept { return layouts_[column]; }
  // How many leading columns hold every primary-key column (0 without a key); more than
  // column_count() when the map's key metadata names a column it does not have.
  [[nodiscard]] std::size_t key_columns_end() const noexcept { return key_columns_end_; }

  // --columns (filter/columns_option.h): the columns the images leave out, still sized and
  // skipped. kept[i] for the map's column i; set after build(), which keeps every column.
  void keep_columns(const std::vector<bool>& kept);
  void keep_columns_of(const TablePlan& other) { line_columns_ = other.line_columns_; }
  [[nodiscard]] bool omitted(std::size_t column) const noexcept {
    return !line_columns_.empty() && line_columns_[column] == kOmitted;
  }
  // The column's place among those the images carry (the table line's), which
  // output::ImageValue::column counts: the column itself when none is left out.
  [[nodiscard]] std::size_t line_column(std::size_t column) const noexcept {
    return line_columns_.empty() ? column : line_columns_[column];
  }

 private:
  const binlog::TableMap* map_ = nullptr;
  std::uint64_t generation_ = 0;
  std::string keys_;                      // every column's ",\"name\":", back to back
  std::vector<std::uint32_t> key_ends_;   // where each column's key ends in keys_
  std::vector<Charset> charsets_;
  std::vector<Layout> layouts_;
  std::size_t key_columns_end_ = 0;
  static constexpr std::uint32_t kOmitted = 0xFFFFFFFF;
  std::vector<std::uint32_t> line_columns_;  // empty: every column; else each one's line_column() or kOmitted
};

// What scanning a row image needs from its present-columns bitmap, worked out once per rows
// event (every row of an event has the same bitmap) instead of once per row: the size of the
// null bitmap, and whether every column is present (the usual FULL row image), which spares
// the per-column bitmap test.
struct ImageShape {
  std::span<const std::uint8_t> present;
  std::size_t null_bytes = 0;
  bool all_present = false;
};
ImageShape image_shape(const TablePlan& plan, std::span<const std::uint8_t> present);

// A value already written into the record in progress, from this image's slice of `column`:
// where its JSON text sits in out.buffered(). write_row_image copies it instead of decoding the
// value again (the key columns, written just before the image). Sorted by column.
struct WrittenValue {
  std::size_t column = 0;
  std::size_t from = 0;
  std::size_t size = 0;
};

// Buffers reused from row to row, so that decoding does no per-row allocation once warm.
struct RowScratch {
  TextScratch text;
  std::vector<ColumnSlice> before;
  std::vector<ColumnSlice> after;
  // The current row's key values (write_row_change), which the image they came from copies.
  std::vector<WrittenValue> key_values;
  std::string name;  // positional column names ("@3") when the binlog has none
  bool lossy_text = false;  // a value without charset metadata was not UTF-8 (U+FFFD written)
  // The plan the map-taking functions below use; callers that write many rows of one map keep
  // their own plan and call the plan-taking overloads.
  TablePlan plan;

  // scratch.plan built for map (rebuilt only when it is not already).
  const TablePlan& plan_for(const binlog::TableMap& map) {
    if (!plan.built_for(map)) plan.build(map);
    return plan;
  }
};

// Reads one row image (its null bitmap over the present columns, then the values) into
// `slices` without decoding the values: where each one is, or that it is NULL or absent.
// Failures are left in `in`.
// `partial_json` (after images of PARTIAL_UPDATE_ROWS only) has one bit per JSON column present
// in the image: set where the value is a diff vector rather than a document.
void scan_row_image(ByteReader& in, const binlog::TableMap& map, std::span<const std::uint8_t> present,
                    std::vector<ColumnSlice>& slices, RowScratch& scratch,
                    std::span<const std::uint8_t> partial_json = {});
void scan_row_image(ByteReader& in, const TablePlan& plan, std::span<const std::uint8_t> present,
                    std::vector<ColumnSlice>& slices, RowScratch& scratch,
                    std::span<const std::uint8_t> partial_json = {});
void scan_row_image(ByteReader& in, const TablePlan& plan, const ImageShape& shape, std::vector<ColumnSlice>& slices,
                    RowScratch& scratch, std::span<const std::uint8_t> partial_json = {});

// The bytes the row image at the front of `rest` takes, sized as scan_row_image sizes it but
// without noting where each value is (counting rows); nullopt where scan_row_image would fail.
// Not for PARTIAL_UPDATE_ROWS after images, which start with a header of their own.
[[nodiscard]] std::optional<std::size_t> row_image_size(std::span<const std::uint8_t> rest, const TablePlan& plan,
                                                        const ImageShape& shape);

// For a FULL row image (every column present) that row_image_size() has sized whole: `image`
// is exactly its bytes, `offset` where they start (for messages). The slices of its first
// `count` columns, to write the key from (write_full_row_image then copies those values).
void slice_full_row_image(std::span<const std::uint8_t> image, std::uint64_t offset, const TablePlan& plan,
                          std::size_t count, std::vector<ColumnSlice>& slices);
// write_row_image() of such an image in one pass, sizing each value as it is written, without
// slicing the image first: what cdc-stream's usual rows (FULL images) take.
void write_full_row_image(std::span<const std::uint8_t> image, std::uint64_t offset, const TablePlan& plan,
                          ndjson::Writer& out, RowScratch& scratch, ByteReader& errors,
                          std::span<const WrittenValue> written);

// Writes a scanned row image as a JSON object {"col": value, ...} in column order, skipping
// absent columns (minimal row images). JSON diffs are applied to the column's document in
// `before` (when the before image has it) to write the full after document; a diff without a
// before document is left out. Returns how many were left out, for write_json_diffs. Failures
// go to `errors` (the caller abandons the record). With `values`, where each column's value
// went is appended to it, in column order.
std::size_t write_row_image(const binlog::TableMap& map, const std::vector<ColumnSlice>& slices, ndjson::Writer& out,
                            RowScratch& scratch, ByteReader& errors,
                            const std::vector<ColumnSlice>* before = nullptr);
std::size_t write_row_image(const TablePlan& plan, const std::vector<ColumnSlice>& slices, ndjson::Writer& out,
                            RowScratch& scratch, ByteReader& errors,
                            const std::vector<ColumnSlice>* before = nullptr,
                            std::span<const WrittenValue> written = {}, std::vector<WrittenValue>* values = nullptr);

// {"col": [{"op":"replace","path":"$.a","value":1}, ...]} for the diffs write_row_image left out.
void write_json_diffs(const binlog::TableMap& map, const std::vector<ColumnSlice>& slices,
                      const std::vector<ColumnSlice>* before, ndjson::Writer& out, RowScratch& scratch,
                      ByteReader& errors);

// Reads the after-image prefix of a PARTIAL_UPDATE_ROWS row (value_options, then the partial
// JSON bitmap when PARTIAL_JSON_UPDATES is set) and returns the bitmap (empty: none partial).
std::span<const std::uint8_t> read_partial_json_header(ByteReader& in, const binlog::TableMap& map,
                                                       std::span<const std::uint8_t> present);

// Writes one column's value from its slice into `out` (null when NULL or absent). A value
// that does not decode fails `errors` with the column named.
void write_column_value(const binlog::TableMap& map, std::size_t index, const ColumnSlice& slice,
                        ndjson::Writer& out, RowScratch& scratch, ByteReader& errors);
void write_column_value(const TablePlan& plan, std::size_t index, const ColumnSlice& slice, ndjson::Writer& out,
                        RowScratch& scratch, ByteReader& errors);

}  // namespace cdc::rowimage
