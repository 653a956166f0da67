// MariaDB's compressed QUERY and ROWS event bodies (binlog/compression).

#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

#include "binlog/compression.h"

namespace {

using cdc::Errc;
using cdc::binlog::inflate_mariadb;

// Header byte 0x84, the length in 4 big-endian bytes, then the zlib stream of `text`.
std::vector<std::uint8_t> compressed_body(const std::string& text, std::uint32_t claimed_length) {
  std::vector<std::uint8_t> out{0x84, static_cast<std::uint8_t>(claimed_length >> 24),
                                static_cast<std::uint8_t>(claimed_length >> 16),
                                static_cast<std::uint8_t>(claimed_length >> 8),
                                static_cast<std::uint8_t>(claimed_length)};
  uLongf size = compressBound(static_cast<uLong>(text.size()));
  std::vector<std::uint8_t> stream(size);
  REQUIRE(compress(stream.data(), &size, reinterpret_cast<const Bytef*>(text.data()), static_cast<uLong>(text.size())) ==
          Z_OK);
  out.insert(out.end(), stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(size));
  return out;
}

constexpr std::size_t kMaxInflated = std::size_t{1} << 30;

}  // namespace

TEST_CASE("MariaDB compression: a body inflates to the length its header gives") {
  const std::string text = "INSERT INTO z.t VALUES (1, '" + std::string(300, 'x') + "')";
  std::vector<std::uint8_t> out;
  const auto inflated =
      inflate_mariadb(compressed_body(text, static_cast<std::uint32_t>(text.size())), out, kMaxInflated);
  REQUIRE(inflated);
  CHECK(std::string(out.begin(), out.end()) == text);
}

// Found while fixing what binlog_file_fuzz found in TRANSACTION_PAYLOAD_EVENTs: a 2.5 KB file
// whose one QUERY_COMPRESSED event claimed 1 GiB uncompressed made cdc-stream allocate (and
// zero) all of it before zlib failed. zlib inflates at most 1032:1, so a longer claim is
// corrupt on its face.
TEST_CASE("MariaDB compression: a length more than the zlib stream can inflate to is an error, not an allocation") {
  const std::vector<std::uint8_t> body = compressed_body("CREATE TABLE z.t (id INT)", 0x3FFFFFF0);
  std::vector<std::uint8_t> out;
  const auto inflated = inflate_mariadb(body, out, kMaxInflated);
  REQUIRE_FALSE(inflated);
  CHECK(inflated.error().code == Errc::corrupt_input);
  CHECK(inflated.error().message.find("1073741808 bytes uncompressed") != std::string::npos);
  CHECK(out.capacity() < (std::size_t{1} << 20));
}
