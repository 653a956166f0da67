#include "util/fd_io.h"

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include <unistd.h>

namespace cdc {

namespace {
constexpr std::string_view kBrokenPipe = "broken pipe";
}

Result<void> write_all(int fd, std::string_view bytes, std::string_view what) {
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

Result<std::size_t> read_some(int fd, char* buffer, std::size_t size, std::string_view what) {
  for (;;) {
    const ssize_t got = ::read(fd, buffer, size);
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
