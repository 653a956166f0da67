#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "binlog/decoder.h"
#include "filter/where_option.h"
#include "gtid/position.h"
#include "ndjson/writer.h"
#include "output/converter.h"
#include "records/table_line.h"
#include "rowimage/row_change.h"
#include "rowimage/row_image.h"
#include "stream/conversion_worker.h"
#include "stream/row_batch.h"
#include "filter/columns_option.h"
#include "stream/row_filter.h"
#include "stream/row_lines.h"
#include "stream/rows_worker.h"
#include "util/result.h"

namespace cdc::stream {

// Where a change happened: the file and offset of its event, the transaction's GTID (empty
// without GTIDs) and the row's index inside its event. (file, offset, index) is unique, so a
// consumer can drop a line it has already seen after a restart.
struct ChangePosition {
  std::string_view file;
  std::uint64_t offset = 0;
  std::string_view gtid;
  std::uint64_t first_index = 0;  // index of the event's first row (rows of a payload keep counting)
  std::uint32_t server_id = 0;    // the event header's: the server that wrote the change
  // The thread id of the transaction's BEGIN query event; nullopt when it has none (MariaDB
  // writes no BEGIN event after its GTID event).
  std::optional<std::uint32_t> thread;
  // Inside a TRANSACTION_PAYLOAD, whose rows are numbered across its events: rows_read() must
  // count the rows of an event --where drops, wherever they are judged.
  bool in_payload = false;
};

// Writes cdc-stream's lines (man/cdc-ndjson.5; records/row.h, records/stream_lines.h): data
// lines (c/u/d) from row events, ddl, commit, incident, span and discard lines, and a table line
// (records/table_line.h) before the first change of each table and before the first change
// after its description changed. One instance is reused for a whole run: no per-row
// allocation (the table's description is built once per TABLE_MAP decode).
class ChangeWriter {
 public:
  ChangeWriter(int out_fd, std::string out_name);
  ChangeWriter(const ChangeWriter&) = delete;
  ChangeWriter& operator=(const ChangeWriter&) = delete;
  ~ChangeWriter();

  // --include-query: the change lines written from here on carry a "query" member, null until
  // set_query() names the statement.
  void include_queries();
  // The statement whose rows follow (an ANNOTATE_ROWS or ROWS_QUERY event), escaped here once
  // and copied into each of its row lines; nothing without include_queries().
  void set_query(std::string_view sql);
  // The statement's rows have ended (its last rows event, or its transaction): the lines after
  // carry null until the next set_query().
  void forget_query();

  // --where (stream/row_filter.h): the rows of the tables these select go through their
  // filters, bound to each table as its rows come (and again after a DDL changed it).
  void set_row_filters(std::vector<filter::WhereOption> wheres);
  // --columns (filter/columns_option.h): the lines of the tables these select carry only the
  // columns each keeps (the key's always), table lines included. Checked as each table's rows
  // come: Errc::usage for an unknown column, a table without a primary key, or a column the
  // table's --where reads that it leaves out.
  void set_column_choices(std::vector<filter::ColumnsOption> choices);
  // Updates the last write_rows() wrote as inserts and deletes (--where), of the lines it wrote.
  struct FilterConversions {
    std::uint64_t as_inserts = 0;
    std::uint64_t as_deletes = 0;
  };
  [[nodiscard]] const FilterConversions& filter_conversions() const noexcept { return filter_conversions_; }
  // How many rows the last write_rows() read, kept or not (--where drops some): what the
  // positions of the rows after it count from. `written`: what it returned.
  [[nodiscard]] std::uint64_t rows_read(std::uint64_t written) const noexcept {
    return judged_rows_.value_or(written);
  }

  // Writes one line per row of the event (per row --where keeps). Returns how many lines it
  // wrote. Failures name the column and offset; the line being written is dropped. A --where
  // that does not fit the table is Errc::usage (RowFilters::for_table).
  Result<std::uint64_t> write_rows(const binlog::RowsEvent& event, const binlog::TableMap& map,
                                   const ChangePosition& position, std::uint32_t timestamp);
  void write_ddl(std::string_view database, std::string_view sql, const ChangePosition& position,
                 std::uint32_t timestamp);
  // `xid`: the XID event's; nullopt for a transaction that ends with a COMMIT query (or a DDL).
  // `lines`: the transaction's lines written so far (rows and DDL), `rows` of them rows; with
  // rows_pending() the rows thread adds its own and writes the line only if there are any.
  void write_commit(std::string_view gtid, std::string_view file, std::uint64_t end_offset, std::string_view position,
                    std::uint32_t timestamp, std::uint64_t rows, std::uint64_t lines,
                    std::optional<std::uint64_t> xid);
  // A bounded run's first and last lines (--until; cdc-stream(1), SPAN LINES): where the
  // stream started, and that it reached --until, so that a reader such as cdc-merge can
  // prove the output covers a span.
  void write_span_start(std::string_view position);
  // `at`: the end of the last whole transaction read; nullopt when not known (a run that
  // starts at a GTID position that already includes --until reads no event), written null.
  void write_span_end(std::string_view position, const std::optional<gtid::FilePosition>& at,
                      std::string_view until);
  // After a lost connection on an output that cannot be cut back (stdout): the lines of the
  // transaction in flight that are out already are to be dropped; the transaction, which
  // began at `began` (GTID `gtid`, empty without), is read again in full.
  void write_discard(std::string_view gtid, const gtid::FilePosition& began, std::string_view reason,
                     std::uint32_t timestamp);
  void write_incident(std::string_view message, const ChangePosition& position, std::uint32_t timestamp);

  // The output stage (--format, cdc-formats(7)): the lines are converted when they are
  // written, and bytes_flushed() counts the converted bytes. With hold_transactions (an
  // output that cannot be cut back: stdout), nothing of a transaction is written before
  // flush() at its end, as the formats have no discard line: a transaction past the buffer's
  // size is converted into an unlinked temp file under $TMPDIR, copied out at flush().
  //
  // Without hold_transactions the conversion runs on a thread of its own (ConversionWorker):
  // the lines are handed over as the buffer fills, and flush() waits for them to be written.
  void set_converter(std::unique_ptr<output::Converter> converter, bool hold_transactions);
  [[nodiscard]] bool holds_transactions() const noexcept { return hold_transactions_; }

  // Without a converter: the lines of rows events of at least `min_event_bytes` of row images
  // are written on a thread of their own (RowsWorker), in their place among the other lines,
  // while this thread reads on; flush() waits for them. Not with set_converter(), which has
  // its own thread. 0 hands over every rows event that scans (the tests' way to cover the
  // worker with every event the one-thread writer covers).
  static constexpr std::size_t kRowsThreadMinBytes = 2048;
  void use_rows_thread(std::size_t min_event_bytes = kRowsThreadMinBytes);
  // With the rows thread: the rows of tables under --where are judged there, not here (every
  // event of such a table goes to it, however small), so that this thread, which bounds a
  // decode from files, does no more with a filter than without; unless it has
  // `judge_here_in_flight` pieces of work or more in flight: then this thread judges, so that
  // the work is shared. Then this thread does not know
  // how many lines such an event has: write_rows() returns 0 for it and rows_pending() is true
  // until the transaction's write_commit(), whose line the rows thread writes when the
  // transaction has lines; judged_counts() says, after flush(), what it kept and wrote. For a
  // run from files, which reads the counts at its end; a live run checkpoints by them.
  static constexpr std::size_t kJudgeHereInFlight = 2;
  void judge_rows_on_rows_thread(std::size_t judge_here_in_flight = kJudgeHereInFlight) noexcept {
    judge_on_rows_thread_ = true;
    judge_here_in_flight_ = judge_here_in_flight;
  }
  [[nodiscard]] bool rows_pending() const noexcept { return rows_pending_; }
  [[nodiscard]] JudgedCounts judged_counts() const noexcept {
    return rows_worker_ ? rows_worker_->judged_counts() : JudgedCounts{};
  }
  // The block the events written next are read from (binlog::FileReader::block), or null. A
  // rows event handed to the rows thread whose bytes all lie in it is taken in place, the
  // work holding a copy of the block, instead of being copied; any other (decompressed, or
  // from the network) is copied. The pointer must stay valid until it is replaced.
  void set_input(const std::shared_ptr<std::vector<std::uint8_t>>* block) noexcept { input_ = block; }
  // set_input() for as long as a file is read: its reader's block, then none.
  class InputScope {
   public:
    InputScope(ChangeWriter& writer, const std::shared_ptr<std::vector<std::uint8_t>>& block) : writer_(writer) {
      writer_.set_input(&block);
    }
    InputScope(const InputScope&) = delete;
    InputScope& operator=(const InputScope&) = delete;
    ~InputScope() { writer_.set_input(nullptr); }

   private:
    ChangeWriter& writer_;
  };

  // Writes out what is buffered; call at transaction boundaries and at the end.
  Result<void> flush();
  // The input ended (cdc-stream --file): flush(), after the converter's held lines (the rows
  // of a transaction the last file leaves open, which NDJSON writes without a commit line).
  // Not for a live stream: what a converter holds there is a transaction in flight, which a
  // rerun reads again in full.
  Result<void> finish();
  // Flushes only when the buffer has grown past the threshold (inside big transactions).
  Result<void> flush_if_large();
  // Drops what is buffered and not yet written (a transaction cut off by a lost connection).
  // The table lines dropped with it, or cut from the output after, are written again.
  void discard() noexcept;
  // Bytes written to the output so far (flushed ones only).
  [[nodiscard]] std::uint64_t bytes_flushed() const noexcept { return bytes_flushed_; }
  void set_bytes_flushed(std::uint64_t bytes) noexcept { bytes_flushed_ = bytes; }

  [[nodiscard]] bool partial_images_seen() const noexcept { return partial_images_seen_; }
  // "db.table" of the first row that had binary data in a column without charset metadata.
  // After flush() when the rows thread is used.
  [[nodiscard]] const std::string& lossy_text_table() const noexcept {
    return lossy_text_table_.empty() && rows_worker_ ? rows_worker_->lossy_text_table() : lossy_text_table_;
  }

 private:
  // What every line of a table's rows shares, serialized once per TABLE_MAP decode: the row
  // plan (escaped column keys, charsets, value sizes) and ',"v":1,"db":..,"table":..' members.
  struct TableEntry {
    rowimage::TablePlan plan;
    std::string table_members;  // "v":1,"db":"..","table":".."
    std::string quoted_db;      // "..", for output::RowLine
    std::string quoted_table;
    records::TableLine line;    // the table line, "pos" and "ts_ms" set when it is written
    std::string description;    // the line written without "pos" and "ts_ms", to compare
    bool described = false;     // the output has this description as the table's last
    // The map and plan as the rows thread uses them: made on the first event handed over.
    std::shared_ptr<const RowsTable> rows_table;
    std::shared_ptr<RowFilter> filter;  // --where's for the table; null: every row
  };
  // A few recently used maps: a transaction often alternates between several tables.
  static constexpr std::size_t kCachedTables = 8;

  // The entry of `map`, its --where bound (Errc::usage when it does not fit; `position` for
  // the message).
  Result<TableEntry*> table_entry(const binlog::TableMap& map, const ChangePosition& position);
  // The table line before the event's rows when the output does not describe the table so yet.
  void describe(TableEntry& table, const ChangePosition& position, std::uint32_t timestamp);
  // The table's plan and line trimmed to the columns its --columns choice keeps, and without
  // the server's internal DB_ROW_HASH_<n> columns, which no SELECT shows.
  Result<void> keep_chosen_columns(TableEntry& entry, const binlog::TableMap& map, const ChangePosition& position);
  void keep_only(TableEntry& entry, const std::vector<bool>& kept);
  void forget_described() noexcept;
  // Serializes the members of the event's lines that do not change from row to row.
  void prepare_event(const ChangePosition& position, std::uint32_t timestamp);
  // The event's rows, `count` of them, handed to the rows thread: their lines go where the
  // lines written so far end. `row_sizes`: their sizes in work_.row_sizes, if counting noted them.
  // `judged`: the event's position when the rows thread judges it (then `count` is 0).
  Result<std::uint64_t> defer_rows(const binlog::RowsEvent& event, TableEntry& table, const binlog::TableMap& map,
                                   const EventLines& lines, std::uint64_t count, Span row_sizes,
                                   const ChangePosition* judged, std::uint32_t timestamp);
  // out_'s ended lines and the events deferred among them to the rows thread.
  Result<void> hand_off_rows();

  // The output stage: the ended lines of out_ converted into converted_.
  Result<void> convert_ended();
  // The row line just ended in out_, noted in batch_ (its event's texts too, on its first row).
  void mark_row(std::string_view op, const TableEntry& table, const WrittenLine& line);
  // out_'s ended lines to the conversion thread.
  Result<void> hand_off();
  // Without the thread: the row line just marked, through the converter, then dropped from out_.
  Result<void> convert_marked_row();
  // converted_ to the spill file (hold_transactions_), opened on first use.
  Result<void> spill_converted();

  int out_fd_;
  std::string out_name_;
  ndjson::Writer out_;
  std::unique_ptr<output::Converter> converter_;
  bool hold_transactions_ = false;
  ndjson::Writer converted_;
  int spill_fd_ = -1;
  std::uint64_t spilled_bytes_ = 0;
  rowimage::RowScratch scratch_;
  std::optional<RowFilters> row_filters_;  // --where
  std::vector<filter::ColumnsOption> column_choices_;  // --columns
  std::vector<RowVerdict> verdicts_;       // the current event's rows', under --where
  FilterConversions filter_conversions_;
  std::optional<std::uint64_t> judged_rows_;  // the last event's rows under --where, kept or not
  std::vector<TableEntry> tables_;
  std::size_t next_table_slot_ = 0;  // which entry a new map replaces once all are in use
  // The current event's pieces (prepare_event); reused, so no allocation once warm.
  ndjson::Writer pieces_;
  std::string head_members_;   // "op":"c","v":1,"db":"..","table":".."
  std::string pos_members_;    // "file":"..","offset":N,"index":
  std::string gtid_member_;    // "gtid":".." or "gtid":null
  std::string tail_members_;   // "server_id":N,"thread":N|null,"ts_ms":N
  // "query":".."|null with --include-query: the statement of the rows written next; else empty.
  std::string query_member_;
  // The same values alone, and where each row's members are, for the output stage.
  std::string file_text_;    // "..": the event's file, offset and GTID
  std::string offset_text_;
  std::string gtid_text_;    // "..", or null
  std::string server_id_text_;
  std::string thread_text_;
  std::string ts_ms_text_;
  ChangePosition event_position_;  // the event being written (its views valid in write_rows)
  std::uint64_t event_ts_ms_ = 0;
  rowimage::RowSpans row_spans_;
  // The conversion thread (without hold_transactions); the rows marked for the output stage
  // (handed to the thread, or converted at once without it), and whether the current event's
  // texts are in batch_ yet.
  std::unique_ptr<ConversionWorker> worker_;
  RowBatch batch_;
  RowLineScratch row_scratch_;
  // The rows thread (use_rows_thread): what goes to it next, the row images in it, and whether
  // anything was handed over since the last drain.
  std::unique_ptr<RowsWorker> rows_worker_;
  std::size_t rows_thread_min_bytes_ = kRowsThreadMinBytes;
  RowsWork work_;
  std::size_t work_rows_bytes_ = 0;
  const std::shared_ptr<std::vector<std::uint8_t>>* input_ = nullptr;
  bool rows_handed_over_ = false;
  bool judge_on_rows_thread_ = false;
  std::size_t judge_here_in_flight_ = kJudgeHereInFlight;
  bool rows_pending_ = false;  // this transaction has rows the rows thread judges
  bool event_in_batch_ = false;
  std::uint64_t bytes_flushed_ = 0;
  bool partial_images_seen_ = false;
  std::string lossy_text_table_;
  // The description last written per table (key: database '\0' table), since the start or the
  // last discard().
  std::map<std::string, std::string, std::less<>> described_;
};

}  // namespace cdc::stream
