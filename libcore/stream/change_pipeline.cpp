#include "stream/change_pipeline.h"

#include <fmt/format.h>

#include "binlog/ddl_target.h"

namespace cdc::stream {

ChangePipeline::ChangePipeline(TableFilter filter, ChangeWriter& writer, binlog::Decoder& decoder, Warn warn,
                               bool skip_unknown_events)
    : filter_(std::move(filter)),
      writer_(writer),
      decoder_(decoder),
      warn_(std::move(warn)),
      skip_unknown_events_(skip_unknown_events) {}

void ChangePipeline::start_file(std::string_view file) {
  file_ = std::string(file);
  tracker_.start_file(file_);
}

void ChangePipeline::warn_at_end() const {
  if (writer_.partial_images_seen())
    warn_("some row images were not FULL (binlog_row_image=MINIMAL or NOBLOB): those lines carry \"partial\":true "
          "and only the columns the server logged; set binlog_row_image=FULL for complete images");
  if (!writer_.lossy_text_table().empty())
    warn_(fmt::format("{} (and maybe other tables) has string or BLOB values that are not UTF-8 in columns whose "
                      "charset the binlog does not give: they were written as text with U+FFFD; a server with "
                      "binlog_row_metadata=MINIMAL or FULL logs charsets, and binary columns then come out as base64",
                      writer_.lossy_text_table()));
  for (const auto& [type, skipped] : skipped_types_)
    warn_(fmt::format("skipped {} event(s) of unknown type {} (the first at {}:{}){}", skipped.count, type,
                      skipped.first_file, skipped.first_offset,
                      skipped.ignorable ? ", which the server flagged ignorable (LOG_EVENT_IGNORABLE_F)"
                                        : ", as --skip-unknown-events asked"));
}

std::optional<OpenTransaction> ChangePipeline::open_transaction() const {
  if (!tracker_.in_transaction()) return std::nullopt;
  return OpenTransaction{tracker_.gtid(), transaction_file_, transaction_offset_,
                         summary_.rows - rows_before_transaction_};
}

namespace {

// The commit time of the transaction `event` opens, when it opens one (a GTID event; without
// GTIDs a BEGIN or a statement of its own).
std::optional<UtcTime> opening_time(const binlog::Event& event) {
  if (const auto* gtid = std::get_if<binlog::MysqlGtidEvent>(&event.body))
    return gtid->immediate_commit_us != 0 ? UtcTime{static_cast<std::int64_t>(gtid->immediate_commit_us)}
                                          : UtcTime::from_seconds(event.header.timestamp);
  if (std::holds_alternative<binlog::MariadbGtidEvent>(event.body)) return UtcTime::from_seconds(event.header.timestamp);
  if (const auto* query = std::get_if<binlog::QueryEvent>(&event.body))
    if (query->kind != binlog::QueryKind::commit && query->kind != binlog::QueryKind::rollback)
      return UtcTime::from_seconds(event.header.timestamp);
  return std::nullopt;
}

}  // namespace

Result<Step> ChangePipeline::handle(const binlog::Event& event, std::uint64_t end_offset) {
  const bool was_in_transaction = tracker_.in_transaction();
  if (!was_in_transaction && transaction_gate_)
    if (const auto committed = opening_time(event);
        committed && !transaction_gate_(TransactionStart{*committed, file_, event.offset}))
      return Step{false, false, true};
  auto step = dispatch(event, end_offset);
  if (!was_in_transaction && tracker_.in_transaction()) {
    transaction_file_ = file_;
    transaction_offset_ = event.offset;
    rows_before_transaction_ = summary_.rows;
  }
  return step;
}

Result<Step> ChangePipeline::dispatch(const binlog::Event& event, std::uint64_t end_offset) {
  using namespace binlog;
  ++summary_.events;
  const std::uint32_t timestamp = event.header.timestamp;
  if (const auto* rows = std::get_if<RowsEvent>(&event.body)) {
    auto handled = handle_rows(*rows, event);
    // The statement's last rows event (STMT_END_F), whatever its table: the rows after it are
    // another statement's, which the server may not have annotated (a session that set
    // binlog_annotate_row_events or binlog_rows_query_log_events off).
    if ((rows->flags & RowsEvent::kStatementEnd) != 0) writer_.forget_query();
    if (!handled) return fail(std::move(handled).error());
    return Step{};
  }
  if (const auto* statement = std::get_if<RowsQueryEvent>(&event.body)) {
    // MariaDB writes ANNOTATE_ROWS, MySQL ROWS_QUERY, before the first TABLE_MAP of each
    // statement (THD::binlog_write_table_map: MariaDB's sql/log.cc, MySQL's sql/binlog.cc): it
    // names the rows up to the statement's end.
    if (!silent_) writer_.set_query(statement->sql);
    return Step{};
  }
  if (const auto* map = std::get_if<TableMapEvent>(&event.body)) {
    if (table_map_hook_ && filter_.selects(map->map->database, map->map->table))
      if (TableMap* updatable = decoder_.table_for_update(map->map->table_id)) table_map_hook_(*updatable);
    return Step{};
  }
  if (const auto* payload = std::get_if<TransactionPayloadEvent>(&event.body))
    return handle_payload(*payload, event.offset, end_offset);
  if (const auto* gtid = std::get_if<MysqlGtidEvent>(&event.body)) {
    tracker_.begin_mysql(*gtid);
    transaction_thread_.reset();
    writer_.forget_query();
    return Step{};
  }
  if (const auto* gtid = std::get_if<MariadbGtidEvent>(&event.body)) {
    tracker_.begin_mariadb(*gtid, event.header.server_id);
    transaction_thread_.reset();
    writer_.forget_query();
    return Step{};
  }
  if (const auto* list = std::get_if<MariadbGtidListEvent>(&event.body)) {
    tracker_.mariadb_gtid_list(*list);
    return Step{};
  }
  if (const auto* previous = std::get_if<PreviousGtidsEvent>(&event.body)) {
    if (auto read = tracker_.previous_gtids(*previous); !read) return fail(std::move(read).error());
    return Step{};
  }
  if (const auto* query = std::get_if<QueryEvent>(&event.body)) return handle_query(*query, event, end_offset);
  if (const auto* xid = std::get_if<XidEvent>(&event.body)) return end_transaction(end_offset, timestamp, xid->xid);
  if (const auto* incident = std::get_if<IncidentEvent>(&event.body)) {
    warn_(fmt::format("{}:{}: INCIDENT_EVENT: the server lost changes here{}{}{}; a replica would stop; check the "
                      "captured tables against the source",
                      decoder_.source_name(), event.offset, incident->message.empty() ? "" : " (", incident->message,
                      incident->message.empty() ? "" : ")"));
    if (!silent_)
      writer_.write_incident(incident->message, ChangePosition{file_, event.offset, tracker_.gtid(), 0, event.header.server_id, std::nullopt}, timestamp);
    return Step{};
  }
  if (const auto* unknown = std::get_if<UnknownEvent>(&event.body)) {
    if (auto handled = handle_unknown(*unknown, event); !handled) return fail(std::move(handled).error());
  }
  return Step{};
}

Result<void> ChangePipeline::handle_unknown(const binlog::UnknownEvent& unknown, const binlog::Event& event) {
  const bool ignorable = (event.header.flags & binlog::kFlagIgnorable) != 0;
  if (ignorable || skip_unknown_events_) {
    Skipped& skipped = skipped_types_[unknown.type_code];
    if (skipped.count++ == 0) {
      skipped.first_file = decoder_.source_name();
      skipped.first_offset = event.offset;
      skipped.ignorable = ignorable;
    }
    ++summary_.skipped_events;
    return {};
  }
  return fail(Errc::corrupt_input,
              fmt::format("{}:{}: unknown event type {} ({} bytes), not flagged ignorable by the server: it may hold "
                          "changes cdc cannot decode; if you know it does not (e.g. a vendor's padding event), rerun "
                          "with --skip-unknown-events",
                          decoder_.source_name(), event.offset, unknown.type_code, event.header.event_size));
}

Result<void> ChangePipeline::handle_rows(const binlog::RowsEvent& rows, const binlog::Event& event) {
  const std::uint64_t offset = event.offset;
  if (rows.column_count == 0 || silent_) return {};  // an empty end-of-statement marker, or not writing yet
  const binlog::TableMap* map = decoder_.table(rows.table_id);
  if (map == nullptr) {
    if (!missing_map_warned_)
      warn_(fmt::format("{}:{}: rows for table id {} without its TABLE_MAP (does the start position fall inside a "
                        "transaction?); such rows are skipped",
                        decoder_.source_name(), offset, rows.table_id));
    missing_map_warned_ = true;
    return {};
  }
  if (!filter_.selects(map->database, map->table)) return {};
  const ChangePosition position{file_,         payload_offset_ ? *payload_offset_ : offset,
                                tracker_.gtid(), payload_rows_,
                                event.header.server_id, transaction_thread_, payload_offset_.has_value()};
  auto written = writer_.write_rows(rows, *map, position, event.header.timestamp);
  if (!written) return fail(std::move(written).error());
  summary_.rows += *written;
  // --where writes some updates as inserts and deletes: counted as what their lines say.
  const ChangeWriter::FilterConversions& converted = writer_.filter_conversions();
  count_table_rows(*map, rows.kind, *written - converted.as_inserts - converted.as_deletes);
  if (converted.as_inserts > 0) count_table_rows(*map, binlog::RowsKind::write, converted.as_inserts);
  if (converted.as_deletes > 0) count_table_rows(*map, binlog::RowsKind::erase, converted.as_deletes);
  // The rows of a TRANSACTION_PAYLOAD's inner events are numbered in one sequence (cdc-ndjson(5),
  // "index"): every row read counts, also one --where dropped, so that an index names one row.
  if (payload_offset_) payload_rows_ += writer_.rows_read(*written);
  tracker_.count_rows(*written);
  if (writer_.rows_pending()) tracker_.expect_lines();
  return {};
}

void ChangePipeline::take_table_rows(std::map<std::string, TableRows, std::less<>>& into) {
  for (const auto& [key, rows] : summary_.table_rows) {
    TableRows& total = into[key];
    total.inserted += rows.inserted;
    total.updated += rows.updated;
    total.deleted += rows.deleted;
  }
  summary_.table_rows.clear();
  counted_rows_ = nullptr;
}

void ChangePipeline::count_table_rows(const binlog::TableMap& map, binlog::RowsKind kind, std::uint64_t rows) {
  lookup_key_.assign(map.database);
  lookup_key_.push_back('\0');
  lookup_key_.append(map.table);
  if (counted_rows_ == nullptr || lookup_key_ != counted_key_) {
    auto found = summary_.table_rows.find(lookup_key_);
    if (found == summary_.table_rows.end()) found = summary_.table_rows.emplace(lookup_key_, TableRows{}).first;
    counted_rows_ = &found->second;
    counted_key_.assign(lookup_key_);
  }
  switch (kind) {
    case binlog::RowsKind::write: counted_rows_->inserted += rows; break;
    case binlog::RowsKind::update:
    case binlog::RowsKind::partial_update: counted_rows_->updated += rows; break;
    case binlog::RowsKind::erase: counted_rows_->deleted += rows; break;
  }
}

Result<Step> ChangePipeline::handle_payload(const binlog::TransactionPayloadEvent& payload, std::uint64_t offset,
                                            std::uint64_t end_offset) {
  binlog::PayloadReader inner(payload);
  payload_offset_ = offset;
  payload_rows_ = 0;
  Step step;
  for (;;) {
    auto next = inner.next();
    if (!next) {
      payload_offset_.reset();
      return fail(decoder_.error_at(offset, static_cast<std::uint8_t>(binlog::EventType::transaction_payload),
                                    next.error().message));
    }
    if (!*next) break;
    auto event = decoder_.decode_inner(**next, offset);
    if (!event) {
      payload_offset_.reset();
      return fail(std::move(event).error());
    }
    // The inner transaction ends where the payload event ends in the file.
    auto handled = handle(*event, end_offset);
    if (!handled) {
      payload_offset_.reset();
      return fail(std::move(handled).error());
    }
    step.transaction_ended |= handled->transaction_ended;
    if (handled->stopped_before_ddl) {
      step.stopped_before_ddl = true;
      break;
    }
  }
  payload_offset_.reset();
  return step;
}

Result<Step> ChangePipeline::handle_query(const binlog::QueryEvent& query, const binlog::Event& event,
                                          std::uint64_t end_offset) {
  switch (query.kind) {
    case binlog::QueryKind::begin:
      tracker_.explicit_begin();
      transaction_thread_ = query.thread_id;
      writer_.forget_query();
      return Step{};
    case binlog::QueryKind::commit:
    case binlog::QueryKind::rollback:
      return end_transaction(end_offset, event.header.timestamp);
    case binlog::QueryKind::ddl:
      if (!silent_ && !capture_ddl(query, event)) return Step{false, true};
      // A DDL commits implicitly; outside a BEGIN it is its own transaction.
      if (!tracker_.in_explicit_transaction()) return end_transaction(end_offset, event.header.timestamp);
      return Step{};
    case binlog::QueryKind::dml:
      if (!silent_ && !statement_warned_ && filter_.selects_database(query.database)) {
        warn_(fmt::format("{}:{}: a statement-based change ({}...) is not captured: only row events carry rows; "
                          "set binlog_format=ROW",
                          decoder_.source_name(), event.offset, query.sql.substr(0, 40)));
        statement_warned_ = true;
      }
      [[fallthrough]];
    default:
      // Any other statement outside BEGIN..COMMIT is a transaction of its own.
      if (!tracker_.in_explicit_transaction()) return end_transaction(end_offset, event.header.timestamp);
      return Step{};
  }
}

// Writes the DDL's line when it concerns a captured table. False: the DDL gate stopped it.
bool ChangePipeline::capture_ddl(const binlog::QueryEvent& query, const binlog::Event& event) {
  const binlog::DdlTarget target = binlog::ddl_target(query.sql, query.database);
  if (!ddl_selected(target)) return true;
  // The database the change is about: the session's default one often is not it
  // ("CREATE TABLE shop.t" run without USE).
  const std::string_view database = !target.tables.empty()     ? std::string_view(target.tables.front().database)
                                    : !target.database.empty() ? std::string_view(target.database)
                                                               : query.database;
  if (ddl_gate_ && !ddl_gate_(PendingDdl{database, query.sql, tracker_.gtid(), file_, event.offset})) return false;
  writer_.write_ddl(database, query.sql, ChangePosition{file_, event.offset, tracker_.gtid(), 0, event.header.server_id, std::nullopt},
                    event.header.timestamp);
  tracker_.count_lines(1);
  if (ddl_listener_) ddl_listener_(query.database, query.sql);
  return true;
}

// A DDL is captured when it names a selected table, or, for database-level and unparsed
// statements, when it concerns a selected database.
bool ChangePipeline::ddl_selected(const binlog::DdlTarget& target) const {
  for (const auto& table : target.tables)
    if (filter_.selects(table.database, table.table)) return true;
  if (!target.tables.empty()) return false;
  if (target.database.empty()) return filter_.selects_everything();
  return filter_.selects_database(target.database);
}

Result<Step> ChangePipeline::end_transaction(std::uint64_t end_offset, std::uint32_t timestamp,
                                             std::optional<std::uint64_t> xid) {
  const TransactionEnd end = tracker_.end(end_offset);
  transaction_thread_.reset();
  writer_.forget_query();
  if (end.lines > 0 || writer_.rows_pending()) {  // rows_pending: end.position is set too
    // Rows judged on the rows thread: it counts the transaction if it writes its line.
    if (!writer_.rows_pending()) ++summary_.transactions;
    writer_.write_commit(end.gtid, file_, end_offset, end.position, timestamp, end.rows, end.lines, xid);
  }
  if (auto flushed = writer_.flush_if_large(); !flushed) return fail(std::move(flushed).error());
  return Step{true, false};
}

}  // namespace cdc::stream
