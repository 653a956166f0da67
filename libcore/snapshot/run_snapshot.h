#pragma once

// cdc-snapshot's work: for each op:"chunk" line, in a read-only transaction, the low
// watermark, the chunk's rows streamed and the high watermark (man/cdc-snapshot.1 and
// man/cdc-merge.1, "The merge"). Consecutive chunks of a table may share the transaction and
// its low watermark (ChunkReader below): then the setup (the MariaDB and MySQL items) is done
// once for all of them, and the last item for each:
//
//   MariaDB  SHOW CREATE TABLE (table_definitions.h), START TRANSACTION WITH CONSISTENT
//            SNAPSHOT and SHOW STATUS LIKE 'binlog_snapshot_%' (the binlog point of exactly
//            that read view) in one round trip; then that point's GTID position:
//            BINLOG_GTID_POS(file, offset) for the process's first chunk, then the last one
//            advanced over the binlog written since (snapshot/gtid_at_offset.h).
//   MySQL    @@global.gtid_executed read BEFORE the read view opens (it only holds
//            transactions committed in the engine), then START TRANSACTION WITH CONSISTENT
//            SNAPSHOT. Written to the design, not yet run against a MySQL server.
//   both     the SELECT inside that transaction, fetched row by row (binary protocol, no
//            stored result: memory holds one row); then SHOW MASTER STATUS and
//            @@global.gtid_binlog_pos (MySQL: gtid_executed) for the high watermark, and
//            COMMIT unless the view is kept (on MariaDB in one round trip).
//
// Output per chunk (man/cdc-ndjson.5, man/cdc-snapshot.1): op:"low", op:"table" (the table as
// information_schema describes it, read with the key check), one op:"r" per row, op:"high". A
// chunk without its high line was not finished.
//
// Errors name the input line and the chunk ("chunks.ndjson:3: shop.orders chunk 2/12: ...")
// and stop the run; chunks already written stay written:
//   malformed chunk line, key column type changed, table or column gone   Errc::corrupt_input (65)
//   binary logging off                                                     Errc::config (78)
//   server unreachable at the start, or for longer than --retry-for        Errc::unavailable (69)
//
// A connection lost during a chunk (the network, a server restart, KILL) is not an error: the
// chunk's partial output is dropped (--output-dir: its .partial file is rewritten; stdout: an
// op:"discard" line follows what was written of it) and the chunk is read again on a new
// connection, with new watermarks, on cdc-stream's backoff.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mysql/connection.h"
#include "mysql/connection_options.h"
#include "ndjson/writer.h"
#include "records/chunk.h"
#include "records/snapshot_lines.h"
#include "snapshot/chunk.h"
#include "snapshot/gtid_at_offset.h"
#include "snapshot/table_definitions.h"
#include "util/result.h"

namespace cdc::snapshot {

struct ChunkResult {
  records::Watermark low;
  records::Watermark high;
  std::uint64_t rows = 0;
};

// Sets up a connection for reading chunks: time_zone '+00:00', character_set_results NULL
// (values in each column's own bytes, with the column's collation id in the result
// metadata), REPEATABLE READ.
[[nodiscard]] Result<void> prepare_session(mysql::Connection& connection);

// Reads one chunk into out: the low line, the table line, the rows, the high line. flush is
// called whenever out holds enough to write, with the rows read so far (the last flush is
// left to the caller). Checks first that the table still exists and that its key columns
// still have the planned types.
using Flush = std::function<Result<void>(ndjson::Writer&, std::uint64_t rows)>;

// What a process keeps from one chunk to the next, so that the per-chunk setup does not
// cost the server more than the rows do: the last low watermark's GTID position, advanced
// rather than asked again (gtid_at_offset.h), the tables described (table_definitions.h),
// and, with share_view, the read view itself. One reader per process, for chunks read one
// after another on any connection to the same server.
//
// A shared read view: consecutive chunks of one table, on the same connection, are read in
// the transaction the first of them opened, for up to share_view after it opened. Their low
// lines are that view's low watermark (the rows of each are exactly those of that binlog
// point) and each still gets its own high watermark, taken after its SELECT. What a view costs
// the server (SHOW STATUS above all, a quarter of a millisecond however small the chunk) is
// then paid once per view rather than once per chunk. The view is left open after a chunk
// only while it is younger than share_view; end_view() commits it (cdc-snapshot calls it when
// no next chunk line is at hand, so a process waiting for input holds no transaction and no
// metadata lock). A view is never reused on another connection, or when the session's
// transaction ended meanwhile (the server's status flags say so: a reconnection, a DDL
// statement on the connection).
class ChunkReader {
 public:
  // options: how GtidAtOffset connects for its replication reads. share_view: how long
  // consecutive chunks of a table may share a read view; zero: one view per chunk.
  explicit ChunkReader(mysql::ConnectionOptions options, std::chrono::milliseconds share_view = {})
      : gtids_(std::move(options)), share_view_(share_view) {}

  [[nodiscard]] Result<ChunkResult> read(mysql::Connection& connection, const records::Chunk& chunk,
                                         ndjson::Writer& out, const Flush& flush);

  // Commits the read view kept open for a next chunk, if there is one. A failure is not
  // reported: the transaction only read, and a lost connection shows at the next chunk.
  void end_view(mysql::Connection& connection);
  // Forgets the kept view without a word to the server (its connection is gone).
  void drop_view() noexcept { view_.reset(); }

  // For the tests and the benchmark: how the last low's position was found, how many times a
  // table was described from information_schema, how many read views were opened, and
  // whether one is open now.
  [[nodiscard]] const GtidAtOffset& gtids() const noexcept { return gtids_; }
  [[nodiscard]] const TableDefinitions& tables() const noexcept { return tables_; }
  [[nodiscard]] std::uint64_t views_opened() const noexcept { return views_opened_; }
  [[nodiscard]] bool view_open() const noexcept { return view_.has_value(); }

 private:
  // The read view kept open for the next chunk of the same table.
  struct KeptView {
    std::string db;
    std::string table;
    std::uint64_t connection_id = 0;
    std::chrono::steady_clock::time_point opened;
    records::Watermark low;
    mysql::QueryResult table_definition;  // SHOW CREATE TABLE's answer when the view opened
  };
  [[nodiscard]] bool can_reuse(mysql::Connection& connection, const records::Chunk& chunk) const;

  GtidAtOffset gtids_;
  TableDefinitions tables_;
  std::chrono::milliseconds share_view_;
  std::optional<KeptView> view_;
  std::uint64_t views_opened_ = 0;
};

struct Options {
  mysql::ConnectionOptions connection;
  std::vector<std::string> inputs;        // files of chunk lines; empty or "-" = stdin
  std::optional<std::string> output_dir;  // one file per chunk instead of stdout
  bool progress = false;                  // progress on stderr even when it is not a terminal
  std::optional<std::string> metrics_path;  // --metrics: Prometheus text, rewritten every few seconds
  // --retry-for: a chunk whose connection is lost is read again, on a new connection with new
  // watermarks (backoff as cdc-stream's), until reconnecting has failed this long; 0: forever.
  unsigned retry_for_seconds = 0;
  // --shard INDEX/COUNT: only the chunk lines whose number (from 0, across the inputs in
  // order) is INDEX modulo COUNT, so that COUNT processes given the same plan (a Kubernetes
  // Indexed Job's pods, a GNU parallel slot each) share it without splitting the file.
  struct Shard {
    std::uint64_t index = 0;
    std::uint64_t count = 1;
  };
  std::optional<Shard> shard;
  // --share-view MS: consecutive chunks of a table share one read view for up to this long
  // (ChunkReader); zero: a view per chunk.
  static constexpr std::chrono::milliseconds kDefaultShareView{250};
  std::chrono::milliseconds share_view{kDefaultShareView};
  // --scheduling: batch runs the process as Linux's SCHED_BATCH, so that rows arriving do not
  // make it preempt what runs on the CPU (on the server's host, the server's threads sending
  // them); normal leaves the scheduling as it is.
  enum class Scheduling { batch, normal };
  Scheduling scheduling = Scheduling::batch;
};

// "INDEX/COUNT" with INDEX < COUNT; Errc::usage naming the form otherwise.
[[nodiscard]] Result<Options::Shard> parse_shard(std::string_view text);

struct Summary {
  std::uint64_t chunks_read = 0;
  std::uint64_t chunks_skipped = 0;  // --output-dir: already finished by an earlier run
  std::uint64_t rows = 0;
};

// The file a chunk goes to under --output-dir: "<db>.<table>.<index>.ndjson" ('/' and '%' in
// names percent-encoded), written as "<that>.partial" and renamed once its high line is out.
[[nodiscard]] std::string chunk_file_name(const records::Chunk& chunk);

[[nodiscard]] Result<Summary> run(const Options& options, int stdin_fd, int stdout_fd, int stderr_fd);

}  // namespace cdc::snapshot
