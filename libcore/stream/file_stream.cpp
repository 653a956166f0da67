#include "stream/file_stream.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "binlog/ddl_target.h"
#include "binlog/decoder.h"
#include "binlog/file_reader.h"
#include "stream/change_writer.h"
#include "stream/transaction_tracker.h"
#include "util/table_filter.h"

namespace cdc::stream {

namespace {

std::string base_name(const std::string& path) {
  if (path == "-") return "stdin";
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

class FileRun {
 public:
  FileRun(const FileOptions& options, TableFilter filter, int out_fd,
          const std::function<void(std::string_view)>& warn)
      : options_(options), filter_(std::move(filter)), writer_(out_fd, "stdout"), warn_(warn) {}

  Result<FileSummary> run() {
    for (std::size_t i = 0; i < options_.files.size(); ++i) {
      const bool first = i == 0;
      const bool last = i + 1 == options_.files.size();
      auto done = run_file(options_.files[i], first ? options_.start_position : std::nullopt,
                           last ? options_.stop_position : std::nullopt);
      if (!done) {
        (void)writer_.flush();
        return fail(std::move(done).error());
      }
      if (*done) break;  // stop position reached
    }
    if (auto flushed = writer_.flush(); !flushed) return fail(std::move(flushed).error());
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
    return summary_;
  }

 private:
  // Returns true when the stop position was reached.
  Result<bool> run_file(const std::string& path, std::optional<std::uint64_t> start, std::optional<std::uint64_t> stop) {
    auto reader = binlog::FileReader::open(path);
    if (!reader) return fail(std::move(reader).error());
    file_ = base_name(path);
    decoder_.set_source_name(reader->name());
    decoder_.forget_tables();
    tracker_.start_file(file_);
    // --start-position: the file's header events (format description, previous GTIDs or the
    // GTID list, checkpoints) are always read, so positions stay complete; then a jump.
    bool jumped = !start.has_value();
    for (;;) {
      auto raw = reader->next();
      if (!raw) return fail(std::move(raw).error());
      if (!*raw) break;
      const binlog::RawEvent event = **raw;
      if (!jumped && event.offset >= *start) jumped = true;
      if (!jumped && !is_file_header_event(event.bytes[4])) {
        if (event.offset + event.bytes.size() > *start)
          return fail(Errc::usage, fmt::format("{}: start position {} is inside the event at {} ({} bytes): give the "
                                               "offset of an event, as mysqlbinlog prints them",
                                               reader->name(), *start, event.offset, event.bytes.size()));
        if (auto skipped = reader->skip_to(*start); !skipped) return fail(std::move(skipped).error());
        jumped = true;
        continue;
      }
      if (stop && event.offset >= *stop) return true;
      auto decoded = decoder_.decode(event.bytes, event.offset);
      if (!decoded) return fail(std::move(decoded).error());
      ++summary_.events;
      if (auto handled = handle(*decoded, event.offset + event.bytes.size()); !handled)
        return fail(std::move(handled).error());
      if (!jumped && event.offset + event.bytes.size() >= *start) jumped = true;
    }
    if (!jumped) {
      if (auto skipped = reader->skip_to(*start); !skipped) return fail(std::move(skipped).error());
    }
    if (reader->torn_tail_bytes() > 0)
      warn_(fmt::format("{}:{}: the file ends inside an event ({} bytes); the server still had it open, so decoding "
                        "ends at the last whole event",
                        reader->name(), reader->position(), reader->torn_tail_bytes()));
    return false;
  }

  static bool is_file_header_event(std::uint8_t type_code) {
    switch (static_cast<binlog::EventType>(type_code)) {
      case binlog::EventType::format_description:
      case binlog::EventType::previous_gtids:
      case binlog::EventType::mariadb_gtid_list:
      case binlog::EventType::mariadb_binlog_checkpoint:
        return true;
      default:
        return false;
    }
  }

  Result<void> handle(const binlog::Event& event, std::uint64_t end_offset) {
    using namespace binlog;
    const std::uint32_t timestamp = event.header.timestamp;
    if (const auto* rows = std::get_if<RowsEvent>(&event.body)) return handle_rows(*rows, event.offset, timestamp);
    if (const auto* payload = std::get_if<TransactionPayloadEvent>(&event.body))
      return handle_payload(*payload, event.offset, end_offset);
    if (const auto* gtid = std::get_if<MysqlGtidEvent>(&event.body)) {
      tracker_.begin_mysql(*gtid);
      return {};
    }
    if (const auto* gtid = std::get_if<MariadbGtidEvent>(&event.body)) {
      tracker_.begin_mariadb(*gtid, event.header.server_id);
      return {};
    }
    if (const auto* list = std::get_if<MariadbGtidListEvent>(&event.body)) {
      tracker_.mariadb_gtid_list(*list);
      return {};
    }
    if (const auto* previous = std::get_if<PreviousGtidsEvent>(&event.body)) return tracker_.previous_gtids(*previous);
    if (const auto* query = std::get_if<QueryEvent>(&event.body)) return handle_query(*query, event, end_offset);
    if (std::get_if<XidEvent>(&event.body) != nullptr) return end_transaction(end_offset, timestamp);
    if (const auto* incident = std::get_if<IncidentEvent>(&event.body)) {
      warn_(fmt::format("{}:{}: INCIDENT_EVENT: the server lost changes here{}{}{}; a replica would stop; check the "
                        "captured tables against the source",
                        decoder_.source_name(), event.offset, incident->message.empty() ? "" : " (",
                        incident->message, incident->message.empty() ? "" : ")"));
      writer_.write_incident(incident->message, ChangePosition{file_, event.offset, tracker_.gtid(), 0}, timestamp);
      return {};
    }
    if (const auto* unknown = std::get_if<UnknownEvent>(&event.body)) return handle_unknown(*unknown, event);
    return {};
  }

  Result<void> handle_unknown(const binlog::UnknownEvent& unknown, const binlog::Event& event) {
    const bool ignorable = (event.header.flags & binlog::kFlagIgnorable) != 0;
    if (ignorable || options_.skip_unknown_events) {
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

  Result<void> handle_rows(const binlog::RowsEvent& rows, std::uint64_t offset, std::uint32_t timestamp) {
    if (rows.column_count == 0) return {};  // an empty end-of-statement marker
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
    const ChangePosition position{file_, payload_offset_ ? *payload_offset_ : offset, tracker_.gtid(), payload_rows_};
    auto written = writer_.write_rows(rows, *map, position, timestamp);
    if (!written) return fail(std::move(written).error());
    summary_.rows += *written;
    if (payload_offset_) payload_rows_ += *written;
    tracker_.count_rows(*written);
    return {};
  }

  Result<void> handle_payload(const binlog::TransactionPayloadEvent& payload, std::uint64_t offset,
                              std::uint64_t end_offset) {
    binlog::PayloadReader inner(payload);
    payload_offset_ = offset;
    payload_rows_ = 0;
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
      ++summary_.events;
      // The inner transaction ends where the payload event ends in the file.
      if (auto handled = handle(*event, end_offset); !handled) {
        payload_offset_.reset();
        return fail(std::move(handled).error());
      }
    }
    payload_offset_.reset();
    return {};
  }

  Result<void> handle_query(const binlog::QueryEvent& query, const binlog::Event& event, std::uint64_t end_offset) {
    switch (query.kind) {
      case binlog::QueryKind::begin:
        tracker_.explicit_begin();
        return {};
      case binlog::QueryKind::commit:
      case binlog::QueryKind::rollback:
        return end_transaction(end_offset, event.header.timestamp);
      case binlog::QueryKind::ddl:
        if (ddl_selected(query)) {
          writer_.write_ddl(query.database, query.sql, ChangePosition{file_, event.offset, tracker_.gtid(), 0},
                            event.header.timestamp);
          tracker_.count_lines(1);
        }
        // A DDL commits implicitly; outside a BEGIN it is its own transaction.
        if (!tracker_.in_explicit_transaction()) return end_transaction(end_offset, event.header.timestamp);
        return {};
      case binlog::QueryKind::dml:
        if (!statement_warned_ && filter_.selects_database(query.database)) {
          warn_(fmt::format("{}:{}: a statement-based change ({}...) is not captured: only row events carry rows; "
                            "set binlog_format=ROW",
                            decoder_.source_name(), event.offset, query.sql.substr(0, 40)));
          statement_warned_ = true;
        }
        [[fallthrough]];
      default:
        // Any other statement outside BEGIN..COMMIT is a transaction of its own.
        if (!tracker_.in_explicit_transaction()) return end_transaction(end_offset, event.header.timestamp);
        return {};
    }
  }

  // A DDL is captured when it names a selected table, or, for database-level and unparsed
  // statements, when it concerns a selected database.
  bool ddl_selected(const binlog::QueryEvent& query) const {
    const binlog::DdlTarget target = binlog::ddl_target(query.sql, query.database);
    for (const auto& table : target.tables)
      if (filter_.selects(table.database, table.table)) return true;
    if (!target.tables.empty()) return false;
    if (target.database.empty()) return filter_.selects_everything();
    return filter_.selects_database(target.database);
  }

  Result<void> end_transaction(std::uint64_t end_offset, std::uint32_t timestamp) {
    const TransactionEnd end = tracker_.end(end_offset);
    if (end.lines > 0) {
      writer_.write_commit(end.gtid, file_, end_offset, end.position, timestamp, end.rows);
      ++summary_.transactions;
    }
    return writer_.flush_if_large();
  }

  const FileOptions& options_;
  TableFilter filter_;
  ChangeWriter writer_;
  const std::function<void(std::string_view)>& warn_;
  binlog::Decoder decoder_;
  TransactionTracker tracker_;
  std::string file_;
  FileSummary summary_;
  std::optional<std::uint64_t> payload_offset_;
  std::uint64_t payload_rows_ = 0;
  struct Skipped {
    std::uint64_t count = 0;
    std::string first_file;
    std::uint64_t first_offset = 0;
    bool ignorable = false;
  };
  std::map<unsigned, Skipped> skipped_types_;
  bool missing_map_warned_ = false;
  bool statement_warned_ = false;
};

}  // namespace

Result<FileSummary> run_files(const FileOptions& options, int out_fd, const std::function<void(std::string_view)>& warn) {
  if (options.files.empty()) return fail(Errc::usage, "no binlog files given");
  auto filter = TableFilter::parse(options.tables, options.exclude);
  if (!filter) return fail(std::move(filter).error());
  FileRun run(options, std::move(*filter), out_fd, warn);
  return run.run();
}

}  // namespace cdc::stream
