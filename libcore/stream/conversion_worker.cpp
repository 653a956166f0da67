#include "stream/conversion_worker.h"

#include <utility>

#include "util/fd_io.h"

namespace cdc::stream {

ConversionWorker::ConversionWorker(output::Converter& converter, int out_fd, std::string out_name)
    : converter_(converter),
      out_fd_(out_fd),
      out_name_(std::move(out_name)),
      worker_(kMaxInFlight, [this](RowBatch& batch, std::uint64_t& bytes) -> Result<void> {
        auto done = convert(batch);
        if (done) {
          const std::uint64_t converted = converted_.bytes_buffered();
          done = converted_.flush_to(out_fd_, out_name_);
          if (done) bytes += converted;
        }
        converted_.clear();
        return done;
      }) {}

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
