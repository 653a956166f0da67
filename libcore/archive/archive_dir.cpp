#include "archive/archive_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "archive/file_scan.h"
#include "binlog/event_header.h"
#include "binlog/event_type.h"
#include "binlog/format_description.h"
#include "util/byte_reader.h"
#include "util/fd_io.h"
#include "util/text.h"

namespace cdc::archive {

namespace {

constexpr std::string_view kLockName = ".lock";
// Events are written in chunks of this size (or alone, when larger).
constexpr std::size_t kWriteChunk = std::size_t{1} << 20;
// The file in progress is fdatasync'ed at least this often while events arrive.
constexpr auto kSyncInterval = std::chrono::seconds(1);
constexpr std::uint8_t kMagic[binlog::kBinlogMagicSize] = {0xfe, 0x62, 0x69, 0x6e};
// Offsets in the v4 common header.
constexpr std::size_t kNextPositionOffset = 13;
constexpr std::size_t kFlagsOffset = 17;

std::string type_label(std::uint8_t type_code) {
  const std::string_view name = binlog::event_type_name(type_code);
  return name.empty() ? fmt::format("event type {}", type_code) : std::string(name);
}

std::uint32_t get_u32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}
void put_u32(std::uint8_t* p, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>((value >> (8 * i)) & 0xff);
}

// The server_id in the FORMAT_DESCRIPTION_EVENT header at offset 4; 0 when it is not there.
std::uint32_t format_description_server_id(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return 0;
  std::uint8_t header[binlog::kEventHeaderSize];
  if (::pread(fd.get(), header, sizeof header, binlog::kBinlogMagicSize) != static_cast<ssize_t>(sizeof header))
    return 0;
  if (static_cast<binlog::EventType>(header[4]) != binlog::EventType::format_description) return 0;
  return get_u32(header + 5);
}

}  // namespace

ArchiveDir::ArchiveDir(std::string path, UniqueFd dir_fd, UniqueFd lock_fd, Retention keep, Notify notice)
    : path_(std::move(path)),
      dir_fd_(std::move(dir_fd)),
      lock_fd_(std::move(lock_fd)),
      keep_(keep),
      notice_(std::move(notice)),
      buffer_(kWriteChunk) {}

ArchiveDir::~ArchiveDir() {
  // An error ended the run: what is buffered is whole events, so it still goes out (without
  // the fsync: the next open scans the file anyway).
  if (current_ && current_->fd.valid() && buffered_ > 0) (void)flush_buffer();
}

Result<ArchiveDir> ArchiveDir::open(std::string path, Retention keep, Notify notice) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (::mkdir(path.c_str(), 0750) != 0 && errno != EEXIST) return errno_error("cannot create the archive directory", path);
  UniqueFd dir_fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd.valid()) return errno_error("cannot open the archive directory", path);
  const std::string lock_path = path + "/" + std::string(kLockName);
  UniqueFd lock_fd(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!lock_fd.valid()) return errno_error("cannot create the lock file", lock_path);
  if (::flock(lock_fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK)
      return fail(Errc::usage, fmt::format("{} is in use by another cdc-stream --archive (it holds {}); one archive "
                                           "directory belongs to one run",
                                           path, lock_path));
    return errno_error("cannot lock", lock_path);
  }
  auto listing = list_directory(path);
  if (!listing) return fail(std::move(listing).error());
  ArchiveDir archive(std::move(path), std::move(dir_fd), std::move(lock_fd), keep, std::move(notice));
  if (auto taken = archive.take_up(*listing); !taken) return fail(std::move(taken).error());
  if (auto kept = archive.apply_retention(); !kept) return fail(std::move(kept).error());
  return archive;
}

Result<void> ArchiveDir::take_up(const Listing& listing) {
  complete_ = listing.complete;
  if (listing.in_progress) {
    const std::string& name = *listing.in_progress;
    const std::string partial = file_path(in_progress_name(name));
    auto scan = scan_binlog_file(partial);
    if (!scan) return fail(std::move(scan).error());
    if (scan->file_size >= binlog::kBinlogMagicSize && scan->valid_length == 0)
      return fail(Errc::corrupt_input, fmt::format("{}: {}: cdc-stream did not write it; move it away", partial,
                                                   scan->problem));
    UniqueFd fd(::open(partial.c_str(), O_RDWR | O_CLOEXEC));
    if (!fd.valid()) return errno_error("cannot open", partial);
    if (scan->valid_length < scan->file_size) {
      // Whole events only: the rest comes again from the server.
      if (::ftruncate(fd.get(), static_cast<off_t>(scan->valid_length)) != 0) return errno_error("cannot cut back", partial);
      if (::fsync(fd.get()) != 0) return errno_error("fsync failed on", partial);
      notice_(fmt::format("{}: cut back from {} to {} bytes, the end of its last whole event ({}); the rest comes "
                          "again from the server",
                          partial, scan->file_size, scan->valid_length, scan->problem));
    }
    if (::lseek(fd.get(), 0, SEEK_END) < 0) return errno_error("cannot seek in", partial);
    current_.emplace();
    current_->name = name;
    current_->fd = std::move(fd);
    current_->size = scan->valid_length;
    current_->on_disk = scan->valid_length;
    current_->last_timestamp = scan->last_timestamp;
    server_id_ = scan->server_id;
    if (scan->valid_length == 0) {
      // Created, and killed before the magic was written.
      std::memcpy(buffer_.data(), kMagic, sizeof kMagic);
      buffered_ = sizeof kMagic;
      current_->size = sizeof kMagic;
      unsynced_ = true;
    }
    if (scan->ends_file()) {
      // Killed between the server's ROTATE (or STOP) and the rename.
      notice_(fmt::format("{}: it ends with the server's {}: completed as {}", partial, type_label(scan->last_type), name));
      if (auto completed = complete_file(true); !completed) return completed;
    }
  }
  if (server_id_ == 0 && !complete_.empty()) server_id_ = format_description_server_id(file_path(complete_.back().name));
  return {};
}

std::optional<ArchiveEnd> ArchiveDir::end() const {
  if (current_) return ArchiveEnd{current_->name, current_->size, false};
  if (!complete_.empty()) return ArchiveEnd{complete_.back().name, complete_.back().size, true};
  return std::nullopt;
}

std::string ArchiveDir::file_path(std::string_view name) const {
  std::string full = path_;
  full.append("/").append(name);
  return full;
}

void ArchiveDir::begin_dump(bool by_gtid, binlog::ChecksumAlgorithm checksums) {
  dump_file_.clear();
  dump_by_gtid_ = by_gtid;
  dump_named_a_file_ = false;
  in_first_file_ = false;
  checksum_ = checksums;
}

Error ArchiveDir::gap_error(std::string_view file, std::uint64_t offset, std::uint64_t size, std::string_view type) const {
  const auto archive_end = end();
  const std::string ends = archive_end ? fmt::format("{}:{}{}", archive_end->file, archive_end->size,
                                                     archive_end->complete ? " (the end of a complete file)" : "")
                                       : std::string("nowhere yet");
  std::string what;
  if (archive_end && file == archive_end->file && offset < archive_end->size)
    what = fmt::format("overlaps the archive's last {} bytes", archive_end->size - offset);
  else
    what = "would leave a gap after the archive's end";
  return Error{Errc::corrupt_input,
               fmt::format("{}:{}: {} ({} bytes): the archive in {} ends at {}, and this event {}; nothing was "
                           "written past the archive's end (a stream whose position is past the archive's end cannot "
                           "fill it: run cdc-stream --archive {} alone to bring it up to date)",
                           file, offset, type, size, path_, ends, what, path_)};
}

Result<void> ArchiveDir::append(std::span<const std::uint8_t> event) {
  if (event.size() < binlog::kEventHeaderSize)
    return fail(Errc::corrupt_input, fmt::format("{}: a {}-byte event in the binlog stream", dump_file_, event.size()));
  ByteReader header_reader(event, 0);
  const binlog::EventHeader header = binlog::read_event_header(header_reader);
  const binlog::EventType type = header.type();
  if (type == binlog::EventType::heartbeat || type == binlog::EventType::heartbeat_v2) return sync_when_due();
  const bool artificial = (header.flags & binlog::kFlagArtificial) != 0 || header.next_position == 0;
  const std::uint64_t offset =
      artificial || header.next_position < event.size() ? 0 : header.next_position - event.size();
  // Only for messages: no allocation per event.
  const auto where = [&] {
    return artificial ? fmt::format("{} (artificial {})", dump_file_, type_label(header.type_code))
                      : fmt::format("{}:{}: {}", dump_file_, offset, type_label(header.type_code));
  };
  if (header.event_size != event.size())
    return fail(Errc::corrupt_input,
                fmt::format("{}: the header says {} bytes, the server sent {}", where(), header.event_size, event.size()));

  binlog::ChecksumAlgorithm checksum = checksum_;
  if (type == binlog::EventType::format_description) {
    ByteReader body(event.subspan(binlog::kEventHeaderSize), binlog::kEventHeaderSize);
    const binlog::FormatDescription format = binlog::decode_format_description(body);
    if (!body.ok()) return fail(Errc::corrupt_input, fmt::format("{}: {}", where(), body.failure_text()));
    checksum = format.checksum;
  }
  if (checksum == binlog::ChecksumAlgorithm::crc32 && !binlog::event_checksum_matches(event)) {
    const auto archive_end = end();
    return fail(Errc::corrupt_input,
                fmt::format("{}: the event fails its CRC32 checksum; the archive in {} ends at {}, nothing after it "
                            "was written",
                            where(), path_,
                            archive_end ? fmt::format("{}:{}", archive_end->file, archive_end->size) : "nowhere yet"));
  }
  const std::size_t checksum_size = checksum == binlog::ChecksumAlgorithm::crc32 ? binlog::kChecksumSize : 0;
  if (type == binlog::EventType::format_description) checksum_ = checksum;

  if (type == binlog::EventType::rotate && artificial) {
    ByteReader body(event.subspan(binlog::kEventHeaderSize, event.size() - binlog::kEventHeaderSize - checksum_size), 0);
    const std::uint64_t position = body.u64();
    const std::string_view file = body.chars(body.remaining(), "next binlog file name");
    if (!body.ok() || !is_binlog_name(file))
      return fail(Errc::corrupt_input, fmt::format("{}: not a binlog file name: '{}'", where(), file));
    return on_fake_rotate(file, position);
  }
  if (type == binlog::EventType::format_description) {
    // Sent at the start of every file the dump enters; it belongs in the archive only where
    // the file begins. A dump that starts inside a file sends it again (log_pos 0): not written.
    if (current_ && dump_file_ == current_->name && current_->size == binlog::kBinlogMagicSize) {
      if (dump_by_gtid_ && in_first_file_ && !sent_as_in_file(event))
        return fail(Errc::corrupt_input,
                    fmt::format("{}: the stream resumes by GTID inside {}, which the archive in {} has only begun, "
                                "and a dump by GTID sends that file's FORMAT_DESCRIPTION_EVENT with its creation time "
                                "cleared; run cdc-stream --archive {} alone once (it reads by file), then this "
                                "command again",
                                where(), dump_file_, path_, path_));
      if (auto written = write_format_description(event); !written) return written;
      server_id_ = header.server_id;
    }
    return sync_when_due();
  }
  if (artificial) return sync_when_due();

  // A real event of dump_file_, at offset.
  if (!current_) {
    if (!complete_.empty() && !binlog_name_before(complete_.back().name, dump_file_)) {
      if (dump_file_ == complete_.back().name && header.next_position > complete_.back().size)
        return fail(gap_error(dump_file_, offset, event.size(), type_label(header.type_code)));
      return sync_when_due();  // the archive has it
    }
    if (complete_.empty()) return sync_when_due();  // waiting for the start of a file
    return fail(gap_error(dump_file_, offset, event.size(), type_label(header.type_code)));
  }
  if (dump_file_ != current_->name) {
    if (binlog_name_before(dump_file_, current_->name)) return sync_when_due();  // the archive has it
    return fail(gap_error(dump_file_, offset, event.size(), type_label(header.type_code)));
  }
  if (header.next_position <= current_->size) return sync_when_due();  // the archive has it
  if (offset != current_->size) return fail(gap_error(dump_file_, offset, event.size(), type_label(header.type_code)));
  if (auto written = write_event(event); !written) return written;
  if (header.timestamp != 0) current_->last_timestamp = header.timestamp;

  if (type == binlog::EventType::rotate) {
    // The server closed the file here and goes on in next_file, which begins at once: the
    // archive then always has a file in progress to resume from.
    ByteReader body(event.subspan(binlog::kEventHeaderSize, event.size() - binlog::kEventHeaderSize - checksum_size), 0);
    (void)body.u64();
    const std::string next(body.chars(body.remaining(), "next binlog file name"));
    if (!body.ok() || !is_binlog_name(next) || !binlog_name_before(current_->name, next))
      return fail(Errc::corrupt_input,
                  fmt::format("{}: the next file '{}' does not follow {}", where(), next, current_->name));
    if (auto completed = complete_file(true); !completed) return completed;
    return begin_file(next);
  }
  if (type == binlog::EventType::stop) return complete_file(true);  // the server shut down
  return sync_when_due();
}

// A dump by GTID (and one that starts inside a file) sends the FORMAT_DESCRIPTION_EVENT with
// its creation time zeroed (sql/sql_repl.cc send_format_descriptor_event, "to avoid destroying
// temp tables"). The server sets it only in the first file after it starts; a file begun by a
// rotation has 0 there anyway. So the event is the file's when its time is there, or when the
// archive's previous file ends with the ROTATE_EVENT that began this one.
bool ArchiveDir::sent_as_in_file(std::span<const std::uint8_t> event) const {
  constexpr std::size_t kCreatedOffset = binlog::kEventHeaderSize + 2 + 50;  // after version and server version
  if (event.size() >= kCreatedOffset + 4 && get_u32(event.data() + kCreatedOffset) != 0) return true;
  if (complete_.empty() || !current_) return false;
  const CompleteFile& previous = complete_.back();
  const std::size_t checksum_size = checksum_ == binlog::ChecksumAlgorithm::crc32 ? binlog::kChecksumSize : 0;
  const std::size_t rotate_size = binlog::kEventHeaderSize + 8 + current_->name.size() + checksum_size;
  if (previous.size < binlog::kBinlogMagicSize + rotate_size) return false;
  UniqueFd fd(::openat(dir_fd_.get(), previous.name.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return false;
  std::vector<std::uint8_t> rotate(rotate_size);
  if (::pread(fd.get(), rotate.data(), rotate_size, static_cast<off_t>(previous.size - rotate_size)) !=
      static_cast<ssize_t>(rotate_size))
    return false;
  const std::string_view next(reinterpret_cast<const char*>(rotate.data()) + binlog::kEventHeaderSize + 8,
                              current_->name.size());
  return static_cast<binlog::EventType>(rotate[4]) == binlog::EventType::rotate &&
         get_u32(rotate.data() + 9) == rotate_size && get_u32(rotate.data() + kNextPositionOffset) == previous.size &&
         next == current_->name;
}

Result<void> ArchiveDir::on_fake_rotate(std::string_view file, std::uint64_t position) {
  const bool first = !dump_named_a_file_;
  dump_named_a_file_ = true;
  in_first_file_ = first;
  dump_file_.assign(file);
  const std::string_view type = "ROTATE_EVENT";
  if (current_) {
    if (file == current_->name) {
      if (position > current_->size) return fail(gap_error(file, position, 0, type));
      return {};
    }
    if (binlog_name_before(file, current_->name)) return {};  // the dump starts before the archive's end
    if (first || position != binlog::kBinlogMagicSize) return fail(gap_error(file, position, 0, type));
    // The dump went through the end of the file in progress, and there was no ROTATE or STOP:
    // the server crashed while it wrote it, and it will not grow any more.
    notice_(fmt::format("{}: the server went on to {} without a ROTATE at the end of {} (it stopped without "
                        "closing it): completed at {} bytes",
                        path_, file, current_->name, current_->size));
    if (auto completed = complete_file(false); !completed) return completed;
    return begin_file(std::string(file));
  }
  if (!complete_.empty() && !binlog_name_before(complete_.back().name, file)) return {};  // the archive has that file
  if (position == binlog::kBinlogMagicSize && !(first && dump_by_gtid_)) return begin_file(std::string(file));
  if (complete_.empty()) {
    if (!told_waiting_)
      notice_(fmt::format("{}: the stream starts inside {}; the archive begins with the next binlog file the server "
                          "starts",
                          path_, file));
    told_waiting_ = true;
    return {};
  }
  return fail(gap_error(file, position, 0, type));
}

Result<void> ArchiveDir::begin_file(const std::string& name) {
  const std::string partial = file_path(in_progress_name(name));
  UniqueFd fd(::openat(dir_fd_.get(), in_progress_name(name).c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640));
  if (!fd.valid()) return errno_error("cannot create", partial);
  // The magic at once: a reader of the archive (--archive-source) may open the file in
  // progress any time, and a binlog file without its magic is not one.
  if (auto written = write_all(fd.get(), std::string_view(reinterpret_cast<const char*>(kMagic), sizeof kMagic), partial);
      !written)
    return written;
  if (auto synced = sync_directory(); !synced) return synced;
  current_.emplace();
  current_->name = name;
  current_->fd = std::move(fd);
  current_->size = sizeof kMagic;
  current_->on_disk = sizeof kMagic;
  buffered_ = 0;
  unsynced_ = true;
  return {};
}

Result<void> ArchiveDir::write_event(std::span<const std::uint8_t> event) {
  if (buffered_ + event.size() > buffer_.size())
    if (auto flushed = flush_buffer(); !flushed) return flushed;
  if (event.size() >= buffer_.size()) {
    const std::string_view bytes(reinterpret_cast<const char*>(event.data()), event.size());
    if (auto written = write_all(current_->fd.get(), bytes, file_path(in_progress_name(current_->name))); !written)
      return written;
    current_->on_disk += event.size();
  } else {
    std::memcpy(buffer_.data() + buffered_, event.data(), event.size());
    buffered_ += event.size();
  }
  current_->size += event.size();
  unsynced_ = true;
  return {};
}

// The FORMAT_DESCRIPTION_EVENT as the server's file holds it. The dump thread clears
// LOG_EVENT_BINLOG_IN_USE_F, which the file it sends from has while the server writes it, and
// MySQL zeroes log_pos as well (sql/rpl_binlog_sender.cc send_format_description_event; MariaDB
// sql/sql_repl.cc send_format_descriptor_event keeps it). Both come back, and the checksum is
// computed with the in-use flag clear, as the server computes it (binlog/checksum.h). The flag
// is cleared again when the file is completed, as the server does when it closes the file.
Result<void> ArchiveDir::write_format_description(std::span<const std::uint8_t> event) {
  if (auto written = write_event(event); !written) return written;
  std::uint8_t* const copy = buffer_.data() + buffered_ - event.size();
  put_u32(copy + kNextPositionOffset, static_cast<std::uint32_t>(binlog::kBinlogMagicSize + event.size()));
  copy[kFlagsOffset] = static_cast<std::uint8_t>(copy[kFlagsOffset] & ~binlog::kFlagBinlogInUse);
  if (checksum_ == binlog::ChecksumAlgorithm::crc32) {
    const std::size_t covered = event.size() - binlog::kChecksumSize;
    put_u32(copy + covered, binlog::crc32_of(std::span<const std::uint8_t>(copy, covered)));
  }
  copy[kFlagsOffset] = static_cast<std::uint8_t>(copy[kFlagsOffset] | binlog::kFlagBinlogInUse);
  return {};
}

Result<void> ArchiveDir::flush_buffer() {
  if (buffered_ == 0) return {};
  const std::string_view bytes(reinterpret_cast<const char*>(buffer_.data()), buffered_);
  if (auto written = write_all(current_->fd.get(), bytes, file_path(in_progress_name(current_->name))); !written)
    return written;
  current_->on_disk += buffered_;
  buffered_ = 0;
  return {};
}

Result<void> ArchiveDir::sync() {
  if (!current_) return {};
  if (auto flushed = flush_buffer(); !flushed) return flushed;
  if (unsynced_ && ::fdatasync(current_->fd.get()) != 0)
    return errno_error("fdatasync failed on", file_path(in_progress_name(current_->name)));
  unsynced_ = false;
  last_sync_ = Clock::now();
  return {};
}

Result<void> ArchiveDir::sync_when_due() {
  if (!unsynced_ || Clock::now() - last_sync_ < kSyncInterval) return {};
  return sync();
}

Result<void> ArchiveDir::close() {
  if (auto synced = sync(); !synced) return synced;
  current_.reset();
  return {};
}

Result<void> ArchiveDir::complete_file(bool closed_by_server) {
  const std::string name = current_->name;
  const std::string partial = file_path(in_progress_name(name));
  if (auto flushed = flush_buffer(); !flushed) return flushed;
  const int fd = current_->fd.get();
  if (closed_by_server && current_->size >= binlog::kBinlogMagicSize + binlog::kEventHeaderSize) {
    // The server clears LOG_EVENT_BINLOG_IN_USE_F in the file's format description when it
    // closes the file (sql/log.cc MYSQL_BIN_LOG::close); so does the archive. A file the server
    // crashed in keeps it, as the server's copy does.
    std::uint8_t flags = 0;
    const auto at = static_cast<off_t>(binlog::kBinlogMagicSize + kFlagsOffset);
    if (::pread(fd, &flags, 1, at) != 1) return errno_error("cannot read", partial);
    if ((flags & binlog::kFlagBinlogInUse) != 0) {
      flags = static_cast<std::uint8_t>(flags & ~binlog::kFlagBinlogInUse);
      if (::pwrite(fd, &flags, 1, at) != 1) return errno_error("cannot write", partial);
    }
  }
  // The file's time is its last event's, when the server closed it: retention by age goes
  // by the binlog's time, even for files archived long after.
  struct timespec times[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
  if (current_->last_timestamp != 0) times[1] = {static_cast<time_t>(current_->last_timestamp), 0};
  if (::futimens(fd, times) != 0) return errno_error("cannot set the time of", partial);
  if (::fsync(fd) != 0) return errno_error("fsync failed on", partial);
  const std::uint64_t size = current_->size;
  const std::int64_t mtime = current_->last_timestamp != 0 ? current_->last_timestamp : std::time(nullptr);
  current_.reset();
  unsynced_ = false;
  if (::renameat(dir_fd_.get(), in_progress_name(name).c_str(), dir_fd_.get(), name.c_str()) != 0)
    return errno_error("cannot rename " + partial + " to", file_path(name));
  if (auto synced = sync_directory(); !synced) return synced;
  complete_.push_back(CompleteFile{name, size, mtime});
  return apply_retention();
}

Result<void> ArchiveDir::apply_retention() {
  if (keep_.keeps_everything()) return {};
  const auto doomed = files_to_delete(complete_, current_ ? current_->size : 0, keep_, std::time(nullptr));
  if (doomed.empty()) return {};
  for (const auto& name : doomed) {
    if (::unlinkat(dir_fd_.get(), name.c_str(), 0) != 0 && errno != ENOENT)
      return errno_error("cannot delete", file_path(name));
    notice_(fmt::format("{}: deleted {} (--archive-keep {})", path_, name, keep_.to_string()));
  }
  complete_.erase(complete_.begin(), complete_.begin() + static_cast<std::ptrdiff_t>(doomed.size()));
  return sync_directory();
}

Result<void> ArchiveDir::sync_directory() {
  if (::fsync(dir_fd_.get()) != 0) return errno_error("fsync failed on the directory", path_);
  return {};
}

}  // namespace cdc::archive
