#include "stream/checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <utility>

#include "util/fd_io.h"

namespace cdc::stream {

namespace {

const std::string kNoState;

}  // namespace

Result<Checkpoint> Checkpoint::open(const std::optional<std::string>& state_path,
                                    const std::optional<std::string>& output_path,
                                    const std::function<void(std::string_view)>& notice) {
  Checkpoint checkpoint;
  if (state_path) {
    auto state = StateFile::open(*state_path);
    if (!state) return fail(std::move(state).error());
    checkpoint.state_.emplace(std::move(*state));
    auto loaded = checkpoint.state_->load();
    if (!loaded) return fail(std::move(loaded).error());
    checkpoint.loaded_ = std::move(*loaded);
  }
  if (!output_path) return checkpoint;

  const std::string& path = *output_path;
  checkpoint.output_name_ = path;
  checkpoint.output_fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (checkpoint.output_fd_ < 0) return errno_error("cannot open --output", path);
  struct stat info {};
  if (::fstat(checkpoint.output_fd_, &info) != 0) return errno_error("cannot stat", path);
  const auto size = static_cast<std::uint64_t>(info.st_size);
  const std::optional<records::StreamState>& saved = checkpoint.loaded_;
  std::uint64_t keep = 0;
  if (saved && saved->output_bytes) {
    keep = *saved->output_bytes;
    if (size < keep)
      return fail(Errc::corrupt_input,
                  fmt::format("{} has {} bytes, but {} says {} were written: the output was truncated or replaced "
                              "since; restore it, or start over with a new --state and --output",
                              path, size, checkpoint.state_path(), keep));
    if (size > keep)
      notice(fmt::format("{}: cutting {} bytes written after the last saved transaction (they are written again)",
                         path, size - keep));
    checkpoint.span_open_ = saved->span == "open";
    checkpoint.span_closed_ = saved->span == "closed";
  } else if (saved) {
    return fail(Errc::usage, fmt::format("{} was written by a run without --output: it does not know where {} ends; "
                                         "use a new --state with --output",
                                         checkpoint.state_path(), path));
  } else if (size > 0 && state_path) {
    // Every run with --state and --output saves a checkpoint before its first line, so a
    // file with lines and no state was not written by such a run.
    return fail(Errc::usage, fmt::format("{} is not empty, and {} does not exist yet to say where its lines end: "
                                         "remove the file or choose another --output",
                                         path, checkpoint.state_path()));
  }
  checkpoint.committed_bytes_ = keep;
  if (auto cut = checkpoint.cut_output_back(path); !cut) return fail(std::move(cut).error());
  return checkpoint;
}

Checkpoint::Checkpoint(Checkpoint&& other) noexcept
    : state_(std::move(other.state_)),
      loaded_(std::move(other.loaded_)),
      output_fd_(std::exchange(other.output_fd_, -1)),
      output_name_(std::move(other.output_name_)),
      committed_bytes_(other.committed_bytes_),
      span_open_(other.span_open_),
      span_closed_(other.span_closed_),
      position_(std::move(other.position_)),
      file_(std::move(other.file_)),
      gtid_(std::move(other.gtid_)),
      endpoint_(std::move(other.endpoint_)),
      server_id_(other.server_id_) {}

Checkpoint& Checkpoint::operator=(Checkpoint&& other) noexcept {
  if (this != &other) {
    if (output_fd_ >= 0) ::close(output_fd_);
    state_ = std::move(other.state_);
    loaded_ = std::move(other.loaded_);
    output_fd_ = std::exchange(other.output_fd_, -1);
    output_name_ = std::move(other.output_name_);
    committed_bytes_ = other.committed_bytes_;
    span_open_ = other.span_open_;
    span_closed_ = other.span_closed_;
    position_ = std::move(other.position_);
    file_ = std::move(other.file_);
    gtid_ = std::move(other.gtid_);
    endpoint_ = std::move(other.endpoint_);
    server_id_ = other.server_id_;
  }
  return *this;
}

Checkpoint::~Checkpoint() {
  if (output_fd_ >= 0) ::close(output_fd_);
}

const std::string& Checkpoint::state_path() const { return state_ ? state_->path() : kNoState; }

int Checkpoint::output_fd() const noexcept { return output_fd_ >= 0 ? output_fd_ : STDOUT_FILENO; }

void Checkpoint::set_server(std::string endpoint, std::uint32_t server_id) {
  endpoint_ = std::move(endpoint);
  server_id_ = server_id;
}

void Checkpoint::start_at(gtid::Position position, gtid::FilePosition file, std::string gtid) {
  position_ = std::move(position);
  file_ = std::move(file);
  gtid_ = std::move(gtid);
}

Result<void> Checkpoint::commit(ChangeWriter& writer, gtid::Position position, gtid::FilePosition file,
                                std::string gtid) {
  return commit(writer, std::move(position), std::move(file), std::move(gtid), Span::unchanged);
}

Result<void> Checkpoint::commit(ChangeWriter& writer, gtid::Position position, gtid::FilePosition file,
                                std::string gtid, Span span) {
  if (auto flushed = writer.flush(); !flushed) return flushed;
  if (output_fd_ >= 0 && state_ && ::fdatasync(output_fd_) != 0) return errno_error("fsync failed on", output_name_);
  // A span stays open until span_end is committed; the output ends with a closed span only
  // as long as nothing was written after the span_end line.
  bool open = span_open_;
  bool closed = span_closed_ && writer.bytes_flushed() == committed_bytes_;
  if (span == Span::opened) open = true, closed = false;
  if (span == Span::closed) open = false, closed = true;
  if (state_) {
    records::StreamState state;
    state.position = position.to_string();
    state.file = file.file;
    state.offset = file.offset;
    state.gtid = gtid;
    if (output_fd_ >= 0) {
      state.output_bytes = writer.bytes_flushed();
      if (open) state.span = "open";
      if (closed) state.span = "closed";
    }
    state.server = endpoint_;
    if (server_id_ != 0) state.server_id = server_id_;
    if (auto saved = state_->save(std::move(state)); !saved) return saved;
  }
  // Only now, with the state on disk, does the resume point move.
  committed_bytes_ = writer.bytes_flushed();
  span_open_ = open;
  span_closed_ = closed;
  position_ = std::move(position);
  file_ = std::move(file);
  gtid_ = std::move(gtid);
  return {};
}

Result<void> Checkpoint::roll_back(ChangeWriter& writer) {
  writer.discard();
  if (output_fd_ < 0) return {};
  if (auto cut = cut_output_back(output_name_); !cut) return cut;
  writer.set_bytes_flushed(committed_bytes_);
  return {};
}

Result<void> Checkpoint::close(ChangeWriter& writer) {
  if (auto flushed = writer.flush(); !flushed) return flushed;
  if (output_fd_ >= 0 && ::fsync(output_fd_) != 0) return errno_error("fsync failed on", output_name_);
  return {};
}

Result<void> Checkpoint::cut_output_back(const std::string& path) {
  if (::ftruncate(output_fd_, static_cast<off_t>(committed_bytes_)) != 0)
    return errno_error("cannot cut back", path);
  if (::lseek(output_fd_, static_cast<off_t>(committed_bytes_), SEEK_SET) < 0) return errno_error("cannot seek in", path);
  return {};
}

}  // namespace cdc::stream
