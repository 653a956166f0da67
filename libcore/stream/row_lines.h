#pragma once

// The change lines of one rows event (man/cdc-ndjson.5, "c", "u" and "d" lines), written the
// one way both writers of them share: ChangeWriter in the reading thread, and RowsWorker on the
// second core for the events it hands over.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "binlog/events/rows_event.h"
#include "ndjson/writer.h"
#include "records/row.h"
#include "records/kinds.h"
#include "rowimage/row_change.h"
#include "rowimage/row_image.h"
#include "util/byte_reader.h"
#include "util/result.h"

namespace cdc::stream {

// What every line of one rows event shares, serialized once per event.
struct EventLines {
  std::string_view head_members;   // "op":"c","v":1,"db":"..","table":".."
  std::string_view pos_members;    // "file":"..","offset":N,"index": (the row's index follows)
  std::string_view gtid_member;    // "gtid":".." or "gtid":null
  std::string_view tail_members;   // "server_id":N,"thread":N|null,"ts_ms":N
  std::uint64_t first_index = 0;   // the index of the event's first row
  bool partial = false;            // the event's images are not FULL
  // "query":".." or "query":null with --include-query (escaped once per statement); else empty.
  std::string_view query_member;
};

// Where a rows event came from, for the message of a row that does not decode.
struct RowsSource {
  std::string_view file;
  std::uint64_t offset = 0;
  binlog::RowsKind kind = binlog::RowsKind::write;
  std::string_view database;
  std::string_view table;
};

// Where the line just written is in the writer's buffer, for an output stage.
struct WrittenLine {
  std::size_t start = 0;
  std::size_t pos_begin = 0;
  std::size_t pos_end = 0;
  // The "query" member's value (a JSON string or null); empty when the line has none.
  std::size_t query_begin = 0;
  std::size_t query_end = 0;
  std::uint64_t index = 0;
  bool partial = false;
  records::ChangeOp op = records::ChangeOp::insert;  // the line's: an update may be written as either other
};

// What becomes of one row under cdc-stream --where (stream/row_filter.h).
enum class RowVerdict : std::uint8_t {
  drop,       // no line
  keep,       // its line as the event's kind says
  as_insert,  // an update written as a "c" line of its after image
  as_delete,  // an update written as a "d" line of its before image
};

// A rows event's line kind: a partial update (MySQL's PARTIAL_UPDATE_ROWS) is an update too.
[[nodiscard]] constexpr records::ChangeOp change_op(binlog::RowsKind kind) noexcept {
  switch (kind) {
    case binlog::RowsKind::write: return records::ChangeOp::insert;
    case binlog::RowsKind::update:
    case binlog::RowsKind::partial_update: return records::ChangeOp::update;
    case binlog::RowsKind::erase: return records::ChangeOp::erase;
  }
  return records::ChangeOp::update;
}

// "FILE:OFFSET: UPDATE_ROWS row N of db.table: why".
[[nodiscard]] Error row_failure(const RowsSource& source, std::uint64_t row, std::string_view why);

// Writes one line per row left in `rows` into `out`, calling after_line(const WrittenLine&)
// (which returns Result<void>) after each. Returns how many lines it wrote; on a row that does
// not decode, the message names it (row_failure) and its line is dropped, the lines before it
// kept. `sizes`: each row's image sizes, when count_rows() noted them (else empty).
// `verdicts`: each row's under --where (RowFilter::judge; rows past them are kept): a dropped
// row is skipped, its index unused, and an update may be written as an insert or a delete.
template <class AfterLine>
Result<std::uint64_t> write_row_lines(ByteReader& rows, const rowimage::TablePlan& plan,
                                      const rowimage::RowsShape& shape, const EventLines& event,
                                      const RowsSource& source, ndjson::Writer& out, rowimage::RowScratch& scratch,
                                      rowimage::RowSpans* spans, std::span<const rowimage::RowSizes> sizes,
                                      std::span<const RowVerdict> verdicts, AfterLine&& after_line) {
  std::uint64_t index = event.first_index;
  std::uint64_t written = 0;
  const std::size_t query_value_size =
      event.query_member.size() - std::min(event.query_member.size(), records::kQueryKey.size());
  const records::ChangeOp event_op = change_op(source.kind);
  // "v":1,"db":..,"table":.., for the lines written as another op than the event's.
  const std::string_view table_members =
      event.head_members.substr(std::min(event.head_members.size(), records::change_op_member(event_op).size() + 1));
  rowimage::RowsShape shown = shape;  // an update's, showing one image
  for (; !rows.empty(); ++index) {
    const std::uint64_t row = index - event.first_index;
    const rowimage::RowSizes* const row_sizes = row < sizes.size() ? &sizes[row] : nullptr;
    const RowVerdict verdict = row < verdicts.size() ? verdicts[row] : RowVerdict::keep;
    if (verdict == RowVerdict::drop) {
      rowimage::skip_row_change(rows, plan, shape, scratch, row_sizes);
      if (!rows.ok()) return fail(row_failure(source, row, rows.failure_text()));
      continue;
    }
    const std::size_t line_start = out.bytes_buffered();
    out.begin_object();
    records::ChangeOp op = event_op;
    if (verdict == RowVerdict::keep) {
      out.raw_members(event.head_members);
    } else {
      op = verdict == RowVerdict::as_insert ? records::ChangeOp::insert : records::ChangeOp::erase;
      shown.show_before = op == records::ChangeOp::erase;
      shown.show_after = op == records::ChangeOp::insert;
      out.raw_members(records::change_op_member(op));
      out.raw_members(table_members);
    }
    const std::size_t unresolved_diffs = rowimage::write_row_change(
        rows, plan, verdict == RowVerdict::keep ? shape : shown, out, scratch, spans, row_sizes);
    if (!rows.ok()) {
      out.abandon_record();
      return fail(row_failure(source, row, rows.failure_text()));
    }
    const bool partial_line = event.partial || unresolved_diffs > 0;
    if (partial_line) out.field(records::field::partial, true);
    std::size_t query_end = 0;
    if (!event.query_member.empty()) {
      out.raw_members(event.query_member);
      query_end = out.bytes_buffered();
    }
    out.raw_comma_key(records::comma_key::pos);
    const std::size_t pos_begin = out.bytes_buffered();
    out.begin_object();
    out.raw_members_key(event.pos_members);
    out.unsigned_integer(index);
    out.raw_members(event.gtid_member);
    out.end_object();
    const std::size_t pos_end = out.bytes_buffered();
    out.raw_members(event.tail_members);
    out.end_object();
    out.end_record();
    if (auto done = after_line(WrittenLine{line_start, pos_begin, pos_end, query_end - query_value_size, query_end,
                                           index, partial_line, op});
        !done)
      return fail(std::move(done).error());
    ++written;
  }
  return written;
}

}  // namespace cdc::stream
