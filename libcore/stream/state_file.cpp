#include "stream/state_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cerrno>
#include <ctime>

#include "util/fault_plan.h"
#include "util/fd_io.h"

namespace cdc::stream {

namespace {

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", parts);
}

}  // namespace

Result<StateFile> StateFile::open(std::string path) {
  const std::string lock_path = path + ".lock";
  const int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0) return errno_error("cannot create the lock file", lock_path);
  if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd);
    if (errno == EWOULDBLOCK)
      return fail(Errc::usage, fmt::format("{} is in use by another cdc-stream (it holds {}); one state file "
                                           "belongs to one run",
                                           path, lock_path));
    return errno_error("cannot lock", lock_path);
  }
  const std::string directory = directory_of(path);
  const int dir_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) {
    ::close(lock_fd);
    return errno_error("cannot open the directory of the state file", directory);
  }
  return StateFile(std::move(path), lock_fd, dir_fd);
}

StateFile::StateFile(StateFile&& other) noexcept
    : path_(std::move(other.path_)), lock_fd_(std::exchange(other.lock_fd_, -1)), dir_fd_(std::exchange(other.dir_fd_, -1)) {}

StateFile& StateFile::operator=(StateFile&& other) noexcept {
  if (this != &other) {
    if (lock_fd_ >= 0) ::close(lock_fd_);
    if (dir_fd_ >= 0) ::close(dir_fd_);
    path_ = std::move(other.path_);
    lock_fd_ = std::exchange(other.lock_fd_, -1);
    dir_fd_ = std::exchange(other.dir_fd_, -1);
  }
  return *this;
}

StateFile::~StateFile() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

Result<std::optional<records::StreamState>> StateFile::load() const {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<records::StreamState>{};
    return errno_error("cannot read the state file", path_);
  }
  std::string text;
  char buffer[4096];
  for (;;) {
    auto got = read_some(fd, buffer, sizeof buffer, path_);
    if (!got) {
      ::close(fd);
      return fail(std::move(got).error());
    }
    if (*got == 0) break;
    text.append(buffer, *got);
    if (text.size() > (1U << 20)) {
      ::close(fd);
      return fail(Errc::corrupt_input, fmt::format("{}: larger than 1 MiB: not a cdc-stream state file", path_));
    }
  }
  ::close(fd);
  auto state = records::parse_state(text, path_);
  if (!state) return fail(std::move(state).error());
  return std::optional<records::StreamState>(std::move(*state));
}

Result<void> StateFile::save(records::StreamState state) {
  state.saved_at = utc_now();
  const std::string text = records::format_state(state);
  const std::string temporary = path_ + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return errno_error("cannot write the state file", temporary);
  // O_CREAT keeps the mode of a file that was there; the state names no secrets, but 0600
  // is what the documentation promises.
  (void)::fchmod(fd, 0600);
  if (auto written = write_all(fd, text, temporary); !written) {
    ::close(fd);
    return fail(std::move(written).error());
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    return errno_error("fsync failed on", temporary);
  }
  if (::close(fd) != 0) return errno_error("closing failed:", temporary);
  (void)fault::at("state.save");
  if (::rename(temporary.c_str(), path_.c_str()) != 0) return errno_error("cannot rename the state file to", path_);
  if (::fsync(dir_fd_) != 0) return errno_error("fsync failed on the directory of", path_);
  (void)fault::at("state.saved");
  return {};
}

}  // namespace cdc::stream
