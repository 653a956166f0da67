#pragma once

// The output stage of the tools that write final change lines (cdc-stream, cdc-merge,
// cdc-sync): canonical lines (cdc-ndjson(5)) in, the chosen format's lines out. One
// implementation for every tool: a function of the canonical lines alone, which carry what a
// format needs (the "table" lines describe each table before its first change; the change
// lines carry their positions, the commit lines their transaction's end).
//
// Converters are stateful: they remember the tables described so far, and may hold lines back
// until a later line tells how to finish them (a Debezium snapshot's last row, the rows of one
// Canal message, a Maxwell transaction). They never hold anything back past a "commit", "high"
// or "span_end" line, so what a tool has written at a commit is whole.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "ndjson/writer.h"
#include "output/format.h"
#include "util/result.h"

namespace cdc::output {

// A change line (c, u, d) as the tool that writes it knows it: each member's raw JSON text, so
// that the converter need not scan the line for them (stream::ChangeWriter hands these over).
// Views into the line and the writer's buffers, valid during convert_row only.
// One column's value in a row image: the column's index in the table line, its JSON text.
struct ImageValue {
  std::size_t column = 0;
  std::string_view text;
};

struct RowLine {
  std::string_view line;  // the whole canonical line, without its newline
  std::string_view op;    // "\"c\"", "\"u\"" or "\"d\""
  std::string_view db;    // JSON strings, quotes included
  std::string_view table;
  std::string_view key;     // the key object, or null
  std::string_view before;  // the images: objects, or null
  std::string_view after;
  // A u line's key object of its before image ("" when the line has no before image or no key):
  // a primary-key change shows as it differing from `key`.
  std::string_view before_key;
  // The images' values in column order (the present columns), when the writer says them
  // (values_known, for a converter that uses_image_values). Then it need not scan the images.
  bool values_known = false;
  std::span<const ImageValue> before_values;
  std::span<const ImageValue> after_values;
  std::string_view pos;  // the pos object, and its members
  std::string_view file;    // a JSON string
  std::string_view offset;  // numbers
  std::string_view index;
  std::string_view gtid;  // a JSON string, or null
  std::string_view server_id;
  std::string_view thread;
  std::string_view ts_ms;
  // The statement that made the change (--include-query): a JSON string, or null when the
  // server did not log it; "" when the line has no "query".
  std::string_view query;
  bool partial = false;
  // The same members as values, which the writer knows before it writes them: names as they
  // are (not JSON strings), numbers as numbers. Canal and Maxwell read these.
  struct Values {
    std::string_view db;
    std::string_view table;
    std::string_view file;
    std::string_view gtid;  // "" for null
    std::uint64_t offset = 0;
    std::uint64_t index = 0;
    std::uint64_t server_id = 0;
    std::optional<std::uint64_t> thread;
    std::int64_t ts_ms = 0;
  } values;
};

class Converter {
 public:
  Converter() = default;
  Converter(const Converter&) = delete;
  Converter& operator=(const Converter&) = delete;
  virtual ~Converter() = default;

  // One canonical line, without its newline. Appends zero or more whole output lines (each
  // ended by '\n') to `out`. Errc::corrupt_input for a line the converter cannot read (the
  // caller adds where it was); Errc::config for one the options refuse (a masked key column).
  [[nodiscard]] virtual Result<void> convert(std::string_view line, ndjson::Writer& out) = 0;
  // The same for a change line whose members are known: convert(row.line) unless the format
  // reads them from `row` directly.
  [[nodiscard]] virtual Result<void> convert_row(const RowLine& row, ndjson::Writer& out) { return convert(row.line, out); }
  // Whether convert_row reads RowLine::before_key (the writer makes it only then).
  [[nodiscard]] virtual bool uses_before_key() const noexcept { return false; }
  // Whether it reads RowLine::before_values and after_values of a change of kind op ('c', 'u'
  // or 'd'): the writer notes them only then (values_known), else the images are to be scanned.
  [[nodiscard]] virtual bool uses_image_values(char op) const noexcept {
    (void)op;
    return false;
  }
  // The input ended: appends what is held back.
  [[nodiscard]] virtual Result<void> finish(ndjson::Writer& out) = 0;
  // The lines since the last commit are void (a transaction cut off by a lost connection, read
  // again in full afterwards): forgets what is held back of them. Table descriptions stay.
  virtual void drop_held() noexcept = 0;
};

// Every whole line of `lines` (each ended by '\n') through the converter, appended to out. An
// error names the line it met, as "--format F: <line text, cut short>: <message>".
[[nodiscard]] Result<void> convert_lines(Converter& converter, std::string_view lines, ndjson::Writer& out);
// One change line through convert_row, its error named as convert_lines names them.
[[nodiscard]] Result<void> convert_row_line(Converter& converter, const RowLine& row, ndjson::Writer& out);

// nullptr for --format ndjson without masking: the canonical lines go out as they are.
[[nodiscard]] Result<std::unique_ptr<Converter>> make_converter(const OutputOptions& options);

}  // namespace cdc::output
