#pragma once

// The change lines of big rows events, written on the second core. Writing a row's line
// (decoding each value into JSON) is most of what cdc-stream does; the reading thread reads,
// checks and decodes the events, counts each rows event's rows (a scan, a fraction of the
// writing), and hands the event's row images over with the lines before them. The worker
// writes the lines of each piece of work in order, and the rows' lines where their event was,
// so the output is byte for byte what one thread writes (ChangeWriter::use_rows_thread).
//
// A --where (stream/row_filter.h) is judged here too when the reading thread leaves it to this
// one (ChangeWriter::judge_rows_on_rows_thread): then it also writes the table line before an
// event's first kept row and the commit lines of the transactions with such events, whose row
// counts only this thread knows.
//
// At most kMaxInFlight pieces of work are handed over and not yet written (each about
// kWorkBytes of row images), so memory stays bounded and a slow output slows the reading.
// drain() waits until everything handed over is written: a checkpoint's flush, after which the
// bytes written are known.

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "binlog/events/rows_event.h"
#include "binlog/events/table_map_event.h"
#include "ndjson/writer.h"
#include "records/row.h"
#include "rowimage/row_change.h"
#include "rowimage/row_image.h"
#include "records/table_line.h"
#include "stream/row_batch.h"
#include "stream/row_filter.h"
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
  // Judged on the rows thread: the thread's own copy of the table's filter, and the table line
  // it writes before the first row it keeps when the output does not describe the table so.
  std::shared_ptr<RowFilter> filter;
  records::TableLine line;
  std::string description;
};

// One rows event handed over: its bitmaps and rows in RowsWork::bytes, or in place in a block
// of input that RowsWork::held keeps; its lines' members in RowsWork::members. Or the commit line
// of a transaction whose rows this thread judged (`commit`).
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
  // Judged here (table->filter): the event's GTID and time, for its table line.
  Span gtid;  // in members: the GTID as text, "" for none
  std::uint64_t ts_ms = 0;
  // A commit line, written when the transaction has lines: `lines` the reading thread wrote
  // and `rows` of them rows, plus the rows this thread kept since the last commit; `offset` is
  // where the transaction ends, `file` its file, `gtid`, `ts_ms`, and `position` where to resume.
  struct Commit {
    Span position;  // in members
    std::uint64_t lines = 0;
    std::uint64_t rows = 0;
    std::optional<std::uint64_t> xid;
  };
  std::optional<Commit> commit;
};

// What the rows thread judged and wrote (read after a drain): rows kept, commit lines written,
// and the rows kept since the last commit line (of a transaction the input ends inside).
struct JudgedCounts {
  std::uint64_t rows = 0;
  std::uint64_t transactions = 0;
  std::uint64_t open_rows = 0;
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
  // The output was cut back (ChangeWriter::discard): the table lines the thread wrote are gone,
  // and the rows it kept of the transaction in flight.
  bool forget_described = false;

  void clear() noexcept {
    forget_described = false;
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
  // Read after drain().
  [[nodiscard]] const JudgedCounts& judged_counts() const noexcept { return judged_; }

 private:
  // On the thread: writes the work's lines, adding to `bytes` what went out.
  Result<void> write(const RowsWork& work, std::uint64_t& bytes);

  // One rows event's lines into out_, counting those kept under the table's filter.
  Result<void> write_rows(const RowsWork& work, const DeferredRows& job);
  // The commit line of a transaction whose rows this thread judged, when it has lines.
  void write_commit(const RowsWork& work, const DeferredRows& job);

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
  // Judging (RowsTable::filter): each row's verdict and sizes, reused; the description of each
  // table the output has last (key: database '\0' table), as ChangeWriter's own for the rest.
  std::vector<RowVerdict> verdicts_;
  std::vector<rowimage::RowSizes> sizes_;
  std::map<std::string, std::string, std::less<>> described_;
  std::string described_key_;
  JudgedCounts judged_;
  OrderedWorker<RowsWork> worker_;  // last: its thread uses the members above
};

}  // namespace cdc::stream
