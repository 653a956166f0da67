#include "binlog/transaction_payload.h"

#include <fmt/format.h>
#include <zstd.h>

#include <cstring>

#include "binlog/event_header.h"

namespace cdc::binlog {

namespace {

enum class PayloadField : std::uint64_t { end = 0, size = 1, compression = 2, uncompressed_size = 3 };

// Inner events of a 1 GiB transaction are limited by max_allowed_packet like any event.
constexpr std::size_t kMaxInnerEvent = std::size_t{1} << 30;
constexpr std::size_t kFirstBuffer = std::size_t{64} << 10;

}  // namespace

TransactionPayloadEvent decode_transaction_payload(ByteReader& body) {
  TransactionPayloadEvent event;
  bool have_size = false;
  while (body.ok()) {
    const auto field = static_cast<PayloadField>(body.packed_integer("payload field type"));
    if (field == PayloadField::end) break;
    const std::uint64_t length = body.packed_integer("payload field length");
    ByteReader value = body.sub(length, "payload field");
    switch (field) {
      case PayloadField::size:
        event.payload_size = value.packed_integer("payload size");
        have_size = true;
        break;
      case PayloadField::compression:
        event.compression = value.packed_integer("payload compression type");
        break;
      case PayloadField::uncompressed_size:
        event.uncompressed_size = value.packed_integer("payload uncompressed size");
        break;
      default:
        break;
    }
    body.adopt_failure(value);
  }
  if (!body.ok()) return event;
  if (!have_size) event.payload_size = body.remaining();
  event.payload_offset = body.offset();
  event.payload = body.bytes(event.payload_size, "compressed transaction payload");
  if (event.compression != TransactionPayloadEvent::kZstd && event.compression != TransactionPayloadEvent::kNone)
    body.fail(fmt::format("transaction payload compression type {} is unknown (0 zstd, 255 none)", event.compression));
  return event;
}

struct PayloadReader::Stream {
  ZSTD_DStream* zstd = nullptr;
  ~Stream() {
    if (zstd != nullptr) ZSTD_freeDStream(zstd);
  }
};

PayloadReader::PayloadReader(const TransactionPayloadEvent& event)
    : stream_(std::make_unique<Stream>()), input_(event.payload), compression_(event.compression) {
  if (compression_ == TransactionPayloadEvent::kZstd) {
    stream_->zstd = ZSTD_createDStream();
    if (stream_->zstd != nullptr) ZSTD_initDStream(stream_->zstd);
  }
}

PayloadReader::~PayloadReader() = default;

Result<bool> PayloadReader::fill(std::size_t wanted) {
  if (end_ - begin_ >= wanted) return true;
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  while (end_ < wanted) {
    // The buffer grows as bytes arrive, doubling, never straight to `wanted`: that comes from
    // an inner event header, and a corrupt one may claim up to kMaxInnerEvent bytes of a
    // payload that holds a few.
    if (end_ == buffer_.size()) buffer_.resize(std::max(kFirstBuffer, std::min(wanted, buffer_.size() * 2)));
    if (compression_ == TransactionPayloadEvent::kNone) {
      const std::size_t take = std::min(buffer_.size() - end_, input_.size() - input_used_);
      if (take == 0) return false;
      std::memcpy(buffer_.data() + end_, input_.data() + input_used_, take);
      input_used_ += take;
      end_ += take;
      continue;
    }
    if (stream_->zstd == nullptr) return fail(Errc::internal, "zstd decompression context could not be created");
    if (input_done_) return false;
    ZSTD_inBuffer in{input_.data(), input_.size(), input_used_};
    ZSTD_outBuffer out{buffer_.data(), buffer_.size(), end_};
    const std::size_t status = ZSTD_decompressStream(stream_->zstd, &out, &in);
    if (ZSTD_isError(status) != 0)
      return fail(Errc::corrupt_input, fmt::format("zstd: {}", ZSTD_getErrorName(status)));
    const bool progressed = in.pos != input_used_ || out.pos != end_;
    input_used_ = in.pos;
    end_ = out.pos;
    if (status == 0 && input_used_ == input_.size()) input_done_ = true;
    if (!progressed && input_used_ == input_.size()) input_done_ = true;
  }
  return true;
}

Result<std::optional<std::span<const std::uint8_t>>> PayloadReader::next() {
  auto have_header = fill(kEventHeaderSize);
  if (!have_header) return fail(std::move(have_header).error());
  if (!*have_header) {
    if (end_ != begin_)
      return fail(Errc::corrupt_input,
                  fmt::format("transaction payload ends inside an event header ({} stray bytes)", end_ - begin_));
    return std::optional<std::span<const std::uint8_t>>{};
  }
  ByteReader header_bytes(buffer_.data() + begin_, kEventHeaderSize);
  const EventHeader header = read_event_header(header_bytes);
  if (header.event_size < kEventHeaderSize || header.event_size > kMaxInnerEvent)
    return fail(Errc::corrupt_input, fmt::format("inner event at payload offset {} has impossible size {}", consumed_,
                                                 header.event_size));
  auto have_event = fill(header.event_size);
  if (!have_event) return fail(std::move(have_event).error());
  if (!*have_event)
    return fail(Errc::corrupt_input, fmt::format("transaction payload ends inside an event at payload offset {}: need "
                                                 "{} bytes, have {}",
                                                 consumed_, header.event_size, end_ - begin_));
  const std::span<const std::uint8_t> event(buffer_.data() + begin_, header.event_size);
  inner_offset_ = consumed_;
  begin_ += header.event_size;
  consumed_ += header.event_size;
  return std::optional<std::span<const std::uint8_t>>{event};
}

}  // namespace cdc::binlog
