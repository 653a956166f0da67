#include "archive/file_scan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <cstring>

#include "binlog/event_header.h"
#include "binlog/event_type.h"
#include "binlog/file_reader.h"
#include "binlog/format_description.h"
#include "util/byte_reader.h"
#include "util/fd_io.h"

namespace cdc::archive {

namespace {

constexpr std::array<std::uint8_t, binlog::kBinlogMagicSize> kMagic = {0xfe, 0x62, 0x69, 0x6e};

std::string type_label(std::uint8_t type_code) {
  const std::string_view name = binlog::event_type_name(type_code);
  return name.empty() ? fmt::format("event type {}", type_code) : std::string(name);
}

}  // namespace

bool FileScan::ends_file() const noexcept {
  const auto type = static_cast<binlog::EventType>(last_type);
  return events > 0 && (type == binlog::EventType::rotate || type == binlog::EventType::stop);
}

Result<FileScan> scan_binlog_file(const std::string& path) {
  FileScan scan;
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return errno_error("cannot read", path);
  scan.file_size = static_cast<std::uint64_t>(info.st_size);
  if (scan.file_size < binlog::kBinlogMagicSize) {
    // Created, and the magic not yet on disk.
    if (scan.file_size > 0) scan.problem = fmt::format("{} bytes, less than the 4-byte binlog magic", scan.file_size);
    return scan;
  }
  {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_error("cannot read", path);
    std::array<std::uint8_t, binlog::kBinlogMagicSize> head{};
    const ssize_t got = ::pread(fd, head.data(), head.size(), 0);
    ::close(fd);
    if (got != static_cast<ssize_t>(head.size())) return errno_error("cannot read", path);
    if (head != kMagic) {
      scan.problem = "it does not start with the binlog magic bytes fe 62 69 6e";
      return scan;
    }
  }
  auto reader = binlog::FileReader::open(path);
  if (!reader) return fail(std::move(reader).error());
  scan.valid_length = binlog::kBinlogMagicSize;
  for (;;) {
    const std::uint64_t offset = reader->position();
    auto next = reader->next();
    if (!next) {
      if (next.error().code != Errc::corrupt_input) return fail(std::move(next).error());
      scan.problem = next.error().message;
      return scan;
    }
    if (!*next) {
      if (scan.valid_length < scan.file_size)
        scan.problem = fmt::format("the event at {} is cut short ({} bytes of it)", scan.valid_length,
                                   scan.file_size - scan.valid_length);
      return scan;
    }
    const std::span<const std::uint8_t> bytes = (*next)->bytes;
    ByteReader header_reader(bytes, offset);
    const binlog::EventHeader header = binlog::read_event_header(header_reader);
    const auto where = [&] { return fmt::format("the {} at {}", type_label(header.type_code), offset); };
    if (offset == binlog::kBinlogMagicSize) {
      if (header.type() != binlog::EventType::format_description) {
        scan.problem = fmt::format("{} is not a FORMAT_DESCRIPTION_EVENT", where());
        return scan;
      }
      ByteReader body(bytes.subspan(binlog::kEventHeaderSize), offset + binlog::kEventHeaderSize);
      const binlog::FormatDescription format = binlog::decode_format_description(body);
      if (!body.ok()) {
        scan.problem = fmt::format("{}: {}", where(), body.failure_text());
        return scan;
      }
      scan.checksum = format.checksum;
      scan.server_id = header.server_id;
    }
    if (header.next_position != offset + bytes.size()) {
      scan.problem = fmt::format("{} says the next event is at {}, but it ends at {}", where(),
                                 header.next_position, offset + bytes.size());
      return scan;
    }
    if (scan.checksum == binlog::ChecksumAlgorithm::crc32 && !binlog::event_checksum_matches(bytes)) {
      scan.problem = fmt::format("{} fails its CRC32 checksum", where());
      return scan;
    }
    scan.valid_length = offset + bytes.size();
    ++scan.events;
    scan.last_type = header.type_code;
    if (header.timestamp != 0) scan.last_timestamp = header.timestamp;
  }
}

}  // namespace cdc::archive
