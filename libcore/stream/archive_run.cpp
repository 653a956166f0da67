#include "stream/archive_run.h"

#include <fmt/format.h>

#include "archive/archive_dir.h"
#include "replication/binlog_client.h"
#include "stream/start_position.h"
#include "stream/stop_signal.h"
#include "util/retry.h"

namespace cdc::stream {

namespace {

using gtid::FilePosition;
using gtid::Position;

// One archiving run: connects, dumps by FILE:OFFSET from the archive's end, hands every event
// to the ArchiveDir, and reconnects after a lost connection from wherever the archive then
// ends. The archive is its own resume point: there is no state file.
class ArchiveRun {
 public:
  ArchiveRun(const ArchiveOptions& options, const LiveReporter& reporter, archive::ArchiveDir archive)
      : options_(options), reporter_(reporter), archive_(std::move(archive)), retry_(options.retry_seconds) {}

  Result<void> run() {
    StopSignals signals;
    for (;;) {
      auto streamed = stream_once();
      StopSignals::set_socket(-1);
      if (streamed) return archive_.close();
      const Error error = std::move(streamed).error();
      // What arrived whole is kept, whatever comes next.
      if (auto synced = archive_.sync(); !synced) return fail(std::move(synced).error());
      // A server that cannot be reached at the start is an error at once, as for the stream.
      if (error.code != Errc::unavailable || !connected_before_) return fail(error);
      if (StopSignals::requested()) return archive_.close();
      const auto backoff = retry_.after_failure();
      if (!backoff)
        return fail(error.with_context(
            fmt::format("gave up reconnecting after {} s (--retry-for)", retry_.retry_for_seconds())));
      reporter_.notice(fmt::format("{}; reconnecting in {:.1f} s, resuming the archive at {}", error.message,
                                   std::chrono::duration<double>(*backoff).count(), end_text()));
      if (!StopSignals::sleep_unless_stopped(*backoff)) return archive_.close();
    }
  }

 private:
  Result<void> stream_once() {
    if (!client_) {
      mysql::ConnectionOptions connection = options_.connection;
      connection.read_timeout_seconds = options_.heartbeat_seconds * 3 + 5;
      auto client = replication::BinlogClient::open(connection);
      if (!client) return fail(std::move(client).error());
      client_.emplace(std::move(*client));
      if (connected_before_) reporter_.notice(fmt::format("reconnected to {}", client_->connection().endpoint()));
    }
    if (!connected_before_) {
      if (auto checked = first_connection(); !checked) return checked;
      connected_before_ = true;
    }
    auto start = dump_start();
    if (!start) {
      client_.reset();
      return fail(std::move(start).error());
    }
    Position position;
    position.kind = Position::Kind::file;
    position.file = *start;
    archive_.begin_dump(false, client_->server().checksums ? binlog::ChecksumAlgorithm::crc32
                                                           : binlog::ChecksumAlgorithm::off);
    if (auto started = client_->start_dump(position, server_id_, std::chrono::seconds(options_.heartbeat_seconds),
                                           replication::DumpEnd::wait, true);
        !started)
      return dump_failed(started.error(), *start);
    // Every event boundary is a place to stop: a signal wakes the blocked read at once.
    StopSignals::set_socket(client_->socket());
    StopSignals::set_waiting_between_transactions(true);
    for (;;) {
      if (StopSignals::requested()) return {};
      auto event = client_->next_event();
      if (!event) {
        if (StopSignals::requested()) return {};
        return dump_failed(event.error(), *start);
      }
      retry_.succeeded();
      if (auto appended = archive_.append(*event); !appended) return appended;
    }
  }

  // The checks of the first connection: the archive belongs to this server, the replica id is
  // free, and an empty archive knows where to start.
  Result<void> first_connection() {
    const std::uint32_t server_id = client_->server().server_id;
    if (archive_.server_id() != 0 && server_id != 0 && archive_.server_id() != server_id)
      return fail(Errc::usage, fmt::format("{} holds the binlog of server id {}, and {} is server id {}: one archive "
                                           "directory belongs to one server; give another directory",
                                           archive_.path(), archive_.server_id(), client_->connection().endpoint(),
                                           server_id));
    server_id_ = options_.server_id.value_or(replication::default_server_id());
    if (auto unique = client_->check_server_id(server_id_); !unique) return unique;
    const auto end = archive_.end();
    if (end) {
      if (options_.from)
        reporter_.notice(fmt::format("resuming the archive in {} at {}:{}; --from {} is ignored", archive_.path(),
                                     end->file, end->size, *options_.from));
      else
        reporter_.notice(fmt::format("resuming the archive in {} at {}:{}", archive_.path(), end->file, end->size));
      return {};
    }
    if (!options_.from)
      return fail(Errc::usage, fmt::format("{} holds no binlog yet: give --from (earliest, now or a binlog file name) "
                                           "for the first run",
                                           archive_.path()));
    auto first = first_file(*options_.from);
    if (!first) return fail(std::move(first).error());
    first_file_ = std::move(*first);
    reporter_.notice(fmt::format("archiving the binlog of {} into {} from {}:4", client_->connection().endpoint(),
                                 archive_.path(), first_file_));
    return {};
  }

  // --from for an empty archive: a file whose start the server still has.
  Result<std::string> first_file(const std::string& from) {
    if (from == "earliest") return client_->oldest_binlog();
    if (from == "now") {
      auto end = client_->server_end();
      if (!end) return fail(std::move(end).error());
      return std::move(end->file.file);
    }
    std::string name = from;
    if (const std::size_t colon = from.rfind(':'); colon != std::string::npos) {
      name = from.substr(0, colon);
      if (from.substr(colon + 1) != "4")
        return fail(Errc::usage, fmt::format("--from {}: an archive starts at the beginning of a binlog file; give {} "
                                             "or {}:4",
                                             from, name, name));
    }
    if (archive::next_binlog_name(name).empty())
      return fail(Errc::usage, fmt::format("--from {}: with --archive give earliest, now or a binlog file name "
                                           "(binlog.000042 or binlog.000042:4)",
                                           from));
    if (auto there = check_file_position(*client_, FilePosition{name, 4}); !there) return fail(std::move(there).error());
    return name;
  }

  // Where this connection's dump starts: the archive's end. After a complete file that is
  // the file's end (the server goes on to the next), or the next file's start when the
  // server has purged the complete one.
  Result<FilePosition> dump_start() {
    const auto end = archive_.end();
    if (!end) return FilePosition{first_file_, 4};
    auto files = client_->binlog_files();
    if (!files) return fail(std::move(files).error());
    const std::string endpoint = client_->connection().endpoint();
    for (const auto& file : *files) {
      if (file.name != end->file) continue;
      if (file.size < end->size)
        return fail(Errc::corrupt_input,
                    fmt::format("{} has {} bytes of {}, and {}'s {} has {}: the server's binlog was reset or cut "
                                "short since; archive it into another directory",
                                archive_.path(), end->size, end->file, endpoint, end->file, file.size));
      return FilePosition{end->file, end->size};
    }
    const std::string next = archive::next_binlog_name(end->file);
    if (end->complete)
      for (const auto& file : *files)
        if (file.name == next) return FilePosition{next, 4};
    return fail(purged_binlog(fmt::format("{}:{} (where the archive in {} ends)", end->file, end->size,
                                          archive_.path()),
                              files->empty() ? std::string("none") : files->front().name));
  }

  Unexpected dump_failed(const Error& error, const FilePosition& start) {
    Error failure = dump_error(*client_, error, options_.connection, fmt::format("{}:{}", start.file, start.offset),
                               server_id_, "dump");
    client_.reset();
    return fail(std::move(failure));
  }

  std::string end_text() const {
    const auto end = archive_.end();
    return end ? fmt::format("{}:{}", end->file, end->size) : fmt::format("{}:4", first_file_);
  }

  const ArchiveOptions& options_;
  const LiveReporter& reporter_;
  archive::ArchiveDir archive_;
  RetrySchedule retry_;
  std::optional<replication::BinlogClient> client_;
  bool connected_before_ = false;
  std::uint32_t server_id_ = 0;
  std::string first_file_;  // an empty archive's first file (--from)
};

}  // namespace

Result<void> run_archive(const ArchiveOptions& options, const LiveReporter& reporter) {
  auto archive = archive::ArchiveDir::open(options.dir, options.keep, reporter.notice);
  if (!archive) return fail(std::move(archive).error());
  StopSignals::reset();
  ArchiveRun run(options, reporter, std::move(*archive));
  return run.run();
}

}  // namespace cdc::stream
