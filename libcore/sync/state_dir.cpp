#include "sync/state_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

#include "records/chunk.h"
#include "records/kinds.h"
#include "util/fault_plan.h"
#include "util/fd_io.h"

namespace cdc::sync {

namespace {

bool is_regular_file(const std::string& path) {
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0 && S_ISREG(status.st_mode);
}

// fsync of a file or directory by path; errors are the caller's to report.
bool fsync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  return synced;
}

}  // namespace

Result<void> each_plan_chunk(std::string_view plan_text,
                             const std::function<void(std::string_view line, const records::Chunk& chunk)>& visit) {
  simdjson::dom::parser parser;
  std::size_t number = 0;
  while (!plan_text.empty()) {
    const std::size_t end = plan_text.find('\n');
    const std::string_view line = plan_text.substr(0, end);
    plan_text.remove_prefix(end == std::string_view::npos ? plan_text.size() : end + 1);
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const simdjson::padded_string padded(line);
    simdjson::dom::object record;
    if (parser.parse(padded).get_object().get(record) != simdjson::SUCCESS)
      return fail(Errc::corrupt_input, fmt::format("plan line {}: not a JSON object", number));
    auto chunk = records::parse_chunk(record);
    if (!chunk) return fail(chunk.error().with_context(fmt::format("plan line {}", number)));
    visit(line, *chunk);
  }
  return {};
}

std::string logical_absolute(std::string_view path) {
  std::filesystem::path absolute(path);
  if (absolute.is_relative()) {
    std::filesystem::path base;
    // $PWD keeps the symbolic links the user went through; getcwd() resolves them.
    const char* pwd = std::getenv("PWD");
    struct stat from_env {};
    struct stat here {};
    if (pwd != nullptr && pwd[0] == '/' && ::stat(pwd, &from_env) == 0 && ::stat(".", &here) == 0 &&
        from_env.st_dev == here.st_dev && from_env.st_ino == here.st_ino) {
      base = pwd;
    } else {
      std::error_code ignored;
      base = std::filesystem::current_path(ignored);
    }
    absolute = base / absolute;
  }
  std::string text = absolute.lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

Result<SyncState> SyncState::open(std::string_view path, std::chrono::milliseconds wait,
                                  const std::function<void()>& on_wait) {
  const std::string dir = logical_absolute(path);
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error || !std::filesystem::is_directory(dir, error))
    return fail(Errc::io, fmt::format("cannot create --dir {}", path));
  const std::string lock_path = dir + "/lock";
  // Not O_CLOEXEC: the tools inherit the lock, so a tool left running by a killed cdc-sync
  // still holds it.
  const int fd = ::open(lock_path.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0666);  // NOLINT(hicpp-signed-bitwise)
  if (fd < 0) return fail(Errc::io, fmt::format("cannot open {}", lock_path));
  const auto deadline = std::chrono::steady_clock::now() + wait;
  bool waited = false;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK || std::chrono::steady_clock::now() >= deadline) {
      ::close(fd);
      return fail(Errc::usage,
                  fmt::format("{} is in use by another cdc-sync (it holds {}{}); one --dir belongs to one run", dir,
                              lock_path, waited ? fmt::format(", still after {} s", std::chrono::duration<double>(wait).count()) : ""));
    }
    if (!waited && on_wait) on_wait();
    waited = true;
    std::this_thread::sleep_for(std::chrono::milliseconds{50});
  }
  return SyncState(dir, fd);
}

SyncState SyncState::at(std::string absolute_path) { return SyncState(std::move(absolute_path), -1); }

SyncState::SyncState(SyncState&& other) noexcept : dir_(std::move(other.dir_)), lock_fd_(other.lock_fd_) {
  other.lock_fd_ = -1;
}

SyncState::~SyncState() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

std::string SyncState::path(std::string_view name) const { return fmt::format("{}/{}", dir_, name); }

bool SyncState::has(std::string_view name) const { return is_regular_file(path(name)); }

DirFacts SyncState::facts() const {
  DirFacts facts;
  facts.plan = has("plan.ndjson");
  facts.span = has("span");
  facts.deltas = has("deltas.ndjson");
  facts.deltas_state = has("deltas.state");
  facts.deltas_done = has("deltas.done");
  facts.snapshot = has("snapshot.ndjson");
  facts.snapshot_emitted = has("snapshot.emitted");
  facts.stream_state = has("stream.state");
  return facts;
}

Result<void> SyncState::write_whole(std::string_view name, std::string_view text) const {
  const std::string temporary = path(name) + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);  // NOLINT
  if (fd < 0) return errno_error("cannot write", temporary);
  auto written = write_all(fd, text, temporary);
  if (::close(fd) != 0 && written) return errno_error("cannot write", temporary);
  if (!written) return fail(written.error());
  return publish(temporary, name);
}

Result<void> SyncState::publish(const std::string& temporary, std::string_view name) const {
  const std::string target = path(name);
  if (!fsync_path(temporary)) return errno_error("fsync failed on", temporary);
  (void)fault::at("sync.save");
  if (::rename(temporary.c_str(), target.c_str()) != 0)
    return fail(Errc::io, fmt::format("cannot rename {} to {}: {}", temporary, target, std::strerror(errno)));
  const std::string parent = std::filesystem::path(target).parent_path().string();
  if (!fsync_path(parent)) return errno_error("fsync failed on", parent);
  (void)fault::at("sync.saved");
  return {};
}

std::optional<std::string> SyncState::read_text(std::string_view name) const {
  const std::string file = path(name);
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buffer[4096];
  for (;;) {
    auto got = read_some(fd, buffer, sizeof buffer, file);
    if (!got || *got == 0) break;
    text.append(buffer, *got);
  }
  ::close(fd);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

void SyncState::remove(std::initializer_list<std::string_view> names) const {
  for (const std::string_view name : names) ::unlink(path(name).c_str());
}

std::vector<std::string> SyncState::chunk_files() const {
  std::vector<std::string> files;
  const std::string chunks = path("chunks");
  DIR* listing = ::opendir(chunks.c_str());
  if (listing == nullptr) return files;
  while (const dirent* entry = ::readdir(listing)) {
    const std::string_view name = entry->d_name;
    if (name.size() > 7 && name.ends_with(".ndjson")) {
      std::string file = fmt::format("{}/{}", chunks, name);
      if (is_regular_file(file)) files.push_back(std::move(file));
    }
  }
  ::closedir(listing);
  std::sort(files.begin(), files.end());
  return files;
}

Result<std::uint64_t> count_lines(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_error("cannot read", path);
  std::uint64_t lines = 0;
  bool empty = true;
  char buffer[1 << 16];
  for (;;) {
    auto got = read_some(fd, buffer, sizeof buffer, path);
    if (!got) {
      ::close(fd);
      return fail(got.error());
    }
    if (*got == 0) break;
    for (std::size_t i = 0; i < *got; ++i) {
      if (buffer[i] == '\n') {
        if (!empty) ++lines;
        empty = true;
      } else {
        empty = false;
      }
    }
  }
  ::close(fd);
  if (!empty) ++lines;
  return lines;
}

Result<std::string> last_line(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_error("cannot read", path);
  struct stat status {};
  if (::fstat(fd, &status) != 0) {
    ::close(fd);
    return errno_error("cannot read", path);
  }
  auto end = static_cast<std::uint64_t>(status.st_size);
  std::string tail;
  // Reads backwards in blocks until a newline before the last line turns up.
  constexpr std::uint64_t kBlock = 1 << 16;
  std::uint64_t at = end;
  for (;;) {
    const std::uint64_t from = at > kBlock ? at - kBlock : 0;
    std::string block(at - from, '\0');
    const ssize_t got = ::pread(fd, block.data(), block.size(), static_cast<off_t>(from));
    if (got < 0 || static_cast<std::uint64_t>(got) != block.size()) {
      ::close(fd);
      return errno_error("cannot read", path);
    }
    tail.insert(0, block);
    at = from;
    std::string_view text = tail;
    if (text.ends_with('\n')) text.remove_suffix(1);
    if (text.rfind('\n') != std::string_view::npos || at == 0) break;
  }
  ::close(fd);
  std::string_view text = tail;
  if (text.ends_with('\n')) text.remove_suffix(1);
  const std::size_t newline = text.rfind('\n');
  if (newline != std::string_view::npos) text.remove_prefix(newline + 1);
  return std::string(text);
}

namespace {

// The last line of a file as a JSON object whose "op" is "high", handed to parse.
template <typename Parse>
auto parse_last_high(const std::string& path, Parse parse) -> decltype(parse(simdjson::dom::object{})) {
  auto line = last_line(path);
  if (!line) return fail(line.error());
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(*line);
  simdjson::dom::object record;
  std::string_view kind;
  if (parser.parse(padded).get_object().get(record) != simdjson::SUCCESS ||
      record[records::field::op].get_string().get(kind) != simdjson::SUCCESS || kind != records::op::high)
    return fail(Errc::corrupt_input, fmt::format("{} does not end with a high line", path));
  auto parsed = parse(record);
  if (!parsed) return fail(parsed.error().with_context(fmt::format("{}: its last line", path)));
  return parsed;
}

}  // namespace

Result<records::MergedHigh> read_merged_high(const std::string& path) {
  return parse_last_high(path, records::parse_merged_high);
}

std::uint64_t chunk_file_rows(const std::string& path) {
  auto high = parse_last_high(path, records::parse_high);
  return high ? high->rows : 0;
}

}  // namespace cdc::sync
