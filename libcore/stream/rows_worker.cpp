#include "stream/rows_worker.h"

#include <span>
#include <string_view>
#include <utility>

#include "rowimage/row_change.h"
#include "stream/row_lines.h"
#include "util/fd_io.h"

namespace cdc::stream {

RowsWorker::RowsWorker(int out_fd, std::string out_name)
    : out_fd_(out_fd),
      out_name_(std::move(out_name)),
      worker_(kMaxInFlight, [this](RowsWork& work, std::uint64_t& bytes) {
        auto done = write(work, bytes);
        out_.clear();  // the work is cleared when submit() hands it back to the reading thread
        return done;
      }) {}

Result<void> RowsWorker::write(const RowsWork& work, std::uint64_t& bytes) {
  const std::string_view text(work.text.data(), work.text.size());
  const std::string_view members(work.members);
  const auto bytes_of = [&work](const DeferredRows& job, Span span) {
    const std::uint8_t* const base = job.held_bytes != nullptr ? job.held_bytes : work.bytes.data();
    return std::span<const std::uint8_t>(base + span.begin, span.end - span.begin);
  };
  const auto members_of = [members](Span span) { return members.substr(span.begin, span.end - span.begin); };
  // The output in order: the text's lines as they are (not copied) and the jobs' lines in out_.
  pieces_.clear();
  std::size_t text_from = 0;
  Result<void> done;
  for (const DeferredRows& job : work.jobs) {
    pieces_.push_back({true, text_from, job.at});
    text_from = job.at;
    const RowsTable& table = *job.table;
    binlog::RowsEvent event;
    event.kind = job.kind;
    event.column_count = job.column_count;
    event.columns_before = bytes_of(job, job.columns_before);
    event.columns_after = bytes_of(job, job.columns_after);
    event.rows = bytes_of(job, job.rows);
    event.rows_offset = job.rows_offset;
    const rowimage::RowsShape shape = rowimage::rows_shape(event, table.plan);
    const EventLines lines{members_of(job.head_members),
                           members_of(job.pos_members),
                           members_of(job.gtid_member),
                           members_of(job.tail_members),
                           job.first_index,
                           job.partial,
                           members_of(job.query_member)};
    const RowsSource source{members_of(job.file), job.offset, job.kind, table.map.database, table.map.table};
    ByteReader rows(event.rows, event.rows_offset);
    const std::size_t lines_from = out_.bytes_buffered();
    const std::span<const rowimage::RowSizes> sizes(work.row_sizes.data() + job.row_sizes.begin,
                                                    job.row_sizes.end - job.row_sizes.begin);
    const std::span<const RowVerdict> verdicts(work.verdicts.data() + job.verdicts.begin,
                                               job.verdicts.end - job.verdicts.begin);
    auto written = write_row_lines(rows, table.plan, shape, lines, source, out_, scratch_, nullptr, sizes, verdicts,
                                   [](const WrittenLine&) { return Result<void>{}; });
    // The lines before a row that does not decode go out, as the reading thread's would.
    pieces_.push_back({false, lines_from, out_.bytes_buffered()});
    if (scratch_.lossy_text && lossy_text_table_.empty())
      lossy_text_table_ = table.map.database + "." + table.map.table;
    if (!written) {
      done = fail(std::move(written).error());
      break;
    }
  }
  if (done) pieces_.push_back({true, text_from, text.size()});
  vectors_.clear();
  const std::string_view lines = out_.buffered();
  for (const Piece& piece : pieces_) {
    const std::string_view from = (piece.text ? text : lines).substr(piece.begin, piece.end - piece.begin);
    if (from.empty()) continue;
    vectors_.push_back(iovec{const_cast<char*>(from.data()), from.size()});
    bytes += from.size();
  }
  if (auto flushed = write_all(out_fd_, vectors_, out_name_); !flushed) {
    bytes = 0;
    return flushed;
  }
  return done;
}

}  // namespace cdc::stream
