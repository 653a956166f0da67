#include "apply/follow.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

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

void FileFollower::run(const std::atomic<bool>& stop, unsigned poll_ms) {
  std::string carry;  // the bytes after the last newline: a line still being written
  std::uint64_t offset = 0;
  char buffer[1 << 16];
  while (!closing_) {
    const ssize_t got = ::read(file_.get(), buffer, sizeof buffer);
    if (got > 0) {
      offset += static_cast<std::uint64_t>(got);
      carry.append(buffer, static_cast<std::size_t>(got));
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
      const std::string reason =
          fmt::format("cdc-apply --follow: {} was cut back from {} to {} bytes", name_, offset, status.st_size);
      ndjson::Writer line;
      records::write_stream_discard(
          records::StreamDiscard{"", name_, static_cast<std::uint64_t>(status.st_size), reason, 0}, line);
      carry.clear();
      offset = static_cast<std::uint64_t>(status.st_size);
      if (::lseek(file_.get(), static_cast<off_t>(offset), SEEK_SET) < 0 || !send_all(line.buffered())) break;
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
  }
  ::shutdown(writing_.get(), SHUT_WR);  // the end of the reader's input
}

}  // namespace cdc::apply
