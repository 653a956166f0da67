#pragma once

// The output stage on the second core: cdc-stream's canonical lines are converted into the
// chosen format (output::Converter) and written by a thread of their own, while the reading
// thread decodes the next events. Used where lines may go out as they are converted (an
// --output file, which a restart cuts back; cdc-stream --file); standard output of a live
// stream holds each transaction whole and converts in the reading thread (ChangeWriter).
//
// The reading thread fills a RowBatch (the canonical lines as stream::ChangeWriter wrote them,
// and for each change line where its members are) and hands it over; at most kMaxInFlight
// batches are in flight (about 4 MiB of lines), so memory stays bounded and a slow output
// slows the reading. drain() waits until everything handed over is written: the checkpoint's flush, after
// which the bytes written are known and the converter is the caller's again (discard, finish).

#include <cstdint>
#include <string>

#include "output/converter.h"
#include "stream/row_batch.h"
#include "util/ordered_worker.h"
#include "util/result.h"

namespace cdc::stream {

class ConversionWorker {
 public:
  // Batches handed over and not yet written, at most. Enough to cover a burst: Maxwell's
  // converter writes a whole transaction's rows at its commit line, and the reading thread
  // goes on meanwhile (on the bench binlog, Maxwell's wall time against NDJSON's, median of 15
  // alternating runs: 1.6x with 2 batches in flight, 1.4x with 16; ChangeWriter hands over
  // about every 256 KiB).
  static constexpr std::size_t kMaxInFlight = 16;

  ConversionWorker(output::Converter& converter, int out_fd, std::string out_name);

  // Hands `batch` over (swapped with an empty one, whose buffers are reused). Waits while
  // kMaxInFlight are. The worker's first error, once it has failed: nothing after it is written.
  [[nodiscard]] Result<void> submit(RowBatch& batch) { return worker_.submit(batch); }
  // Waits until every batch handed over is converted and written; returns the bytes written
  // since the last drain, or the worker's error.
  [[nodiscard]] Result<std::uint64_t> drain() { return worker_.drain(); }

 private:
  Result<void> convert(const RowBatch& batch);  // on the thread

  output::Converter& converter_;
  int out_fd_;
  std::string out_name_;
  ndjson::Writer converted_;
  RowLineScratch row_scratch_;
  OrderedWorker<RowBatch> worker_;  // last: its thread uses the members above
};

}  // namespace cdc::stream
