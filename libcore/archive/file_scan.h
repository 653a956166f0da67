#pragma once

// How much of a binlog file is whole and sound: the magic, then events whose sizes, offsets
// (each header's next_position) and CRC32 checksums agree, up to the first one that does not.
// The archive cuts its file in progress back to that length after a crash.

#include <cstdint>
#include <string>

#include "binlog/checksum.h"
#include "util/result.h"

namespace cdc::archive {

struct FileScan {
  std::uint64_t file_size = 0;
  // The end of the last whole, valid event: 4 with the magic only, 0 without even that.
  std::uint64_t valid_length = 0;
  // Why the scan stopped before file_size ("" when the whole file is sound): a torn event,
  // a checksum that does not match, an offset that does not follow, ...
  std::string problem;
  std::uint64_t events = 0;
  std::uint8_t last_type = 0;        // of the last valid event
  std::uint32_t last_timestamp = 0;  // of the last valid event with one
  std::uint32_t server_id = 0;       // of the format description event (the server that wrote the file)
  binlog::ChecksumAlgorithm checksum = binlog::ChecksumAlgorithm::off;
  // The last valid event is a ROTATE or a STOP: the server wrote nothing more to the file.
  [[nodiscard]] bool ends_file() const noexcept;
};

// Reads the whole file. Only a file that cannot be opened or read is an error; what the bytes
// hold is the scan's answer.
[[nodiscard]] Result<FileScan> scan_binlog_file(const std::string& path);

}  // namespace cdc::archive
