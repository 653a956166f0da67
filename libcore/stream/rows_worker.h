#pragma once

// The change lines of big rows events, written on the second core. Writing a row's line
// (decoding each value into JSON) is most of what cdc-stream does; the reading thread reads,
// checks and decodes the events, counts each rows event's rows (a scan, a fraction of the
// writing), and hands the event's row images over with the lines before them. The worker
// writes the lines of each piece of work in order, and the rows' lines where their event was,
// so the output is byte for byte what one thread writes (ChangeWriter::use_rows_thread).
//
// At most kMaxInFlight pieces of work are handed over and not yet written (each about
// kWorkBytes of row images), so memory stays bounded and a slow output slows the reading.
// drain() waits until everything handed over is written: a checkpoint's flush, after which the
// bytes written are known.

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "binlog/events/rows_event.h"
#include "binlog/events/table_map_event.h"
#include "ndjson/writer.h"
#include "records/row.h"
#include "rowimage/row_change.h"
#include "rowimage/row_image.h"
#include "stream/row_batch.h"
#include "stream/row_lines.h"
#include "util/ordered_worker.h"
#include "util/result.h"

namespace cdc::stream {

// A table as the worker writes its rows: a copy of the map (the decoder's is replaced by the
// next TABLE_MAP of its id, while the worker may still be writing rows of this one) and the
// plan built on that copy. Shared by the events of one decode of the map; never changed.
struct RowsTable {
  binlog::TableMap map;
  rowimage::TablePlan plan;
};

// One rows event handed over: its bitmaps and rows in RowsWork::bytes, or in place in a block
// of input that RowsWork::held keeps; its lines' members in RowsWork::members.
struct DeferredRows {
  std::shared_ptr<const RowsTable> table;
  std::size_t at = 0;  // where its lines go in RowsWork::text
  // Where columns_before, columns_after and rows count from: RowsWork::bytes when null.
  const std::uint8_t* held_bytes = nullptr;
  Span columns_before, columns_after, rows;  // in bytes
  Span head_members, pos_members, gtid_member, tail_members, query_member, file;  // in members
  Span row_sizes;  // in RowsWork::row_sizes: each row's, as counting found them; or empty
  Span verdicts;   // in RowsWork::verdicts: each row's under --where; or empty (every row kept)
  binlog::RowsKind kind = binlog::RowsKind::write;
  std::uint64_t column_count = 0;
  std::uint64_t rows_offset = 0;  // the absolute offset of the rows, for messages
  std::uint64_t offset = 0;       // the event's (or its payload's), for messages
  std::uint64_t first_index = 0;
  bool partial = false;
};

// A piece of work: whole lines, and the rows events whose lines go between them.
struct RowsWork {
  ndjson::Writer::Buffer text;
  std::vector<std::uint8_t> bytes;
  std::string members;
  std::vector<DeferredRows> jobs;  // in text order
  std::vector<rowimage::RowSizes> row_sizes;  // the jobs' rows', where counting noted them
  std::vector<RowVerdict> verdicts;           // the jobs' rows', where --where judged them
  // The input blocks the jobs' held_bytes are in. Let go of on the reading thread only (clear(),
  // which the worker does not call): the reader reuses a block once nobody else holds it
  // (binlog::FileReader::block), and may count its holders on its own thread alone.
  std::vector<std::shared_ptr<const void>> held;

  void clear() noexcept {
    text.clear();
    bytes.clear();
    members.clear();
    jobs.clear();
    row_sizes.clear();
    verdicts.clear();
    held.clear();
  }
  [[nodiscard]] Span add_bytes(std::span<const std::uint8_t> from) {
    const std::size_t begin = bytes.size();
    bytes.insert(bytes.end(), from.begin(), from.end());
    return {begin, bytes.size()};
  }
  [[nodiscard]] Span add_members(std::string_view from) {
    const std::size_t begin = members.size();
    members.append(from);
    return {begin, members.size()};
  }
};

class RowsWorker {
 public:
  // Row images handed over in one piece of work, about; and pieces in flight, at most. The
  // reader writes an event's lines itself rather than wait for a fourth. With two the worker
  // still ran dry now and then (a tenth of the pieces found nothing queued behind them, and a
  // sleeping thread takes long to wake on a VM) while the reader wrote a third of the events:
  // three were 0.172 s against 0.197 s (medians of 21 alternating runs of the bench binlog).
  static constexpr std::size_t kWorkBytes = std::size_t{1} << 16;
  static constexpr std::size_t kMaxInFlight = 3;

  RowsWorker(int out_fd, std::string out_name);

  // Hands `work` over (swapped with a written one, whose buffers are reused). Waits while
  // kMaxInFlight are in flight. The worker's first error, once it has failed: nothing after it
  // is written.
  [[nodiscard]] Result<void> submit(RowsWork& work) { return worker_.submit(work); }
  // Waits until everything handed over is written; returns the bytes written since the last
  // drain, or the worker's error.
  [[nodiscard]] Result<std::uint64_t> drain() { return worker_.drain(); }
  // Pieces handed over and not yet written (a hint: the worker may finish one meanwhile).
  [[nodiscard]] std::size_t in_flight() const noexcept { return worker_.in_flight(); }
  // "db.table" of the first row the worker wrote that had binary data in a column without
  // charset metadata; read after drain().
  [[nodiscard]] const std::string& lossy_text_table() const noexcept { return lossy_text_table_; }

 private:
  // On the thread: writes the work's lines, adding to `bytes` what went out.
  Result<void> write(const RowsWork& work, std::uint64_t& bytes);

  // A stretch of the output: of the work's text, or of the lines written into out_.
  struct Piece {
    bool text = false;
    std::size_t begin = 0;
    std::size_t end = 0;
  };

  int out_fd_;
  std::string out_name_;
  ndjson::Writer out_;
  rowimage::RowScratch scratch_;
  std::vector<Piece> pieces_;
  std::vector<iovec> vectors_;
  std::string lossy_text_table_;
  OrderedWorker<RowsWork> worker_;  // last: its thread uses the members above
};

}  // namespace cdc::stream
