#include "binlog/file_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "binlog/event_header.h"
#include "util/fd_io.h"

namespace cdc::binlog {

namespace {

constexpr std::size_t kReadBlock = std::size_t{1} << 20;
// Blocks kept for reuse: as many as a consumer holding event bytes (the rows thread) keeps at once.
constexpr std::size_t kSpareBlocks = 4;
// What one read() asks for, at most (more when an event needs it): a block's worth at once
// writes a whole L2 cache of bytes that are then decoded from memory; a step of them is still
// in the cache when the decoder (or the rows thread) gets to it. On the bench binlog 128 KiB
// reads took 0.129 s against 0.141 s for 1 MiB, and 15% less CPU (median of 11 alternating runs;
// 64 KiB was the same, 32 KiB and 256 KiB in between).
constexpr std::size_t kReadStep = std::size_t{128} << 10;
// max_allowed_packet tops out at 1 GiB, and no event is larger.
constexpr std::uint32_t kMaxEventSize = (std::uint32_t{1} << 30) + 1024;
constexpr std::uint8_t kMagic[kBinlogMagicSize] = {0xfe, 0x62, 0x69, 0x6e};

}  // namespace

FileReader::FileReader(int fd, bool owns_fd, std::string name)
    : fd_(fd), owns_fd_(owns_fd), name_(std::move(name)), block_(std::make_shared<std::vector<std::uint8_t>>(kReadBlock)) {}

FileReader::FileReader(FileReader&& other) noexcept
    : fd_(other.fd_),
      owns_fd_(other.owns_fd_),
      name_(std::move(other.name_)),
      block_(std::move(other.block_)),
      spare_blocks_(std::move(other.spare_blocks_)),
      begin_(other.begin_),
      end_(other.end_),
      eof_(other.eof_),
      position_(other.position_),
      in_use_(other.in_use_),
      first_event_(other.first_event_),
      torn_tail_(other.torn_tail_) {
  other.fd_ = -1;
  other.owns_fd_ = false;
}

FileReader::~FileReader() {
  if (owns_fd_ && fd_ >= 0) ::close(fd_);
}

Result<FileReader> FileReader::open(const std::string& path) {
  int fd = STDIN_FILENO;
  bool owns = false;
  std::string name = path;
  if (path == "-") {
    name = "stdin";
  } else {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(Errc::io, fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
    owns = true;
  }
  FileReader reader(fd, owns, std::move(name));
  auto have_magic = reader.ensure(kBinlogMagicSize);
  if (!have_magic) return fail(std::move(have_magic).error());
  const std::uint8_t* head = reader.block_->data();
  const std::size_t got = reader.end_;
  if (got >= 2 && head[0] == 0x1f && head[1] == 0x8b)
    return fail(Errc::corrupt_input,
                path == "-" ? fmt::format("stdin: not a binlog file: it is gzip-compressed; decompress it before piping "
                                          "it in (zcat FILE | cdc-stream --file -)")
                            : fmt::format("{}: not a binlog file: it is gzip-compressed; decompress it first, e.g. zcat {} "
                                          "| cdc-stream --file -",
                                          reader.name_, path));
  if (!*have_magic || std::memcmp(head, kMagic, kBinlogMagicSize) != 0)
    return fail(Errc::corrupt_input, fmt::format("{}: not a binlog file: it does not start with the binlog magic "
                                                 "bytes fe 62 69 6e",
                                                 reader.name_));
  reader.begin_ = kBinlogMagicSize;
  reader.position_ = kBinlogMagicSize;
  return reader;
}

void FileReader::make_room(std::size_t bytes) {
  const std::size_t unread = end_ - begin_;
  if (block_.use_count() > 1) {
    // Held elsewhere: the bytes already returned stay where they are, and the unread ones go
    // on in a block nobody else holds.
    Block fresh;
    for (Block& spare : spare_blocks_)
      if (spare.use_count() == 1) {
        fresh = std::move(spare);
        std::swap(spare, spare_blocks_.back());
        spare_blocks_.pop_back();
        break;
      }
    if (!fresh) fresh = std::make_shared<std::vector<std::uint8_t>>();
    fresh->resize(std::max(kReadBlock, unread));
    std::memcpy(fresh->data(), block_->data() + begin_, unread);
    // A block grown for a big event is not kept: spares of that size would multiply it.
    if (spare_blocks_.size() < kSpareBlocks && block_->size() == kReadBlock) spare_blocks_.push_back(std::move(block_));
    block_ = std::move(fresh);
    begin_ = 0;
    end_ = unread;
  }
  std::vector<std::uint8_t>& buffer = *block_;
  if (buffer.size() - begin_ < bytes && begin_ > 0) {
    // Slide what is left to the front before growing.
    std::memmove(buffer.data(), buffer.data() + begin_, unread);
    end_ = unread;
    begin_ = 0;
  }
  if (end_ == buffer.size()) {
    // Grow only as data arrives (doubling): a corrupt size field must not make us allocate
    // a gigabyte before finding out the file is shorter.
    buffer.resize(std::min(std::max(bytes, kReadBlock), buffer.size() * 2));
  }
}

Result<bool> FileReader::ensure(std::size_t bytes) {
  while (end_ - begin_ < bytes) {
    if (eof_) return false;
    if (block_->size() - begin_ < bytes || end_ == block_->size()) make_room(bytes);
    std::vector<std::uint8_t>& buffer = *block_;
    const std::size_t want = std::min(buffer.size() - end_, std::max(bytes - (end_ - begin_), kReadStep));
    auto got = read_some(fd_, reinterpret_cast<char*>(buffer.data() + end_), want, name_);
    if (!got) return fail(std::move(got).error());
    if (*got == 0) eof_ = true;
    end_ += *got;
  }
  return true;
}

Result<std::optional<RawEvent>> FileReader::next() {
  auto have_header = ensure(kEventHeaderSize);
  if (!have_header) return fail(std::move(have_header).error());
  if (!*have_header) {
    if (end_ == begin_) return std::optional<RawEvent>{};
    if (in_use_) {
      torn_tail_ = end_ - begin_;
      return std::optional<RawEvent>{};
    }
    return fail(Errc::corrupt_input,
                fmt::format("{}:{}: truncated event header: need 19 bytes, the file has {} (the file was cut short)",
                            name_, position_, end_ - begin_));
  }
  const std::uint8_t* header = block_->data() + begin_;
  const std::uint32_t size = static_cast<std::uint32_t>(header[9]) | static_cast<std::uint32_t>(header[10]) << 8 |
                             static_cast<std::uint32_t>(header[11]) << 16 |
                             static_cast<std::uint32_t>(header[12]) << 24;
  const std::uint8_t type_code = header[4];
  if (size < kEventHeaderSize || size > kMaxEventSize) {
    const std::string_view type_name = event_type_name(type_code);
    return fail(Errc::corrupt_input,
                fmt::format("{}:{}: {}: impossible event size {} (the file is corrupt or not a binlog)", name_,
                            position_, type_name.empty() ? fmt::format("event type {}", type_code) : std::string(type_name),
                            size));
  }
  if (first_event_ && static_cast<EventType>(type_code) == EventType::format_description) {
    const std::uint16_t flags = static_cast<std::uint16_t>(header[17] | header[18] << 8);
    in_use_ = (flags & kFlagBinlogInUse) != 0;
  }
  first_event_ = false;
  auto have_event = ensure(size);
  if (!have_event) return fail(std::move(have_event).error());
  if (!*have_event) {
    if (in_use_) {
      torn_tail_ = end_ - begin_;
      return std::optional<RawEvent>{};
    }
    const std::string_view type_name = event_type_name(type_code);
    return fail(Errc::corrupt_input,
                fmt::format("{}:{}: {}: truncated event: the header says {} bytes, the file has {} (the file was cut "
                            "short)",
                            name_, position_, type_name.empty() ? fmt::format("event type {}", type_code) : std::string(type_name),
                            size, end_ - begin_));
  }
  RawEvent event{std::span<const std::uint8_t>(block_->data() + begin_, size), position_};
  begin_ += size;
  position_ += size;
  return std::optional<RawEvent>{event};
}

Result<void> FileReader::skip_to(std::uint64_t offset) {
  if (offset < position_)
    return fail(Errc::usage, fmt::format("{}: cannot go back to offset {} from {}", name_, offset, position_));
  while (position_ < offset) {
    const std::uint64_t in_buffer = end_ - begin_;
    if (in_buffer > 0) {
      const std::uint64_t step = std::min<std::uint64_t>(in_buffer, offset - position_);
      begin_ += step;
      position_ += step;
      continue;
    }
    struct stat info {};
    if (owns_fd_ && ::fstat(fd_, &info) == 0 && S_ISREG(info.st_mode)) {
      if (static_cast<std::uint64_t>(info.st_size) < offset)
        return fail(Errc::usage, fmt::format("{}: start position {} is past the end of the file ({} bytes)", name_,
                                             offset, info.st_size));
      if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) == static_cast<off_t>(offset)) {
        position_ = offset;
        begin_ = end_ = 0;
        eof_ = false;
        break;
      }
    }
    auto have = ensure(1);
    if (!have) return fail(std::move(have).error());
    if (!*have) return fail(Errc::usage, fmt::format("{}: start position {} is past the end of the file ({})", name_,
                                                     offset, position_));
  }
  return {};
}

}  // namespace cdc::binlog
