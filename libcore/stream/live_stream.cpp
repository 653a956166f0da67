#include "stream/live_stream.h"

#include <fcntl.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>

#include "binlog/ddl_target.h"
#include "binlog/decoder.h"
#include "binlog/event_header.h"
#include "gtid/position.h"
#include "replication/binlog_client.h"
#include "schema/table_schema.h"
#include "stream/change_pipeline.h"
#include "stream/change_writer.h"
#include "stream/state_file.h"
#include "util/byte_reader.h"
#include "util/fd_io.h"

namespace cdc::stream {

namespace {

using Clock = std::chrono::steady_clock;
using gtid::Position;

// What the signal handler and the read loop share. A signal between transactions shuts the
// socket down, which wakes the blocked read; inside a transaction it only sets the flag and
// the loop stops at the commit.
std::atomic<bool> g_stop_requested{false};
std::atomic<bool> g_waiting_between_transactions{false};
std::atomic<int> g_socket{-1};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

extern "C" void on_stop_signal(int) {
  g_stop_requested.store(true);
  const int fd = g_socket.load();
  if (g_waiting_between_transactions.load() && fd >= 0) ::shutdown(fd, SHUT_RDWR);
}

class SignalScope {
 public:
  SignalScope() {
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;
  ~SignalScope() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    g_socket.store(-1);
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

Unexpected system_error(std::string_view what, const std::string& path) {
  return fail(Errc::io, fmt::format("{} {}: {}", what, path, std::strerror(errno)));
}

// The sorted addresses a host name resolves to, for --watch-dns.
std::vector<std::string> resolve(const std::string& host) {
  std::vector<std::string> addresses;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return addresses;
  for (addrinfo* entry = found; entry != nullptr; entry = entry->ai_next) {
    char text[NI_MAXHOST];
    if (::getnameinfo(entry->ai_addr, entry->ai_addrlen, text, sizeof text, nullptr, 0, NI_NUMERICHOST) == 0)
      addresses.emplace_back(text);
  }
  ::freeaddrinfo(found);
  std::sort(addresses.begin(), addresses.end());
  addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
  return addresses;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out.empty() ? "nothing" : out;
}

class LiveRun {
 public:
  LiveRun(const LiveOptions& options, const LiveReporter& reporter, TableFilter filter)
      : options_(options), reporter_(reporter), filter_(std::move(filter)), writer_(STDOUT_FILENO, "stdout") {}

  ~LiveRun() {
    if (output_fd_ >= 0) ::close(output_fd_);
  }
  LiveRun(const LiveRun&) = delete;
  LiveRun& operator=(const LiveRun&) = delete;

  Result<LiveOutcome> run() {
    if (auto prepared = prepare(); !prepared) return fail(std::move(prepared).error());
    if (primary_at_start_) {
      reporter_.warn(primary_message_);
      return LiveOutcome::primary_switched;
    }
    if (until_reached_at_start()) {
      reporter_.notice(fmt::format("nothing to do: the start position {} already includes --until {}",
                                   resume_.to_string(), until_->to_string()));
      // Saved even so: the next run (cron) must start here, not at its own --from now.
      if (auto saved = checkpoint_at(resume_, resume_file_); !saved) return fail(std::move(saved).error());
      return finish(LiveOutcome::finished);
    }
    SignalScope signals;
    unsigned failures_in_a_row = 0;
    Clock::time_point failing_since{};
    for (;;) {
      auto outcome = stream_once();
      if (outcome) return finish(*outcome);
      const Error& error = outcome.error();
      if (error.code != Errc::unavailable || g_stop_requested.load()) {
        if (g_stop_requested.load() && error.code == Errc::unavailable) return finish(LiveOutcome::finished);
        (void)writer_.flush();
        return fail(error);
      }
      // A lost connection: drop the transaction in flight and resume after the last whole one.
      if (auto rolled_back = roll_back_to_boundary(); !rolled_back) return fail(std::move(rolled_back).error());
      if (failures_in_a_row++ == 0) failing_since = Clock::now();
      const auto waited = Clock::now() - failing_since;
      if (options_.retry_seconds > 0 && waited > std::chrono::seconds(options_.retry_seconds))
        return fail(error.with_context(fmt::format("gave up reconnecting after {} s (--retry-for)",
                                                   options_.retry_seconds)));
      const auto backoff = std::chrono::milliseconds(std::min<std::int64_t>(
          30000, std::int64_t{250} << std::min<unsigned>(failures_in_a_row, 7)));
      reporter_.notice(fmt::format("{}; reconnecting in {:.1f} s, resuming from {}", error.message,
                                   std::chrono::duration<double>(backoff).count(), resume_.to_string()));
      if (!sleep_unless_stopped(backoff)) return finish(LiveOutcome::finished);
      if (connected_once_this_round_) failures_in_a_row = 0;
    }
  }

 private:
  // ---- start-up -------------------------------------------------------------------------

  Result<void> prepare() {
    // Malformed positions are usage errors before anything connects.
    for (const auto* text : {&options_.from, &options_.until})
      if (*text && **text != "now" && **text != "earliest")
        if (auto parsed = Position::parse(**text); !parsed) return fail(std::move(parsed).error());
    std::optional<StreamState> saved;
    if (options_.state_path) {
      auto state = StateFile::open(*options_.state_path);
      if (!state) return fail(std::move(state).error());
      state_.emplace(std::move(*state));
      auto loaded = state_->load();
      if (!loaded) return fail(std::move(loaded).error());
      saved = std::move(*loaded);
    }
    if (!saved && !options_.from)
      return fail(Errc::usage, options_.state_path
                                   ? fmt::format("{} does not exist yet: give --from (now, earliest, a GTID set or "
                                                 "position, or FILE:OFFSET) for the first run",
                                                 *options_.state_path)
                                   : "give --from (now, earliest, a GTID set or position, or FILE:OFFSET), or a "
                                     "--state file to resume from");
    if (auto opened = open_output(saved); !opened) return fail(std::move(opened).error());

    mysql::ConnectionOptions connection = options_.connection;
    connection.read_timeout_seconds = options_.heartbeat_seconds * 3 + 5;
    auto client = replication::BinlogClient::open(connection);
    if (!client) return fail(std::move(client).error());
    client_.emplace(std::move(*client));
    endpoint_ = client_->connection().endpoint();

    if (saved) {
      auto position = Position::parse(saved->position);
      if (!position)
        return fail(Errc::corrupt_input, fmt::format("{}: \"position\": {}", state_->path(), position.error().message));
      resume_ = std::move(*position);
      resume_file_ = gtid::FilePosition{saved->file, saved->offset};
      last_gtid_ = saved->gtid;
      if (options_.from)
        reporter_.notice(fmt::format("resuming from {} as {} says; --from {} is ignored", resume_.to_string(),
                                     state_->path(), *options_.from));
      else
        reporter_.notice(fmt::format("resuming from {} ({})", resume_.to_string(), state_->path()));
    } else if (options_.from) {
      auto position = resolve_position(*options_.from, true);
      if (!position) return fail(std::move(position).error());
      resume_ = std::move(*position);
    }
    if (resume_.kind == Position::Kind::file) {
      resume_file_ = resume_.file;
      if (auto there = check_file_position(resume_.file); !there) return fail(std::move(there).error());
    }
    if (options_.until) {
      auto position = resolve_position(*options_.until, false);
      if (!position) return fail(std::move(position).error());
      until_ = std::move(*position);
      if (until_->kind != Position::Kind::file && resume_.kind == Position::Kind::file && !client_->server().gtids)
        return fail(Errc::usage, fmt::format("--until {} is a GTID position, but the server writes no GTIDs: give "
                                             "--until as FILE:OFFSET",
                                             until_->to_string()));
    }
    server_id_ = options_.server_id.value_or(replication::default_server_id());
    if (auto unique = client_->check_server_id(server_id_); !unique) return fail(std::move(unique).error());
    if (options_.watch_dns) {
      dns_host_ = options_.connection.host.value_or("localhost");
      dns_addresses_ = resolve(dns_host_);
      if (dns_addresses_.empty())
        return fail(Errc::unavailable, fmt::format("--watch-dns: {} does not resolve", dns_host_));
    }
    if (options_.require_read_only) {
      auto read_only = server_is_read_only(client_->connection());
      if (!read_only) return fail(std::move(read_only).error());
      if (!*read_only) {
        primary_message_ = fmt::format("{} is not read-only (@@global.read_only is OFF): it looks like a primary, "
                                       "and --require-read-only wants a replica; no change was read",
                                       endpoint_);
        primary_at_start_ = true;
      }
    }
    if (client_->server().binlog_row_metadata != "FULL")
      reporter_.warn(fmt::format("{} has binlog_row_metadata={}: column names, ENUM/SET labels and keys are not in "
                                 "the binlog and come from the catalog as it is now, so events from before a later "
                                 "schema change may be labelled with the new schema; set binlog_row_metadata=FULL",
                                 endpoint_, client_->server().binlog_row_metadata.empty()
                                                ? "(not supported)"
                                                : client_->server().binlog_row_metadata));
    return {};
  }

  // A FILE:OFFSET must name a binlog the server has, at most at its current end: the dump
  // would otherwise wait forever for an offset the file never reaches.
  Result<void> check_file_position(const gtid::FilePosition& position) {
    auto files = client_->binlog_files();
    if (!files) return fail(std::move(files).error());
    if (files->empty()) return fail(Errc::config, fmt::format("{}: SHOW BINARY LOGS is empty", endpoint_));
    for (const auto& file : *files) {
      if (file.name != position.file) continue;
      if (position.offset > file.size)
        return fail(Errc::usage, fmt::format("{}:{} is beyond the end of {} ({} bytes on {})", position.file,
                                             position.offset, position.file, file.size, endpoint_));
      return {};
    }
    if (gtid::FilePosition{position.file, 0} < gtid::FilePosition{files->front().name, 0})
      return fail(purged(fmt::format("{}:{}", position.file, position.offset), files->front().name));
    return fail(Errc::usage, fmt::format("{} has no binlog named {} (it has {} to {}): give a name SHOW BINARY LOGS "
                                         "lists",
                                         endpoint_, position.file, files->front().name, files->back().name));
  }

  Result<Position> resolve_position(const std::string& text, bool for_start) {
    if (text == "now") {
      auto end = client_->server_end();
      if (!end) return fail(std::move(end).error());
      Position position;
      if (!end->gtids.empty()) {
        auto parsed = Position::parse(end->gtids);
        if (!parsed) return fail(std::move(parsed).error());
        return parsed;
      }
      position.kind = Position::Kind::file;
      position.file = end->file;
      return position;
    }
    if (text == "earliest") {
      if (!for_start) return fail(Errc::usage, "--until earliest means nothing: give now or a position");
      auto oldest = client_->oldest_binlog();
      if (!oldest) return fail(std::move(oldest).error());
      Position position;
      position.kind = Position::Kind::file;
      position.file = gtid::FilePosition{*oldest, 4};
      return position;
    }
    auto parsed = Position::parse(text);
    if (!parsed) return fail(std::move(parsed).error());
    const bool mariadb = client_->server().flavor == replication::Flavor::mariadb;
    if (parsed->kind == Position::Kind::mysql_gtids && mariadb)
      return fail(Errc::usage, fmt::format("{} is MariaDB, and '{}' is a MySQL GTID set: give a MariaDB GTID "
                                           "position (domain-server-seq) or FILE:OFFSET",
                                           endpoint_, text));
    if (parsed->kind == Position::Kind::mariadb_gtids && !mariadb)
      return fail(Errc::usage, fmt::format("{} is MySQL, and '{}' is a MariaDB GTID position: give a MySQL GTID set "
                                           "(uuid:1-5) or FILE:OFFSET",
                                           endpoint_, text));
    return parsed;
  }

  // --output: the file, cut back to what the saved state covers (exactly once after a crash).
  Result<void> open_output(const std::optional<StreamState>& saved) {
    if (!options_.output_path) return {};
    const std::string& path = *options_.output_path;
    output_fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (output_fd_ < 0) return system_error("cannot open --output", path);
    struct stat info {};
    if (::fstat(output_fd_, &info) != 0) return system_error("cannot stat", path);
    const auto size = static_cast<std::uint64_t>(info.st_size);
    std::uint64_t keep = 0;
    if (saved && saved->output_bytes) {
      keep = *saved->output_bytes;
      if (size < keep)
        return fail(Errc::corrupt_input,
                    fmt::format("{} has {} bytes, but {} says {} were written: the output was truncated or replaced "
                                "since; restore it, or start over with a new --state and --output",
                                path, size, state_->path(), keep));
      if (size > keep)
        reporter_.notice(fmt::format("{}: cutting {} bytes written after the last saved transaction (they are "
                                     "written again)",
                                     path, size - keep));
    } else if (saved) {
      return fail(Errc::usage, fmt::format("{} was written by a run without --output: it does not know where {} "
                                           "ends; use a new --state with --output",
                                           state_->path(), path));
    } else if (size > 0 && state_) {
      return fail(Errc::usage, fmt::format("{} is not empty, and {} does not exist yet to say where its lines end: "
                                           "remove the file or choose another --output",
                                           path, state_->path()));
    }
    if (::ftruncate(output_fd_, static_cast<off_t>(keep)) != 0) return system_error("cannot truncate", path);
    if (::lseek(output_fd_, static_cast<off_t>(keep), SEEK_SET) < 0) return system_error("cannot seek in", path);
    writer_ = ChangeWriter(output_fd_, path);
    writer_.set_bytes_flushed(keep);
    return {};
  }

  // ---- one connection ---------------------------------------------------------------------

  Result<LiveOutcome> stream_once() {
    connected_once_this_round_ = false;
    if (!client_) {
      mysql::ConnectionOptions connection = options_.connection;
      connection.read_timeout_seconds = options_.heartbeat_seconds * 3 + 5;
      auto client = replication::BinlogClient::open(connection);
      if (!client) return fail(std::move(client).error());
      client_.emplace(std::move(*client));
      reporter_.notice(fmt::format("reconnected to {}", endpoint_));
    }
    decoder_ = binlog::Decoder(endpoint_);
    if (client_->server().checksums) decoder_.expect_checksums(binlog::ChecksumAlgorithm::crc32);
    pipeline_.emplace(filter_, writer_, decoder_, reporter_.warn, options_.skip_unknown_events);
    install_hooks();

    // Where the dump starts. By GTID when the position is one; a FILE:OFFSET on a server
    // with GTIDs is read from the file's start (silently up to OFFSET) so that the GTID state
    // at OFFSET is known and later positions are GTID sets that survive a failover.
    Position dump_from = resume_;
    silent_until_.reset();
    if (resume_.kind == Position::Kind::file) {
      pipeline_->start_file(resume_.file.file);
      if (client_->server().gtids && resume_.file.offset > 4) {
        silent_until_ = resume_.file;
        dump_from.file.offset = 4;
        pipeline_->set_silent(true);
      }
    } else {
      pipeline_->tracker().seed(resume_);
    }
    auto started = client_->start_dump(dump_from, server_id_, std::chrono::seconds(options_.heartbeat_seconds));
    if (!started) return dump_failed(started.error());
    g_socket.store(client_->socket());
    last_boundary_ = resume_file_;

    for (;;) {
      if (!pipeline_->tracker().in_transaction()) {
        g_waiting_between_transactions.store(true);
        if (g_stop_requested.load()) {
          g_waiting_between_transactions.store(false);
          return LiveOutcome::finished;
        }
      }
      auto bytes = client_->next_event();
      g_waiting_between_transactions.store(false);
      if (!bytes) {
        if (g_stop_requested.load() && !pipeline_->tracker().in_transaction()) return LiveOutcome::finished;
        return dump_failed(bytes.error());
      }
      connected_once_this_round_ = true;
      auto outcome = handle_event(*bytes);
      if (!outcome) return fail(std::move(outcome).error());
      if (*outcome) return **outcome;
    }
  }

  Unexpected dump_failed(const Error& error) {
    const auto kind = client_->classify_failure(error);
    client_.reset();
    g_socket.store(-1);
    if (kind == replication::DumpFailure::purged) return fail(purged_error(error));
    if (kind == replication::DumpFailure::same_server_id)
      return fail(Errc::usage,
                  fmt::format("another replica registered with server id {}, and the server dropped this stream for "
                              "it ({}): give every run its own --server-id, or leave it out for a generated one",
                              server_id_, error.message));
    if (kind == replication::DumpFailure::lost || error.code == Errc::unavailable)
      return fail(Errc::unavailable, error.message);
    return fail(error);
  }

  Error purged_error(const Error& error) {
    std::string oldest = "(unknown: cannot list the binlogs)";
    if (auto client = replication::BinlogClient::open(options_.connection))
      if (auto name = client->oldest_binlog()) oldest = *name;
    return purged(resume_.to_string(), fmt::format("{}; the server said: {}", oldest, error.message));
  }

  // The one message for "that binlog is gone", whether SHOW BINARY LOGS or the dump said so.
  static Error purged(std::string_view position, std::string_view oldest) {
    return Error{Errc::purged,
                 fmt::format("the server no longer has the binlog for {} (the oldest binlog there is {}): the changes "
                             "in between are gone from this server; take a new snapshot and start again from its "
                             "position, or --from earliest to accept the gap",
                             position, oldest)};
  }

  // Returns an outcome when the run ends here.
  Result<std::optional<LiveOutcome>> handle_event(std::span<const std::uint8_t> bytes) {
    if (bytes.size() < binlog::kEventHeaderSize)
      return fail(Errc::corrupt_input, fmt::format("{}: a {}-byte event in the binlog stream", endpoint_, bytes.size()));
    ByteReader header_reader(bytes, 0);
    const binlog::EventHeader header = binlog::read_event_header(header_reader);
    const bool artificial = (header.flags & binlog::kFlagArtificial) != 0 || header.next_position == 0;
    const std::uint64_t end_offset = header.next_position;
    const std::uint64_t offset = artificial || end_offset < bytes.size() ? 0 : end_offset - bytes.size();

    if (header.type() == binlog::EventType::heartbeat || header.type() == binlog::EventType::heartbeat_v2) {
      caught_up_ = true;
      return on_idle();
    }
    auto decoded = decoder_.decode(bytes, offset);
    if (!decoded) return fail(std::move(decoded).error());
    const binlog::Event& event = *decoded;

    if (silent_until_ && !artificial && pipeline_->file() == silent_until_->file &&
        offset + bytes.size() > silent_until_->offset) {
      if (offset != silent_until_->offset)
        return fail(Errc::usage, fmt::format("{}:{} is inside the event at {} ({} bytes): give the offset of a "
                                             "transaction boundary (a commit line's pos)",
                                             silent_until_->file, silent_until_->offset, offset, bytes.size()));
      if (pipeline_->tracker().in_transaction())
        return fail(Errc::usage, fmt::format("{}:{} is inside a transaction: give the offset of a transaction "
                                             "boundary (a commit line's pos)",
                                             silent_until_->file, silent_until_->offset));
      silent_until_.reset();
      pipeline_->set_silent(false);
    }
    if (const auto* rotate = std::get_if<binlog::RotateEvent>(&event.body)) {
      // A fake ROTATE opens every dump; a real one ends a file. Either way the next events
      // are from next_file, and table ids start over.
      if (silent_until_ && !artificial && rotate->next_file != silent_until_->file)
        return fail(Errc::usage, fmt::format("{}:{} is beyond the end of {} on {}: give an offset that SHOW BINLOG "
                                             "EVENTS lists",
                                             silent_until_->file, silent_until_->offset, silent_until_->file,
                                             endpoint_));
      pipeline_->start_file(rotate->next_file);
      decoder_.forget_tables();
      return std::optional<LiveOutcome>{};
    }
    if (!artificial) {
      ++events_;
      if (header.timestamp != 0) last_event_time_ = header.timestamp;
      caught_up_ = false;
    }
    const bool opens_transaction = !pipeline_->tracker().in_transaction();
    if (opens_transaction && !artificial) transaction_start_ = gtid::FilePosition{pipeline_->file(), offset};

    auto step = pipeline_->handle(event, end_offset);
    if (!step) return fail(std::move(step).error());
    if (step->stopped_before_ddl) return stop_before_ddl();
    if (artificial || pipeline_->tracker().in_transaction()) return std::optional<LiveOutcome>{};
    // Between transactions: a boundary the state may be saved at. A dump by GTID replays
    // the header events of the file it starts in; they must not move the boundary back.
    if (gtid::FilePosition boundary{pipeline_->file(), end_offset}; !(boundary < last_boundary_))
      last_boundary_ = std::move(boundary);
    if (step->transaction_ended && !silent_until_) {
      last_gtid_.assign(pipeline_->tracker().last_gtid());
      const bool wrote = pipeline_->summary().transactions != transactions_saved_;
      // On a pipe every transaction is saved: a restart repeats at most the one in flight.
      // --output is cut back to the saved state on a restart, so saves there may cover many
      // transactions (group commit): two fsyncs per transaction would cap a busy stream at a
      // few hundred transactions a second. A heartbeat (idle server) saves what is pending.
      constexpr auto kOutputGroupCommit = std::chrono::milliseconds(250);
      const auto since_save = Clock::now() - last_save_;
      if ((wrote && (output_fd_ < 0 || since_save >= kOutputGroupCommit)) || since_save > std::chrono::seconds(1)) {
        if (auto saved = checkpoint(); !saved) return fail(std::move(saved).error());
      } else {
        dirty_ = true;
      }
    }
    return after_boundary();
  }

  // Checks everything that may end the run where a transaction has just ended.
  Result<std::optional<LiveOutcome>> after_boundary() {
    if (until_ && !silent_until_ && until_reached()) {
      if (auto saved = checkpoint(); !saved) return fail(std::move(saved).error());
      reporter_.notice(fmt::format("reached --until {}", until_->to_string()));
      return std::optional<LiveOutcome>{LiveOutcome::finished};
    }
    if (g_stop_requested.load()) {
      if (auto saved = checkpoint(); !saved) return fail(std::move(saved).error());
      return std::optional<LiveOutcome>{LiveOutcome::finished};
    }
    return periodic_checks();
  }

  Result<std::optional<LiveOutcome>> on_idle() {
    if (dirty_ && !pipeline_->tracker().in_transaction()) {
      if (auto saved = checkpoint(); !saved) return fail(std::move(saved).error());
    }
    if (pipeline_->tracker().in_transaction()) return std::optional<LiveOutcome>{};
    return after_boundary();
  }

  Result<std::optional<LiveOutcome>> periodic_checks() {
    const auto now = Clock::now();
    // Checks run when an event or heartbeat arrives; heartbeats come every --heartbeat seconds
    // and a little late, so a slack keeps "--stats 1" at one line a second, not one every two.
    constexpr auto kSlack = std::chrono::milliseconds(250);
    if (options_.stats_seconds > 0 && now + kSlack - last_stats_ >= std::chrono::seconds(options_.stats_seconds)) {
      print_stats(now);
    }
    const auto check_every = std::chrono::seconds(std::max(1U, std::min(options_.heartbeat_seconds, 5U)));
    if ((options_.require_read_only || options_.watch_dns) && now - last_guard_check_ >= check_every) {
      last_guard_check_ = now;
      auto switched = primary_switched();
      if (!switched) return fail(std::move(switched).error());
      if (*switched) {
        if (auto saved = checkpoint(); !saved) return fail(std::move(saved).error());
        reporter_.warn(primary_message_ + fmt::format("; state saved at {}; point the run at a replica and rerun it: "
                                                      "it resumes by GTID",
                                                      current_position().to_string()));
        return std::optional<LiveOutcome>{LiveOutcome::primary_switched};
      }
    }
    return std::optional<LiveOutcome>{};
  }

  Result<bool> primary_switched() {
    if (options_.watch_dns) {
      const auto addresses = resolve(dns_host_);
      if (!addresses.empty() && addresses != dns_addresses_) {
        primary_message_ = fmt::format("--watch-dns: {} now resolves to {} (it was {})", dns_host_, join(addresses),
                                       join(dns_addresses_));
        return true;
      }
    }
    if (options_.require_read_only) {
      mysql::Connection* connection = query_connection();
      if (connection == nullptr) return false;  // the replication connection will notice a dead server
      auto read_only = server_is_read_only(*connection);
      if (!read_only) {
        drop_query_connection();
        return false;
      }
      if (!*read_only) {
        primary_message_ = fmt::format("{} turned writable (@@global.read_only is OFF): the stream is on a primary "
                                       "now, which --require-read-only forbids",
                                       endpoint_);
        return true;
      }
    }
    return false;
  }

  // A second connection for queries while the first one streams: read_only checks and the
  // catalog. nullptr when it cannot be opened now.
  mysql::Connection* query_connection() {
    if (!query_connection_) {
      auto connection = mysql::Connection::open(options_.connection);
      if (!connection) return nullptr;
      query_connection_.emplace(std::move(*connection));
      schemas_.emplace(*query_connection_);
    }
    return &*query_connection_;
  }
  void drop_query_connection() {
    schemas_.reset();
    query_connection_.reset();
  }

  // Without binlog_row_metadata=FULL, names, labels, signedness and keys come from the
  // catalog as it is now.
  void complete_from_catalog(binlog::TableMap& map) {
    if (query_connection() == nullptr) {
      warn_once(map, "cannot reach the server for information_schema; rows are written with positional names");
      return;
    }
    auto schema = schemas_->get(map.database, map.table);
    if (!schema) {
      drop_query_connection();
      warn_once(map, fmt::format("reading information_schema failed ({}); rows are written with positional names",
                                 schema.error().message));
      return;
    }
    if (*schema == nullptr) {
      warn_once(map, "the table no longer exists, so information_schema cannot name its columns; rows are written "
                     "with positional names");
      return;
    }
    std::string mismatch;
    if (!schema::apply_table_schema(**schema, map, mismatch))
      warn_once(map, fmt::format("its rows do not match the table's current definition ({}): they are from before a "
                                 "schema change, and are written with positional names",
                                 mismatch));
  }

  void warn_once(const binlog::TableMap& map, std::string_view what) {
    if (map.generation == warned_generation_) return;
    warned_generation_ = map.generation;
    reporter_.warn(fmt::format("{}.{} at {}: {}", map.database, map.table, pipeline_->file(), what));
  }

  void forget_schema_of(std::string_view database, std::string_view sql) {
    if (!schemas_) return;
    const binlog::DdlTarget target = binlog::ddl_target(sql, database);
    for (const auto& table : target.tables) schemas_->invalidate(table.database, table.table);
    if (target.tables.empty()) {
      if (target.database.empty())
        schemas_->invalidate_all();
      else
        schemas_->invalidate_database(target.database);
    }
    reporter_.warn(fmt::format("schema change at {}: column metadata is read again from information_schema; rows "
                               "logged before it but read after it may not match (binlog_row_metadata=FULL avoids "
                               "this)",
                               pipeline_->file()));
  }

  static Result<bool> server_is_read_only(mysql::Connection& connection) {
    auto result = connection.query("SELECT @@global.read_only");
    if (!result) return fail(std::move(result).error());
    if (result->rows.empty() || !result->rows[0][0]) return false;
    return *result->rows[0][0] != "0";
  }

  void print_stats(Clock::time_point now) {
    const double seconds = std::chrono::duration<double>(now - last_stats_).count();
    const auto& summary = pipeline_->summary();
    const double events_per_second = seconds > 0 ? static_cast<double>(events_ - stats_events_) / seconds : 0;
    const double rows_per_second = seconds > 0 ? static_cast<double>(summary.rows - stats_rows_) / seconds : 0;
    std::int64_t lag = 0;
    if (!caught_up_ && last_event_time_ != 0)
      lag = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::time(nullptr)) - last_event_time_);
    reporter_.notice(fmt::format("stats: {:.0f} events/s, {:.0f} rows/s, {} rows in {} transactions so far, {} s "
                                 "behind the server, at {}:{}",
                                 events_per_second, rows_per_second, summary.rows, summary.transactions, lag,
                                 last_boundary_.file, last_boundary_.offset));
    last_stats_ = now;
    stats_events_ = events_;
    stats_rows_ = summary.rows;
  }

  // ---- DDL --------------------------------------------------------------------------------

  void install_hooks() {
    if (options_.stop_on_ddl) {
      pipeline_->set_ddl_gate([this](const PendingDdl& ddl) {
        const std::string at = fmt::format("{}:{}", ddl.file, ddl.offset);
        for (const auto& accepted : options_.accepted_ddls)
          if ((!ddl.gtid.empty() && accepted == ddl.gtid) || accepted == at) return true;
        pending_ddl_ = ddl.gtid.empty() ? fmt::format("at {}: {}", at, ddl.sql)
                                        : fmt::format("GTID {} at {}: {}", ddl.gtid, at, ddl.sql);
        pending_ddl_id_ = ddl.gtid.empty() ? at : std::string(ddl.gtid);
        return false;
      });
    }
    const bool from_catalog = client_->server().binlog_row_metadata != "FULL";
    pipeline_->set_ddl_listener([this, from_catalog](std::string_view database, std::string_view sql) {
      // Table ids and metadata after a DDL describe the new schema; maps cached from
      // before must not label rows that follow.
      decoder_.forget_tables();
      if (from_catalog) forget_schema_of(database, sql);
    });
    if (from_catalog) pipeline_->set_table_map_hook([this](binlog::TableMap& map) { complete_from_catalog(map); });
  }

  Result<std::optional<LiveOutcome>> stop_before_ddl() {
    // The state goes where the DDL's transaction begins: a rerun reads it again.
    writer_.discard();
    if (auto saved = checkpoint_at(pipeline_->tracker().position_at(transaction_start_.offset), transaction_start_);
        !saved)
      return fail(std::move(saved).error());
    reporter_.warn(fmt::format("stopped before a DDL on a captured table (--on-ddl stop): {}", pending_ddl_));
    reporter_.notice(fmt::format("state saved before it{}{}; review the change, then rerun with --accept-ddl '{}' to "
                                 "emit it and go on",
                                 state_ ? " in " : "", state_ ? state_->path() : "", pending_ddl_id_));
    return std::optional<LiveOutcome>{LiveOutcome::stopped_before_ddl};
  }

  // ---- positions and state ----------------------------------------------------------------

  Position current_position() const { return pipeline_->tracker().position_at(last_boundary_.offset); }

  bool until_reached() const {
    const TransactionTracker& tracker = pipeline_->tracker();
    switch (until_->kind) {
      case Position::Kind::mysql_gtids:
        return tracker.gtid_state_known() && tracker.mysql_executed().contains(until_->mysql_gtids);
      case Position::Kind::mariadb_gtids:
        return tracker.gtid_state_known() && tracker.mariadb_state().contains(until_->mariadb_gtids);
      case Position::Kind::file:
        return !(last_boundary_ < until_->file);
    }
    return false;
  }

  bool until_reached_at_start() const {
    if (!until_) return false;
    if (until_->kind != resume_.kind) return false;
    switch (until_->kind) {
      case Position::Kind::mysql_gtids:
        return resume_.mysql_gtids.contains(until_->mysql_gtids);
      case Position::Kind::mariadb_gtids:
        return resume_.mariadb_gtids.contains(until_->mariadb_gtids);
      case Position::Kind::file:
        return !(resume_.file < until_->file);
    }
    return false;
  }

  // After a transaction: its lines out (and on disk with --output), then the state.
  Result<void> checkpoint() {
    if (!pipeline_) return {};
    return checkpoint_at(current_position(), last_boundary_);
  }

  Result<void> checkpoint_at(Position position, const gtid::FilePosition& file) {
    if (auto flushed = writer_.flush(); !flushed) return flushed;
    dirty_ = false;
    last_save_ = Clock::now();
    transactions_saved_ = pipeline_ ? pipeline_->summary().transactions : 0;
    resume_ = std::move(position);
    resume_file_ = file;
    committed_output_bytes_ = writer_.bytes_flushed();
    if (!state_) return {};
    if (output_fd_ >= 0 && ::fdatasync(output_fd_) != 0) return system_error("fsync failed on", *options_.output_path);
    StreamState state;
    state.position = resume_.to_string();
    state.file = file.file;
    state.offset = file.offset;
    state.gtid = last_gtid_;
    if (output_fd_ >= 0) state.output_bytes = committed_output_bytes_;
    state.server = endpoint_;
    return state_->save(std::move(state));
  }

  Result<void> roll_back_to_boundary() {
    writer_.discard();
    if (output_fd_ >= 0) {
      if (::ftruncate(output_fd_, static_cast<off_t>(committed_output_bytes_)) != 0 ||
          ::lseek(output_fd_, static_cast<off_t>(committed_output_bytes_), SEEK_SET) < 0)
        return system_error("cannot cut back", *options_.output_path);
      writer_.set_bytes_flushed(committed_output_bytes_);
    }
    // The tracker's GTID state holds only whole transactions: resume from there.
    if (pipeline_) {
      resume_ = current_position();
      resume_file_ = last_boundary_;
      if (resume_.kind == Position::Kind::file) resume_.file = last_boundary_;
    }
    return {};
  }

  Result<LiveOutcome> finish(LiveOutcome outcome) {
    if (outcome == LiveOutcome::finished && pipeline_ && !pipeline_->tracker().in_transaction()) {
      if (auto saved = checkpoint(); !saved) return fail(std::move(saved).error());
    }
    if (auto flushed = writer_.flush(); !flushed) return fail(std::move(flushed).error());
    if (output_fd_ >= 0 && ::fsync(output_fd_) != 0) return system_error("fsync failed on", *options_.output_path);
    if (pipeline_) pipeline_->warn_at_end();
    return outcome;
  }

  static bool sleep_unless_stopped(std::chrono::milliseconds total) {
    const auto until = Clock::now() + total;
    while (Clock::now() < until) {
      if (g_stop_requested.load()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return !g_stop_requested.load();
  }

  const LiveOptions& options_;
  const LiveReporter& reporter_;
  TableFilter filter_;
  ChangeWriter writer_;
  int output_fd_ = -1;
  std::optional<StateFile> state_;
  std::optional<replication::BinlogClient> client_;
  std::optional<mysql::Connection> query_connection_;
  std::optional<schema::SchemaCache> schemas_;
  std::uint64_t warned_generation_ = 0;
  std::string endpoint_;
  std::uint32_t server_id_ = 0;
  binlog::Decoder decoder_;
  std::optional<ChangePipeline> pipeline_;

  Position resume_;                      // where a new connection starts
  gtid::FilePosition resume_file_;       // its file and offset, for the state file
  std::optional<Position> until_;
  std::optional<gtid::FilePosition> silent_until_;
  gtid::FilePosition last_boundary_;     // the end of the last whole transaction
  gtid::FilePosition transaction_start_; // where the transaction in flight began
  std::uint64_t committed_output_bytes_ = 0;
  std::uint64_t transactions_saved_ = 0;
  std::string last_gtid_;
  bool dirty_ = false;
  bool connected_once_this_round_ = false;
  Clock::time_point last_save_ = Clock::now();

  std::string pending_ddl_;
  std::string pending_ddl_id_;
  std::string dns_host_;
  std::vector<std::string> dns_addresses_;
  std::string primary_message_;
  bool primary_at_start_ = false;
  Clock::time_point last_guard_check_ = Clock::now();

  std::uint64_t events_ = 0;
  std::int64_t last_event_time_ = 0;
  bool caught_up_ = false;
  Clock::time_point last_stats_ = Clock::now();
  std::uint64_t stats_events_ = 0;
  std::uint64_t stats_rows_ = 0;
};

}  // namespace

Result<LiveOutcome> run_live(const LiveOptions& options, const LiveReporter& reporter) {
  auto filter = TableFilter::parse(options.tables, options.exclude);
  if (!filter) return fail(std::move(filter).error());
  g_stop_requested.store(false);
  LiveRun run(options, reporter, std::move(*filter));
  return run.run();
}

}  // namespace cdc::stream
