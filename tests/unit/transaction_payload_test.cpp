// The inner-event reader of MySQL TRANSACTION_PAYLOAD_EVENTs (binlog/transaction_payload).

#include <doctest/doctest.h>
#include <zstd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "binlog/event_header.h"
#include "binlog/transaction_payload.h"

namespace {

using cdc::Errc;
using cdc::binlog::PayloadReader;
using cdc::binlog::TransactionPayloadEvent;

// A 19-byte v4 event header (timestamp, type, server id, size, next position, flags).
std::vector<std::uint8_t> event_header(std::uint32_t event_size) {
  std::vector<std::uint8_t> header(cdc::binlog::kEventHeaderSize, 0);
  header[4] = 2;  // QUERY_EVENT
  for (std::size_t i = 0; i < 4; ++i) header[9 + i] = static_cast<std::uint8_t>(event_size >> (8 * i));
  return header;
}

std::vector<std::uint8_t> zstd_compressed(const std::vector<std::uint8_t>& bytes) {
  std::vector<std::uint8_t> out(ZSTD_compressBound(bytes.size()));
  const std::size_t size = ZSTD_compress(out.data(), out.size(), bytes.data(), bytes.size(), 1);
  REQUIRE_FALSE(ZSTD_isError(size));
  out.resize(size);
  return out;
}

}  // namespace

// Found by binlog_file_fuzz: a 771-byte file whose payload's inner header claimed a ~700 MB
// event made the reader allocate all of it before reading a byte of it.
TEST_CASE("transaction payload: an inner header claiming a huge event costs no memory, only an error") {
  constexpr std::uint32_t kClaimed = 200U << 20;  // within the 1 GiB inner-event limit
  std::vector<std::uint8_t> inner = event_header(kClaimed);
  inner.resize(inner.size() + 40, 0x61);  // a few bytes of the claimed body, then the end

  for (const std::uint64_t compression : {TransactionPayloadEvent::kNone, TransactionPayloadEvent::kZstd}) {
    CAPTURE(compression);
    const std::vector<std::uint8_t> payload =
        compression == TransactionPayloadEvent::kNone ? inner : zstd_compressed(inner);
    TransactionPayloadEvent event;
    event.compression = compression;
    event.payload = payload;
    event.payload_size = payload.size();
    PayloadReader reader(event);
    const auto next = reader.next();
    REQUIRE_FALSE(next);
    CHECK(next.error().code == Errc::corrupt_input);
    CHECK(next.error().message.find("ends inside an event") != std::string::npos);
    CHECK(reader.buffer_bytes() <= std::size_t{1} << 20);
  }
}

TEST_CASE("transaction payload: events larger than the first buffer still come whole") {
  constexpr std::uint32_t kSize = 300U << 10;  // larger than the 64 KiB first buffer
  std::vector<std::uint8_t> inner = event_header(kSize);
  inner.resize(kSize, 0x62);
  const std::vector<std::uint8_t> second = event_header(cdc::binlog::kEventHeaderSize);
  inner.insert(inner.end(), second.begin(), second.end());
  for (const std::uint64_t compression : {TransactionPayloadEvent::kNone, TransactionPayloadEvent::kZstd}) {
    CAPTURE(compression);
    const std::vector<std::uint8_t> payload =
        compression == TransactionPayloadEvent::kNone ? inner : zstd_compressed(inner);
    TransactionPayloadEvent event;
    event.compression = compression;
    event.payload = payload;
    event.payload_size = payload.size();
    PayloadReader reader(event);
    auto first = reader.next();
    REQUIRE(first);
    REQUIRE(first->has_value());
    CHECK((*first)->size() == kSize);
    CHECK((**first)[kSize - 1] == 0x62);
    auto next = reader.next();
    REQUIRE(next);
    REQUIRE(next->has_value());
    CHECK((*next)->size() == cdc::binlog::kEventHeaderSize);
    CHECK(reader.inner_offset() == kSize);
    auto end = reader.next();
    REQUIRE(end);
    CHECK_FALSE(end->has_value());
  }
}
