#include "stream/conversion_worker.h"

#include <utility>

#include "util/fd_io.h"

namespace cdc::stream {

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

Result<void> ConversionWorker::submit(RowBatch& batch) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return queue_.size() + (busy_ ? 1 : 0) < kMaxInFlight || error_; });
  if (error_) return fail(*error_);
  std::unique_ptr<RowBatch> handed;
  if (!spare_.empty()) {
    handed = std::move(spare_.back());
    spare_.pop_back();
  } else {
    handed = std::make_unique<RowBatch>();
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
    std::unique_ptr<RowBatch> batch;
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

Result<void> ConversionWorker::convert(const RowBatch& batch) {
  const std::string_view text(batch.text.data(), batch.text.size());
  std::size_t next_row = 0;
  for (std::size_t at = 0; at < text.size();) {
    if (next_row < batch.rows.size() && batch.rows[next_row].line.begin == at) {
      const RowMark& mark = batch.rows[next_row++];
      at = mark.line.end + 1;  // past its newline
      const output::RowLine row = row_line(batch, text, mark, row_scratch_);
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
