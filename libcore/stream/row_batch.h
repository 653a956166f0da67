#pragma once

// The change lines on their way to the output stage (--format): the canonical lines as
// stream::ChangeWriter wrote them, and for each change line where its members are (RowMark)
// and what the lines of its rows event share (EventText), so that output::RowLine is made
// without scanning the line. The writer fills a RowBatch as it writes; the conversion thread
// (ConversionWorker) converts it, or the writer itself does, row by row, where it holds whole
// transactions. One way from the marks to a RowLine for both: row_line().

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ndjson/writer.h"
#include "output/converter.h"
#include "rowimage/row_image.h"

namespace cdc::stream {

struct Span {
  std::size_t begin = 0;
  std::size_t end = 0;
};

// The members a rows event's lines share: their JSON texts as spans of RowBatch::aux, and their
// values (output::RowLine::Values).
struct EventText {
  Span db, table, file, offset, gtid, server_id, thread, ts_ms;  // JSON texts
  Span db_name, table_name, file_name, gtid_value;               // the names themselves
  std::uint64_t offset_value = 0;
  std::uint64_t server_id_value = 0;
  std::optional<std::uint64_t> thread_value;
  std::int64_t ts_ms_value = 0;
};

struct RowMark {
  Span line, key, before, after, pos;  // in the lines' text; line without its newline
  Span query;                          // in the lines' text: the "query" value; empty without
  Span before_key;                     // in aux
  Span before_values, after_values;    // in values, when values_known
  bool values_known = false;
  std::size_t event = 0;               // in events
  std::uint64_t index = 0;
  std::string_view op;  // a static "\"c\"", "\"u\"" or "\"d\""
  bool partial = false;
};

struct RowBatch {
  ndjson::Writer::Buffer text;  // whole canonical lines, each ended by '\n' (what the thread converts)
  std::string aux;
  std::vector<EventText> events;
  std::vector<RowMark> rows;  // in line order
  std::vector<rowimage::WrittenValue> values;  // offsets in the lines' text

  void clear() noexcept {
    text.clear();
    aux.clear();
    events.clear();
    rows.clear();
    values.clear();
  }
  [[nodiscard]] Span add_aux(std::string_view bytes) {
    const std::size_t begin = aux.size();
    aux.append(bytes);
    return {begin, aux.size()};
  }
};

// Buffers row_line() reuses from row to row.
struct RowLineScratch {
  std::vector<output::ImageValue> before_values;
  std::vector<output::ImageValue> after_values;
  std::array<char, 24> index{};
};

// The output::RowLine of `mark`, a row of `batch` whose lines are `text` (batch.text, or the
// writer's buffer). Views into text, batch and scratch: valid until either changes.
[[nodiscard]] output::RowLine row_line(const RowBatch& batch, std::string_view text, const RowMark& mark,
                                       RowLineScratch& scratch);

}  // namespace cdc::stream
