#pragma once

// cdc-sync's state directory (man cdc-sync, FILES): the files each step leaves, each written
// whole (a temporary file beside it, fsync, rename, fsync of the directory) or by a tool that
// keeps its own resume point. The format is that of the shell version of cdc-sync, so that a
// directory it wrote resumes here:
//   settings          family=, tables=, exclude=, chunk-size=, chunk-key=, where=, columns= lines
//   plan.ndjson       cdc-plan's chunk lines
//   plan.part.*       the plan dealt to the -j processes (remade on every snapshot run)
//   chunks/           cdc-snapshot --output-dir: DB.TABLE.N.ndjson per finished chunk
//   span              "FROM UNTIL\n"
//   deltas.ndjson, deltas.state, deltas.done ("UNTIL\n")
//   merge.err, deltas.check   cdc-merge's messages while the deltas are judged
//   snapshot.ndjson   the merged snapshot, ending with its high line
//   snapshot.emitted  "H*\n": the snapshot went out whole
//   stream.started    "-\n" or "FILE\n": the final stream was started, writing there
//   stream.state      cdc-stream's state file of the final stream
//   lock              flock(2)ed for the run, inherited by the tools

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "records/chunk.h"
#include "records/snapshot_lines.h"
#include "sync/resume.h"
#include "util/result.h"

namespace cdc::sync {

class SyncState {
 public:
  // Creates the directory (and its parents) when missing and takes its lock; Errc::usage when
  // another run holds it, Errc::io when it cannot be created or opened. path is made absolute
  // without resolving symbolic links (as `cd DIR && pwd` does), because the tools' messages
  // name the files by the paths given to them. A lock held by another process is waited for
  // up to `wait`, calling on_wait once first: the tools of a cdc-sync killed a moment ago hold
  // it until they have exited, which takes a while on a busy machine after a SIGKILL to the
  // process group (a restart by systemd or a cron loop).
  [[nodiscard]] static Result<SyncState> open(std::string_view path,
                                              std::chrono::milliseconds wait = std::chrono::milliseconds{0},
                                              const std::function<void()>& on_wait = {});
  // The directory without taking the lock (reading facts in tests, --version).
  [[nodiscard]] static SyncState at(std::string absolute_path);

  SyncState(SyncState&& other) noexcept;
  SyncState& operator=(SyncState&&) = delete;
  SyncState(const SyncState&) = delete;
  SyncState& operator=(const SyncState&) = delete;
  ~SyncState();

  [[nodiscard]] const std::string& dir() const noexcept { return dir_; }
  // DIR/name.
  [[nodiscard]] std::string path(std::string_view name) const;
  [[nodiscard]] bool has(std::string_view name) const;

  // Which steps are done, from the files that are there.
  [[nodiscard]] DirFacts facts() const;

  // Writes text to name whole: name.tmp, fsync, rename, fsync of the directory.
  [[nodiscard]] Result<void> write_whole(std::string_view name, std::string_view text) const;
  // A marker file: text and a newline, written whole.
  [[nodiscard]] Result<void> mark(std::string_view name, std::string_view text) const {
    return write_whole(name, std::string(text) + "\n");
  }
  // temporary (a full path, written by a tool) flushed and renamed over name, then the
  // directory flushed.
  [[nodiscard]] Result<void> publish(const std::string& temporary, std::string_view name) const;
  // The file's text without its trailing newlines (as the shell's $(<FILE) reads it); nullopt
  // when it is not there.
  [[nodiscard]] std::optional<std::string> read_text(std::string_view name) const;
  // Removes the files; missing ones are fine.
  void remove(std::initializer_list<std::string_view> names) const;

  // The finished chunk files, chunks/*.ndjson, in byte order of their names.
  [[nodiscard]] std::vector<std::string> chunk_files() const;

 private:
  SyncState(std::string dir, int lock_fd) : dir_(std::move(dir)), lock_fd_(lock_fd) {}
  std::string dir_;
  int lock_fd_ = -1;
};

// The lines of a file with something on them (grep -c .).
[[nodiscard]] Result<std::uint64_t> count_lines(const std::string& path);
// The last line of a file, without its newline ("" for an empty file).
[[nodiscard]] Result<std::string> last_line(const std::string& path);

// H*: the last line of a merged snapshot (cdc-merge's op "high", records::MergedHigh).
// Errc::corrupt_input naming the file when its last line is not one.
[[nodiscard]] Result<records::MergedHigh> read_merged_high(const std::string& path);
// The rows of a finished chunk file, from its last line (cdc-snapshot's op "high",
// records::High); 0 when that line cannot be read as one.
[[nodiscard]] std::uint64_t chunk_file_rows(const std::string& path);

// Each chunk line of a plan (the lines with something on them), handed to visit(line, chunk);
// Errc::corrupt_input naming the line's number for one that is not a chunk line.
[[nodiscard]] Result<void> each_plan_chunk(
    std::string_view plan_text, const std::function<void(std::string_view line, const records::Chunk& chunk)>& visit);

// Absolute without resolving symbolic links: relative to $PWD when it names the working
// directory, "." and ".." taken out lexically.
[[nodiscard]] std::string logical_absolute(std::string_view path);

}  // namespace cdc::sync
