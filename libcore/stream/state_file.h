#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "records/state.h"
#include "util/result.h"

namespace cdc::stream {

// The state file of one run. Holds a lock (FILE.lock, flock) for its lifetime, so that two
// runs cannot take turns overwriting one state; a second run fails at once.
class StateFile {
 public:
  [[nodiscard]] static Result<StateFile> open(std::string path);
  StateFile(StateFile&&) noexcept;
  StateFile& operator=(StateFile&&) noexcept;
  StateFile(const StateFile&) = delete;
  StateFile& operator=(const StateFile&) = delete;
  ~StateFile();

  // nullopt when the file does not exist yet (a first run). Malformed content is an error
  // naming the file; it is never silently replaced.
  [[nodiscard]] Result<std::optional<records::StreamState>> load() const;
  // Atomically: a temporary file beside it (mode 0600), fsync, rename, fsync of the
  // directory. A crash at any point leaves either the old or the new state.
  [[nodiscard]] Result<void> save(records::StreamState state);

  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  StateFile(std::string path, int lock_fd, int dir_fd) : path_(std::move(path)), lock_fd_(lock_fd), dir_fd_(dir_fd) {}
  std::string path_;
  int lock_fd_ = -1;
  int dir_fd_ = -1;
};

}  // namespace cdc::stream
