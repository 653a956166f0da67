#pragma once

// The live run's class, internal to libcore/stream: its members are defined in live_stream.cpp
// (the connection loop, events, checkpoints), live_start.cpp (where the run starts and stops)
// and live_archive_replay.cpp (positions the server purged, read from an archive).

#include <chrono>
#include <cstdint>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "archive/archive_dir.h"
#include "binlog/decoder.h"
#include "gtid/position.h"
#include "metrics/text_format.h"
#include "replication/binlog_client.h"
#include "stream/archive_source.h"
#include "stream/change_pipeline.h"
#include "stream/change_writer.h"
#include "stream/checkpoint.h"
#include "stream/live_metrics.h"
#include "stream/live_stream.h"
#include "stream/primary_guard.h"
#include "stream/side_connection.h"
#include "util/time_text.h"

namespace cdc::stream {

// One live run: connects, streams, reconnects after a lost connection from the last
// checkpoint, and stops at --until, a signal, a guarded DDL or a primary switch. What is
// durable (output, state, resume point) is the Checkpoint's; where to start is
// start_position's; the second connection is SideConnection's.
class LiveRun {
 public:
  using Clock = std::chrono::steady_clock;
  using Position = gtid::Position;

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
    writer_.use_rows_thread();  // NDJSON: big rows events' lines on the second core
    if (options.output.include_query) writer_.include_queries();
    if (!options.wheres.empty()) writer_.set_row_filters(options.wheres);
    if (!options.columns.empty()) writer_.set_column_choices(options.columns);
  }

  Result<LiveOutcome> run();

 private:
  // ---- start-up -------------------------------------------------------------------------

  Result<void> prepare();

  // --until already reached where the run starts: the span's lines, unless the output has
  // them already (a rerun of a finished bounded run writes nothing).
  Result<void> close_span_at_start();

  // ---- one connection ---------------------------------------------------------------------

  Result<LiveOutcome> stream_once();

  // --until: the span opens with the first event read, from the server or the archive.
  Result<void> open_span_when_pending();

  // ---- the archive as a source ------------------------------------------------------------

  // The server said `purged` for the checkpoint's position: the archive's files are read from
  // there, through the same decoder, pipeline and checkpoints as the server's events, up to
  // the archive's last whole transaction, so the dump that follows starts right after the last
  // one written, with no gap and nothing twice. When the archive's end cuts a transaction off,
  // the output goes back to the last save and the whole transactions after it are read again,
  // up to the cut one's start (a second pass: saves are grouped, and the cut one cannot be
  // known before the end). An outcome when the run ends inside the archive (--until, a signal,
  // a DDL stop); an error when the archive does not help.
  Result<std::optional<LiveOutcome>> replay_archive(const Error& purged);

  // One pass over the archive from the checkpoint's position, up to `stop` (an event boundary)
  // or the archive's end; `end` is where it stopped.
  Result<std::optional<LiveOutcome>> replay_pass(const ArchiveSource& source, const Error& purged,
                                                 const std::optional<gtid::FilePosition>& stop,
                                                 gtid::FilePosition& end);

  Result<std::optional<LiveOutcome>> replay_files(const ArchiveSource& source, const std::string& first,
                                                  const std::optional<gtid::FilePosition>& stop,
                                                  gtid::FilePosition& end);

  Unexpected dump_failed(const Error& error);

  // Returns an outcome when the run ends here.
  Result<std::optional<LiveOutcome>> handle_event(std::span<const std::uint8_t> bytes);

  // Checks everything that may end the run where a transaction has just ended.
  Result<std::optional<LiveOutcome>> after_boundary();

  // --until reached, between transactions: the span's end, saved with the state.
  Result<std::optional<LiveOutcome>> reach_until();

  Result<std::optional<LiveOutcome>> on_idle();

  // The server's clock, as this host's corrected by the difference measured at the start.
  UtcTime server_now() const;

  Result<void> server_clock_skew();

  Result<std::optional<LiveOutcome>> periodic_checks();

  void print_stats(Clock::time_point now);

  // ---- DDL --------------------------------------------------------------------------------

  void install_hooks();

  Result<std::optional<LiveOutcome>> stop_before_ddl();

  // ---- positions and checkpoints ----------------------------------------------------------

  Position current_position() const;

  bool until_reached() const;

  bool until_reached_at_start() const;

  // After whole transactions: their lines out (and on disk with --output), then the state.
  Result<void> checkpoint(Checkpoint::Span span = Checkpoint::Span::unchanged);

  // After a lost connection: the output back to the last checkpoint, which the next
  // connection resumes from. Whole transactions read since are read again.
  Result<void> roll_back(std::string_view reason);

  // Checkpoint::commit, after the archive's sync: a state saved never points past the end of
  // the archive, so a run after a crash finds every event since the state in it or on the
  // server (and the archive continues without a gap).
  Result<void> commit(gtid::Position position, gtid::FilePosition file, const std::string& gtid,
                      Checkpoint::Span span = Checkpoint::Span::unchanged);

  Result<LiveOutcome> finish(LiveOutcome outcome);

  // ---- --metrics ----------------------------------------------------------------------------

  void write_metrics_when_due();

  // The file in Prometheus' text format (cdc-stream(1), METRICS).
  void write_metrics();

  std::int64_t seconds_behind() const;

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
  std::optional<UtcTime> until_time_;   // --until TIME
  std::string until_text_;              // what the span_end line says it reached; empty without --until
  std::int64_t clock_skew_micros_ = 0;  // the server's clock minus this host's
  std::optional<gtid::FilePosition> silent_until_;
  gtid::FilePosition last_boundary_;      // the end of the last whole transaction
  gtid::FilePosition transaction_start_;  // where the transaction in flight began
  std::uint64_t transactions_saved_ = 0;
  std::string last_gtid_;
  bool span_start_pending_ = false;  // --until: span_start goes out with the first event
  // ... or, on a rerun of a run that closed its span at --until TIME, with the first
  // transaction committed before that time: reaching it again at once writes no empty span.
  bool span_start_at_transaction_ = false;
  std::optional<Error> gate_error_;  // opening the span from the transaction gate failed
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

}  // namespace cdc::stream
