#include "apply/follow.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "ndjson/writer.h"
#include "records/stream_lines.h"

namespace cdc::apply {

Result<std::unique_ptr<FileFollower>> FileFollower::start(UniqueFd file, std::string name,
                                                          const std::atomic<bool>& stop, unsigned poll_ms) {
  int ends[2];
  // A socket pair rather than a pipe: send() with MSG_NOSIGNAL fails with EPIPE, without a
  // SIGPIPE, once the reader has gone.
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0)
    return fail(Errc::io, fmt::format("{}: --follow: socketpair failed: {}", name, std::strerror(errno)));
  std::unique_ptr<FileFollower> follower(new FileFollower());
  follower->file_ = std::move(file);
  follower->name_ = std::move(name);
  follower->reading_.reset(ends[0]);
  follower->writing_.reset(ends[1]);
  FileFollower* self = follower.get();
  follower->thread_ = std::thread([self, &stop, poll_ms] { self->run(stop, poll_ms); });
  return follower;
}

FileFollower::~FileFollower() {
  closing_ = true;
  ::shutdown(reading_.get(), SHUT_RDWR);  // a blocked send returns
  if (thread_.joinable()) thread_.join();
}

bool FileFollower::send_all(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t sent = ::send(writing_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(sent));
  }
  return true;
}

bool FileFollower::send_discard(std::uint64_t from, std::uint64_t to, std::string_view how) {
  const std::string reason = fmt::format("cdc-apply --follow: {} was {} at {} bytes (read to {})", name_, how, to, from);
  ndjson::Writer line;
  records::write_stream_discard(records::StreamDiscard{"", name_, to, reason, 0}, line);
  return send_all(line.buffered());
}

bool FileFollower::unchanged(std::uint64_t offset, std::string_view tail) {
  if (tail.empty()) return true;
  check_.resize(tail.size());
  std::size_t got = 0;
  while (got < check_.size()) {
    const ssize_t n = ::pread(file_.get(), check_.data() + got, check_.size() - got,
                              static_cast<off_t>(offset - tail.size() + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // shorter now: cut back (the size check says where)
    got += static_cast<std::size_t>(n);
  }
  return std::string_view(check_) == tail;
}

void FileFollower::run(const std::atomic<bool>& stop, unsigned poll_ms) {
  std::string carry;  // the bytes after the last newline: a line still being written
  std::string tail;   // the last bytes read, up to kTailBytes, ending at offset
  std::uint64_t offset = 0;
  char buffer[1 << 16];
  const auto remember = [&tail](std::string_view bytes) {
    if (bytes.size() >= kTailBytes) {
      tail.assign(bytes.substr(bytes.size() - kTailBytes));
    } else {
      tail.append(bytes);
      if (tail.size() > kTailBytes) tail.erase(0, tail.size() - kTailBytes);
    }
  };
  // From the start again: what the applier has is skipped by its position.
  const auto restart = [&]() {
    carry.clear();
    tail.clear();
    offset = 0;
    return ::lseek(file_.get(), 0, SEEK_SET) == 0;
  };
  while (!closing_) {
    const ssize_t got = ::read(file_.get(), buffer, sizeof buffer);
    if (got > 0) {
      // The bytes before these must still be the ones read: a file cut back and written again
      // past this offset between two reads (a restarted cdc-stream) would otherwise be read
      // on from the middle of a line of its new content.
      if (!unchanged(offset, tail)) {
        if (!send_discard(offset, 0, "written again") || !restart()) break;
        continue;
      }
      const std::string_view bytes(buffer, static_cast<std::size_t>(got));
      offset += bytes.size();
      remember(bytes);
      carry.append(bytes);
      const std::size_t end = carry.rfind('\n');
      if (end == std::string::npos) continue;
      if (!send_all(std::string_view(carry).substr(0, end + 1))) break;
      carry.erase(0, end + 1);
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) break;  // the reader then sees the end of its input
    if (stop) break;
    struct stat status {};
    if (::fstat(file_.get(), &status) == 0 && static_cast<std::uint64_t>(status.st_size) < offset) {
      // Cut back: what follows the new end comes again. The transaction in flight is void.
      const auto size = static_cast<std::uint64_t>(status.st_size);
      if (!send_discard(offset, size, "cut back")) break;
      carry.clear();
      offset = size;
      // The tail read before the cut is checked against the file's bytes before its new end:
      // kept up to there, it holds while the file grows again as it was.
      tail.clear();
      if (::lseek(file_.get(), static_cast<off_t>(offset), SEEK_SET) < 0) break;
      if (offset > 0) {
        const std::size_t keep = static_cast<std::size_t>(std::min<std::uint64_t>(offset, kTailBytes));
        tail.resize(keep);
        if (::pread(file_.get(), tail.data(), keep, static_cast<off_t>(offset - keep)) != static_cast<ssize_t>(keep)) {
          if (!restart()) break;
        }
      }
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
  }
  ::shutdown(writing_.get(), SHUT_WR);  // the end of the reader's input
}

}  // namespace cdc::apply
