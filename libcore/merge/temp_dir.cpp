#include "merge/temp_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "util/fd_io.h"

namespace cdc::merge {

TempDir::~TempDir() {
  for (File& file : open_) {
    if (file.fd >= 0) ::close(file.fd);
    ::unlink(file.path.c_str());
  }
  if (!path_.empty()) ::rmdir(path_.c_str());
}

Result<TempDir::File> TempDir::create(std::string_view stem) {
  const std::lock_guard lock(mutex_);
  if (path_.empty()) {
    std::string pattern = parent_ + "/cdc-merge.XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
      return fail(Errc::io, fmt::format("cannot create a directory in --spill-dir {}: {}", parent_,
                                        std::strerror(errno)));
    path_ = std::move(pattern);
  }
  File file;
  file.path = fmt::format("{}/{}.{}", path_, stem, counter_++);
  file.fd = ::open(file.path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (file.fd < 0) return fail(Errc::io, fmt::format("cannot create {}: {}", file.path, std::strerror(errno)));
  open_.push_back(file);
  return file;
}

void TempDir::close(File& file) {
  const std::lock_guard lock(mutex_);
  for (File& open : open_) {
    if (open.path != file.path) continue;
    if (open.fd >= 0) ::close(open.fd);
    open.fd = -1;
    break;
  }
  file.fd = -1;
}

void TempDir::remove(File& file) {
  const std::lock_guard lock(mutex_);
  for (auto it = open_.begin(); it != open_.end(); ++it) {
    if (it->path != file.path) continue;
    if (it->fd >= 0) ::close(it->fd);
    ::unlink(it->path.c_str());
    open_.erase(it);
    break;
  }
  file.fd = -1;
}

Result<void> copy_fd(int from, const TempDir::File& to, std::string_view what) {
  constexpr std::size_t kBlock = std::size_t{1} << 20;
  std::unique_ptr<char[]> buffer(new char[kBlock]);
  for (;;) {
    auto got = read_some(from, buffer.get(), kBlock, what);
    if (!got) return fail(got.error());
    if (*got == 0) return {};
    if (auto wrote = write_all(to.fd, std::string_view(buffer.get(), *got), to.path); !wrote) return wrote;
  }
}

}  // namespace cdc::merge
