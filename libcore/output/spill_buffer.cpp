#include "output/spill_buffer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "util/fd_io.h"

namespace cdc::output {

namespace {

constexpr std::size_t kReadChunk = std::size_t{1} << 20;

void append_length(std::size_t length, std::string& out) {
  const auto value = static_cast<std::uint32_t>(length);
  char bytes[4];
  std::memcpy(bytes, &value, sizeof bytes);
  out.append(bytes, sizeof bytes);
}

// An unlinked file under $TMPDIR (else /tmp): O_TMPFILE where the filesystem has it, else a
// mkstemp() name removed at once. Nothing is left behind when the process ends.
Result<int> open_unlinked_temp() {
  const char* env = std::getenv("TMPDIR");
  const std::string dir = env != nullptr && *env != '\0' ? env : "/tmp";
#ifdef O_TMPFILE
  const int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
#endif
  std::string path = dir + "/cdc-spill-XXXXXX";
  const int made = ::mkostemp(path.data(), O_CLOEXEC);
  if (made < 0) return errno_error("cannot create a temporary file to hold a large transaction in", dir);
  ::unlink(path.c_str());
  return made;
}

}  // namespace

SpillBuffer::~SpillBuffer() {
  if (fd_ >= 0) ::close(fd_);
}

Result<void> SpillBuffer::add(std::string_view head, std::string_view tail) {
  append_length(head.size(), memory_);
  append_length(tail.size(), memory_);
  memory_ += head;
  memory_ += tail;
  ++rows_;
  if (memory_.size() >= threshold_) return spill();
  return {};
}

Result<void> SpillBuffer::spill() {
  if (fd_ < 0) {
    auto fd = open_unlinked_temp();
    if (!fd) return fail(std::move(fd).error());
    fd_ = *fd;
  }
  if (auto written = write_all(fd_, memory_, "the temporary file of a large transaction"); !written) return written;
  file_bytes_ += memory_.size();
  memory_.clear();
  return {};
}

Result<void> SpillBuffer::rewind() {
  if (::lseek(fd_, 0, SEEK_SET) < 0) return errno_error("cannot read back", "the temporary file of a large transaction");
  read_.clear();
  file_read_ = 0;
  return {};
}

Result<bool> SpillBuffer::read_more() {
  if (file_read_ >= file_bytes_) return false;
  const std::uint64_t left = file_bytes_ - file_read_;
  const std::size_t want = left < kReadChunk ? static_cast<std::size_t>(left) : kReadChunk;
  const std::size_t kept = read_.size();
  read_.resize(kept + want);
  auto got = read_some(fd_, read_.data() + kept, want, "the temporary file of a large transaction");
  if (!got) return fail(std::move(got).error());
  if (*got == 0) return fail(Errc::io, "the temporary file of a large transaction ended early");
  read_.resize(kept + *got);
  file_read_ += *got;
  return true;
}

void SpillBuffer::clear() noexcept {
  memory_.clear();
  rows_ = 0;
  if (file_bytes_ > 0) {
    if (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) < 0) {
      // The file cannot shrink: drop it and start a new one at the next spill.
      ::close(fd_);
      fd_ = -1;
    }
    file_bytes_ = 0;
  }
}

}  // namespace cdc::output
