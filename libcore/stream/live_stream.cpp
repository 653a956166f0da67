#include "stream/live_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>

#include "archive/archive_dir.h"
#include "binlog/decoder.h"
#include "binlog/event_header.h"
#include "gtid/position.h"
#include "metrics/text_format.h"
#include "replication/binlog_client.h"
#include "stream/archive_source.h"
#include "stream/change_pipeline.h"
#include "stream/change_writer.h"
#include "stream/checkpoint.h"
#include "stream/live_metrics.h"
#include "stream/primary_guard.h"
#include "stream/side_connection.h"
#include "stream/start_position.h"
#include "stream/stop_signal.h"
#include "stream/time_position.h"
#include "util/byte_reader.h"

namespace cdc::stream {

namespace {

using Clock = std::chrono::steady_clock;
using gtid::Position;

// One live run: connects, streams, reconnects after a lost connection from the last
// checkpoint, and stops at --until, a signal, a guarded DDL or a primary switch. What is
// durable (output, state, resume point) is the Checkpoint's; where to start is
// start_position's; the second connection is SideConnection's.
class LiveRun {
 public:
  LiveRun(const LiveOptions& options, const LiveReporter& reporter, TableFilter filter, Checkpoint checkpoint,
          std::unique_ptr<output::Converter> converter, std::optional<archive::ArchiveDir> archive)
      : options_(options),
        reporter_(reporter),
        filter_(std::move(filter)),
        checkpoint_(std::move(checkpoint)),
        archive_(std::move(archive)),
        writer_(checkpoint_.output_fd(), checkpoint_.output_name()),
        side_(options.connection, reporter.warn),
        guard_(options.require_read_only, options.watch_dns, options.connection.host.value_or("localhost"),
               std::chrono::seconds(std::max(1U, std::min(options.heartbeat_seconds, 5U)))) {
    writer_.set_bytes_flushed(checkpoint_.committed_bytes());
    // Stdout cannot be cut back after a lost connection: a format without discard lines gets
    // whole transactions only.
    writer_.set_converter(std::move(converter), !checkpoint_.has_output_file());
  }

  Result<LiveOutcome> run() {
    if (auto prepared = prepare(); !prepared) return fail(std::move(prepared).error());
    if (primary_at_start_) {
      reporter_.warn(guard_.message());
      return LiveOutcome::primary_switched;
    }
    // Before the first line: a state a rerun can cut the output back to, whatever stops
    // this run (a full disk, kill -9) before its first transaction.
    if (checkpoint_.has_state() && !checkpoint_.loaded())
      if (auto saved = checkpoint_.commit(writer_, checkpoint_.position(), checkpoint_.file_position(), last_gtid_);
          !saved)
        return fail(std::move(saved).error());
    if (until_reached_at_start()) {
      reporter_.notice(fmt::format("nothing to do: the start position {} already includes --until {}",
                                   checkpoint_.position().to_string(), until_text_));
      // Saved even so: the next run (cron) must start here, not at its own --from now.
      if (auto closed = close_span_at_start(); !closed) return fail(std::move(closed).error());
      return finish(LiveOutcome::finished);
    }
    // The span opens with the first event the server sends: a dump the server refuses (a
    // purged binlog) writes nothing.
    span_start_pending_ = !until_text_.empty() && !checkpoint_.span_open();
    StopSignals signals;
    unsigned failures_in_a_row = 0;
    Clock::time_point failing_since{};
    for (;;) {
      auto outcome = stream_once();
      if (outcome) return finish(*outcome);
      Error error = std::move(outcome).error();
      if (error.code == Errc::purged && source_dir_ && !StopSignals::requested()) {
        // Read what the server no longer has from the archive, then go on from the server.
        auto replayed = replay_archive(error);
        if (replayed && *replayed) return finish(**replayed);
        if (replayed) continue;
        error = std::move(replayed).error();
      }
      if (error.code != Errc::unavailable || StopSignals::requested()) {
        if (StopSignals::requested() && error.code == Errc::unavailable) return finish(LiveOutcome::finished);
        // A held transaction cut off by the error stays out: its lines come again in full
        // from the state on the next run.
        if (writer_.holds_transactions() && pipeline_ && pipeline_->tracker().in_transaction()) writer_.discard();
        (void)writer_.flush();
        if (archive_) (void)archive_->close();
        last_error_time_ = std::time(nullptr);
        write_metrics();
        return fail(error);
      }
      // A lost connection: drop everything after the last checkpoint and resume from it.
      if (auto rolled_back = roll_back(error.message); !rolled_back) return fail(std::move(rolled_back).error());
      ++reconnects_;
      last_error_time_ = std::time(nullptr);
      write_metrics();
      if (failures_in_a_row++ == 0) failing_since = Clock::now();
      const auto waited = Clock::now() - failing_since;
      if (options_.retry_seconds > 0 && waited > std::chrono::seconds(options_.retry_seconds))
        return fail(error.with_context(fmt::format("gave up reconnecting after {} s (--retry-for)",
                                                   options_.retry_seconds)));
      const auto backoff = std::chrono::milliseconds(std::min<std::int64_t>(
          30000, std::int64_t{250} << std::min<unsigned>(failures_in_a_row, 7)));
      reporter_.notice(fmt::format("{}; reconnecting in {:.1f} s, resuming from {}", error.message,
                                   std::chrono::duration<double>(backoff).count(), checkpoint_.position().to_string()));
      if (!StopSignals::sleep_unless_stopped(backoff)) return finish(LiveOutcome::finished);
      if (connected_once_this_round_) failures_in_a_row = 0;
    }
  }

 private:
  // ---- start-up -------------------------------------------------------------------------

  Result<void> prepare() {
    const std::optional<records::StreamState>& saved = checkpoint_.loaded();
    if (!saved && !options_.from)
      return fail(Errc::usage, checkpoint_.has_state()
                                   ? fmt::format("{} does not exist yet: give --from (now, earliest, a GTID set or "
                                                 "position, or FILE:OFFSET) for the first run",
                                                 checkpoint_.state_path())
                                   : "give --from (now, earliest, a GTID set or position, or FILE:OFFSET), or a "
                                     "--state file to resume from");

    mysql::ConnectionOptions connection = options_.connection;
    connection.read_timeout_seconds = options_.heartbeat_seconds * 3 + 5;
    auto client = replication::BinlogClient::open(connection);
    if (!client) return fail(std::move(client).error());
    client_.emplace(std::move(*client));
    endpoint_ = client_->connection().endpoint();

    Position start;
    gtid::FilePosition start_file;
    std::string position_source = "--from";
    if (saved) {
      auto position = Position::parse(saved->position);
      if (!position)
        return fail(Errc::corrupt_input,
                    fmt::format("{}: \"position\": {}", checkpoint_.state_path(), position.error().message));
      start = std::move(*position);
      start_file = gtid::FilePosition{saved->file, saved->offset};
      last_gtid_ = saved->gtid;
      position_source = checkpoint_.state_path();
      if (auto same = check_saved_server(*client_, *saved, start, checkpoint_.state_path(), reporter_.warn); !same)
        return fail(std::move(same).error());
      if (options_.from)
        reporter_.notice(fmt::format("resuming from {} as {} says; --from {} is ignored", start.to_string(),
                                     checkpoint_.state_path(), *options_.from));
      else
        reporter_.notice(fmt::format("resuming from {} ({})", start.to_string(), checkpoint_.state_path()));
    } else if (looks_like_time(*options_.from)) {
      auto time = parse_time(*options_.from);
      if (!time) return fail(std::move(time).error());
      auto located = locate_time(options_.connection, *client_, *time);
      if (!located) return fail(std::move(located).error());
      reporter_.notice(describe_time_start("--from", *time, *located));
      start = std::move(located->position);
      start_file = std::move(located->at);
    } else {
      auto position = resolve_position(*client_, *options_.from, true);
      if (!position) return fail(std::move(position).error());
      start = std::move(*position);
    }
    if (start.kind == Position::Kind::mariadb_gtids)
      if (auto known = check_known_domains(*client_, start.mariadb_gtids, position_source); !known)
        return fail(std::move(known).error());
    if (start.kind == Position::Kind::file) {
      start_file = start.file;
      // A purged file may be in the archive: the dump's failure leads there (run()).
      if (auto there = check_file_position(*client_, start.file);
          !there && !(there.error().code == Errc::purged && source_dir_))
        return fail(std::move(there).error());
    }
    checkpoint_.set_server(endpoint_, client_->server().server_id);
    checkpoint_.start_at(std::move(start), std::move(start_file), last_gtid_);

    if (options_.until && looks_like_time(*options_.until)) {
      auto time = parse_time(*options_.until);
      if (!time) return fail(std::move(time).error());
      until_time_ = *time;
      until_text_ = format_time(*time);
      if (auto skew = server_clock_skew(); !skew) return fail(std::move(skew).error());
    } else if (options_.until) {
      auto position = resolve_position(*client_, *options_.until, false);
      if (!position) return fail(std::move(position).error());
      until_ = std::move(*position);
      until_text_ = until_->to_string();
      if (until_->kind != Position::Kind::file && checkpoint_.position().kind == Position::Kind::file &&
          !client_->server().gtids)
        return fail(Errc::usage, fmt::format("--until {} is a GTID position, but the server writes no GTIDs: give "
                                             "--until as FILE:OFFSET",
                                             until_->to_string()));
      if (until_->kind == Position::Kind::mariadb_gtids)
        if (auto known = check_known_domains(*client_, until_->mariadb_gtids, "--until"); !known)
          return fail(std::move(known).error());
    }
    server_id_ = options_.server_id.value_or(replication::default_server_id());
    if (auto unique = client_->check_server_id(server_id_); !unique) return fail(std::move(unique).error());
    auto primary = guard_.primary_at_start(client_->connection());
    if (!primary) return fail(std::move(primary).error());
    primary_at_start_ = *primary;
    row_metadata_full_ = client_->server().binlog_row_metadata == "FULL";
    if (client_->server().binlog_row_metadata != "FULL")
      reporter_.warn(fmt::format("{} has binlog_row_metadata={}: column names, ENUM/SET labels and keys are not in "
                                 "the binlog and come from the catalog as it is now, so events from before a later "
                                 "schema change may be labelled with the new schema; set binlog_row_metadata=FULL",
                                 endpoint_, client_->server().binlog_row_metadata.empty()
                                                ? "(not supported)"
                                                : client_->server().binlog_row_metadata));
    return {};
  }

  // --until already reached where the run starts: the span's lines, unless the output has
  // them already (a rerun of a finished bounded run writes nothing).
  Result<void> close_span_at_start() {
    if (checkpoint_.span_closed())
      return checkpoint_.commit(writer_, checkpoint_.position(), checkpoint_.file_position(), last_gtid_);
    const std::string position = checkpoint_.position().to_string();
    if (!checkpoint_.span_open()) writer_.write_span_start(position);
    const gtid::FilePosition& file = checkpoint_.file_position();
    writer_.write_span_end(position, file.file.empty() ? std::optional<gtid::FilePosition>{} : file, until_text_);
    return checkpoint_.commit(writer_, checkpoint_.position(), checkpoint_.file_position(), last_gtid_,
                              Checkpoint::Span::closed);
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
    transactions_saved_ = 0;
    dirty_ = false;
    install_hooks();

    // Where the dump starts: the last checkpoint. By GTID when the position is one; a
    // FILE:OFFSET on a server with GTIDs is read from the file's start (silently up to
    // OFFSET) so that the GTID state at OFFSET is known and later positions are GTID sets
    // that survive a failover.
    const Position& resume = checkpoint_.position();
    Position dump_from = resume;
    silent_until_.reset();
    if (resume.kind == Position::Kind::file) {
      pipeline_->start_file(resume.file.file);
      if (client_->server().gtids && resume.file.offset > 4) {
        silent_until_ = resume.file;
        dump_from.file.offset = 4;
        pipeline_->set_silent(true);
      }
    } else {
      pipeline_->tracker().seed(resume);
    }
    if (archive_)
      archive_->begin_dump(dump_from.kind != Position::Kind::file, client_->server().checksums
                                                                       ? binlog::ChecksumAlgorithm::crc32
                                                                       : binlog::ChecksumAlgorithm::off);
    auto started = client_->start_dump(dump_from, server_id_, std::chrono::seconds(options_.heartbeat_seconds),
                                       replication::DumpEnd::wait, archive_.has_value());
    if (!started) return dump_failed(started.error());
    StopSignals::set_socket(client_->socket());
    last_boundary_ = checkpoint_.file_position();

    for (;;) {
      if (!pipeline_->tracker().in_transaction()) {
        StopSignals::set_waiting_between_transactions(true);
        if (StopSignals::requested()) {
          StopSignals::set_waiting_between_transactions(false);
          return LiveOutcome::finished;
        }
      }
      auto bytes = client_->next_event();
      StopSignals::set_waiting_between_transactions(false);
      if (!bytes) {
        if (StopSignals::requested() && !pipeline_->tracker().in_transaction()) return LiveOutcome::finished;
        return dump_failed(bytes.error());
      }
      connected_once_this_round_ = true;
      if (auto opened = open_span_when_pending(); !opened) return fail(std::move(opened).error());
      auto outcome = handle_event(*bytes);
      if (!outcome) return fail(std::move(outcome).error());
      if (*outcome) return **outcome;
    }
  }

  // --until: the span opens with the first event read, from the server or the archive.
  Result<void> open_span_when_pending() {
    if (!span_start_pending_) return {};
    // Nothing is buffered yet, and the checkpoint is still the start.
    writer_.write_span_start(checkpoint_.position().to_string());
    if (auto saved = commit(checkpoint_.position(), checkpoint_.file_position(), last_gtid_, Checkpoint::Span::opened);
        !saved)
      return saved;
    span_start_pending_ = false;
    return {};
  }

  // ---- the archive as a source ------------------------------------------------------------

  // The server said `purged` for the checkpoint's position: the archive's files are read from
  // there, through the same decoder, pipeline and checkpoints as the server's events, up to
  // the archive's last whole transaction, so the dump that follows starts right after the last
  // one written, with no gap and nothing twice. When the archive's end cuts a transaction off,
  // the output goes back to the last save and the whole transactions after it are read again,
  // up to the cut one's start (a second pass: saves are grouped, and the cut one cannot be
  // known before the end). An outcome when the run ends inside the archive (--until, a signal,
  // a DDL stop); an error when the archive does not help.
  Result<std::optional<LiveOutcome>> replay_archive(const Error& purged) {
    const std::string before = checkpoint_.position().to_string();
    if (archive_)
      if (auto synced = archive_->sync(); !synced) return fail(std::move(synced).error());
    auto source = ArchiveSource::open(*source_dir_);
    if (!source) return fail(std::move(source).error());
    gtid::FilePosition end;
    auto outcome = replay_pass(*source, purged, std::nullopt, end);
    if (!outcome || *outcome) return outcome;
    if (pipeline_->tracker().in_transaction()) {
      const gtid::FilePosition boundary = last_boundary_;
      if (auto rolled_back = roll_back(fmt::format("the archive in {} ends inside this transaction, at {}:{}; it comes "
                                                   "again from the server",
                                                   source->dir(), end.file, end.offset));
          !rolled_back)
        return fail(std::move(rolled_back).error());
      if (checkpoint_.file_position() < boundary) {
        outcome = replay_pass(*source, purged, boundary, end);
        if (!outcome || *outcome) return outcome;
      }
    }
    if (!pipeline_->tracker().in_transaction())
      if (auto saved = checkpoint(); !saved) return fail(std::move(saved).error());
    const std::string after = checkpoint_.position().to_string();
    if (after == before)
      return fail(Error{Errc::purged, fmt::format("{}; the archive in {} ({}) holds nothing after it either",
                                                  purged.message, source->dir(), source->range_text())});
    reporter_.notice(fmt::format("read the archive up to {}:{}; going on from the server at {}", end.file, end.offset,
                                 after));
    return std::optional<LiveOutcome>{};
  }

  // One pass over the archive from the checkpoint's position, up to `stop` (an event boundary)
  // or the archive's end; `end` is where it stopped.
  Result<std::optional<LiveOutcome>> replay_pass(const ArchiveSource& source, const Error& purged,
                                                 const std::optional<gtid::FilePosition>& stop, gtid::FilePosition& end) {
    const std::string from = checkpoint_.position().to_string();
    auto start = source.locate(checkpoint_.position());
    if (!start) return fail(std::move(start).error());
    if (!*start)
      return fail(Error{Errc::purged, fmt::format("{}; the archive in {} has {}, which does not go back to {} or "
                                                  "holds nothing after it",
                                                  purged.message, source.dir(), source.range_text(), from)});
    if (!stop)
      reporter_.notice(fmt::format("the server no longer has the binlog for {}; reading it from the archive in {} "
                                   "({}) from {}:{}",
                                   from, source.dir(), source.range_text(), (*start)->file, (*start)->offset));
    // As a new connection does, but from the start of the archived file, silently up to the
    // position: the file's header gives the GTID state.
    decoder_ = binlog::Decoder((*start)->file);
    pipeline_.emplace(filter_, writer_, decoder_, reporter_.warn, options_.skip_unknown_events);
    transactions_saved_ = 0;
    dirty_ = false;
    install_hooks();
    silent_until_.reset();
    pipeline_->start_file((*start)->file);
    if ((*start)->offset > binlog::kBinlogMagicSize) {
      silent_until_ = **start;
      pipeline_->set_silent(true);
    }
    last_boundary_ = checkpoint_.file_position();
    replaying_ = true;
    auto outcome = replay_files(source, (*start)->file, stop, end);
    replaying_ = false;
    if (!outcome || *outcome) return outcome;
    if (silent_until_)
      return fail(Error{Errc::purged, fmt::format("{}; the archive in {} ends at {}:{}, before it", purged.message,
                                                  source.dir(), end.file, end.offset)});
    return outcome;
  }

  Result<std::optional<LiveOutcome>> replay_files(const ArchiveSource& source, const std::string& first,
                                                  const std::optional<gtid::FilePosition>& stop,
                                                  gtid::FilePosition& end) {
    for (const auto& file : source.files_from(first)) {
      if (stop && gtid::FilePosition{stop->file, 0} < gtid::FilePosition{file.name, 0}) break;
      auto reader = ArchiveSource::read(file, source.dir());
      if (!reader) return fail(std::move(reader).error());
      if (file.name != first) {
        // A file that ends without a ROTATE (a server restart) is followed all the same.
        pipeline_->start_file(file.name);
        decoder_.forget_tables();
      }
      decoder_.set_source_name(file.name);
      end = gtid::FilePosition{file.name, binlog::kBinlogMagicSize};
      for (;;) {
        if (stop && stop->file == file.name && reader->position() >= stop->offset) return std::optional<LiveOutcome>{};
        auto next = reader->next();
        if (!next) return fail(std::move(next).error());
        if (!*next) break;
        if (auto opened = open_span_when_pending(); !opened) return fail(std::move(opened).error());
        auto outcome = handle_event((*next)->bytes);
        if (!outcome) return fail(std::move(outcome).error());
        if (*outcome) return outcome;
        end.offset = reader->position();
      }
    }
    return std::optional<LiveOutcome>{};
  }

  Unexpected dump_failed(const Error& error) {
    const auto kind = client_->classify_failure(error);
    client_.reset();
    StopSignals::set_socket(-1);
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
    return purged_binlog(checkpoint_.position().to_string(),
                         fmt::format("{}; the server said: {}", oldest, error.message));
  }

  // Returns an outcome when the run ends here.
  Result<std::optional<LiveOutcome>> handle_event(std::span<const std::uint8_t> bytes) {
    binlog_bytes_ += bytes.size();
    if (archive_ && !replaying_)
      if (auto archived = archive_->append(bytes); !archived) return fail(std::move(archived).error());
    // The clock is read every 256 events (and at each heartbeat, below), not per event.
    if ((++events_seen_ & 255U) == 0) write_metrics_when_due();
    if (bytes.size() < binlog::kEventHeaderSize)
      return fail(Errc::corrupt_input, fmt::format("{}: a {}-byte event in the binlog stream", endpoint_, bytes.size()));
    ByteReader header_reader(bytes, 0);
    const binlog::EventHeader header = binlog::read_event_header(header_reader);
    const bool artificial = (header.flags & binlog::kFlagArtificial) != 0 || header.next_position == 0;
    const std::uint64_t end_offset = header.next_position;
    const std::uint64_t offset = artificial || end_offset < bytes.size() ? 0 : end_offset - bytes.size();

    if (header.type() == binlog::EventType::heartbeat || header.type() == binlog::EventType::heartbeat_v2) {
      caught_up_ = true;
      write_metrics_when_due();
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
    if (step->stopped_before_transaction) return reach_until();
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
      if ((wrote && (!checkpoint_.has_output_file() || since_save >= kOutputGroupCommit)) || since_save > std::chrono::seconds(1)) {
        if (auto saved = checkpoint(); !saved) return fail(std::move(saved).error());
      } else {
        dirty_ = true;
      }
    }
    return after_boundary();
  }

  // Checks everything that may end the run where a transaction has just ended.
  Result<std::optional<LiveOutcome>> after_boundary() {
    if (until_ && !silent_until_ && until_reached()) return reach_until();
    if (StopSignals::requested()) {
      if (auto saved = checkpoint(); !saved) return fail(std::move(saved).error());
      return std::optional<LiveOutcome>{LiveOutcome::finished};
    }
    return periodic_checks();
  }

  // --until reached, between transactions: the span's end, saved with the state.
  Result<std::optional<LiveOutcome>> reach_until() {
    writer_.write_span_end(current_position().to_string(), last_boundary_, until_text_);
    if (auto saved = checkpoint(Checkpoint::Span::closed); !saved) return fail(std::move(saved).error());
    reporter_.notice(fmt::format("reached --until {} at {}:{}", until_text_, last_boundary_.file, last_boundary_.offset));
    return std::optional<LiveOutcome>{LiveOutcome::finished};
  }

  Result<std::optional<LiveOutcome>> on_idle() {
    if (dirty_ && !pipeline_->tracker().in_transaction()) {
      if (auto saved = checkpoint(); !saved) return fail(std::move(saved).error());
    }
    if (pipeline_->tracker().in_transaction()) return std::optional<LiveOutcome>{};
    // --until TIME on an idle server: everything the server had is read (a heartbeat came), and
    // its clock is past the time by more than a commit takes to reach the binlog.
    constexpr std::int64_t kCommitSlackMicros = 1'000'000;
    if (until_time_ && !silent_until_ && server_now().micros >= until_time_->micros + kCommitSlackMicros)
      return reach_until();
    return after_boundary();
  }

  // The server's clock, as this host's corrected by the difference measured at the start.
  UtcTime server_now() const {
    const auto local = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    return UtcTime{local.count() + clock_skew_micros_};
  }

  Result<void> server_clock_skew() {
    auto result = client_->connection().query("SELECT CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)");
    if (!result) return fail(std::move(result).error());
    if (result->rows.empty() || result->rows[0].empty() || !result->rows[0][0]) return {};
    const std::int64_t server = std::strtoll(result->rows[0][0]->c_str(), nullptr, 10);
    clock_skew_micros_ = server - server_now().micros + clock_skew_micros_;
    return {};
  }

  Result<std::optional<LiveOutcome>> periodic_checks() {
    const auto now = Clock::now();
    // Checks run when an event or heartbeat arrives; heartbeats come every --heartbeat seconds
    // and a little late, so a slack keeps "--stats 1" at one line a second, not one every two.
    constexpr auto kSlack = std::chrono::milliseconds(250);
    if (options_.stats_seconds > 0 && now + kSlack - last_stats_ >= std::chrono::seconds(options_.stats_seconds)) {
      print_stats(now);
    }
    auto switched = guard_.switched(side_);
    if (!switched) return fail(std::move(switched).error());
    if (*switched) {
      if (auto saved = checkpoint(); !saved) return fail(std::move(saved).error());
      reporter_.warn(guard_.message() + fmt::format("; state saved at {}; point the run at a replica and rerun it: "
                                                    "it resumes by GTID",
                                                    current_position().to_string()));
      return std::optional<LiveOutcome>{LiveOutcome::primary_switched};
    }
    return std::optional<LiveOutcome>{};
  }

  void print_stats(Clock::time_point now) {
    const double seconds = std::chrono::duration<double>(now - last_stats_).count();
    const auto& summary = pipeline_->summary();
    const double events_per_second = seconds > 0 ? static_cast<double>(events_ - stats_events_) / seconds : 0;
    const double rows_per_second = seconds > 0 ? static_cast<double>(summary.rows - stats_rows_) / seconds : 0;
    const std::int64_t lag = seconds_behind();
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
    if (until_time_) {
      // The stop comes before the first transaction committed at or after --until; the ones
      // read again up to a FILE:OFFSET resume point are before the start, not after it.
      pipeline_->set_transaction_gate(
          [this](const TransactionStart& start) { return silent_until_ || start.committed < *until_time_; });
    }
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
    const bool from_catalog = !row_metadata_full_;
    pipeline_->set_ddl_listener([this, from_catalog](std::string_view database, std::string_view sql) {
      // Table ids and metadata after a DDL describe the new schema; maps cached from
      // before must not label rows that follow.
      decoder_.forget_tables();
      side_.forget_schema_of(database, sql, pipeline_->file(), from_catalog);
    });
    // With FULL metadata the catalog adds only the COLUMN_TYPE texts of the table lines.
    pipeline_->set_table_map_hook([this, from_catalog](binlog::TableMap& map) {
      if (from_catalog)
        side_.complete_from_catalog(map, pipeline_->file());
      else
        side_.add_column_types(map);
    });
  }

  Result<std::optional<LiveOutcome>> stop_before_ddl() {
    // The state goes where the DDL's transaction begins: a rerun reads it again. A DDL is a
    // transaction of its own and the gate runs before any of its lines, so what the writer
    // holds is whole earlier transactions (group commit): they go out with this checkpoint.
    if (auto saved = commit(pipeline_->tracker().position_at(transaction_start_.offset), transaction_start_,
                            last_gtid_);
        !saved)
      return fail(std::move(saved).error());
    reporter_.warn(fmt::format("stopped before a DDL on a captured table (--on-ddl stop): {}", pending_ddl_));
    reporter_.notice(fmt::format("state saved before it{}{}; review the change, then rerun with --accept-ddl '{}' to "
                                 "emit it and go on",
                                 checkpoint_.has_state() ? " in " : "", checkpoint_.state_path(), pending_ddl_id_));
    return std::optional<LiveOutcome>{LiveOutcome::stopped_before_ddl};
  }

  // ---- positions and checkpoints ----------------------------------------------------------

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
    const Position& start = checkpoint_.position();
    if (until_->kind != start.kind) return false;
    switch (until_->kind) {
      case Position::Kind::mysql_gtids:
        return start.mysql_gtids.contains(until_->mysql_gtids);
      case Position::Kind::mariadb_gtids:
        return start.mariadb_gtids.contains(until_->mariadb_gtids);
      case Position::Kind::file:
        return !(start.file < until_->file);
    }
    return false;
  }

  // After whole transactions: their lines out (and on disk with --output), then the state.
  Result<void> checkpoint(Checkpoint::Span span = Checkpoint::Span::unchanged) {
    if (!pipeline_) return {};
    if (auto saved = commit(current_position(), last_boundary_, last_gtid_, span); !saved)
      return saved;
    dirty_ = false;
    last_save_ = Clock::now();
    if (options_.metrics_path) {
      // The counts of what the output has for good: a rolled-back transaction is read again.
      transactions_total_ += pipeline_->summary().transactions - transactions_saved_;
      pipeline_->take_table_rows(table_rows_);
    }
    transactions_saved_ = pipeline_->summary().transactions;
    return {};
  }

  // After a lost connection: the output back to the last checkpoint, which the next
  // connection resumes from. Whole transactions read since are read again.
  Result<void> roll_back(std::string_view reason) {
    // Stdout cannot be cut back, and a big transaction goes out as it is read: lines of the
    // transaction in flight may be out. A discard line tells the reader to drop them (all
    // lines since the last commit line); the transaction comes again in full.
    const bool partly_out =
        !checkpoint_.has_output_file() && writer_.bytes_flushed() > checkpoint_.committed_bytes() && pipeline_;
    if (auto cut = checkpoint_.roll_back(writer_); !cut) return cut;
    last_gtid_ = checkpoint_.gtid();
    dirty_ = false;
    if (partly_out) {
      writer_.write_discard(pipeline_->tracker().gtid(), transaction_start_, reason,
                            static_cast<std::uint32_t>(std::time(nullptr)));
      return commit(checkpoint_.position(), checkpoint_.file_position(), last_gtid_);
    }
    return {};
  }

  // Checkpoint::commit, after the archive's sync: a state saved never points past the end of
  // the archive, so a run after a crash finds every event since the state in it or on the
  // server (and the archive continues without a gap).
  Result<void> commit(gtid::Position position, gtid::FilePosition file, const std::string& gtid,
                      Checkpoint::Span span = Checkpoint::Span::unchanged) {
    if (archive_)
      if (auto synced = archive_->sync(); !synced) return synced;
    return checkpoint_.commit(writer_, std::move(position), std::move(file), gtid, span);
  }

  Result<LiveOutcome> finish(LiveOutcome outcome) {
    if (outcome == LiveOutcome::finished && pipeline_ && !pipeline_->tracker().in_transaction()) {
      if (auto saved = checkpoint(); !saved) return fail(std::move(saved).error());
    }
    if (auto closed = checkpoint_.close(writer_); !closed) return fail(std::move(closed).error());
    if (archive_)
      if (auto closed = archive_->close(); !closed) return fail(std::move(closed).error());
    if (pipeline_) pipeline_->warn_at_end();
    write_metrics();
    return outcome;
  }

  // ---- --metrics ----------------------------------------------------------------------------

  void write_metrics_when_due() {
    if (metrics_file_.due()) write_metrics();
  }

  // The file in Prometheus' text format (cdc-stream(1), METRICS).
  void write_metrics() {
    if (!metrics_file_.enabled()) return;
    write_live_metrics(LiveCounts{start_time_, events_, binlog_bytes_, transactions_total_, &table_rows_,
                                  writer_.bytes_flushed(), last_event_time_, seconds_behind(), last_boundary_,
                                  reconnects_, last_error_time_},
                       metrics_text_);
    metrics_file_.publish(metrics_text_.text());
  }

  std::int64_t seconds_behind() const {
    if (caught_up_ || last_event_time_ == 0) return 0;
    return std::max<std::int64_t>(0, static_cast<std::int64_t>(std::time(nullptr)) - last_event_time_);
  }

  const LiveOptions& options_;
  const LiveReporter& reporter_;
  TableFilter filter_;
  Checkpoint checkpoint_;
  std::optional<archive::ArchiveDir> archive_;
  // Where purged positions are read: --archive-source, or the run's own --archive.
  std::optional<std::string> source_dir_ = options_.archive_source ? options_.archive_source : options_.archive_dir;
  bool replaying_ = false;  // the events come from the archive, not the server
  ChangeWriter writer_;
  SideConnection side_;
  PrimaryGuard guard_;
  bool primary_at_start_ = false;
  std::optional<replication::BinlogClient> client_;
  std::string endpoint_;
  std::uint32_t server_id_ = 0;
  bool row_metadata_full_ = true;
  binlog::Decoder decoder_;
  std::optional<ChangePipeline> pipeline_;

  std::optional<Position> until_;
  std::optional<UtcTime> until_time_;  // --until TIME
  std::string until_text_;             // what the span_end line says it reached; empty without --until
  std::int64_t clock_skew_micros_ = 0;  // the server's clock minus this host's
  std::optional<gtid::FilePosition> silent_until_;
  gtid::FilePosition last_boundary_;     // the end of the last whole transaction
  gtid::FilePosition transaction_start_; // where the transaction in flight began
  std::uint64_t transactions_saved_ = 0;
  std::string last_gtid_;
  bool span_start_pending_ = false;  // --until: span_start goes out with the first event
  bool dirty_ = false;
  bool connected_once_this_round_ = false;
  Clock::time_point last_save_ = Clock::now();

  std::string pending_ddl_;
  std::string pending_ddl_id_;

  std::uint64_t events_ = 0;
  std::int64_t last_event_time_ = 0;
  bool caught_up_ = false;
  Clock::time_point last_stats_ = Clock::now();
  std::uint64_t stats_events_ = 0;
  std::uint64_t stats_rows_ = 0;

  // --metrics: counts since the start, of what the output holds for good (table_rows_,
  // transactions_total_) or of what was read.
  metrics::MetricsFile metrics_file_{options_.metrics_path, reporter_.warn, "the stream goes on"};
  metrics::TextWriter metrics_text_;
  const std::time_t start_time_ = std::time(nullptr);
  std::map<std::string, TableRows, std::less<>> table_rows_;
  std::uint64_t transactions_total_ = 0;
  std::uint64_t binlog_bytes_ = 0;
  std::uint64_t events_seen_ = 0;
  std::uint64_t reconnects_ = 0;
  std::int64_t last_error_time_ = 0;
};

}  // namespace

Result<LiveOutcome> run_live(const LiveOptions& options, const LiveReporter& reporter) {
  // Malformed positions and times are usage errors before anything is opened or connected.
  for (const auto* text : {&options.from, &options.until}) {
    if (!*text || **text == "now" || **text == "earliest") continue;
    if (looks_like_time(**text)) {
      if (auto parsed = parse_time(**text); !parsed) return fail(std::move(parsed).error());
    } else if (auto parsed = Position::parse(**text); !parsed) {
      return fail(std::move(parsed).error());
    }
  }
  auto filter = TableFilter::parse(options.tables, options.exclude);
  if (!filter) return fail(std::move(filter).error());
  auto checkpoint = Checkpoint::open(options.state_path, options.output_path, reporter.notice);
  if (!checkpoint) return fail(std::move(checkpoint).error());
  auto converter = output::make_converter(options.output);
  if (!converter) return fail(std::move(converter).error());
  std::optional<archive::ArchiveDir> archive;
  if (options.archive_dir) {
    auto opened = archive::ArchiveDir::open(*options.archive_dir, options.archive_keep, reporter.notice);
    if (!opened) return fail(std::move(opened).error());
    archive.emplace(std::move(*opened));
  }
  StopSignals::reset();
  LiveRun run(options, reporter, std::move(*filter), std::move(*checkpoint), std::move(*converter),
              std::move(archive));
  return run.run();
}

}  // namespace cdc::stream
