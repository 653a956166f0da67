#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "util/result.h"

namespace cdc::stream {

// Where a stream resumes, as cdc-stream --state keeps it: one small JSON object a person can
// read and a script can take apart with jq, e.g.
//   {"v":1,"position":"0-1-42","file":"binlog.000003","offset":1234,"gtid":"0-1-42",
//    "output_bytes":5678,"span":"open","server":"127.0.0.1:3306","server_id":1,
//    "saved_at":"2026-11-29T15:04:05Z"}
// `position` is what --from accepts; `output_bytes` is there only with --output, `span` only
// with --output and --until (a bounded run's span_start is in the output: "open"; its
// span_end too: "closed"). `server_id` is the server the position was read from: FILE:OFFSET
// means nothing on another server.
struct StreamState {
  std::string position;
  std::string file;
  std::uint64_t offset = 0;
  std::string gtid;
  std::optional<std::uint64_t> output_bytes;
  std::string span;  // "", "open" or "closed"
  std::string server;
  std::optional<std::uint32_t> server_id;
  std::string saved_at;
};

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
  [[nodiscard]] Result<std::optional<StreamState>> load() const;
  // Atomically: a temporary file beside it (mode 0600), fsync, rename, fsync of the
  // directory. A crash at any point leaves either the old or the new state.
  [[nodiscard]] Result<void> save(StreamState state);

  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  StateFile(std::string path, int lock_fd, int dir_fd) : path_(std::move(path)), lock_fd_(lock_fd), dir_fd_(dir_fd) {}
  std::string path_;
  int lock_fd_ = -1;
  int dir_fd_ = -1;
};

// The state as one JSON line, and back (exposed for tests).
[[nodiscard]] std::string format_state(const StreamState& state);
[[nodiscard]] Result<StreamState> parse_state(std::string_view text, std::string_view name);

}  // namespace cdc::stream
