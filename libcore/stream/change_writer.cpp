#include "stream/change_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

#include "records/kinds.h"
#include "records/row.h"
#include "records/stream_lines.h"
#include "schema/table_description.h"
#include "util/fd_io.h"

namespace cdc::stream {

namespace {

constexpr std::size_t kFlushThreshold = std::size_t{1} << 18;

// The members a Writer wrote into one object, without the braces and the record's newline:
// {"a":1,"b":2}\n -> "a":1,"b":2.
std::string_view members_of(const ndjson::Writer& writer) {
  const std::string_view record = writer.buffered();
  return record.substr(1, record.size() - 3);
}

// Whether `part` lies in `block` (an empty span does, wherever it points), and where.
bool inside(const std::vector<std::uint8_t>& block, std::span<const std::uint8_t> part) {
  const auto begin = reinterpret_cast<std::uintptr_t>(block.data());
  const auto at = reinterpret_cast<std::uintptr_t>(part.data());
  return part.empty() || (at >= begin && at - begin <= block.size() && part.size() <= block.size() - (at - begin));
}
Span span_in(const std::vector<std::uint8_t>& block, std::span<const std::uint8_t> part) {
  if (part.empty()) return {};
  const auto from = static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(part.data()) -
                                             reinterpret_cast<std::uintptr_t>(block.data()));
  return {from, from + part.size()};
}

}  // namespace

ChangeWriter::ChangeWriter(int out_fd, std::string out_name) : out_fd_(out_fd), out_name_(std::move(out_name)) {}

ChangeWriter::~ChangeWriter() {
  worker_.reset();  // joins the thread before the converter it uses goes
  rows_worker_.reset();
  if (spill_fd_ >= 0) ::close(spill_fd_);
}

void ChangeWriter::use_rows_thread(std::size_t min_event_bytes) {
  rows_thread_min_bytes_ = min_event_bytes;
  if (!converter_ && !rows_worker_) rows_worker_ = std::make_unique<RowsWorker>(out_fd_, out_name_);
}

void ChangeWriter::set_row_filters(std::vector<filter::WhereOption> wheres) {
  row_filters_.emplace(std::move(wheres));
  tables_.clear();  // bound as each table's rows come
  next_table_slot_ = 0;
}

void ChangeWriter::set_column_choices(std::vector<filter::ColumnsOption> choices) {
  column_choices_ = std::move(choices);
  tables_.clear();  // applied as each table's rows come
  next_table_slot_ = 0;
}

void ChangeWriter::include_queries() { query_member_.assign(records::kQueryKey).append("null"); }

void ChangeWriter::set_query(std::string_view sql) {
  if (query_member_.empty()) return;
  pieces_.clear();
  pieces_.begin_object();
  pieces_.field(records::field::query, sql);
  pieces_.end_object();
  pieces_.end_record();
  query_member_.assign(members_of(pieces_));
  pieces_.clear();
}

void ChangeWriter::forget_query() {
  if (query_member_.empty()) return;
  query_member_.assign(records::kQueryKey).append("null");  // into the capacity it has
}

void ChangeWriter::prepare_event(const ChangePosition& position, std::uint32_t timestamp) {
  event_in_batch_ = false;
  // Without the thread, batch_ holds the current event's rows only, one at a time.
  if (converter_ && !worker_) batch_.clear();
  event_position_ = position;
  event_ts_ms_ = std::uint64_t{timestamp} * 1000U;
  pieces_.clear();
  pieces_.begin_object();
  pieces_.field(records::field::file, position.file);
  pieces_.field(records::field::offset, position.offset);
  pieces_.end_object();
  pieces_.end_record();
  pos_members_.assign(members_of(pieces_));
  pos_members_ += records::comma_key::index;  // the row's index follows
  pieces_.clear();
  pieces_.begin_object();
  if (position.gtid.empty())
    pieces_.field_null(records::field::gtid);
  else
    pieces_.field(records::field::gtid, position.gtid);
  pieces_.end_object();
  pieces_.end_record();
  gtid_member_.assign(members_of(pieces_));
  pieces_.clear();
  pieces_.begin_object();
  pieces_.field(records::field::server_id, position.server_id);
  if (position.thread)
    pieces_.field(records::field::thread, *position.thread);
  else
    pieces_.field_null(records::field::thread);
  pieces_.field(records::field::ts_ms, std::uint64_t{timestamp} * 1000U);
  pieces_.end_object();
  pieces_.end_record();
  tail_members_.assign(members_of(pieces_));
  pieces_.clear();
  if (converter_) {
    file_text_ = ndjson::quoted(position.file);
    offset_text_ = fmt::format_int(position.offset).str();
    gtid_text_ = position.gtid.empty() ? std::string("null") : ndjson::quoted(position.gtid);
    server_id_text_ = fmt::format_int(position.server_id).str();
    thread_text_ = position.thread ? fmt::format_int(*position.thread).str() : std::string("null");
    ts_ms_text_ = fmt::format_int(std::uint64_t{timestamp} * 1000U).str();
  }
}

Result<std::uint64_t> ChangeWriter::write_rows(const binlog::RowsEvent& event, const binlog::TableMap& map,
                                               const ChangePosition& position, std::uint32_t timestamp) {
  if (event.column_count != map.columns.size())
    return fail(Errc::corrupt_input, fmt::format("{}:{}: rows event has {} columns, its TABLE_MAP {}.{} has {}",
                                                 position.file, position.offset, event.column_count, map.database,
                                                 map.table, map.columns.size()));
  const bool partial = !binlog::all_columns_present(event.columns_before, event.column_count) ||
                       !binlog::all_columns_present(event.columns_after, event.column_count);
  partial_images_seen_ = partial_images_seen_ || partial;
  auto entry = table_entry(map, position);
  if (!entry) return fail(std::move(entry).error());
  TableEntry& table = **entry;
  const rowimage::TablePlan& plan = table.plan;
  prepare_event(position, timestamp);
  const rowimage::RowsShape shape = rowimage::rows_shape(event, plan);
  ByteReader rows(event.rows, event.rows_offset);
  // A row image with no present columns takes no bytes; only a corrupt event has one, and
  // reading its rows would never reach their end.
  if (!rows.empty() && !shape.has_columns)
    return fail(Errc::corrupt_input, fmt::format("{}:{}: rows event for {}.{} has {} bytes of rows but no columns in "
                                                 "its images",
                                                 position.file, position.offset, map.database, map.table,
                                                 rows.remaining()));
  const RowsSource source{position.file, position.offset, event.kind, map.database, map.table};
  // The rows thread writes the event's lines while this one reads on, unless it has all the
  // work it can take: then this thread writes them rather than wait.
  const bool to_rows_thread = rows_worker_ && !rows.empty() && rows.remaining() >= rows_thread_min_bytes_ &&
                              rows_worker_->in_flight() < RowsWorker::kMaxInFlight;
  // The rows' sizes go along so that the worker does not size them again; not for a big
  // event, where they could take several times its bytes (a row may take two).
  const std::size_t sizes_from = work_.row_sizes.size();
  std::vector<rowimage::RowSizes>* const sizes =
      to_rows_thread && rows.remaining() <= RowsWorker::kWorkBytes ? &work_.row_sizes : nullptr;
  const records::ChangeOp op = change_op(event.kind);
  head_members_.assign(records::change_op_member(op));
  head_members_ += ',';
  head_members_ += table.table_members;
  const EventLines lines{head_members_,         pos_members_, gtid_member_, tail_members_,
                         position.first_index, partial,      query_member_};
  verdicts_.clear();
  filter_conversions_ = {};
  judged_rows_.reset();
  if (table.filter && judge_on_rows_thread_ && rows_worker_ && !rows.empty()) {
    // The rows thread writes the table line and the commit line, and judges the rows unless
    // it has more work queued than this thread: then this one judges them, so that neither
    // thread bounds the run alone.
    std::vector<rowimage::RowSizes>* const noted =
        rows.remaining() <= RowsWorker::kWorkBytes ? &work_.row_sizes : nullptr;
    if (rows_worker_->in_flight() >= judge_here_in_flight_) {
      auto judged = table.filter->judge(event.rows, event.rows_offset, plan, shape, source, scratch_, verdicts_, noted);
      if (!judged) return fail(std::move(judged).error());
      if (!judged->complete) {
        verdicts_.clear();  // the rows thread fails on the row as it judges it
      } else if (judged->kept == 0) {
        if (noted != nullptr) noted->resize(sizes_from);
        judged_rows_ = verdicts_.size();
        return 0;  // nothing of the event, as the rows thread would have it
      }
    }
    if (verdicts_.empty() && position.in_payload)
      judged_rows_ = rowimage::count_rows(ByteReader(event.rows, event.rows_offset), plan, shape, scratch_, nullptr);
    else if (!verdicts_.empty())
      judged_rows_ = verdicts_.size();
    rows_pending_ = true;
    return defer_rows(event, table, map, lines, 0, Span{sizes_from, work_.row_sizes.size()}, &position, timestamp);
  }
  // --where: each row judged before anything of the event is written, so that dropped rows
  // are never formatted and the count of lines is known here, whichever thread writes them.
  std::optional<std::uint64_t> count;
  if (table.filter && !rows.empty()) {
    auto judged = table.filter->judge(event.rows, event.rows_offset, plan, shape, source, scratch_, verdicts_, sizes);
    if (!judged) return fail(std::move(judged).error());
    if (judged->complete) {
      judged_rows_ = verdicts_.size();
      if (judged->kept == 0) {
        if (sizes != nullptr) sizes->resize(sizes_from);
        return 0;  // nothing of the event: no table line either
      }
      count = judged->kept;
      filter_conversions_ = {judged->as_inserts, judged->as_deletes};
    }
  } else if (to_rows_thread) {
    // Counted on a reader of its own (`rows` has not moved yet).
    count = rowimage::count_rows(ByteReader(event.rows, event.rows_offset), plan, shape, scratch_, sizes);
  }
  if (!rows.empty()) describe(table, position, timestamp);  // a line only before a change
  if (to_rows_thread && count)
    return defer_rows(event, table, map, lines, *count, Span{sizes_from, work_.row_sizes.size()}, nullptr, timestamp);
  if (sizes != nullptr) sizes->resize(sizes_from);
  // With a converter, each row line goes through it as it ends, after the lines before it.
  if (converter_ && !worker_ && !rows.empty())
    if (auto converted = convert_ended(); !converted) return fail(std::move(converted).error());
  // Whether the converter reads the images' values of a line of this op; an update under
  // --where may be written as an insert or a delete too.
  const auto uses_values = [this](records::ChangeOp line_op) {
    return converter_->uses_image_values(records::change_op_member(line_op)[6]);
  };
  row_spans_.values =
      converter_ && (uses_values(op) || (!verdicts_.empty() && op == records::ChangeOp::update &&
                                         (uses_values(records::ChangeOp::insert) ||
                                          uses_values(records::ChangeOp::erase))))
          ? &batch_.values
          : nullptr;
  auto written = write_row_lines(rows, plan, shape, lines, source, out_, scratch_, converter_ ? &row_spans_ : nullptr,
                                 {}, verdicts_, [&](const WrittenLine& line) -> Result<void> {
                                   if (converter_) {
                                     // The op member's value: "op":"c" -> "c".
                                     mark_row(records::change_op_member(line.op).substr(5), table, line);
                                     if (!worker_)
                                       if (auto converted = convert_marked_row(); !converted) return converted;
                                   }
                                   return flush_if_large();
                                 });
  if (scratch_.lossy_text && lossy_text_table_.empty()) lossy_text_table_ = map.database + "." + map.table;
  return written;
}

Result<std::uint64_t> ChangeWriter::defer_rows(const binlog::RowsEvent& event, TableEntry& table,
                                               const binlog::TableMap& map, const EventLines& lines,
                                               std::uint64_t count, Span row_sizes, const ChangePosition* judged,
                                               std::uint32_t timestamp) {
  if (!table.rows_table) {
    auto made = std::make_shared<RowsTable>();
    made->map = map;
    made->plan.build(made->map);
    made->plan.keep_columns_of(table.plan);  // --columns
    if (judged != nullptr) {
      made->filter = table.filter->copy();
      made->line = table.line;
      made->description = table.description;
    }
    table.rows_table = std::move(made);
  }
  DeferredRows job;
  job.table = table.rows_table;
  job.at = out_.bytes_buffered();
  if (const std::vector<std::uint8_t>* block = input_ != nullptr ? input_->get() : nullptr;
      block != nullptr && inside(*block, event.columns_before) && inside(*block, event.columns_after) &&
      inside(*block, event.rows)) {
    // In place: the block stays as it is while the work holds it (FileReader::block).
    if (work_.held.empty() || work_.held.back().get() != block) work_.held.emplace_back(*input_);
    job.held_bytes = block->data();
    job.columns_before = span_in(*block, event.columns_before);
    job.columns_after = span_in(*block, event.columns_after);
    job.rows = span_in(*block, event.rows);
  } else {
    job.columns_before = work_.add_bytes(event.columns_before);
    job.columns_after = work_.add_bytes(event.columns_after);
    job.rows = work_.add_bytes(event.rows);
  }
  job.head_members = work_.add_members(lines.head_members);
  job.pos_members = work_.add_members(lines.pos_members);
  job.gtid_member = work_.add_members(lines.gtid_member);
  job.tail_members = work_.add_members(lines.tail_members);
  job.query_member = work_.add_members(lines.query_member);
  job.file = work_.add_members(event_position_.file);
  job.kind = event.kind;
  job.column_count = event.column_count;
  job.rows_offset = event.rows_offset;
  job.offset = event_position_.offset;
  job.first_index = lines.first_index;
  job.partial = lines.partial;
  job.row_sizes = row_sizes;
  if (judged != nullptr) {
    job.gtid = work_.add_members(judged->gtid);
    job.ts_ms = std::uint64_t{timestamp} * 1000U;
  }
  job.verdicts = Span{work_.verdicts.size(), work_.verdicts.size() + verdicts_.size()};
  work_.verdicts.insert(work_.verdicts.end(), verdicts_.begin(), verdicts_.end());
  work_.jobs.push_back(std::move(job));
  work_rows_bytes_ += event.rows.size();
  if (work_rows_bytes_ >= RowsWorker::kWorkBytes)
    if (auto handed = hand_off_rows(); !handed) return fail(std::move(handed).error());
  return count;
}

Result<void> ChangeWriter::hand_off_rows() {
  // The jobs' places count from the start of out_'s buffer, which holds no lines from before
  // the last hand-off.
  out_.take_ended_records(work_.text);
  work_rows_bytes_ = 0;
  if (work_.text.size() == 0 && work_.jobs.empty()) return {};
  rows_handed_over_ = true;
  return rows_worker_->submit(work_);
}

void ChangeWriter::write_ddl(std::string_view database, std::string_view sql, const ChangePosition& position,
                             std::uint32_t timestamp) {
  records::write_ddl({database, sql, {position.file, position.offset, 0, position.gtid}, std::uint64_t{timestamp} * 1000U},
                     out_);
}

void ChangeWriter::write_commit(std::string_view gtid, std::string_view file, std::uint64_t end_offset,
                                std::string_view position, std::uint32_t timestamp, std::uint64_t rows,
                                std::uint64_t lines, std::optional<std::uint64_t> xid) {
  if (rows_pending_) {
    // The rows thread adds the rows it kept, and writes the line if the transaction has any.
    rows_pending_ = false;
    DeferredRows job;
    job.at = out_.bytes_buffered();
    job.gtid = work_.add_members(gtid);
    job.file = work_.add_members(file);
    job.offset = end_offset;
    job.ts_ms = std::uint64_t{timestamp} * 1000U;
    job.commit = DeferredRows::Commit{work_.add_members(position), lines, rows, xid};
    work_.jobs.push_back(std::move(job));
    return;
  }
  records::write_commit({gtid, file, end_offset, position, rows, xid, std::uint64_t{timestamp} * 1000U}, out_);
}

void ChangeWriter::write_incident(std::string_view message, const ChangePosition& position, std::uint32_t timestamp) {
  records::write_incident({message, {position.file, position.offset, 0, position.gtid}, std::uint64_t{timestamp} * 1000U},
                          out_);
}

void ChangeWriter::write_span_start(std::string_view position) { records::write_span_start({position}, out_); }

void ChangeWriter::write_span_end(std::string_view position, const std::optional<gtid::FilePosition>& at,
                                  std::string_view until) {
  records::write_span_end({position, at, until}, out_);
}

void ChangeWriter::write_discard(std::string_view gtid, const gtid::FilePosition& began, std::string_view reason,
                                 std::uint32_t timestamp) {
  records::write_stream_discard({gtid, began.file, began.offset, reason, std::uint64_t{timestamp} * 1000U}, out_);
}

Result<void> ChangeWriter::flush() {
  if (worker_) {
    if (auto handed = hand_off(); !handed) return handed;
    auto written = worker_->drain();
    if (!written) return fail(std::move(written).error());
    bytes_flushed_ += *written;
    return {};
  }
  if (rows_worker_ && (rows_handed_over_ || !work_.jobs.empty())) {
    if (auto handed = hand_off_rows(); !handed) return handed;
    auto written = rows_worker_->drain();
    if (!written) return fail(std::move(written).error());
    rows_handed_over_ = false;
    bytes_flushed_ += *written;
    return {};
  }
  if (!converter_) {
    const std::size_t buffered = out_.bytes_buffered();
    if (auto flushed = out_.flush_to(out_fd_, out_name_); !flushed) return flushed;
    bytes_flushed_ += buffered - out_.bytes_buffered();  // a record in progress stays buffered
    return {};
  }
  if (auto converted = convert_ended(); !converted) return converted;
  if (spilled_bytes_ > 0) {
    // The held transaction's beginning, from the spill file, then the rest from memory.
    std::vector<char> block(std::size_t{1} << 16);
    for (std::uint64_t at = 0; at < spilled_bytes_;) {
      const ssize_t got = ::pread(spill_fd_, block.data(), block.size(), static_cast<off_t>(at));
      if (got <= 0) return errno_error("cannot read back the spill file of", out_name_);
      if (auto written = write_all(out_fd_, std::string_view(block.data(), static_cast<std::size_t>(got)), out_name_);
          !written)
        return written;
      at += static_cast<std::uint64_t>(got);
    }
    bytes_flushed_ += spilled_bytes_;
    spilled_bytes_ = 0;
    if (::ftruncate(spill_fd_, 0) != 0) return errno_error("cannot empty the spill file of", out_name_);
  }
  const std::size_t converted = converted_.bytes_buffered();
  if (auto flushed = converted_.flush_to(out_fd_, out_name_); !flushed) return flushed;
  bytes_flushed_ += converted;
  return {};
}

Result<void> ChangeWriter::finish() {
  if (worker_) {
    // Once drained, the converter is this thread's: what it holds is written from here.
    if (auto flushed = flush(); !flushed) return flushed;
    if (auto finished = converter_->finish(converted_); !finished) return finished;
    const std::size_t held = converted_.bytes_buffered();
    if (auto written = converted_.flush_to(out_fd_, out_name_); !written) return written;
    bytes_flushed_ += held;
    return {};
  }
  if (converter_) {
    if (auto converted = convert_ended(); !converted) return converted;
    if (auto finished = converter_->finish(converted_); !finished) return finished;
  }
  return flush();
}

Result<void> ChangeWriter::flush_if_large() {
  // With a converter the row lines are converted as they end: what grows is converted_.
  if (std::max(out_.bytes_buffered(), converted_.bytes_buffered()) < kFlushThreshold) return {};
  if (worker_) return hand_off();
  if (rows_worker_ && (rows_handed_over_ || !work_.jobs.empty())) return hand_off_rows();
  if (!hold_transactions_) return flush();
  if (auto converted = convert_ended(); !converted) return converted;
  if (converted_.bytes_buffered() < kFlushThreshold) return {};
  return spill_converted();
}

void ChangeWriter::discard() noexcept {
  // What the thread has is written before the caller cuts the output back; its error, if any,
  // is the next flush's.
  if (worker_) {
    if (auto drained = worker_->drain(); drained) bytes_flushed_ += *drained;
    batch_.clear();
    event_in_batch_ = false;
  }
  if (rows_worker_) {
    // After an error the worker keeps it for the next flush.
    if (auto drained = rows_worker_->drain(); drained) {
      bytes_flushed_ += *drained;
      rows_handed_over_ = false;
    }
    work_.clear();
    work_.forget_described = true;  // the rows thread's table lines are cut back too
    work_rows_bytes_ = 0;
    rows_pending_ = false;
  }
  out_.clear();
  forget_described();
  if (!converter_) return;
  converted_.clear();
  converter_->drop_held();
  if (spilled_bytes_ > 0 && ::ftruncate(spill_fd_, 0) == 0) spilled_bytes_ = 0;
}

}  // namespace cdc::stream
