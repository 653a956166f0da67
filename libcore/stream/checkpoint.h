#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "gtid/position.h"
#include "stream/change_writer.h"
#include "stream/state_file.h"
#include "util/result.h"

namespace cdc::stream {

// What a live stream has made durable, in one place: the output's committed length, the
// state file and the position a new connection resumes from only ever move together. A lost
// connection cuts the output back to the committed length and resumes from the committed
// position, so nothing between the two is lost or written twice (cdc-stream(1), FAULTS).
//
// The one writer of the state is commit(), and the live run gives it only the position of a
// transaction boundary read by a pipeline that was seeded from the committed position after
// the last roll_back() (LiveRun drops its pipeline with every roll back): so the position saved
// is always that of the last transaction wholly in the bytes saved with it, or of a later one of
// tables not captured. open() checks a loaded state against its output (agree_with_output).
// tests/integration/crash_points.py fails the run at every step of this (CDC_FAULT_PLAN).
class Checkpoint {
 public:
  // Loads --state (when given) and opens --output (when given), cut back to what the state
  // covers. Without --output the lines go to stdout, which cannot be cut back.
  [[nodiscard]] static Result<Checkpoint> open(const std::optional<std::string>& state_path,
                                               const std::optional<std::string>& output_path,
                                               const std::function<void(std::string_view)>& notice);
  Checkpoint(Checkpoint&&) noexcept;
  Checkpoint& operator=(Checkpoint&&) noexcept;
  Checkpoint(const Checkpoint&) = delete;
  Checkpoint& operator=(const Checkpoint&) = delete;
  ~Checkpoint();

  // The state as the file held it at open; nullopt on a first run or without --state.
  [[nodiscard]] const std::optional<records::StreamState>& loaded() const noexcept { return loaded_; }
  [[nodiscard]] bool has_state() const noexcept { return state_.has_value(); }
  [[nodiscard]] const std::string& state_path() const;
  // Where lines go: the --output file, or stdout.
  [[nodiscard]] int output_fd() const noexcept;
  [[nodiscard]] const std::string& output_name() const noexcept { return output_name_; }
  [[nodiscard]] bool has_output_file() const noexcept { return output_fd_ >= 0; }
  // Bytes of --output that a committed checkpoint covers.
  [[nodiscard]] std::uint64_t committed_bytes() const noexcept { return committed_bytes_; }

  // Whether a bounded run's span (span_start written, span_end not yet) is open in --output.
  [[nodiscard]] bool span_open() const noexcept { return span_open_; }
  // Whether the committed output ends with a span_end line.
  [[nodiscard]] bool span_closed() const noexcept { return span_closed_; }

  // The server the positions belong to; saved with every checkpoint.
  void set_server(std::string endpoint, std::uint32_t server_id);

  // The last committed point: where a new connection starts.
  [[nodiscard]] const gtid::Position& position() const noexcept { return position_; }
  [[nodiscard]] const gtid::FilePosition& file_position() const noexcept { return file_; }
  [[nodiscard]] const std::string& gtid() const noexcept { return gtid_; }

  // Sets the committed point without saving (the start position of a run, before anything
  // was written).
  void start_at(gtid::Position position, gtid::FilePosition file, std::string gtid);

  // Everything the writer holds goes out (and to disk with --output); then the state is
  // saved atomically: the output, the state and the resume position now agree on `position`.
  [[nodiscard]] Result<void> commit(ChangeWriter& writer, gtid::Position position, gtid::FilePosition file,
                                    std::string gtid);
  // As commit, and records that the output's span opened (span_start) or closed (span_end).
  enum class Span { unchanged, opened, closed };
  [[nodiscard]] Result<void> commit(ChangeWriter& writer, gtid::Position position, gtid::FilePosition file,
                                    std::string gtid, Span span);

  // Drops what was written after the last commit: the writer's buffer and, with --output,
  // the file's bytes past the committed length. position() is where to resume.
  [[nodiscard]] Result<void> roll_back(ChangeWriter& writer);

  // Flushes and syncs the output at the end of a run (no state is saved).
  [[nodiscard]] Result<void> close(ChangeWriter& writer);

 private:
  Checkpoint() = default;
  Result<void> cut_output_back(const std::string& path);
  // The loaded state against the output it covers: a length that ends inside a line is
  // refused (Errc::corrupt_input); a position past the state's own last transaction (which no
  // save writes on a server with gtid_strict_mode=ON) is repaired to resume right after that
  // transaction where it is the output's last commit line, else kept; either with a notice.
  Result<void> agree_with_output(const std::function<void(std::string_view)>& notice);

  std::optional<StateFile> state_;
  std::optional<records::StreamState> loaded_;
  int output_fd_ = -1;
  bool output_readable_ = true;  // opened for reading too: agree_with_output can check it
  std::string output_name_ = "stdout";
  std::uint64_t committed_bytes_ = 0;
  bool span_open_ = false;
  bool span_closed_ = false;
  gtid::Position position_;
  gtid::FilePosition file_;
  std::string gtid_;
  std::string endpoint_;
  std::uint32_t server_id_ = 0;
};

}  // namespace cdc::stream
