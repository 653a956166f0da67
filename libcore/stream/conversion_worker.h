#pragma once

// The output stage on the second core: cdc-stream's canonical lines are converted into the
// chosen format (output::Converter) and written by a thread of their own, while the reading
// thread decodes the next events. Used where lines may go out as they are converted (an
// --output file, which a restart cuts back; cdc-stream --file); standard output of a live
// stream holds each transaction whole and converts in the reading thread (ChangeWriter).
//
// The reading thread fills a Batch (the canonical lines as stream::ChangeWriter wrote them, and
// for each change line where its members are, as output::RowLine needs them) and hands it
// over; at most two batches are in flight, so memory stays bounded and a slow output slows the
// reading. drain() waits until everything handed over is written: the checkpoint's flush, after
// which the bytes written are known and the converter is the caller's again (discard, finish).

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "output/converter.h"
#include "util/result.h"

namespace cdc::stream {

class ConversionWorker {
 public:
  // What one change line's output::RowLine is made of: offsets into the batch's lines
  // (text) and its aux strings, and the event it belongs to.
  struct Span {
    std::size_t begin = 0;
    std::size_t end = 0;
  };
  struct EventText {  // spans in aux
    Span db, table, file, offset, gtid, server_id, thread, ts_ms;
  };
  struct ValueMark {  // one column's value in an image
    std::size_t column = 0;
    Span text;
  };
  struct Range {  // of values
    std::size_t begin = 0;
    std::size_t end = 0;
  };
  struct RowMark {
    Span line, key, before, after, pos;  // in text
    Span before_key;                     // in aux
    Range before_values, after_values;
    std::size_t event = 0;
    std::uint64_t index = 0;
    std::string_view op;  // a static "\"c\"", "\"u\"" or "\"d\""
    bool partial = false;
  };
  struct Batch {
    std::string text;  // whole canonical lines, each ended by '\n'
    std::string aux;
    std::vector<EventText> events;
    std::vector<RowMark> rows;  // in line order
    std::vector<ValueMark> values;
    void clear() {
      text.clear();
      aux.clear();
      events.clear();
      rows.clear();
      values.clear();
    }
    [[nodiscard]] Span add_aux(std::string_view bytes) {
      const std::size_t begin = aux.size();
      aux.append(bytes);
      return {begin, aux.size()};
    }
  };

  ConversionWorker(output::Converter& converter, int out_fd, std::string out_name);
  ConversionWorker(const ConversionWorker&) = delete;
  ConversionWorker& operator=(const ConversionWorker&) = delete;
  ~ConversionWorker();

  // Hands `batch` over (swapped with an empty one, whose buffers are reused). Waits while two
  // are in flight. The worker's first error, once it has failed: nothing after it is written.
  [[nodiscard]] Result<void> submit(Batch& batch);
  // Waits until every batch handed over is converted and written; returns the bytes written
  // since the last drain, or the worker's error.
  [[nodiscard]] Result<std::uint64_t> drain();

 private:
  void run();
  Result<void> convert(const Batch& batch);  // on the thread

  output::Converter& converter_;
  int out_fd_;
  std::string out_name_;
  ndjson::Writer converted_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<Batch>> queue_;   // handed over, not yet converted
  std::vector<std::unique_ptr<Batch>> spare_;  // converted, for reuse
  bool busy_ = false;                          // the worker holds a batch
  bool stopping_ = false;
  std::optional<Error> error_;
  std::vector<output::ImageValue> before_values_;  // per row, reused
  std::vector<output::ImageValue> after_values_;
  std::uint64_t written_ = 0;  // since the last drain
  std::thread thread_;
};

}  // namespace cdc::stream
