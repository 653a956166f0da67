#include "snapshot/run_snapshot.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <functional>
#include <thread>

#include "mysql/sql_text.h"
#include "ndjson/reader.h"
#include "records/row.h"
#include "records/table_line.h"
#include "schema/table_description.h"
#include "schema/table_schema.h"
#include "snapshot/progress.h"
#include "snapshot/row_values.h"
#include "util/fd_io.h"
#include "util/fault_plan.h"
#include "util/retry.h"
#include "util/wall_clock.h"

namespace cdc::snapshot {

namespace {

// Lines with something on them, for the progress total; only for regular files.
std::optional<std::uint64_t> count_chunk_lines(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::uint64_t lines = 0;
  bool blank = true;
  char buffer[1 << 16];
  off_t at = 0;
  for (;;) {
    const ssize_t got = ::pread(fd, buffer, sizeof buffer, at);
    if (got <= 0) break;
    at += got;
    for (ssize_t i = 0; i < got; ++i) {
      if (buffer[i] == '\n') {
        if (!blank) ++lines;
        blank = true;
      } else if (std::isspace(static_cast<unsigned char>(buffer[i])) == 0) {
        blank = false;
      }
    }
  }
  if (!blank) ++lines;
  return lines;
}

}  // namespace

namespace {

// The chunk's DIR/NAME.partial, opened and locked (flock) for this process to write; nullopt
// when DIR/NAME is there, published by an earlier run or by another process meanwhile. Two
// processes given one chunk (a Kubernetes pod started again while the old one still runs)
// take turns: the second waits for the first's lock, then finds the chunk published, or, when
// the first died, the partial file to write again. The lock is the descriptor's: closing it
// (or dying) releases it.
Result<std::optional<int>> claim_chunk(int dir_fd, const std::string& dir, const std::string& name,
                                       const std::function<void(std::string_view)>& notice) {
  const std::string partial = name + ".partial";
  for (;;) {
    if (::faccessat(dir_fd, name.c_str(), F_OK, 0) == 0) return std::optional<int>{};
    const int fd = ::openat(dir_fd, partial.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return errno_error("cannot create", dir + "/" + partial);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK) {
        const auto failed = errno_error("cannot lock", dir + "/" + partial);
        ::close(fd);
        return failed;
      }
      notice(fmt::format("{}/{} is being written by another process; waiting for it", dir, partial));
      int locked = 0;
      while ((locked = ::flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
      }
      if (locked != 0) {
        const auto failed = errno_error("cannot lock", dir + "/" + partial);
        ::close(fd);
        return failed;
      }
    }
    // Still the file under the partial name? The process before may have renamed it (the
    // chunk is published) or a new one taken its place.
    struct stat held {};
    struct stat named {};
    if (::fstat(fd, &held) == 0 && ::fstatat(dir_fd, partial.c_str(), &named, 0) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino)
      return std::optional<int>{fd};
    ::close(fd);
  }
}

}  // namespace

Result<Options::Shard> parse_shard(std::string_view text) {
  const auto bad = [&] {
    return fail(Errc::usage, fmt::format("--shard '{}': give INDEX/COUNT, whole numbers with INDEX below COUNT (0/4 to "
                                         "3/4 for four processes)",
                                         text));
  };
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos) return bad();
  const auto number = [](std::string_view digits) -> std::optional<std::uint64_t> {
    if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string_view::npos)
      return std::nullopt;
    std::uint64_t value = 0;
    for (const char c : digits) value = value * 10 + static_cast<std::uint64_t>(c - '0');
    return value;
  };
  const auto index = number(text.substr(0, slash));
  const auto count = number(text.substr(slash + 1));
  if (!index || !count || *count == 0 || *index >= *count) return bad();
  return Options::Shard{*index, *count};
}

Result<Summary> run(const Options& options, int stdin_fd, int stdout_fd, int stderr_fd) {
  Summary summary;
  const auto warn = [stderr_fd](std::string_view message) {
    (void)write_all(stderr_fd, fmt::format("cdc-snapshot: warning: {}\n", message), "stderr");
  };
  if (options.scheduling == Options::Scheduling::batch) {
    // A reader that waits for every packet is woken by each of the server's send()s; a
    // normal task woken preempts the sender when they share a CPU (on loopback, the receive
    // work runs in the sender's send() too). On the bench's 2-CPU machine the server's
    // threads were preempted 12,000-16,000 times a run of two processes, 140 as batch tasks,
    // and used about a tenth less CPU. Set before any thread starts, so all inherit it.
    const sched_param param{};
    if (::sched_setscheduler(0, SCHED_BATCH, &param) != 0)
      warn(fmt::format("cannot run as a batch task (sched_setscheduler: {}); going on at normal scheduling "
                       "(--scheduling normal says so and skips the attempt)",
                       std::strerror(errno)));
  }
  // Connected at the first chunk, so that bad input is reported without a server.
  std::optional<mysql::Connection> connection;

  int dir_fd = -1;
  if (options.output_dir) {
    dir_fd = ::open(options.output_dir->c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) return errno_error("cannot open the output directory", *options.output_dir);
  }
  struct DirCloser {
    int fd;
    ~DirCloser() {
      if (fd >= 0) ::close(fd);
    }
  } dir_closer{dir_fd};

  std::vector<std::string> inputs = options.inputs;
  if (inputs.empty()) inputs.emplace_back("-");
  // Inputs opened up front, so a missing file is reported before any chunk is read.
  struct Input {
    std::string name;
    int fd;
  };
  std::vector<Input> opened;
  struct InputCloser {
    std::vector<Input>& inputs;
    ~InputCloser() {
      for (const Input& input : inputs)
        if (input.name != "stdin") ::close(input.fd);
    }
  } input_closer{opened};
  std::optional<std::uint64_t> total = std::uint64_t{0};
  for (const std::string& path : inputs) {
    Input input{path == "-" ? std::string("stdin") : path, stdin_fd};
    if (path != "-") {
      input.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (input.fd < 0) return errno_error("cannot open", path);
    }
    opened.push_back(input);
    const auto lines = count_chunk_lines(input.fd);
    total = total && lines ? std::optional<std::uint64_t>(*total + *lines) : std::nullopt;
  }
  // With --shard, this process's share: the numbers below total that are INDEX modulo COUNT.
  if (total && options.shard)
    total = *total > options.shard->index ? (*total - options.shard->index - 1) / options.shard->count + 1 : 0;
  std::uint64_t chunk_number = 0;  // chunk lines read so far, across the inputs (--shard)
  Progress progress(options.progress || ::isatty(stderr_fd) == 1, stderr_fd, total, options.metrics_path, warn);

  ndjson::Writer out;
  RetrySchedule retry(options.retry_for_seconds);
  bool session_prepared = false;  // the session settings are made on the current connection
  ChunkReader reader_of_chunks(options.connection, options.share_view);
  for (const Input& input : opened) {
    ndjson::Reader reader(input.fd, input.name);
    for (;;) {
      // No transaction (and no metadata lock, which would hold up an ALTER TABLE) is kept
      // while waiting for the next chunk line.
      if (connection && reader_of_chunks.view_open() && !reader.ready()) reader_of_chunks.end_view(*connection);
      auto next = reader.next();
      if (!next) {
        progress.finish();
        return fail(next.error());
      }
      if (!*next) break;
      auto chunk = records::parse_chunk(reader.record());
      if (chunk)
        if (auto named = check_table_name(*chunk); !named) chunk = fail(named.error());
      if (chunk)
        if (auto checked = check_bounds(*chunk); !checked) chunk = fail(checked.error());
      if (!chunk) {
        progress.finish();
        return fail(reader.error_at_line(chunk.error().message));
      }
      // Another process's share: every line is still parsed, so bad input is found by all.
      if (options.shard && chunk_number++ % options.shard->count != options.shard->index) continue;
      const auto context = [&](const Error& error) {
        return error.with_context(fmt::format("{}:{}: {}", input.name, reader.line_number(), chunk->describe()));
      };
      // The first connection is not retried: a wrong host or password fails at once. Its
      // session setup is, like any query on it: a connection lost there is a lost connection.
      if (!connection) {
        auto opened_connection = mysql::Connection::open(options.connection);
        if (!opened_connection) {
          progress.finish();
          return fail(opened_connection.error());
        }
        connection.emplace(std::move(*opened_connection));
        session_prepared = false;
      }
      std::string name;
      int partial_fd = -1;  // --output-dir: the chunk's .partial file, locked while this process writes it
      if (options.output_dir) {
        name = chunk_file_name(*chunk);
        auto claimed = claim_chunk(dir_fd, *options.output_dir, name, [&](std::string_view message) {
          reader_of_chunks.end_view(*connection);  // not held while waiting for another process
          (void)write_all(stderr_fd, fmt::format("cdc-snapshot: notice: {}\n", message), "stderr");
        });
        if (!claimed) {
          progress.finish();
          return fail(context(claimed.error()));
        }
        if (!*claimed) {
          ++summary.chunks_skipped;
          progress.chunk_skipped();
          continue;
        }
        partial_fd = **claimed;
      }
      struct PartialCloser {
        int fd;
        ~PartialCloser() {
          if (fd >= 0) ::close(fd);  // and so unlocked
        }
      } partial_closer{partial_fd};
      // One try at the chunk; a lost connection (Errc::unavailable) is tried again, on a new
      // connection and with fresh watermarks, after the partial output is dropped.
      bool chunk_lines_out = false;  // stdout: some of this try's lines are written already
      const auto read_once = [&]() -> Result<ChunkResult> {
        if (fault::at("snapshot.chunk") == fault::Action::drop)
          return fail(Errc::unavailable, "the connection was dropped by CDC_FAULT_PLAN before the chunk");
        if (!connection) {
          auto reopened = mysql::Connection::open(options.connection);
          if (!reopened) return fail(reopened.error());
          connection.emplace(std::move(*reopened));
          session_prepared = false;
        }
        if (!session_prepared) {
          if (auto prepared = prepare_session(*connection); !prepared) return fail(prepared.error());
          session_prepared = true;
        }
        out.clear();
        if (!options.output_dir) {
          const Flush to_stdout = [&](ndjson::Writer& writer, std::uint64_t rows) -> Result<void> {
            if (fault::at("snapshot.rows") == fault::Action::drop)
              return fail(Errc::unavailable, "the connection was dropped by CDC_FAULT_PLAN while rows came");
            progress.rows(rows);
            chunk_lines_out = true;
            return writer.flush_to(stdout_fd, "stdout");
          };
          auto done = reader_of_chunks.read(*connection, *chunk, out, to_stdout);
          if (done)
            if (auto flushed = out.flush_to(stdout_fd, "stdout"); !flushed) return fail(flushed.error());
          return done;
        }
        const std::string partial = name + ".partial";
        const std::string partial_path = *options.output_dir + "/" + partial;
        const int fd = partial_fd;
        if (::ftruncate(fd, 0) != 0 || ::lseek(fd, 0, SEEK_SET) != 0) return errno_error("cannot empty", partial_path);
        const Flush to_file = [&](ndjson::Writer& writer, std::uint64_t rows) -> Result<void> {
          if (fault::at("snapshot.rows") == fault::Action::drop)
            return fail(Errc::unavailable, "the connection was dropped by CDC_FAULT_PLAN while rows came");
          progress.rows(rows);
          return writer.flush_to(fd, partial_path);
        };
        auto done = reader_of_chunks.read(*connection, *chunk, out, to_file);
        Result<void> finished = done ? out.flush_to(fd, partial_path) : Result<void>{};
        if (done && finished && ::fsync(fd) != 0) finished = errno_error("fsync failed on", partial_path);
        // Renamed while still locked: a process waiting for the lock then finds it gone.
        if (done && finished && ::renameat(dir_fd, partial.c_str(), dir_fd, name.c_str()) != 0)
          finished = errno_error("cannot rename to", *options.output_dir + "/" + name);
        if (done && finished && ::fsync(dir_fd) != 0) finished = errno_error("fsync failed on", *options.output_dir);
        if (!finished) return fail(finished.error());
        return done;
      };
      Result<ChunkResult> done = read_once();
      while (!done && done.error().code == Errc::unavailable) {
        const Error error = done.error();
        connection.reset();
        reader_of_chunks.drop_view();
        const auto wait = retry.after_failure();
        if (!wait) {
          done = fail(error.with_context(
              fmt::format("gave up reconnecting after {} s (--retry-for)", retry.retry_for_seconds())));
          break;
        }
        std::string dropped;
        if (!options.output_dir && chunk_lines_out) {
          // The lines already out cannot be taken back: a discard line tells the reader
          // (cdc-merge) to drop them; the chunk follows again from a new low line.
          out.clear();
          records::write_snapshot_discard(records::SnapshotDiscard{records::chunk_ref(*chunk), error.message, wall_clock_ms()},
                                          out);
          if (auto flushed = out.flush_to(stdout_fd, "stdout"); !flushed) {
            progress.finish();
            return fail(flushed.error());
          }
          chunk_lines_out = false;
          dropped = ", after a discard line for what was written of it";
        }
        progress.finish();
        progress.reconnecting();
        (void)write_all(stderr_fd,
                        fmt::format("cdc-snapshot: notice: {}: {}; reconnecting in {:.1f} s, then reading the chunk "
                                    "again with new watermarks{}\n",
                                    chunk->describe(), error.message, std::chrono::duration<double>(*wait).count(),
                                    dropped),
                        "stderr");
        std::this_thread::sleep_for(*wait / fault::time_scale());
        done = read_once();
      }
      if (!done) {
        // On stdout, what was read of the chunk is written (without its high line, so it
        // reads as unfinished); then the error.
        if (!options.output_dir && done.error().code != Errc::io) (void)out.flush_to(stdout_fd, "stdout");
        progress.finish();
        return fail(context(done.error()));
      }
      retry.succeeded();
      ++summary.chunks_read;
      summary.rows += done->rows;
      progress.chunk_done(done->rows);
    }
  }
  if (connection) reader_of_chunks.end_view(*connection);
  progress.finish();
  return summary;
}

}  // namespace cdc::snapshot
