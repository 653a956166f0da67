#include "stream/live_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "binlog/event_header.h"
#include "stream/live_run.h"
#include "stream/start_position.h"
#include "stream/stop_signal.h"
#include "util/byte_reader.h"
#include "util/fault_plan.h"

namespace cdc::stream {

using gtid::Position;

Result<LiveOutcome> LiveRun::run() {
  // A stop while the run connects and checks the server (which can take long: a connect
  // timeout, --from TIME searching the binlogs) ends it at once, as the signal does by default:
  // nothing is written yet. From its first save on, a stop ends it as one later does (exit 0,
  // the state saved).
  if (auto prepared = prepare(); !prepared) return fail(std::move(prepared).error());
  StopSignals signals;
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
  // A GTID or FILE:OFFSET --until already reached is found above; a time is known reached only
  // when the first transaction after the start commits at or after it.
  span_start_at_transaction_ = span_start_pending_ && until_time_ && checkpoint_.span_closed();
  if (StopSignals::requested()) return finish(LiveOutcome::finished);
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
    (void)fault::at("stream.reconnect");
    ++reconnects_;
    last_error_time_ = std::time(nullptr);
    write_metrics();
    if (failures_in_a_row++ == 0) failing_since = Clock::now();
    const auto waited = Clock::now() - failing_since;
    if (options_.retry_seconds > 0 && waited > std::chrono::seconds(options_.retry_seconds))
      return fail(
          error.with_context(fmt::format("gave up reconnecting after {} s (--retry-for)", options_.retry_seconds)));
    const auto backoff = std::chrono::milliseconds(
        std::min<std::int64_t>(30000, std::int64_t{250} << std::min<unsigned>(failures_in_a_row, 7)));
    reporter_.notice(fmt::format("{}; reconnecting in {:.1f} s, resuming from {}", error.message,
                                 std::chrono::duration<double>(backoff).count(), checkpoint_.position().to_string()));
    if (!StopSignals::sleep_unless_stopped(backoff)) return finish(LiveOutcome::finished);
    if (connected_once_this_round_) failures_in_a_row = 0;
  }
}

Result<LiveOutcome> LiveRun::stream_once() {
  connected_once_this_round_ = false;
  if (!client_) {
    if (fault::at("stream.connect") == fault::Action::drop)
      return fail(Errc::unavailable, fmt::format("cannot connect to {}: dropped by CDC_FAULT_PLAN", endpoint_));
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
  // MariaDB sends its ANNOTATE_ROWS events only when asked: for the archive's byte-for-byte
  // files, and for --include-query's statements (MySQL sends ROWS_QUERY events always).
  auto started = client_->start_dump(dump_from, server_id_, std::chrono::seconds(options_.heartbeat_seconds),
                                     replication::DumpEnd::wait,
                                     archive_.has_value() || options_.output.include_query);
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
    if (fault::at("stream.event") == fault::Action::drop) {
      client_.reset();
      StopSignals::set_socket(-1);
      return fail(Errc::unavailable, fmt::format("lost the connection to {}: dropped by CDC_FAULT_PLAN", endpoint_));
    }
    if (auto opened = open_span_when_pending(); !opened) return fail(std::move(opened).error());
    auto outcome = handle_event(*bytes);
    if (!outcome) return fail(std::move(outcome).error());
    if (*outcome) return **outcome;
  }
}

Result<void> LiveRun::open_span_when_pending() {
  // Not while a FILE:OFFSET start is still being reached: an offset inside a transaction is
  // refused there, and a refused run writes nothing.
  if (!span_start_pending_ || span_start_at_transaction_ || silent_until_) return {};
  // Nothing is buffered yet, and the checkpoint is still the start.
  writer_.write_span_start(checkpoint_.position().to_string());
  if (auto saved = commit(checkpoint_.position(), checkpoint_.file_position(), last_gtid_, Checkpoint::Span::opened);
      !saved)
    return saved;
  span_start_pending_ = false;
  return {};
}

Unexpected LiveRun::dump_failed(const Error& error) {
  Error failure =
      dump_error(*client_, error, options_.connection, checkpoint_.position().to_string(), server_id_, "stream");
  client_.reset();
  StopSignals::set_socket(-1);
  return fail(std::move(failure));
}

Result<std::optional<LiveOutcome>> LiveRun::handle_event(std::span<const std::uint8_t> bytes) {
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
                                           silent_until_->file, silent_until_->offset, silent_until_->file, endpoint_));
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
  if (gate_error_) return fail(*std::exchange(gate_error_, std::nullopt));
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
    if ((wrote && (!checkpoint_.has_output_file() || since_save >= kOutputGroupCommit)) ||
        since_save > std::chrono::seconds(1)) {
      if (auto saved = checkpoint(); !saved) return fail(std::move(saved).error());
    } else {
      dirty_ = true;
    }
  }
  return after_boundary();
}

Result<std::optional<LiveOutcome>> LiveRun::after_boundary() {
  if (until_ && !silent_until_ && until_reached()) return reach_until();
  if (StopSignals::requested()) {
    if (auto saved = checkpoint(); !saved) return fail(std::move(saved).error());
    return std::optional<LiveOutcome>{LiveOutcome::finished};
  }
  return periodic_checks();
}

Result<std::optional<LiveOutcome>> LiveRun::reach_until() {
  if (span_start_at_transaction_) {
    // The span closed by the last run stays the output's last line: nothing was written.
    if (auto saved = checkpoint(Checkpoint::Span::closed); !saved) return fail(std::move(saved).error());
    reporter_.notice(fmt::format("nothing to do: --until {} was reached again before any transaction, at {}:{}",
                                 until_text_, last_boundary_.file, last_boundary_.offset));
    return std::optional<LiveOutcome>{LiveOutcome::finished};
  }
  writer_.write_span_end(current_position().to_string(), last_boundary_, until_text_);
  if (auto saved = checkpoint(Checkpoint::Span::closed); !saved) return fail(std::move(saved).error());
  reporter_.notice(fmt::format("reached --until {} at {}:{}", until_text_, last_boundary_.file, last_boundary_.offset));
  return std::optional<LiveOutcome>{LiveOutcome::finished};
}

Result<std::optional<LiveOutcome>> LiveRun::on_idle() {
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

Result<std::optional<LiveOutcome>> LiveRun::periodic_checks() {
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

void LiveRun::print_stats(Clock::time_point now) {
  const double seconds = std::chrono::duration<double>(now - last_stats_).count();
  const auto& summary = pipeline_->summary();
  const double events_per_second = seconds > 0 ? static_cast<double>(events_ - stats_events_) / seconds : 0;
  const double rows_per_second = seconds > 0 ? static_cast<double>(summary.rows - stats_rows_) / seconds : 0;
  const std::int64_t lag = seconds_behind();
  reporter_.notice(
      fmt::format("stats: {:.0f} events/s, {:.0f} rows/s, {} rows in {} transactions so far, {} s "
                  "behind the server, at {}:{}",
                  events_per_second, rows_per_second, summary.rows, summary.transactions, lag, last_boundary_.file,
                  last_boundary_.offset));
  last_stats_ = now;
  stats_events_ = events_;
  stats_rows_ = summary.rows;
}

void LiveRun::install_hooks() {
  if (until_time_) {
    // The stop comes before the first transaction committed at or after --until; the ones
    // read again up to a FILE:OFFSET resume point are before the start, not after it.
    pipeline_->set_transaction_gate([this](const TransactionStart& start) {
      if (silent_until_) return true;
      if (!(start.committed < *until_time_)) return false;
      if (span_start_at_transaction_) {
        // Before the transaction's first line; nothing was written since the start.
        span_start_at_transaction_ = false;
        if (auto opened = open_span_when_pending(); !opened) {
          gate_error_ = std::move(opened).error();
          return false;
        }
      }
      return true;
    });
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

Result<std::optional<LiveOutcome>> LiveRun::stop_before_ddl() {
  // The state goes where the DDL's transaction begins: a rerun reads it again. A DDL is a
  // transaction of its own and the gate runs before any of its lines, so what the writer
  // holds is whole earlier transactions (group commit): they go out with this checkpoint.
  if (auto saved = commit(pipeline_->tracker().position_at(transaction_start_.offset), transaction_start_, last_gtid_);
      !saved)
    return fail(std::move(saved).error());
  reporter_.warn(fmt::format("stopped before a DDL on a captured table (--on-ddl stop): {}", pending_ddl_));
  reporter_.notice(
      fmt::format("state saved before it{}{}; review the change, then rerun with --accept-ddl '{}' to "
                  "emit it and go on",
                  checkpoint_.has_state() ? " in " : "", checkpoint_.state_path(), pending_ddl_id_));
  return std::optional<LiveOutcome>{LiveOutcome::stopped_before_ddl};
}

Position LiveRun::current_position() const { return pipeline_->tracker().position_at(last_boundary_.offset); }

bool LiveRun::until_reached() const {
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

Result<void> LiveRun::checkpoint(Checkpoint::Span span) {
  // Nothing to save without a pipeline (none yet, or rolled back), nor while a FILE:OFFSET
  // start is still being reached: positions there are before the start.
  if (!pipeline_ || silent_until_) return {};
  if (auto saved = commit(current_position(), last_boundary_, last_gtid_, span); !saved) return saved;
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

Result<void> LiveRun::roll_back(std::string_view reason) {
  // Stdout cannot be cut back, and a big transaction goes out as it is read: lines of the
  // transaction in flight may be out. A discard line tells the reader to drop them (all
  // lines since the last commit line); the transaction comes again in full.
  // Asked after the roll-back, whose discard() waits for the rows thread: bytes_flushed()
  // then counts every line that went out.
  if (auto cut = checkpoint_.roll_back(writer_); !cut) return cut;
  const bool partly_out =
      !checkpoint_.has_output_file() && writer_.bytes_flushed() > checkpoint_.committed_bytes() && pipeline_;
  last_gtid_ = checkpoint_.gtid();
  dirty_ = false;
  const std::string in_flight(pipeline_ ? pipeline_->tracker().gtid() : std::string_view{});
  // The pipeline's tracker has read past the checkpoint, through what was just cut away: it
  // goes with it, so that no save (a stop in the pause before the next connection, the end of
  // the run) can take its position for one the output has. The next connection (or archive
  // pass) builds a new one, seeded from the checkpoint.
  pipeline_.reset();
  last_boundary_ = checkpoint_.file_position();
  if (partly_out) {
    writer_.write_discard(in_flight, transaction_start_, reason, static_cast<std::uint32_t>(std::time(nullptr)));
    return commit(checkpoint_.position(), checkpoint_.file_position(), last_gtid_);
  }
  return {};
}

Result<void> LiveRun::commit(gtid::Position position, gtid::FilePosition file, const std::string& gtid,
                             Checkpoint::Span span) {
  if (archive_)
    if (auto synced = archive_->sync(); !synced) return synced;
  return checkpoint_.commit(writer_, std::move(position), std::move(file), gtid, span);
}

Result<LiveOutcome> LiveRun::finish(LiveOutcome outcome) {
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

void LiveRun::write_metrics_when_due() {
  if (metrics_file_.due()) write_metrics();
}

void LiveRun::write_metrics() {
  if (!metrics_file_.enabled()) return;
  write_live_metrics(
      LiveCounts{start_time_, events_, binlog_bytes_, transactions_total_, &table_rows_, writer_.bytes_flushed(),
                 last_event_time_, seconds_behind(), last_boundary_, reconnects_, last_error_time_},
      metrics_text_);
  metrics_file_.publish(metrics_text_.text());
}

std::int64_t LiveRun::seconds_behind() const {
  if (caught_up_ || last_event_time_ == 0) return 0;
  return std::max<std::int64_t>(0, static_cast<std::int64_t>(std::time(nullptr)) - last_event_time_);
}

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
  LiveRun run(options, reporter, std::move(*filter), std::move(*checkpoint), std::move(*converter), std::move(archive));
  return run.run();
}

}  // namespace cdc::stream
