#include "stream/change_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

#include "records/kinds.h"
#include "records/row.h"
#include "records/stream_lines.h"
#include "schema/table_description.h"
#include "util/fd_io.h"

namespace cdc::stream {

namespace {

constexpr std::size_t kFlushThreshold = std::size_t{1} << 18;

// The members a Writer wrote into one object, without the braces and the record's newline:
// {"a":1,"b":2}\n -> "a":1,"b":2.
std::string_view members_of(const ndjson::Writer& writer) {
  const std::string_view record = writer.buffered();
  return record.substr(1, record.size() - 3);
}

// Whether `part` lies in `block` (an empty span does, wherever it points), and where.
bool inside(const std::vector<std::uint8_t>& block, std::span<const std::uint8_t> part) {
  const auto begin = reinterpret_cast<std::uintptr_t>(block.data());
  const auto at = reinterpret_cast<std::uintptr_t>(part.data());
  return part.empty() || (at >= begin && at - begin <= block.size() && part.size() <= block.size() - (at - begin));
}
Span span_in(const std::vector<std::uint8_t>& block, std::span<const std::uint8_t> part) {
  if (part.empty()) return {};
  const auto from = static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(part.data()) -
                                             reinterpret_cast<std::uintptr_t>(block.data()));
  return {from, from + part.size()};
}

std::string described_key(std::string_view database, std::string_view table) {
  std::string key;
  key.reserve(database.size() + 1 + table.size());
  key.append(database).append(1, '\0').append(table);
  return key;
}

}  // namespace

ChangeWriter::ChangeWriter(int out_fd, std::string out_name) : out_fd_(out_fd), out_name_(std::move(out_name)) {}

ChangeWriter::~ChangeWriter() {
  worker_.reset();  // joins the thread before the converter it uses goes
  rows_worker_.reset();
  if (spill_fd_ >= 0) ::close(spill_fd_);
}

void ChangeWriter::set_converter(std::unique_ptr<output::Converter> converter, bool hold_transactions) {
  worker_.reset();
  if (converter) rows_worker_.reset();
  converter_ = std::move(converter);
  hold_transactions_ = converter_ != nullptr && hold_transactions;
  row_spans_.want_before_key = converter_ != nullptr && converter_->uses_before_key();
  batch_.clear();
  event_in_batch_ = false;
  if (converter_ && !hold_transactions_) worker_ = std::make_unique<ConversionWorker>(*converter_, out_fd_, out_name_);
}

void ChangeWriter::use_rows_thread(std::size_t min_event_bytes) {
  rows_thread_min_bytes_ = min_event_bytes;
  if (!converter_ && !rows_worker_) rows_worker_ = std::make_unique<RowsWorker>(out_fd_, out_name_);
}

void ChangeWriter::set_row_filters(std::vector<filter::WhereOption> wheres) {
  row_filters_.emplace(std::move(wheres));
  tables_.clear();  // bound as each table's rows come
  next_table_slot_ = 0;
}

void ChangeWriter::set_column_choices(std::vector<filter::ColumnsOption> choices) {
  column_choices_ = std::move(choices);
  tables_.clear();  // applied as each table's rows come
  next_table_slot_ = 0;
}

Result<ChangeWriter::TableEntry*> ChangeWriter::table_entry(const binlog::TableMap& map,
                                                            const ChangePosition& position) {
  for (TableEntry& entry : tables_)
    if (entry.plan.built_for(map)) return &entry;
  TableEntry* entry = nullptr;
  if (tables_.size() < kCachedTables) {
    entry = &tables_.emplace_back();
  } else {
    entry = &tables_[next_table_slot_];
    next_table_slot_ = (next_table_slot_ + 1) % kCachedTables;
  }
  entry->plan.build(map);
  entry->rows_table.reset();
  entry->table_members = records::table_members(map.database, map.table);
  entry->quoted_db = ndjson::quoted(map.database);
  entry->quoted_table = ndjson::quoted(map.table);
  entry->line = schema::describe_table_map(map);
  pieces_.clear();
  records::write_table_line(entry->line, pieces_);
  entry->description.assign(pieces_.buffered());
  pieces_.clear();
  entry->filter.reset();
  if (row_filters_) {
    // Bound to every column of the map: the filter reads the images before any is trimmed.
    auto filter = row_filters_->for_table(entry->line, entry->description,
                                          fmt::format("{}:{}", position.file, position.offset));
    if (!filter) {
      entry->plan = rowimage::TablePlan{};  // not built for the map: the next event tries again
      return fail(std::move(filter).error());
    }
    entry->filter = std::move(*filter);
  }
  if (auto kept = keep_chosen_columns(*entry, map, position); !kept) {
    entry->plan = rowimage::TablePlan{};
    return fail(std::move(kept).error());
  }
  const auto last = described_.find(described_key(map.database, map.table));
  entry->described = last != described_.end() && last->second == entry->description;
  return entry;
}

namespace {

// MariaDB's DB_ROW_HASH_<n>: one hidden column per long UNIQUE key (a HASH index), which the
// binary log carries after the table's own columns but no SELECT can read; a snapshot has no
// such column, so neither do the lines. Known from the catalog where it completed the map (a
// column information_schema does not list, other than a versioned table's row_start/row_end),
// else by the name the server gives it on a trailing BIGINT.
std::vector<bool> server_internal_columns(const binlog::TableMap& map, const records::TableLine& line) {
  std::vector<bool> internal(line.columns.size(), false);
  if (!map.column_types.empty()) {
    for (std::size_t i = 0; i < internal.size() && i < map.column_types.size(); ++i)
      internal[i] = map.column_types[i].empty();
    return internal;
  }
  for (std::size_t i = internal.size(); i-- > 0;) {
    const std::string_view name = line.columns[i].name;
    const bool hash = name.starts_with("DB_ROW_HASH_") && name.size() > 12 &&
                      name.find_first_not_of("0123456789", 12) == std::string_view::npos &&
                      i < map.columns.size() && map.columns[i].type == ColumnType::longlong;
    if (!hash) break;
    internal[i] = true;
  }
  return internal;
}

}  // namespace

Result<void> ChangeWriter::keep_chosen_columns(TableEntry& entry, const binlog::TableMap& map,
                                               const ChangePosition& position) {
  records::TableLine& line = entry.line;
  std::vector<bool> kept = server_internal_columns(map, line);
  const bool any_internal = std::find(kept.begin(), kept.end(), true) != kept.end();
  kept.flip();
  const auto chosen = column_choices_.empty() ? Result<const filter::ColumnsOption*>(nullptr)
                                              : filter::columns_for(column_choices_, line.db, line.table);
  if (!chosen) return fail(chosen.error());
  if (*chosen == nullptr) {
    if (any_internal) keep_only(entry, kept);
    return {};
  }
  const std::string name = fmt::format("{}.{}", line.db, line.table);
  const auto at = [&] { return fmt::format("{}:{}: {}", position.file, position.offset, name); };
  if (!line.key || line.key->empty())
    return fail(Errc::usage, fmt::format("{}: --columns '{}': the table has no primary key in the binary log, so only "
                                         "its whole row tells rows apart: capture all its columns",
                                         at(), (*chosen)->text));
  const filter::WhereOption* where = nullptr;
  if (row_filters_) {
    auto found = filter::where_for(row_filters_->options(), line.db, line.table);
    if (!found) return fail(found.error());
    where = *found;
  }
  std::vector<std::string> names;
  for (const records::TableColumn& column : line.columns) names.push_back(column.name);
  auto chosen_kept = filter::kept_columns(**chosen, name, names, *line.key, where ? &where->expression : nullptr);
  if (!chosen_kept)
    return fail(Errc::usage, fmt::format("{}:{}: {}", position.file, position.offset, chosen_kept.error().message));
  for (std::size_t i = 0; i < kept.size(); ++i) kept[i] = kept[i] && (*chosen_kept)[i];
  keep_only(entry, kept);
  return {};
}

void ChangeWriter::keep_only(TableEntry& entry, const std::vector<bool>& kept) {
  records::TableLine& line = entry.line;
  entry.plan.keep_columns(kept);
  std::vector<records::TableColumn> columns;
  for (std::size_t i = 0; i < line.columns.size(); ++i)
    if (kept[i]) columns.push_back(std::move(line.columns[i]));
  line.columns = std::move(columns);
  pieces_.clear();
  records::write_table_line(line, pieces_);
  entry.description.assign(pieces_.buffered());
  pieces_.clear();
}

void ChangeWriter::describe(TableEntry& table, const ChangePosition& position, std::uint32_t timestamp) {
  if (table.described) return;
  table.line.pos = records::TablePos{std::string(position.file), position.offset, std::string(position.gtid)};
  table.line.ts_ms = std::int64_t{timestamp} * 1000;
  records::write_table_line(table.line, out_);
  table.line.pos.reset();
  table.line.ts_ms = 0;
  described_[described_key(table.line.db, table.line.table)] = table.description;
  // Another cached map of the table holds another description, which the output no longer has.
  for (TableEntry& entry : tables_)
    if (&entry != &table && entry.line.db == table.line.db && entry.line.table == table.line.table)
      entry.described = false;
  table.described = true;
}

void ChangeWriter::forget_described() noexcept {
  described_.clear();
  for (TableEntry& entry : tables_) entry.described = false;
}

void ChangeWriter::include_queries() { query_member_.assign(records::kQueryKey).append("null"); }

void ChangeWriter::set_query(std::string_view sql) {
  if (query_member_.empty()) return;
  pieces_.clear();
  pieces_.begin_object();
  pieces_.field(records::field::query, sql);
  pieces_.end_object();
  pieces_.end_record();
  query_member_.assign(members_of(pieces_));
  pieces_.clear();
}

void ChangeWriter::forget_query() {
  if (query_member_.empty()) return;
  query_member_.assign(records::kQueryKey).append("null");  // into the capacity it has
}

void ChangeWriter::prepare_event(const ChangePosition& position, std::uint32_t timestamp) {
  event_in_batch_ = false;
  // Without the thread, batch_ holds the current event's rows only, one at a time.
  if (converter_ && !worker_) batch_.clear();
  event_position_ = position;
  event_ts_ms_ = std::uint64_t{timestamp} * 1000U;
  pieces_.clear();
  pieces_.begin_object();
  pieces_.field(records::field::file, position.file);
  pieces_.field(records::field::offset, position.offset);
  pieces_.end_object();
  pieces_.end_record();
  pos_members_.assign(members_of(pieces_));
  pos_members_ += records::comma_key::index;  // the row's index follows
  pieces_.clear();
  pieces_.begin_object();
  if (position.gtid.empty())
    pieces_.field_null(records::field::gtid);
  else
    pieces_.field(records::field::gtid, position.gtid);
  pieces_.end_object();
  pieces_.end_record();
  gtid_member_.assign(members_of(pieces_));
  pieces_.clear();
  pieces_.begin_object();
  pieces_.field(records::field::server_id, position.server_id);
  if (position.thread)
    pieces_.field(records::field::thread, *position.thread);
  else
    pieces_.field_null(records::field::thread);
  pieces_.field(records::field::ts_ms, std::uint64_t{timestamp} * 1000U);
  pieces_.end_object();
  pieces_.end_record();
  tail_members_.assign(members_of(pieces_));
  pieces_.clear();
  if (converter_) {
    file_text_ = ndjson::quoted(position.file);
    offset_text_ = fmt::format_int(position.offset).str();
    gtid_text_ = position.gtid.empty() ? std::string("null") : ndjson::quoted(position.gtid);
    server_id_text_ = fmt::format_int(position.server_id).str();
    thread_text_ = position.thread ? fmt::format_int(*position.thread).str() : std::string("null");
    ts_ms_text_ = fmt::format_int(std::uint64_t{timestamp} * 1000U).str();
  }
}

Result<std::uint64_t> ChangeWriter::write_rows(const binlog::RowsEvent& event, const binlog::TableMap& map,
                                               const ChangePosition& position, std::uint32_t timestamp) {
  if (event.column_count != map.columns.size())
    return fail(Errc::corrupt_input, fmt::format("{}:{}: rows event has {} columns, its TABLE_MAP {}.{} has {}",
                                                 position.file, position.offset, event.column_count, map.database,
                                                 map.table, map.columns.size()));
  const bool partial = !binlog::all_columns_present(event.columns_before, event.column_count) ||
                       !binlog::all_columns_present(event.columns_after, event.column_count);
  partial_images_seen_ = partial_images_seen_ || partial;
  auto entry = table_entry(map, position);
  if (!entry) return fail(std::move(entry).error());
  TableEntry& table = **entry;
  const rowimage::TablePlan& plan = table.plan;
  prepare_event(position, timestamp);
  const rowimage::RowsShape shape = rowimage::rows_shape(event, plan);
  ByteReader rows(event.rows, event.rows_offset);
  // A row image with no present columns takes no bytes; only a corrupt event has one, and
  // reading its rows would never reach their end.
  if (!rows.empty() && !shape.has_columns)
    return fail(Errc::corrupt_input, fmt::format("{}:{}: rows event for {}.{} has {} bytes of rows but no columns in "
                                                 "its images",
                                                 position.file, position.offset, map.database, map.table,
                                                 rows.remaining()));
  const RowsSource source{position.file, position.offset, event.kind, map.database, map.table};
  // The rows thread writes the event's lines while this one reads on, unless it has all the
  // work it can take: then this thread writes them rather than wait.
  const bool to_rows_thread = rows_worker_ && !rows.empty() && rows.remaining() >= rows_thread_min_bytes_ &&
                              rows_worker_->in_flight() < RowsWorker::kMaxInFlight;
  // The rows' sizes go along so that the worker does not size them again; not for a big
  // event, where they could take several times its bytes (a row may take two).
  const std::size_t sizes_from = work_.row_sizes.size();
  std::vector<rowimage::RowSizes>* const sizes =
      to_rows_thread && rows.remaining() <= RowsWorker::kWorkBytes ? &work_.row_sizes : nullptr;
  // --where: each row judged before anything of the event is written, so that dropped rows
  // are never formatted and the count of lines is known here, whichever thread writes them.
  verdicts_.clear();
  filter_conversions_ = {};
  judged_rows_.reset();
  std::optional<std::uint64_t> count;
  if (table.filter && !rows.empty()) {
    auto judged = table.filter->judge(event.rows, event.rows_offset, plan, shape, source, scratch_, verdicts_, sizes);
    if (!judged) return fail(std::move(judged).error());
    if (judged->complete) {
      judged_rows_ = verdicts_.size();
      if (judged->kept == 0) {
        if (sizes != nullptr) sizes->resize(sizes_from);
        return 0;  // nothing of the event: no table line either
      }
      count = judged->kept;
      filter_conversions_ = {judged->as_inserts, judged->as_deletes};
    }
  } else if (to_rows_thread) {
    // Counted on a reader of its own (`rows` has not moved yet).
    count = rowimage::count_rows(ByteReader(event.rows, event.rows_offset), plan, shape, scratch_, sizes);
  }
  if (!rows.empty()) describe(table, position, timestamp);  // a line only before a change
  const records::ChangeOp op = change_op(event.kind);
  head_members_.assign(records::change_op_member(op));
  head_members_ += ',';
  head_members_ += table.table_members;
  const EventLines lines{head_members_,         pos_members_, gtid_member_, tail_members_,
                         position.first_index, partial,      query_member_};
  if (to_rows_thread && count)
    return defer_rows(event, table, map, lines, *count, Span{sizes_from, work_.row_sizes.size()});
  if (sizes != nullptr) sizes->resize(sizes_from);
  // With a converter, each row line goes through it as it ends, after the lines before it.
  if (converter_ && !worker_ && !rows.empty())
    if (auto converted = convert_ended(); !converted) return fail(std::move(converted).error());
  // Whether the converter reads the images' values of a line of this op; an update under
  // --where may be written as an insert or a delete too.
  const auto uses_values = [this](records::ChangeOp line_op) {
    return converter_->uses_image_values(records::change_op_member(line_op)[6]);
  };
  row_spans_.values =
      converter_ && (uses_values(op) || (!verdicts_.empty() && op == records::ChangeOp::update &&
                                         (uses_values(records::ChangeOp::insert) ||
                                          uses_values(records::ChangeOp::erase))))
          ? &batch_.values
          : nullptr;
  auto written = write_row_lines(rows, plan, shape, lines, source, out_, scratch_, converter_ ? &row_spans_ : nullptr,
                                 {}, verdicts_, [&](const WrittenLine& line) -> Result<void> {
                                   if (converter_) {
                                     // The op member's value: "op":"c" -> "c".
                                     mark_row(records::change_op_member(line.op).substr(5), table, line);
                                     if (!worker_)
                                       if (auto converted = convert_marked_row(); !converted) return converted;
                                   }
                                   return flush_if_large();
                                 });
  if (scratch_.lossy_text && lossy_text_table_.empty()) lossy_text_table_ = map.database + "." + map.table;
  return written;
}

Result<std::uint64_t> ChangeWriter::defer_rows(const binlog::RowsEvent& event, TableEntry& table,
                                               const binlog::TableMap& map, const EventLines& lines,
                                               std::uint64_t count, Span row_sizes) {
  if (!table.rows_table) {
    auto made = std::make_shared<RowsTable>();
    made->map = map;
    made->plan.build(made->map);
    made->plan.keep_columns_of(table.plan);  // --columns
    table.rows_table = std::move(made);
  }
  DeferredRows job;
  job.table = table.rows_table;
  job.at = out_.bytes_buffered();
  if (const std::vector<std::uint8_t>* block = input_ != nullptr ? input_->get() : nullptr;
      block != nullptr && inside(*block, event.columns_before) && inside(*block, event.columns_after) &&
      inside(*block, event.rows)) {
    // In place: the block stays as it is while the work holds it (FileReader::block).
    if (work_.held.empty() || work_.held.back().get() != block) work_.held.emplace_back(*input_);
    job.held_bytes = block->data();
    job.columns_before = span_in(*block, event.columns_before);
    job.columns_after = span_in(*block, event.columns_after);
    job.rows = span_in(*block, event.rows);
  } else {
    job.columns_before = work_.add_bytes(event.columns_before);
    job.columns_after = work_.add_bytes(event.columns_after);
    job.rows = work_.add_bytes(event.rows);
  }
  job.head_members = work_.add_members(lines.head_members);
  job.pos_members = work_.add_members(lines.pos_members);
  job.gtid_member = work_.add_members(lines.gtid_member);
  job.tail_members = work_.add_members(lines.tail_members);
  job.query_member = work_.add_members(lines.query_member);
  job.file = work_.add_members(event_position_.file);
  job.kind = event.kind;
  job.column_count = event.column_count;
  job.rows_offset = event.rows_offset;
  job.offset = event_position_.offset;
  job.first_index = lines.first_index;
  job.partial = lines.partial;
  job.row_sizes = row_sizes;
  job.verdicts = Span{work_.verdicts.size(), work_.verdicts.size() + verdicts_.size()};
  work_.verdicts.insert(work_.verdicts.end(), verdicts_.begin(), verdicts_.end());
  work_.jobs.push_back(std::move(job));
  work_rows_bytes_ += event.rows.size();
  if (work_rows_bytes_ >= RowsWorker::kWorkBytes)
    if (auto handed = hand_off_rows(); !handed) return fail(std::move(handed).error());
  return count;
}

Result<void> ChangeWriter::hand_off_rows() {
  // The jobs' places count from the start of out_'s buffer, which holds no lines from before
  // the last hand-off.
  out_.take_ended_records(work_.text);
  work_rows_bytes_ = 0;
  if (work_.text.size() == 0 && work_.jobs.empty()) return {};
  rows_handed_over_ = true;
  return rows_worker_->submit(work_);
}

void ChangeWriter::write_ddl(std::string_view database, std::string_view sql, const ChangePosition& position,
                             std::uint32_t timestamp) {
  records::write_ddl({database, sql, {position.file, position.offset, 0, position.gtid}, std::uint64_t{timestamp} * 1000U},
                     out_);
}

void ChangeWriter::write_commit(std::string_view gtid, std::string_view file, std::uint64_t end_offset,
                                std::string_view position, std::uint32_t timestamp, std::uint64_t rows,
                                std::optional<std::uint64_t> xid) {
  records::write_commit({gtid, file, end_offset, position, rows, xid, std::uint64_t{timestamp} * 1000U}, out_);
}

void ChangeWriter::write_incident(std::string_view message, const ChangePosition& position, std::uint32_t timestamp) {
  records::write_incident({message, {position.file, position.offset, 0, position.gtid}, std::uint64_t{timestamp} * 1000U},
                          out_);
}

void ChangeWriter::write_span_start(std::string_view position) { records::write_span_start({position}, out_); }

void ChangeWriter::write_span_end(std::string_view position, const std::optional<gtid::FilePosition>& at,
                                  std::string_view until) {
  records::write_span_end({position, at, until}, out_);
}

void ChangeWriter::write_discard(std::string_view gtid, const gtid::FilePosition& began, std::string_view reason,
                                 std::uint32_t timestamp) {
  records::write_stream_discard({gtid, began.file, began.offset, reason, std::uint64_t{timestamp} * 1000U}, out_);
}

void ChangeWriter::mark_row(std::string_view op, const TableEntry& table, const WrittenLine& line) {
  if (!event_in_batch_) {
    EventText event;
    event.db = batch_.add_aux(table.quoted_db);
    event.table = batch_.add_aux(table.quoted_table);
    event.file = batch_.add_aux(file_text_);
    event.offset = batch_.add_aux(offset_text_);
    event.gtid = batch_.add_aux(gtid_text_);
    event.server_id = batch_.add_aux(server_id_text_);
    event.thread = batch_.add_aux(thread_text_);
    event.ts_ms = batch_.add_aux(ts_ms_text_);
    event.db_name = batch_.add_aux(table.line.db);
    event.table_name = batch_.add_aux(table.line.table);
    event.file_name = batch_.add_aux(event_position_.file);
    event.gtid_value = batch_.add_aux(event_position_.gtid);
    event.offset_value = event_position_.offset;
    event.server_id_value = event_position_.server_id;
    event.thread_value = event_position_.thread;
    event.ts_ms_value = static_cast<std::int64_t>(event_ts_ms_);
    batch_.events.push_back(event);
    event_in_batch_ = true;
  }
  RowMark mark;
  mark.line = Span{line.start, out_.bytes_buffered() - 1};  // without the newline
  mark.key = Span{row_spans_.key_begin, row_spans_.key_end};
  mark.before = Span{row_spans_.before_begin, row_spans_.before_end};
  mark.after = Span{row_spans_.after_begin, row_spans_.after_end};
  mark.pos = Span{line.pos_begin, line.pos_end};
  mark.query = Span{line.query_begin, line.query_end};
  mark.before_key = batch_.add_aux(row_spans_.before_key.buffered());
  mark.before_values = Span{row_spans_.before_values_begin, row_spans_.before_values_end};
  mark.after_values = Span{row_spans_.after_values_begin, row_spans_.after_values_end};
  mark.values_known = row_spans_.values != nullptr;
  mark.event = batch_.events.size() - 1;
  mark.index = line.index;
  mark.op = op;
  mark.partial = line.partial;
  batch_.rows.push_back(mark);
}

Result<void> ChangeWriter::hand_off() {
  // Offsets in batch_.rows count from the start of out_'s buffer, which holds no lines from
  // before the last hand-off.
  out_.take_ended_records(batch_.text);
  event_in_batch_ = false;
  if (batch_.text.size() == 0 && batch_.rows.empty()) return {};
  return worker_->submit(batch_);
}

Result<void> ChangeWriter::flush() {
  if (worker_) {
    if (auto handed = hand_off(); !handed) return handed;
    auto written = worker_->drain();
    if (!written) return fail(std::move(written).error());
    bytes_flushed_ += *written;
    return {};
  }
  if (rows_worker_ && (rows_handed_over_ || !work_.jobs.empty())) {
    if (auto handed = hand_off_rows(); !handed) return handed;
    auto written = rows_worker_->drain();
    if (!written) return fail(std::move(written).error());
    rows_handed_over_ = false;
    bytes_flushed_ += *written;
    return {};
  }
  if (!converter_) {
    const std::size_t buffered = out_.bytes_buffered();
    if (auto flushed = out_.flush_to(out_fd_, out_name_); !flushed) return flushed;
    bytes_flushed_ += buffered - out_.bytes_buffered();  // a record in progress stays buffered
    return {};
  }
  if (auto converted = convert_ended(); !converted) return converted;
  if (spilled_bytes_ > 0) {
    // The held transaction's beginning, from the spill file, then the rest from memory.
    std::vector<char> block(std::size_t{1} << 16);
    for (std::uint64_t at = 0; at < spilled_bytes_;) {
      const ssize_t got = ::pread(spill_fd_, block.data(), block.size(), static_cast<off_t>(at));
      if (got <= 0) return errno_error("cannot read back the spill file of", out_name_);
      if (auto written = write_all(out_fd_, std::string_view(block.data(), static_cast<std::size_t>(got)), out_name_);
          !written)
        return written;
      at += static_cast<std::uint64_t>(got);
    }
    bytes_flushed_ += spilled_bytes_;
    spilled_bytes_ = 0;
    if (::ftruncate(spill_fd_, 0) != 0) return errno_error("cannot empty the spill file of", out_name_);
  }
  const std::size_t converted = converted_.bytes_buffered();
  if (auto flushed = converted_.flush_to(out_fd_, out_name_); !flushed) return flushed;
  bytes_flushed_ += converted;
  return {};
}

Result<void> ChangeWriter::finish() {
  if (worker_) {
    // Once drained, the converter is this thread's: what it holds is written from here.
    if (auto flushed = flush(); !flushed) return flushed;
    if (auto finished = converter_->finish(converted_); !finished) return finished;
    const std::size_t held = converted_.bytes_buffered();
    if (auto written = converted_.flush_to(out_fd_, out_name_); !written) return written;
    bytes_flushed_ += held;
    return {};
  }
  if (converter_) {
    if (auto converted = convert_ended(); !converted) return converted;
    if (auto finished = converter_->finish(converted_); !finished) return finished;
  }
  return flush();
}

Result<void> ChangeWriter::flush_if_large() {
  // With a converter the row lines are converted as they end: what grows is converted_.
  if (std::max(out_.bytes_buffered(), converted_.bytes_buffered()) < kFlushThreshold) return {};
  if (worker_) return hand_off();
  if (rows_worker_ && (rows_handed_over_ || !work_.jobs.empty())) return hand_off_rows();
  if (!hold_transactions_) return flush();
  if (auto converted = convert_ended(); !converted) return converted;
  if (converted_.bytes_buffered() < kFlushThreshold) return {};
  return spill_converted();
}

void ChangeWriter::discard() noexcept {
  // What the thread has is written before the caller cuts the output back; its error, if any,
  // is the next flush's.
  if (worker_) {
    if (auto drained = worker_->drain(); drained) bytes_flushed_ += *drained;
    batch_.clear();
    event_in_batch_ = false;
  }
  if (rows_worker_) {
    // After an error the worker keeps it for the next flush.
    if (auto drained = rows_worker_->drain(); drained) {
      bytes_flushed_ += *drained;
      rows_handed_over_ = false;
    }
    work_.clear();
    work_rows_bytes_ = 0;
  }
  out_.clear();
  forget_described();
  if (!converter_) return;
  converted_.clear();
  converter_->drop_held();
  if (spilled_bytes_ > 0 && ::ftruncate(spill_fd_, 0) == 0) spilled_bytes_ = 0;
}

Result<void> ChangeWriter::convert_marked_row() {
  const output::RowLine row = row_line(batch_, out_.buffered(), batch_.rows.back(), row_scratch_);
  if (auto converted = output::convert_row_line(*converter_, row, converted_); !converted) return converted;
  // Offsets count from the start of out_'s buffer, which the next row's line starts again.
  out_.drop_ended_records();
  batch_.rows.clear();
  batch_.values.clear();
  return {};
}

Result<void> ChangeWriter::convert_ended() {
  if (auto converted = output::convert_lines(*converter_, out_.ended_records(), converted_); !converted)
    return converted;
  out_.drop_ended_records();
  return {};
}

Result<void> ChangeWriter::spill_converted() {
  if (spill_fd_ < 0) {
    const char* tmpdir = std::getenv("TMPDIR");
    const std::string dir = tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
    spill_fd_ = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (spill_fd_ < 0)
      return errno_error("cannot create a spill file (a transaction bigger than the buffer, held until its commit) in",
                         dir);
  }
  for (std::string_view bytes = converted_.ended_records(); !bytes.empty();) {
    const ssize_t wrote = ::pwrite(spill_fd_, bytes.data(), bytes.size(), static_cast<off_t>(spilled_bytes_));
    if (wrote <= 0) return errno_error("cannot write the spill file of", out_name_);
    spilled_bytes_ += static_cast<std::uint64_t>(wrote);
    bytes.remove_prefix(static_cast<std::size_t>(wrote));
  }
  converted_.drop_ended_records();
  return {};
}

}  // namespace cdc::stream
