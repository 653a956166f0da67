#include "binlog/compression.h"

#include <fmt/format.h>
#include <zlib.h>

namespace cdc::binlog {

namespace {

// deflate's largest expansion (zlib FAQ: "the limit is 1032:1").
constexpr std::uint64_t kMaxDeflateRatio = 1032;

}  // namespace

Result<void> inflate_mariadb(std::span<const std::uint8_t> compressed, std::vector<std::uint8_t>& out,
                             std::size_t max_size) {
  ByteReader in(compressed);
  const std::uint8_t header = in.u8();
  const std::size_t length_bytes = header & 0x07U;
  if (!in.ok() || (header & 0x80U) == 0 || length_bytes == 0 || length_bytes > 4)
    return fail(Errc::corrupt_input, fmt::format("compressed event header byte 0x{:02x} is not 0x81..0x84", header));
  const std::uint64_t length = in.uint_be(length_bytes, "compressed event length");
  if (!in.ok()) return fail(Errc::corrupt_input, in.failure_text());
  if (length > max_size)
    return fail(Errc::corrupt_input,
                fmt::format("compressed event claims {} bytes uncompressed, more than the {} allowed", length, max_size));
  const auto source = in.rest();
  // Checked before allocating: the length comes from the event, and a corrupt one would make
  // a few bytes cost up to max_size of zeroed memory.
  if (length > source.size() * kMaxDeflateRatio)
    return fail(Errc::corrupt_input,
                fmt::format("compressed event claims {} bytes uncompressed, more than its {} compressed bytes can hold "
                            "(zlib inflates at most {}:1)",
                            length, source.size(), kMaxDeflateRatio));
  out.resize(length);
  uLongf produced = static_cast<uLongf>(length);
  const int status = ::uncompress(out.data(), &produced, source.data(), static_cast<uLong>(source.size()));
  if (status != Z_OK || produced != length)
    return fail(Errc::corrupt_input,
                fmt::format("compressed event does not inflate (zlib status {}, {} of {} bytes)", status, produced, length));
  return {};
}

}  // namespace cdc::binlog
