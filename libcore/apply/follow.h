#pragma once

// --follow: a file read on as a writer appends to it (cdc-stream --output, cdc-sync --output),
// as tail -f does. A thread reads the file and passes its whole lines through a socket pair,
// whose other end an ndjson::Reader reads: that reader then waits for lines the way it waits on
// a pipe, and sees no torn last line while the writer is in the middle of one. When the file
// becomes shorter than what was read (cdc-stream cuts its --output back to the last saved
// transaction at a restart, then writes the rest again), a discard line goes through first: the
// transaction being read is dropped, and the applier skips the transactions that come again
// (applier.h).

#include <atomic>
#include <memory>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>

#include "util/result.h"
#include "util/unique_fd.h"

namespace cdc::apply {

class FileFollower {
 public:
  // Takes the open file; stop, when set, ends the lines (the reader sees the end of its input)
  // at the next poll, every poll_ms.
  [[nodiscard]] static Result<std::unique_ptr<FileFollower>> start(UniqueFd file, std::string name,
                                                                   const std::atomic<bool>& stop,
                                                                   unsigned poll_ms = 100);
  FileFollower(const FileFollower&) = delete;
  FileFollower& operator=(const FileFollower&) = delete;
  ~FileFollower();  // stops the thread (its writes fail once the reading end is closed)

  // What the reader reads.
  [[nodiscard]] int fd() const noexcept { return reading_.get(); }

 private:
  FileFollower() = default;
  void run(const std::atomic<bool>& stop, unsigned poll_ms);
  bool send_all(std::string_view bytes);
  // A discard line: the file was read to `from`, and goes on from `to` ("cut back", "written again").
  bool send_discard(std::uint64_t from, std::uint64_t to, std::string_view how);
  // Whether the file still holds `tail` just before `offset`.
  bool unchanged(std::uint64_t offset, std::string_view tail);

  static constexpr std::size_t kTailBytes = 4096;

  UniqueFd file_;
  std::string name_;
  UniqueFd reading_;
  UniqueFd writing_;
  std::atomic<bool> closing_{false};
  std::string check_;  // unchanged()'s bytes read again
  std::thread thread_;
};

}  // namespace cdc::apply
