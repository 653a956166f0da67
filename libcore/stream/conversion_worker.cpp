#include "stream/conversion_worker.h"

#include <fmt/format.h>

#include <utility>

#include "util/fd_io.h"

namespace cdc::stream {

namespace {

constexpr std::size_t kMaxInFlight = 2;

}  // namespace

ConversionWorker::ConversionWorker(output::Converter& converter, int out_fd, std::string out_name)
    : converter_(converter), out_fd_(out_fd), out_name_(std::move(out_name)), thread_([this] { run(); }) {}

ConversionWorker::~ConversionWorker() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

Result<void> ConversionWorker::submit(Batch& batch) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return queue_.size() + (busy_ ? 1 : 0) < kMaxInFlight || error_; });
  if (error_) return fail(*error_);
  std::unique_ptr<Batch> handed;
  if (!spare_.empty()) {
    handed = std::move(spare_.back());
    spare_.pop_back();
  } else {
    handed = std::make_unique<Batch>();
  }
  std::swap(*handed, batch);  // the caller goes on with the spare's buffers
  batch.clear();
  queue_.push_back(std::move(handed));
  lock.unlock();
  changed_.notify_all();
  return {};
}

Result<std::uint64_t> ConversionWorker::drain() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return (queue_.empty() && !busy_) || error_; });
  if (error_) return fail(*error_);
  return std::exchange(written_, 0);
}

void ConversionWorker::run() {
  for (;;) {
    std::unique_ptr<Batch> batch;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      batch = std::move(queue_.front());
      queue_.pop_front();
      busy_ = !error_;
      if (error_) {
        queue_.clear();  // after an error nothing more is written
        changed_.notify_all();
        continue;
      }
    }
    auto done = convert(*batch);
    std::uint64_t bytes = 0;
    if (done) {
      bytes = converted_.bytes_buffered();
      done = converted_.flush_to(out_fd_, out_name_);
    }
    converted_.clear();
    batch->clear();
    {
      const std::lock_guard lock(mutex_);
      if (done)
        written_ += bytes;
      else if (!error_)
        error_ = done.error();
      spare_.push_back(std::move(batch));
      busy_ = false;
    }
    changed_.notify_all();
  }
}

Result<void> ConversionWorker::convert(const Batch& batch) {
  const std::string_view text = batch.text;
  const std::string_view aux = batch.aux;
  const auto in = [](std::string_view bytes, Span span) { return bytes.substr(span.begin, span.end - span.begin); };
  std::size_t next_row = 0;
  for (std::size_t at = 0; at < text.size();) {
    if (next_row < batch.rows.size() && batch.rows[next_row].line.begin == at) {
      const RowMark& mark = batch.rows[next_row++];
      at = mark.line.end + 1;  // past its newline
      const EventText& event = batch.events[mark.event];
      output::RowLine row;
      row.line = in(text, mark.line);
      row.op = mark.op;
      row.db = in(aux, event.db);
      row.table = in(aux, event.table);
      row.key = in(text, mark.key);
      row.before = in(text, mark.before);
      row.after = in(text, mark.after);
      row.before_key = in(aux, mark.before_key);
      row.pos = in(text, mark.pos);
      row.file = in(aux, event.file);
      row.offset = in(aux, event.offset);
      const fmt::format_int index(mark.index);
      row.index = std::string_view(index.data(), index.size());
      row.gtid = in(aux, event.gtid);
      row.server_id = in(aux, event.server_id);
      row.thread = in(aux, event.thread);
      row.ts_ms = in(aux, event.ts_ms);
      row.partial = mark.partial;
      const auto values_of = [&](Range range, std::vector<output::ImageValue>& values) {
        values.clear();
        for (std::size_t i = range.begin; i < range.end; ++i)
          values.push_back({batch.values[i].column, in(text, batch.values[i].text)});
        return std::span<const output::ImageValue>(values);
      };
      row.values_known = converter_.uses_image_values();
      row.before_values = values_of(mark.before_values, before_values_);
      row.after_values = values_of(mark.after_values, after_values_);
      if (auto converted = output::convert_row_line(converter_, row, converted_); !converted) return converted;
      continue;
    }
    const std::size_t end = text.find('\n', at);
    const std::size_t line_end = end == std::string_view::npos ? text.size() : end;
    if (auto converted = output::convert_lines(converter_, text.substr(at, line_end - at), converted_); !converted)
      return converted;
    at = line_end + 1;
  }
  return {};
}

}  // namespace cdc::stream
