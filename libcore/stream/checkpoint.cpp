#include "stream/checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>

#include <utility>

#include "records/stream_lines.h"
#include "util/fault_plan.h"
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
  // Read and written: agree_with_output reads the lines the state covers. A file this user may
  // only write is written, unchecked.
  checkpoint.output_fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (checkpoint.output_fd_ < 0 && errno == EACCES) {
    checkpoint.output_fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    checkpoint.output_readable_ = false;
  }
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
  if (saved && checkpoint.output_readable_)
    if (auto agreed = checkpoint.agree_with_output(notice); !agreed) return fail(std::move(agreed).error());
  if (auto cut = checkpoint.cut_output_back(path); !cut) return fail(std::move(cut).error());
  return checkpoint;
}

namespace {

// A MariaDB state whose position has the domain of its last transaction further on than that
// transaction: the position names transactions that were read after the last one the state
// knows of, which no save writes (the signature of a position saved ahead of its output).
bool position_ahead_of_gtid(const records::StreamState& state) {
  if (state.gtid.empty()) return false;
  auto gtid = gtid::MariadbGtid::parse(state.gtid);
  auto position = gtid::Position::parse(state.position);
  if (!gtid || !position || position->kind != gtid::Position::Kind::mariadb_gtids) return false;
  const auto domain = position->mariadb_gtids.find(gtid->domain_id);
  return domain && domain->seq_no > gtid->seq_no;
}

}  // namespace

Result<void> Checkpoint::agree_with_output(const std::function<void(std::string_view)>& notice) {
  records::StreamState& saved = *loaded_;
  std::string tail;
  if (committed_bytes_ > 0) {
    // The last lines the state covers: its last commit line says what the output has. 1 MiB
    // holds it: only span and discard lines follow a commit line at a save.
    constexpr std::uint64_t kTail = 1U << 20;
    const std::uint64_t from = committed_bytes_ > kTail ? committed_bytes_ - kTail : 0;
    tail.assign(static_cast<std::size_t>(committed_bytes_ - from), '\0');
    for (std::size_t at = 0; at < tail.size();) {
      auto got = read_some_at(output_fd_, tail.data() + at, tail.size() - at, from + at, output_name_);
      if (!got) return fail(std::move(got).error());
      if (*got == 0)
        return fail(Errc::io, fmt::format("{}: shorter than {} bytes while read", output_name_, committed_bytes_));
      at += *got;
    }
    if (tail.back() != '\n')
      return fail(Errc::corrupt_input,
                  fmt::format("{} says {} bytes of {} are whole lines, but byte {} is inside a line: the output was "
                              "changed or the state belongs to another output; restore the pair, or start over with "
                              "a new --state and --output",
                              state_path(), committed_bytes_, output_name_, committed_bytes_));
    if (from > 0) tail.erase(0, tail.find('\n') + 1);  // the first line may be cut
  }
  // A position behind the output's last commit line is no disagreement: cdc-sync's catch-up
  // of added tables starts at their high watermark, behind lines another stream wrote.
  if (!position_ahead_of_gtid(saved)) return {};
  std::optional<records::CommitPoint> last_commit;
  std::string_view lines(tail);
  while (!lines.empty() && !last_commit) {
    lines.remove_suffix(1);  // the newline
    const std::size_t newline = lines.rfind('\n');
    last_commit = records::read_commit_point(newline == std::string_view::npos ? lines : lines.substr(newline + 1));
    lines = newline == std::string_view::npos ? std::string_view{} : lines.substr(0, newline + 1);
  }
  const std::string disagreement =
      fmt::format("its position {} is past its last transaction {}", saved.position, saved.gtid);
  // Only the output's own last transaction proves where the output ends for this state: resume
  // right after it. Without it the state is kept, with a warning: a server with
  // gtid_strict_mode=OFF can move a domain back, and a new binlog file's GTID list then leaves
  // a healthy state so too.
  if (!last_commit || last_commit->gtid != saved.gtid) {
    notice(fmt::format("{}: {}, which is what a position saved past its output looks like, and the last commit "
                       "line of {} is {}; resuming from the state all the same (a server with "
                       "gtid_strict_mode=OFF can write such a state); if transactions are missing after it, rerun "
                       "with a --state whose \"position\" is that commit line's",
                       state_path(), disagreement, output_name_,
                       last_commit ? fmt::format("of {} at {}", last_commit->gtid, last_commit->position)
                                   : std::string("not found (or the format writes none)")));
    return {};
  }
  notice(fmt::format("{}: {}; resuming after the last transaction {} has ({}, GTID {}) instead", state_path(),
                     disagreement, output_name_, last_commit->position, last_commit->gtid));
  saved.position = last_commit->position;
  saved.file = last_commit->file;
  saved.offset = last_commit->offset;
  return {};
}

Checkpoint::Checkpoint(Checkpoint&& other) noexcept
    : state_(std::move(other.state_)),
      loaded_(std::move(other.loaded_)),
      output_fd_(std::exchange(other.output_fd_, -1)),
      output_readable_(other.output_readable_),
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
    output_readable_ = other.output_readable_;
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
  (void)fault::at("stream.commit");
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
