#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "util/byte_reader.h"
#include "util/result.h"

namespace cdc::binlog {

// MariaDB's compressed QUERY and ROWS events (log_bin_compress): one header byte 0x80 | n,
// then the uncompressed length in n big-endian bytes, then a zlib stream
// (sql/log_event.cc binlog_buf_compress / binlog_buf_uncompress).
// Inflates into `out` (reused between events). Failures name what was wrong.
Result<void> inflate_mariadb(std::span<const std::uint8_t> compressed, std::vector<std::uint8_t>& out,
                             std::size_t max_size);

}  // namespace cdc::binlog
