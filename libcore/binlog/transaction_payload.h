#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "util/byte_reader.h"
#include "util/result.h"

namespace cdc::binlog {

// MySQL 8.0.20+ TRANSACTION_PAYLOAD_EVENT: a whole transaction's events, compressed
// (binlog_transaction_compression). The header is a list of (type, length, value) fields with
// packed integers, ended by type 0; the compressed events follow
// (libbinlogevents codecs/binary.cpp Transaction_payload).
struct TransactionPayloadEvent {
  std::uint64_t compression = 0;  // 0 zstd, 255 none
  std::uint64_t payload_size = 0;
  std::uint64_t uncompressed_size = 0;
  std::span<const std::uint8_t> payload;
  std::uint64_t payload_offset = 0;

  static constexpr std::uint64_t kZstd = 0;
  static constexpr std::uint64_t kNone = 255;
};
TransactionPayloadEvent decode_transaction_payload(ByteReader& body);

// Yields the inner events of a payload one at a time, decompressing as it goes, so memory is
// bounded by the largest inner event rather than the transaction. Inner events carry no
// checksum.
class PayloadReader {
 public:
  explicit PayloadReader(const TransactionPayloadEvent& event);
  PayloadReader(const PayloadReader&) = delete;
  PayloadReader& operator=(const PayloadReader&) = delete;
  ~PayloadReader();

  // The next inner event's bytes (valid until the next call), or nullopt at the end.
  Result<std::optional<std::span<const std::uint8_t>>> next();
  // Offset of the last returned event inside the uncompressed payload.
  [[nodiscard]] std::uint64_t inner_offset() const noexcept { return inner_offset_; }
  // Bytes of buffer held: grows with the bytes the payload really yields, never with the
  // size an inner event header claims (tests check a corrupt header cannot inflate it).
  [[nodiscard]] std::size_t buffer_bytes() const noexcept { return buffer_.size(); }

 private:
  Result<bool> fill(std::size_t wanted);

  struct Stream;
  std::unique_ptr<Stream> stream_;
  std::span<const std::uint8_t> input_;
  std::size_t input_used_ = 0;
  std::uint64_t compression_ = 0;
  std::vector<std::uint8_t> buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::uint64_t consumed_ = 0;
  std::uint64_t inner_offset_ = 0;
  bool input_done_ = false;
};

}  // namespace cdc::binlog
