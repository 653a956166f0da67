// ChangeWriter's output stage (stream/change_writer.h, set_converter): each row line marked for
// the converter as it ends, handed to the conversion thread or converted here, and what a held
// transaction converts to spilled to an unlinked file past the buffer.
#include "stream/change_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdlib>

#include "records/kinds.h"
#include "records/row.h"
#include "util/fd_io.h"

namespace cdc::stream {

void ChangeWriter::set_converter(std::unique_ptr<output::Converter> converter, bool hold_transactions) {
  worker_.reset();
  if (converter) rows_worker_.reset();
  converter_ = std::move(converter);
  hold_transactions_ = converter_ != nullptr && hold_transactions;
  row_spans_.want_before_key = converter_ != nullptr && converter_->uses_before_key();
  batch_.clear();
  event_in_batch_ = false;
  if (converter_ && !hold_transactions_) worker_ = std::make_unique<ConversionWorker>(*converter_, out_fd_, out_name_);
}

void ChangeWriter::mark_row(std::string_view op, const TableEntry& table, const WrittenLine& line) {
  if (!event_in_batch_) {
    EventText event;
    event.db = batch_.add_aux(table.quoted_db);
    event.table = batch_.add_aux(table.quoted_table);
    event.file = batch_.add_aux(file_text_);
    event.offset = batch_.add_aux(offset_text_);
    event.gtid = batch_.add_aux(gtid_text_);
    event.server_id = batch_.add_aux(server_id_text_);
    event.thread = batch_.add_aux(thread_text_);
    event.ts_ms = batch_.add_aux(ts_ms_text_);
    event.db_name = batch_.add_aux(table.line.db);
    event.table_name = batch_.add_aux(table.line.table);
    event.file_name = batch_.add_aux(event_position_.file);
    event.gtid_value = batch_.add_aux(event_position_.gtid);
    event.offset_value = event_position_.offset;
    event.server_id_value = event_position_.server_id;
    event.thread_value = event_position_.thread;
    event.ts_ms_value = static_cast<std::int64_t>(event_ts_ms_);
    batch_.events.push_back(event);
    event_in_batch_ = true;
  }
  RowMark mark;
  mark.line = Span{line.start, out_.bytes_buffered() - 1};  // without the newline
  mark.key = Span{row_spans_.key_begin, row_spans_.key_end};
  mark.before = Span{row_spans_.before_begin, row_spans_.before_end};
  mark.after = Span{row_spans_.after_begin, row_spans_.after_end};
  mark.pos = Span{line.pos_begin, line.pos_end};
  mark.query = Span{line.query_begin, line.query_end};
  mark.before_key = batch_.add_aux(row_spans_.before_key.buffered());
  mark.before_values = Span{row_spans_.before_values_begin, row_spans_.before_values_end};
  mark.after_values = Span{row_spans_.after_values_begin, row_spans_.after_values_end};
  mark.values_known = row_spans_.values != nullptr;
  mark.event = batch_.events.size() - 1;
  mark.index = line.index;
  mark.op = op;
  mark.partial = line.partial;
  batch_.rows.push_back(mark);
}

Result<void> ChangeWriter::hand_off() {
  // Offsets in batch_.rows count from the start of out_'s buffer, which holds no lines from
  // before the last hand-off.
  out_.take_ended_records(batch_.text);
  event_in_batch_ = false;
  if (batch_.text.size() == 0 && batch_.rows.empty()) return {};
  return worker_->submit(batch_);
}

Result<void> ChangeWriter::convert_marked_row() {
  const output::RowLine row = row_line(batch_, out_.buffered(), batch_.rows.back(), row_scratch_);
  if (auto converted = output::convert_row_line(*converter_, row, converted_); !converted) return converted;
  // Offsets count from the start of out_'s buffer, which the next row's line starts again.
  out_.drop_ended_records();
  batch_.rows.clear();
  batch_.values.clear();
  return {};
}

Result<void> ChangeWriter::convert_ended() {
  if (auto converted = output::convert_lines(*converter_, out_.ended_records(), converted_); !converted)
    return converted;
  out_.drop_ended_records();
  return {};
}

Result<void> ChangeWriter::spill_converted() {
  if (spill_fd_ < 0) {
    const char* tmpdir = std::getenv("TMPDIR");
    const std::string dir = tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
    spill_fd_ = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (spill_fd_ < 0)
      return errno_error("cannot create a spill file (a transaction bigger than the buffer, held until its commit) in",
                         dir);
  }
  for (std::string_view bytes = converted_.ended_records(); !bytes.empty();) {
    const ssize_t wrote = ::pwrite(spill_fd_, bytes.data(), bytes.size(), static_cast<off_t>(spilled_bytes_));
    if (wrote <= 0) return errno_error("cannot write the spill file of", out_name_);
    spilled_bytes_ += static_cast<std::uint64_t>(wrote);
    bytes.remove_prefix(static_cast<std::size_t>(wrote));
  }
  converted_.drop_ended_records();
  return {};
}

}  // namespace cdc::stream
