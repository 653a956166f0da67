#pragma once

// cdc-stream --archive DIR: a byte-for-byte copy of a server's binlog files, made from the
// events of a binlog dump (man/cdc-stream.1, BINLOG ARCHIVE). One object owns the directory:
// the lock, the scan and cut-back at start, appending, completing a file at the server's
// ROTATE, and retention.
//
// Layout: DIR/NAME is a complete file under the server's own name, equal to the server's;
// DIR/.NAME.partial is the one file in progress (hidden, so DIR/* names the complete files
// only), renamed to NAME when the server rotates; DIR/.lock is flock'ed by the one run that
// writes.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "archive/retention.h"
#include "binlog/checksum.h"
#include "util/result.h"
#include "util/unique_fd.h"

namespace cdc::archive {

// What a directory holds, read without a lock (cdc-stream --archive-source reads it while
// another process writes it).
struct Listing {
  std::vector<CompleteFile> complete;  // binlog order, oldest first
  std::optional<std::string> in_progress;  // the server's name of the file in progress
};
[[nodiscard]] Result<Listing> list_directory(const std::string& path);

// A binlog file name as the server makes them: BASE.NNNNNN (log_bin's base name, a dot, and a
// counter).
[[nodiscard]] bool is_binlog_name(std::string_view name);
// Binlog order, as gtid::FilePosition has it: equal length compares as the numbers do, and a
// longer name is later (the counter grew a digit).
[[nodiscard]] bool binlog_name_before(std::string_view a, std::string_view b);

// ".binlog.000042.partial" for "binlog.000042".
[[nodiscard]] std::string in_progress_name(std::string_view file);
// The name the server gives the file after this one: binlog.000042 -> binlog.000043,
// binlog.999999 -> binlog.1000000 (sql/log.cc find_uniq_filename); "" for a name that is not
// BASE.NNNNNN.
[[nodiscard]] std::string next_binlog_name(std::string_view file);

// Where the archive ends: the newest file and its length.
struct ArchiveEnd {
  std::string file;
  std::uint64_t size = 0;
  bool complete = false;  // the server went on to a next file (ROTATE, STOP)
};

// The file the archive is writing (ArchiveDir's). At namespace scope, not nested: clang 14
// cannot default-construct a nested struct with member initializers for an std::optional
// member of the class that encloses it.
struct FileInProgress {
  std::string name;
  UniqueFd fd;
  std::uint64_t size = 0;     // bytes of the file, the buffered ones included
  std::uint64_t on_disk = 0;  // bytes written to the file
  std::uint32_t last_timestamp = 0;
};

class ArchiveDir {
 public:
  using Notify = std::function<void(std::string_view)>;
  using Clock = std::chrono::steady_clock;

  // Creates DIR (one level) when missing and locks it. The file in progress is cut back to its
  // last whole event whose offset and checksum agree (a kill -9 can leave half an event); one
  // that ends with a ROTATE or STOP is completed (a crash between the two steps). Then the
  // retention runs once. Errc::usage when another run holds the lock.
  [[nodiscard]] static Result<ArchiveDir> open(std::string path, Retention keep, Notify notice);

  ArchiveDir(ArchiveDir&&) noexcept = default;
  ArchiveDir& operator=(ArchiveDir&&) noexcept = default;
  ArchiveDir(const ArchiveDir&) = delete;
  ArchiveDir& operator=(const ArchiveDir&) = delete;
  ~ArchiveDir();

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] std::optional<ArchiveEnd> end() const;
  [[nodiscard]] bool empty() const noexcept { return !current_ && complete_.empty(); }
  // The server_id in the newest file's FORMAT_DESCRIPTION_EVENT (the server that wrote it);
  // 0 when the archive is empty.
  [[nodiscard]] std::uint32_t server_id() const noexcept { return server_id_; }
  [[nodiscard]] const std::vector<CompleteFile>& complete_files() const noexcept { return complete_; }

  // A new dump starts. by_gtid: the server skips what the GTID position holds, so the first
  // file it names is not sent whole and cannot begin a file of the archive. checksums: what the
  // replica asked for (@master_binlog_checksum), which the first events (a fake ROTATE) carry.
  void begin_dump(bool by_gtid, binlog::ChecksumAlgorithm checksums);

  // Every event of the dump, as the server sent it, header to checksum. Real events that
  // follow the archive's end are appended; those it has are skipped; artificial ones (the
  // fake ROTATE, a re-sent FORMAT_DESCRIPTION, heartbeats, MariaDB's GTID_LIST for a start by
  // GTID) are not written. A ROTATE completes the file. Errc::corrupt_input for a checksum
  // that does not match, and for an event that leaves a gap after the archive's end or
  // overlaps it; nothing is written past the archive's end then.
  [[nodiscard]] Result<void> append(std::span<const std::uint8_t> event);

  // Everything append took is written and fdatasync'ed (the stream calls it before it saves
  // its state, so the archive never ends before the state's position).
  [[nodiscard]] Result<void> sync();
  // sync(); the file in progress stays in progress and is taken up again by the next open().
  [[nodiscard]] Result<void> close();

 private:
  ArchiveDir(std::string path, UniqueFd dir_fd, UniqueFd lock_fd, Retention keep, Notify notice);
  Result<void> take_up(const Listing& listing);
  Result<void> begin_file(const std::string& name);
  Result<void> complete_file(bool closed_by_server);
  Result<void> on_fake_rotate(std::string_view file, std::uint64_t position);
  Result<void> write_event(std::span<const std::uint8_t> event);
  Result<void> write_format_description(std::span<const std::uint8_t> event);
  [[nodiscard]] bool sent_as_in_file(std::span<const std::uint8_t> event) const;
  Result<void> flush_buffer();
  Result<void> sync_when_due();
  Result<void> apply_retention();
  Result<void> sync_directory();
  [[nodiscard]] std::string file_path(std::string_view name) const;
  [[nodiscard]] Error gap_error(std::string_view file, std::uint64_t offset, std::uint64_t size,
                                std::string_view type) const;

  std::string path_;
  UniqueFd dir_fd_;
  UniqueFd lock_fd_;
  Retention keep_;
  Notify notice_;
  std::vector<CompleteFile> complete_;
  std::optional<FileInProgress> current_;
  std::uint32_t server_id_ = 0;

  // The dump in flight: the file the server is sending, and how its events are checked.
  std::string dump_file_;
  bool dump_by_gtid_ = false;
  bool dump_named_a_file_ = false;
  bool in_first_file_ = false;  // dump_file_ is the first file the dump named
  bool told_waiting_ = false;
  binlog::ChecksumAlgorithm checksum_ = binlog::ChecksumAlgorithm::off;

  // Events are copied here and written in large chunks; fdatasync at least once a second
  // while they arrive.
  std::vector<std::uint8_t> buffer_;
  std::size_t buffered_ = 0;
  bool unsynced_ = false;
  Clock::time_point last_sync_ = Clock::now();
};

}  // namespace cdc::archive
