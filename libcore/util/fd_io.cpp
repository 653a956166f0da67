#include "util/fd_io.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include <unistd.h>

#include "util/fault_plan.h"

namespace cdc {

namespace {
constexpr std::string_view kBrokenPipe = "broken pipe";

// CDC_FAULT_PLAN's tear: half of a write, then the crash that cuts it there.
[[noreturn]] void tear(int fd, std::string_view bytes) {
  (void)!::write(fd, bytes.data(), bytes.size() / 2);
  ::raise(SIGKILL);
  std::abort();
}
}

Result<void> write_all(int fd, std::string_view bytes, std::string_view what) {
  if (fault::at("write") == fault::Action::tear) tear(fd, bytes);
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) return fail(Errc::io, std::string(what) + ": " + std::string(kBrokenPipe));
      return fail(Errc::io, std::string(what) + ": write failed: " + std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
  return {};
}

Result<void> write_all(int fd, std::span<iovec> vectors, std::string_view what) {
  if (fault::at("write") == fault::Action::tear && !vectors.empty())
    tear(fd, std::string_view(static_cast<const char*>(vectors.front().iov_base), vectors.front().iov_len));
  // Linux's IOV_MAX; <climits> defines it only with _GNU_SOURCE or XOPEN.
  constexpr std::size_t kMaxVectors = 1024;
  while (!vectors.empty()) {
    if (vectors.front().iov_len == 0) {
      vectors = vectors.subspan(1);
      continue;
    }
    const ssize_t written =
        ::writev(fd, vectors.data(), static_cast<int>(std::min(vectors.size(), kMaxVectors)));
    if (written < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) return fail(Errc::io, std::string(what) + ": " + std::string(kBrokenPipe));
      return fail(Errc::io, std::string(what) + ": write failed: " + std::strerror(errno));
    }
    // Past the vectors written whole, into the one written in part.
    auto left = static_cast<std::size_t>(written);
    while (!vectors.empty() && left >= vectors.front().iov_len) {
      left -= vectors.front().iov_len;
      vectors = vectors.subspan(1);
    }
    if (left > 0) {
      vectors.front().iov_base = static_cast<char*>(vectors.front().iov_base) + left;
      vectors.front().iov_len -= left;
    }
  }
  return {};
}

Result<std::size_t> read_some(int fd, char* buffer, std::size_t size, std::string_view what) {
  for (;;) {
    const ssize_t got = ::read(fd, buffer, size);
    if (got >= 0) return static_cast<std::size_t>(got);
    if (errno == EINTR) continue;
    return fail(Errc::io, std::string(what) + ": read failed: " + std::strerror(errno));
  }
}

Result<std::size_t> read_some_at(int fd, char* buffer, std::size_t size, std::uint64_t offset, std::string_view what) {
  for (;;) {
    const ssize_t got = ::pread(fd, buffer, size, static_cast<off_t>(offset));
    if (got >= 0) return static_cast<std::size_t>(got);
    if (errno == EINTR) continue;
    return fail(Errc::io, std::string(what) + ": read failed: " + std::strerror(errno));
  }
}

Unexpected errno_error(std::string_view what, std::string_view path) {
  const char* const reason = std::strerror(errno);
  std::string message;
  message.append(what).append(" ").append(path).append(": ").append(reason);
  return fail(Errc::io, std::move(message));
}

bool is_broken_pipe(const Error& error) noexcept {
  return error.code == Errc::io && error.message.ends_with(kBrokenPipe);
}

}  // namespace cdc
