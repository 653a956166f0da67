#include "stream/rows_worker.h"

#include <span>
#include <string_view>
#include <utility>

#include "records/stream_lines.h"
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

namespace {

std::span<const std::uint8_t> bytes_of(const RowsWork& work, const DeferredRows& job, Span span) {
  const std::uint8_t* const base = job.held_bytes != nullptr ? job.held_bytes : work.bytes.data();
  return {base + span.begin, span.end - span.begin};
}

std::string_view members_of(const RowsWork& work, Span span) {
  return std::string_view(work.members).substr(span.begin, span.end - span.begin);
}

}  // namespace

Result<void> RowsWorker::write(const RowsWork& work, std::uint64_t& bytes) {
  const std::string_view text(work.text.data(), work.text.size());
  if (work.forget_described) {  // the output was cut back, the transaction in flight with it
    described_.clear();
    judged_.open_rows = 0;
  }
  // The output in order: the text's lines as they are (not copied) and the jobs' lines in out_.
  pieces_.clear();
  std::size_t text_from = 0;
  Result<void> done;
  for (const DeferredRows& job : work.jobs) {
    pieces_.push_back({true, text_from, job.at});
    text_from = job.at;
    const std::size_t lines_from = out_.bytes_buffered();
    if (job.commit) {
      write_commit(work, job);
    } else {
      done = write_rows(work, job);
    }
    // The lines before a row that does not decode go out, as the reading thread's would.
    pieces_.push_back({false, lines_from, out_.bytes_buffered()});
    if (!done) break;
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

Result<void> RowsWorker::write_rows(const RowsWork& work, const DeferredRows& job) {
  const RowsTable& table = *job.table;
  binlog::RowsEvent event;
  event.kind = job.kind;
  event.column_count = job.column_count;
  event.columns_before = bytes_of(work, job, job.columns_before);
  event.columns_after = bytes_of(work, job, job.columns_after);
  event.rows = bytes_of(work, job, job.rows);
  event.rows_offset = job.rows_offset;
  const rowimage::RowsShape shape = rowimage::rows_shape(event, table.plan);
  const EventLines lines{members_of(work, job.head_members),
                         members_of(work, job.pos_members),
                         members_of(work, job.gtid_member),
                         members_of(work, job.tail_members),
                         job.first_index,
                         job.partial,
                         members_of(work, job.query_member)};
  const RowsSource source{members_of(work, job.file), job.offset, job.kind, table.map.database, table.map.table};
  std::span<const rowimage::RowSizes> sizes(work.row_sizes.data() + job.row_sizes.begin,
                                            job.row_sizes.end - job.row_sizes.begin);
  std::span<const RowVerdict> verdicts(work.verdicts.data() + job.verdicts.begin,
                                       job.verdicts.end - job.verdicts.begin);
  if (table.filter) {
    // As the reading thread judges (ChangeWriter::write_rows): every row before any line, an
    // event that keeps none writes nothing, not even its table line. Judged here unless the
    // reading thread did it (verdicts given).
    if (verdicts.empty()) {
      verdicts_.clear();
      sizes_.clear();
      auto judged = table.filter->judge(event.rows, event.rows_offset, table.plan, shape, source, scratch_, verdicts_,
                                        &sizes_);
      if (!judged) return fail(std::move(judged).error());
      if (judged->complete && judged->kept == 0) return {};
      sizes = sizes_;
      verdicts = verdicts_;
    }  // the reading thread hands over no event whose rows it all dropped
    described_key_.assign(table.map.database).append(1, '\0').append(table.map.table);
    if (auto last = described_.find(described_key_); last == described_.end() || last->second != table.description) {
      records::TableLine line = table.line;
      line.pos = records::TablePos{std::string(source.file), job.offset, std::string(members_of(work, job.gtid))};
      line.ts_ms = static_cast<std::int64_t>(job.ts_ms);
      records::write_table_line(line, out_);
      described_[described_key_] = table.description;
    }
  }
  ByteReader rows(event.rows, event.rows_offset);
  auto written = write_row_lines(rows, table.plan, shape, lines, source, out_, scratch_, nullptr, sizes, verdicts,
                                 [](const WrittenLine&) { return Result<void>{}; });
  if (scratch_.lossy_text && lossy_text_table_.empty()) lossy_text_table_ = table.map.database + "." + table.map.table;
  if (!written) return fail(std::move(written).error());
  if (table.filter) {
    judged_.rows += *written;
    judged_.open_rows += *written;
  }
  return {};
}

void RowsWorker::write_commit(const RowsWork& work, const DeferredRows& job) {
  const DeferredRows::Commit& commit = *job.commit;
  const std::uint64_t kept = std::exchange(judged_.open_rows, 0);
  if (commit.lines + kept == 0) return;  // every row dropped: no line, as in one thread
  records::write_commit({members_of(work, job.gtid), members_of(work, job.file), job.offset,
                         members_of(work, commit.position), commit.rows + kept, commit.xid, job.ts_ms},
                        out_);
  ++judged_.transactions;
}

}  // namespace cdc::stream
