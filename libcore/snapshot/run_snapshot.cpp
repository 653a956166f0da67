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

namespace cdc::snapshot {

namespace {

constexpr std::size_t kFlushBytes = std::size_t{1} << 16;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool is_mariadb(const mysql::Connection& connection) {
  return connection.server_version().find("MariaDB") != std::string::npos;
}


// The binlog point in SHOW MASTER STATUS's answer.
Result<records::Watermark> binlog_point(const mysql::QueryResult& status) {
  if (status.rows.empty() || status.rows[0].size() < 2 || !status.rows[0][0] || !status.rows[0][1])
    return fail(Errc::config, "binary logging is off on the server (SHOW MASTER STATUS is empty); "
                              "cdc-snapshot needs log_bin for its watermarks");
  records::Watermark mark;
  mark.file = *status.rows[0][0];
  mark.offset = std::stoull(*status.rows[0][1]);
  return mark;
}

// SHOW MASTER STATUS (SHOW BINARY LOG STATUS on MySQL 8.4+, where the old name is gone).
Result<records::Watermark> binlog_status(mysql::Connection& connection) {
  auto status = connection.query("SHOW MASTER STATUS");
  if (!status) status = connection.query("SHOW BINARY LOG STATUS");
  if (!status) return fail(status.error());
  return binlog_point(*status);
}

std::string file_offset(const records::Watermark& mark) { return fmt::format("{}:{}", mark.file, mark.offset); }

std::string first_value(const mysql::QueryResult& result) {
  if (result.rows.empty() || result.rows[0].empty() || !result.rows[0][0]) return std::string();
  return *result.rows[0][0];
}

Result<std::string> single_value(mysql::Connection& connection, std::string_view sql) {
  auto result = connection.query(sql);
  if (!result) return fail(result.error());
  return first_value(*result);
}

// The read view opened, with the low watermark (see run_snapshot.h) and SHOW CREATE TABLE's
// answer for the chunk's table, asked just before the view opened.
struct ReadView {
  records::Watermark low;
  mysql::QueryResult table_definition;
};

Result<ReadView> open_read_view(mysql::Connection& connection, bool mariadb, const records::Chunk& chunk,
                                GtidAtOffset& gtids) {
  ReadView view;
  records::Watermark& low = view.low;
  if (!mariadb) {
    // MySQL: gtid_executed only holds engine-committed transactions, so read before the view.
    // (Untested: no MySQL server in this project's test setup.)
    auto shown = connection.query(TableDefinitions::show_create(chunk));
    if (!shown) return fail(std::move(shown).error());
    view.table_definition = std::move(*shown);
    auto mark = binlog_status(connection);
    if (!mark) return fail(mark.error());
    low = *mark;
    auto gtid_mode = single_value(connection, "SELECT @@global.gtid_mode");
    auto executed = single_value(connection, "SELECT @@global.gtid_executed");
    if (!executed) return fail(executed.error());
    low.position = gtid_mode && *gtid_mode == "ON" ? *executed : file_offset(low);
    if (auto started = connection.query("START TRANSACTION WITH CONSISTENT SNAPSHOT"); !started)
      return fail(started.error());
    low.ts_ms = now_ms();
    return view;
  }
  // One round trip: the table's definition, the view, and the view's binlog point.
  const std::string statements[] = {TableDefinitions::show_create(chunk), "START TRANSACTION WITH CONSISTENT SNAPSHOT",
                                    "SHOW STATUS LIKE 'binlog_snapshot_%'"};
  auto answers = connection.query_batch(statements);
  if (!answers) return fail(std::move(answers).error());
  low.ts_ms = now_ms();
  view.table_definition = std::move((*answers)[0]);
  bool have_offset = false;
  for (const auto& row : (*answers)[2].rows) {
    if (row.size() < 2 || !row[0] || !row[1]) continue;
    if (*row[0] == "Binlog_snapshot_file") low.file = *row[1];
    if (*row[0] == "Binlog_snapshot_position") {
      low.offset = std::stoull(*row[1]);
      have_offset = true;
    }
  }
  if (low.file.empty() || !have_offset)
    return fail(Errc::config, "binary logging is off on the server (binlog_snapshot_file is empty); "
                              "cdc-snapshot needs log_bin for its watermarks");
  // The GTID position of that point: BINLOG_GTID_POS reads the binlog file from its start,
  // so a process converts once and then advances (gtid_at_offset.h).
  auto gtid = gtids.position(connection, gtid::FilePosition{low.file, low.offset});
  if (!gtid) return fail(gtid.error());
  low.position = gtid->empty() ? file_offset(low) : *gtid;
  return view;
}

// The high watermark; then COMMIT, unless the read view is kept for the next chunk.
Result<records::Watermark> take_high(mysql::Connection& connection, bool mariadb, bool commit) {
  records::Watermark high;
  if (!mariadb) {
    auto mark = binlog_status(connection);
    if (!mark) return fail(mark.error());
    high = *mark;
    auto gtid = single_value(connection, "SELECT @@global.gtid_executed");
    if (!gtid) return fail(gtid.error());
    high.position = gtid->empty() ? file_offset(high) : *gtid;
    high.ts_ms = now_ms();
    if (commit)
      if (auto committed = connection.query("COMMIT"); !committed) return fail(committed.error());
    return high;
  }
  const std::string with_commit[] = {"SHOW MASTER STATUS", "SELECT @@global.gtid_binlog_pos", "COMMIT"};
  auto answers = connection.query_batch(std::span<const std::string>(with_commit, commit ? 3 : 2));
  if (!answers) return fail(std::move(answers).error());
  auto mark = binlog_point((*answers)[0]);
  if (!mark) return fail(mark.error());
  high = *mark;
  const std::string gtid = first_value((*answers)[1]);
  high.position = gtid.empty() ? file_offset(high) : gtid;
  high.ts_ms = now_ms();
  return high;
}

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

std::string encode_name(std::string_view name) {
  std::string out;
  for (const char c : name) {
    if (c == '/' || c == '%' || c == '\0') {
      fmt::format_to(std::back_inserter(out), "%{:02X}", static_cast<unsigned char>(c));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::string chunk_file_name(const records::Chunk& chunk) {
  return fmt::format("{}.{}.{}.ndjson", encode_name(chunk.db), encode_name(chunk.table), chunk.index);
}

Result<void> prepare_session(mysql::Connection& connection) {
  for (const char* sql : {"SET SESSION time_zone = '+00:00', character_set_results = NULL, net_write_timeout = 3600",
                          "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ"}) {
    if (auto done = connection.query(sql); !done) return fail(done.error());
  }
  return {};
}

Result<ChunkResult> ChunkReader::read(mysql::Connection& connection, const records::Chunk& chunk, ndjson::Writer& out,
                                      const Flush& flush) {
  const bool mariadb = is_mariadb(connection);
  ChunkResult result;
  if (!can_reuse(connection, chunk)) {
    // START TRANSACTION commits a view kept for another table, or one too old.
    view_.reset();
    auto opened = open_read_view(connection, mariadb, chunk, gtids_);
    if (!opened) return fail(TableDefinitions::gone_when_missing(std::move(opened).error(), chunk));
    ++views_opened_;
    view_ = KeptView{chunk.db,
                     chunk.table,
                     connection.thread_id(),
                     std::chrono::steady_clock::now(),
                     std::move(opened->low),
                     std::move(opened->table_definition)};
  }
  const auto abandon = [&] {
    view_.reset();
    (void)connection.query("ROLLBACK");
  };
  auto described = tables_.describe(connection, chunk, view_->table_definition);
  if (!described) {
    abandon();
    return fail(described.error());
  }
  result.low = view_->low;
  records::write_low(records::low_of(chunk, result.low), out);
  described->ts_ms = result.low.ts_ms;
  records::write_table_line(*described, out);

  std::vector<ColumnWriter> writers;
  std::vector<std::size_t> key_columns;  // positions of the key columns in the result
  rowimage::TextScratch scratch;
  // What every r line of the chunk repeats, serialized once: the members before "key", each
  // column's quoted name with its colon, and the "ts_ms" member. The bytes are those that
  // field()/key() would write.
  const std::string head = records::row_head_members(chunk.db, chunk.table);
  const std::string ts_member = records::ts_member(result.low.ts_ms);
  std::vector<std::string> quoted_names;
  // For each result column, its slot in key_columns (the value is written once under "key" and
  // copied under "after"), or -1.
  std::vector<int> key_slot;
  struct Span {
    std::size_t from = 0, size = 0;
  };
  std::vector<Span> key_values;  // where this row's key values are in the writer's buffer
  const auto on_columns = [&](const std::vector<StreamColumn>& columns) -> Result<void> {
    auto planned = plan_columns(columns);
    if (!planned) return fail(planned.error());
    writers = std::move(*planned);
    for (const std::string& key : chunk.key) {
      const auto found = std::find_if(chunk.columns.begin(), chunk.columns.end(),
                                      [&](const records::ChunkColumn& column) { return column.name == key; });
      if (found == chunk.columns.end())
        return fail(Errc::corrupt_input, fmt::format("key column {} is not in the chunk's \"columns\"", key));
      key_columns.push_back(static_cast<std::size_t>(found - chunk.columns.begin()));
    }
    if (columns.size() != chunk.columns.size())
      return fail(Errc::internal, fmt::format("the SELECT returned {} columns for the chunk's {}", columns.size(),
                                              chunk.columns.size()));
    quoted_names.clear();
    for (const records::ChunkColumn& column : chunk.columns) quoted_names.push_back(ndjson::quoted(column.name) + ":");
    key_slot.assign(chunk.columns.size(), -1);
    for (std::size_t k = 0; k < key_columns.size(); ++k)
      if (key_slot[key_columns[k]] < 0) key_slot[key_columns[k]] = static_cast<int>(k);
    key_values.assign(key_columns.size(), Span{});
    return {};
  };
  std::uint64_t rows = 0;
  std::uint64_t rows_bytes = 0;
  const auto on_row = [&](const std::vector<StreamCell>& cells) -> Result<void> {
    const std::size_t row_from = out.bytes_buffered();
    out.begin_object();
    out.raw_members(head);
    out.raw_comma_key(records::comma_key::key);
    // A table read whole has no key: null, as cdc-stream writes its changes.
    if (key_columns.empty())
      out.null();
    else
      out.begin_object();
    for (std::size_t k = 0; k < key_columns.size(); ++k) {
      const std::size_t i = key_columns[k];
      out.raw_key(quoted_names[i]);
      const std::size_t from = out.bytes_buffered();
      if (auto written = write_value(writers[i], cells[i], out, scratch); !written) {
        out.abandon_record();
        return fail(written.error().with_context(fmt::format("column {}", chunk.columns[i].name)));
      }
      key_values[k] = Span{from, out.bytes_buffered() - from};
    }
    if (!key_columns.empty()) out.end_object();
    // ,"before":null,"after": in one copy: the before member is constant, so it goes with the
    // next key (the bytes cdc-merge looks for, records::kRowBeforeAfter).
    out.raw_comma_key(records::kRowBeforeAfter);
    out.begin_object();
    for (std::size_t i = 0; i < cells.size(); ++i) {
      out.raw_key(quoted_names[i]);
      if (const int k = key_slot[i]; k >= 0) {
        out.copy_value(key_values[static_cast<std::size_t>(k)].from, key_values[static_cast<std::size_t>(k)].size);
        continue;
      }
      if (auto written = write_value(writers[i], cells[i], out, scratch); !written) {
        out.abandon_record();
        return fail(written.error().with_context(fmt::format("column {}", chunk.columns[i].name)));
      }
    }
    out.end_object();
    out.raw_members(ts_member);
    out.end_object();
    out.end_record();
    ++rows;
    rows_bytes += out.bytes_buffered() - row_from;
    if (out.bytes_buffered() >= kFlushBytes) return flush(out, rows);
    return {};
  };
  auto select = select_sql(chunk);
  if (!select) return fail(select.error());
  auto streamed = connection.stream_rows(*select, on_columns, on_row);
  if (!streamed) {
    abandon();
    Error error = streamed.error();
    if (error.code == Errc::server && (error.message.find("[1054]") != std::string::npos ||
                                       error.message.find("[1146]") != std::string::npos))
      error.code = Errc::corrupt_input;  // unknown column / table: the plan is stale
    return fail(std::move(error));
  }
  result.rows = rows;
  // Kept for the next chunk only while it is young enough to be reused then.
  const bool keep = std::chrono::steady_clock::now() - view_->opened < share_view_;
  if (!keep) view_.reset();
  auto high = take_high(connection, mariadb, !keep);
  if (!high) {
    view_.reset();
    return fail(high.error());
  }
  result.high = *high;
  records::write_high(records::High{records::chunk_ref(chunk), result.high, result.rows, rows_bytes}, out);
  return result;
}

bool ChunkReader::can_reuse(mysql::Connection& connection, const records::Chunk& chunk) const {
  return view_ && view_->connection_id == connection.thread_id() && connection.in_transaction() &&
         view_->db == chunk.db && view_->table == chunk.table &&
         std::chrono::steady_clock::now() - view_->opened < share_view_;
}

void ChunkReader::end_view(mysql::Connection& connection) {
  if (!view_) return;
  const bool same_connection = view_->connection_id == connection.thread_id();
  view_.reset();
  if (same_connection) (void)connection.query("COMMIT");
}

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
          records::write_snapshot_discard(records::SnapshotDiscard{records::chunk_ref(*chunk), error.message, now_ms()},
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
