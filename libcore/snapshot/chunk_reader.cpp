// Reading one chunk (snapshot/run_snapshot.h, ChunkReader): its read view between the low and
// high watermarks, the table line and the rows of its key range.
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

constexpr std::size_t kFlushBytes = std::size_t{1} << 16;

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
    low.ts_ms = wall_clock_ms();
    return view;
  }
  // The process's first view: a point whose GTID position is known, to advance the low from.
  if (!gtids.knows_a_point())
    if (auto sampled = gtids.sample(connection); !sampled) return fail(std::move(sampled).error());
  // One round trip: the table's definition, the view, and the view's binlog point.
  const std::string statements[] = {TableDefinitions::show_create(chunk), "START TRANSACTION WITH CONSISTENT SNAPSHOT",
                                    "SHOW STATUS LIKE 'binlog_snapshot_%'"};
  auto answers = connection.query_batch(statements);
  if (!answers) return fail(std::move(answers).error());
  low.ts_ms = wall_clock_ms();
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
    high.ts_ms = wall_clock_ms();
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
  high.ts_ms = wall_clock_ms();
  return high;
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

}  // namespace cdc::snapshot
