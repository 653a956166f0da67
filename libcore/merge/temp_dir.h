#pragma once

// cdc-merge's scratch directory: spill runs, multi-pass intermediates and the copy of a
// standard-input operand. Created on first use under --spill-dir as cdc-merge.XXXXXX, and
// removed with everything in it when the TempDir goes away (on success and on error).

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "util/result.h"

namespace cdc::merge {

class TempDir {
 public:
  explicit TempDir(std::string parent) : parent_(std::move(parent)) {}
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  struct File {
    std::string path;
    int fd = -1;
  };
  // A new empty file, open for reading and writing; closed by close() or at the end.
  [[nodiscard]] Result<File> create(std::string_view stem);
  // Closes a file made by create() once it is written (file.fd is -1 after): a reader opens it
  // again by its path. A tight --memory-limit spills thousands of runs, more than a process may
  // keep open.
  void close(File& file);
  // Closes and unlinks a file made by create().
  void remove(File& file);

  [[nodiscard]] const std::string& parent() const noexcept { return parent_; }

 private:
  std::string parent_;
  std::string path_;  // empty until first use
  std::uint64_t counter_ = 0;
  std::vector<File> open_;
  std::mutex mutex_;  // the deltas' two parts spill runs at once
};

// Copies everything readable from fd into file (for a "-" operand that must be read twice).
[[nodiscard]] Result<void> copy_fd(int from, const TempDir::File& to, std::string_view what);

}  // namespace cdc::merge
