#include "apply/applier.h"

#include <fmt/format.h>

#include "records/kinds.h"
#include "records/position.h"
#include "records/snapshot_lines.h"
#include "records/table_line.h"

namespace cdc::apply {

namespace {

std::string_view string_or_empty(simdjson::dom::object record, std::string_view name) {
  std::string_view text;
  if (record[name].get_string().get(text) != simdjson::SUCCESS) return {};
  return text;
}

}  // namespace

Error target_error(const Error& server_error, std::string_view what) {
  const Errc code = server_error.code == Errc::unavailable ? Errc::unavailable : Errc::corrupt_input;
  return Error{code, fmt::format("the target refused the {}: {}; nothing of this target transaction was applied",
                                 what, server_error.message)};
}

Result<bool> already_applied(const gtid::Position& stored, const gtid::Position& commit_position) {
  const std::optional<bool> included = gtid::includes(stored, commit_position);
  if (!included)
    return fail(Errc::corrupt_input,
                fmt::format("the input's position {} and the target's {} are of different forms: the target was "
                            "applied from another source (see the position table)",
                            commit_position.to_string(), stored.to_string()));
  return *included;
}

Applier::Applier(Target& target, ApplyOptions options, AppliedState state)
    : target_(target), options_(std::move(options)), state_(std::move(state)) {
  if (!state_.position.empty()) {
    if (auto stored = gtid::Position::parse(state_.position)) applied_through_ = std::move(*stored);
  }
}

Result<Stop> Applier::read(ndjson::Reader& reader) {
  for (;;) {
    // The input is about to wait (a pipe, a followed file): what is whole goes in first.
    if (dirty_ && !reader.ready()) {
      if (auto flushed = flush_before_waiting(); !flushed) return fail(flushed.error());
    }
    auto more = reader.next();
    if (!more) return fail(more.error());
    if (!*more) return Stop::end_of_input;
    auto stop = line(reader.record(), reader.line(), &reader);
    if (!stop) {
      // Input errors name the line; the target's name the source positions themselves.
      if (target_failed_ || stop.error().code != Errc::corrupt_input) return fail(stop.error());
      return fail(reader.error_at_line(stop.error().message));
    }
    if (*stop) return **stop;
  }
}

Result<void> Applier::flush_before_waiting() {
  if (!in_transaction_) return flush();
  // The transaction being read may have extended a statement of the ones before it: it is
  // taken out, the rest committed, and its lines read again into the next batch.
  std::string lines = std::move(pending_lines_);
  std::vector<std::size_t> ends = std::move(pending_ends_);
  drop_transaction();
  if (auto flushed = flush(); !flushed) return flushed;
  simdjson::dom::parser parser;
  std::size_t begin = 0;
  for (const std::size_t end : ends) {
    simdjson::dom::object record;
    const std::string_view text = std::string_view(lines).substr(begin, end - begin);
    if (parser.parse(text.data(), text.size(), true).get_object().get(record) != simdjson::SUCCESS)
      return fail(Errc::internal, "a line read before did not parse again");
    auto stop = line(record, text, nullptr);
    if (!stop) return fail(stop.error());
    begin = end;
  }
  return {};
}

Result<std::optional<Stop>> Applier::line(simdjson::dom::object record, std::string_view text,
                                          ndjson::Reader* reader) {
  auto stop = dispatch(record, reader);
  // The lines of the transaction being read, kept for flush_before_waiting.
  if (stop && in_transaction_) {
    pending_lines_.append(text);
    pending_ends_.push_back(pending_lines_.size());
  }
  return stop;
}

Result<std::optional<Stop>> Applier::dispatch(simdjson::dom::object record, ndjson::Reader* reader) {
  std::string_view op;
  if (record[records::field::op].get_string().get(op) != simdjson::SUCCESS)
    return fail(Errc::corrupt_input, "the line has no \"op\"");
  using namespace records;
  if (op == op::insert || op == op::update || op == op::erase) {
    if (auto done = change(record, op); !done) return fail(done.error());
  } else if (op == op::commit) {
    // More lines at hand: the batch may grow; none: commit now rather than wait on the pipe.
    return commit(record, reader == nullptr || reader->ready());
  } else if (op == op::row) {
    if (auto done = snapshot_row(record); !done) return fail(done.error());
  } else if (op == op::table) {
    if (auto done = table_line(record); !done) return fail(done.error());
  } else if (op == op::ddl) {
    if (!in_transaction_) {
      in_transaction_ = true;
      transaction_start_ = batch_.mark();
    }
    transaction_ddl_ = std::string(string_or_empty(record, field::sql));
    transaction_ddl_db_ = std::string(string_or_empty(record, field::db));
    auto pos = read_pos(record, true);
    origin_ = pos ? fmt::format("{}:{}", pos->file, pos->offset) : std::string("?");
  } else if (op == op::discard) {
    if (record[field::db].error() != simdjson::NO_SUCH_FIELD)
      return fail(Errc::corrupt_input, "a chunk's discard line: cdc-apply takes a merged snapshot (cdc-merge, "
                                       "cdc-sync's snapshot.ndjson), not chunk outputs");
    if (in_transaction_) ++stats_.transactions_dropped;
    drop_transaction();
  } else if (op == op::high) {
    if (auto done = merged_high(record); !done) return fail(done.error());
  } else if (op == op::incident) {
    return fail(Errc::corrupt_input,
                fmt::format("an incident line: the source lost changes here ({}); check the tables against the "
                            "source before going on",
                            string_or_empty(record, field::message)));
  } else if (op == op::low || op == op::chunk || op == op::check || op == op::check_summary) {
    return fail(Errc::corrupt_input,
                fmt::format("an op:\"{}\" line: cdc-apply takes a merged snapshot (cdc-merge, cdc-sync's "
                            "snapshot.ndjson) and cdc-stream's lines",
                            op));
  }
  // span_start, span_end, and kinds this version does not know (cdc-ndjson(5), COMPATIBILITY).
  return std::optional<Stop>{};
}

Result<void> Applier::table_line(simdjson::dom::object record) {
  auto line = records::parse_table_line(record);
  if (!line) return fail(line.error());
  const std::string& target_db = options_.database ? *options_.database : line->db;
  tables_.push_back(target_table(*line, target_db, options_.dialect));
  lookup_.assign(line->db).push_back('\0');
  lookup_.append(line->table);
  by_name_[lookup_] = &tables_.back();
  last_table_ = nullptr;
  if (options_.create_tables && created_databases_.insert(target_db).second) {
    if (auto created = target_.create_table(create_namespace_sql(options_.dialect, target_db));
        !created) {
      target_failed_ = true;
      return created;
    }
  }
  if (options_.create_tables && created_.insert(tables_.back().qualified).second) {
    if (auto created = target_.create_table(create_table_sql(*line, target_db, options_.dialect)); !created) {
      target_failed_ = true;
      return created;
    }
  }
  return {};
}

Result<const TargetTable*> Applier::table_of(simdjson::dom::object record) {
  const std::string_view db = string_or_empty(record, records::field::db);
  const std::string_view table = string_or_empty(record, records::field::table);
  if (last_table_ != nullptr && db == last_db_ && table == last_name_) return last_table_;
  lookup_.assign(db).push_back('\0');
  lookup_.append(table);
  const auto found = by_name_.find(lookup_);
  if (found == by_name_.end())
    return fail(Errc::corrupt_input,
                fmt::format("no table line for {}.{} before its first row: give cdc-apply whole outputs of cdc-merge, "
                            "cdc-stream or cdc-sync, which describe each table first",
                            db, table));
  last_table_ = found->second;
  last_db_.assign(db);
  last_name_.assign(table);
  return last_table_;
}

Result<void> Applier::snapshot_row(simdjson::dom::object record) {
  if (in_transaction_)
    return fail(Errc::corrupt_input, "an \"r\" line inside a stream transaction: the snapshot goes before the stream");
  if (state_.snapshot_done) {
    ++stats_.snapshot_rows_skipped;
    return {};
  }
  if (!state_.position.empty())
    return fail(Errc::corrupt_input,
                fmt::format("a snapshot's \"r\" line, but the target has changes applied up to {} without a "
                            "snapshot: apply a snapshot into an empty target first",
                            state_.position));
  if (++snapshot_rows_seen_ <= state_.snapshot_rows) {
    ++stats_.snapshot_rows_skipped;
    return {};
  }
  auto table = table_of(record);
  if (!table) return fail(table.error());
  simdjson::dom::object after;
  if (record[records::field::after].get_object().get(after) != simdjson::SUCCESS)
    return fail(Errc::corrupt_input, "an \"r\" line without an \"after\" object");
  origin_.clear();
  fmt::format_to(std::back_inserter(origin_), "snapshot row {}", snapshot_rows_seen_);
  RowOrigin origin;
  origin.position = origin_;
  origin.has_key = record[records::field::key].get(origin.key) == simdjson::SUCCESS;
  if (auto added = batch_.add_insert(**table, after, true, origin); !added) return added;
  state_.snapshot_rows = snapshot_rows_seen_;
  ++state_.changes;
  ++stats_.rows;
  dirty_ = true;
  if (batch_.rows() >= options_.batch_rows) return flush();
  return {};
}

Result<void> Applier::merged_high(simdjson::dom::object record) {
  if (record[records::field::db].error() != simdjson::NO_SUCH_FIELD)
    return fail(Errc::corrupt_input, "a chunk's high line: cdc-apply takes a merged snapshot (cdc-merge, cdc-sync's "
                                     "snapshot.ndjson), not chunk outputs");
  auto high = records::parse_merged_high(record);
  if (!high) return fail(high.error());
  auto position = records::parse_position(high->position);
  if (!position) return fail(position.error());
  if (state_.snapshot_done) {
    if (!applied_through_) return {};
    auto applied = already_applied(*applied_through_, *position);
    if (!applied) return fail(applied.error());
    if (!*applied)
      return fail(Errc::corrupt_input,
                  fmt::format("a snapshot at {}, but the target holds another one, applied up to {}: apply a new "
                              "snapshot into an empty target",
                              high->position, state_.position));
    return {};
  }
  if (!state_.position.empty())
    return fail(Errc::corrupt_input,
                fmt::format("a snapshot at {}, but the target has changes applied up to {} without a snapshot",
                            high->position, state_.position));
  state_.position = high->position;
  state_.snapshot_done = true;
  applied_through_ = std::move(*position);  // the stream's transactions up to H* are in the snapshot
  dirty_ = true;
  return flush();
}

Result<void> Applier::change(simdjson::dom::object record, std::string_view op) {
  if (!in_transaction_) {
    in_transaction_ = true;
    transaction_start_ = batch_.mark();
    transaction_rows_ = 0;
  }
  auto table = table_of(record);
  if (!table) return fail(table.error());
  bool partial = false;
  if (record[records::field::partial].get_bool().get(partial) == simdjson::SUCCESS && partial)
    return fail(Errc::corrupt_input,
                fmt::format("a partial row image of {} (binlog_row_image is not FULL): it cannot be applied as a "
                            "whole row",
                            (*table)->source_name));
  auto pos = records::read_pos(record, true);
  if (!pos) return fail(pos.error());
  std::uint64_t index = 0;
  if (record[records::field::pos][records::field::index].get_uint64().get(index) != simdjson::SUCCESS) index = 0;
  origin_.clear();
  fmt::format_to(std::back_inserter(origin_), "{}:{}#{}", pos->file, pos->offset, index);
  if (!pos->gtid.empty()) fmt::format_to(std::back_inserter(origin_), " (gtid {})", pos->gtid);
  RowOrigin origin;
  origin.position = origin_;
  origin.has_key = record[records::field::key].get(origin.key) == simdjson::SUCCESS;
  simdjson::dom::object before;
  simdjson::dom::object after;
  const bool has_before = record[records::field::before].get_object().get(before) == simdjson::SUCCESS;
  const bool has_after = record[records::field::after].get_object().get(after) == simdjson::SUCCESS;
  if ((*table)->keyless() && (has_before || has_after))
    origin.has_row =
        record[has_before ? records::field::before : records::field::after].get(origin.row) == simdjson::SUCCESS;
  Result<void> added;
  if (op == records::op::insert) {
    if (!has_after) return fail(Errc::corrupt_input, "a \"c\" line without an \"after\" object");
    added = batch_.add_insert(**table, after, false, origin);
  } else if (op == records::op::update) {
    if (!has_before || !has_after)
      return fail(Errc::corrupt_input, "a \"u\" line without \"before\" and \"after\" objects");
    added = batch_.add_update(**table, before, after, origin);
  } else {
    if (!has_before) return fail(Errc::corrupt_input, "a \"d\" line without a \"before\" object");
    added = batch_.add_delete(**table, before, origin);
  }
  if (!added) return added;
  ++transaction_rows_;
  return {};
}

void Applier::drop_transaction() {
  pending_lines_.clear();
  pending_ends_.clear();
  if (!in_transaction_) return;
  batch_.rewind(transaction_start_);
  in_transaction_ = false;
  transaction_rows_ = 0;
  transaction_ddl_.reset();
  transaction_ddl_db_.reset();
}

Result<std::optional<Stop>> Applier::commit(simdjson::dom::object record, bool more_ready) {
  std::string_view position_text;
  if (record[records::field::position].get_string().get(position_text) != simdjson::SUCCESS)
    return fail(Errc::corrupt_input, "a commit line without its \"position\"");
  auto end = records::read_pos(record, false);
  if (!end) return fail(end.error());
  auto position = records::parse_position(position_text);
  if (!position) return fail(position.error());
  if (applied_through_) {
    auto applied = already_applied(*applied_through_, *position);
    if (!applied) return fail(applied.error());
    if (*applied) {
      if (in_transaction_) ++stats_.transactions_skipped;
      drop_transaction();
      return std::optional<Stop>{};
    }
  }
  bool until_reached = false;
  if (options_.until) {
    const std::optional<bool> reached = gtid::includes(*position, *options_.until);
    if (!reached)
      return fail(Errc::usage, fmt::format("--until {} is of another form than the input's positions ({})",
                                           options_.until->to_string(), position_text));
    until_reached = *reached;
  }
  // An applied DDL committed itself: its position goes in at once, so that a rerun after a
  // crash runs it again only when the crash came between the two.
  bool flush_now = false;
  if (transaction_ddl_) {
    const std::string ddl = *transaction_ddl_;
    const std::string ddl_db = transaction_ddl_db_.value_or("");
    batch_.rewind(transaction_start_);  // a DDL is a transaction of its own: nothing else is in it
    in_transaction_ = false;
    pending_lines_.clear();
    pending_ends_.clear();
    transaction_ddl_.reset();
    transaction_ddl_db_.reset();
    if (auto flushed = flush(); !flushed) return fail(flushed.error());
    if (options_.on_ddl == OnDdl::stop) {
      stop_reason_ = fmt::format("a DDL at {} (commit position {}), not applied (--on-ddl stop): {}", origin_,
                                 position_text, ddl);
      return std::optional<Stop>{Stop::ddl};
    }
    if (options_.on_ddl == OnDdl::apply) {
      const std::string& database = options_.database ? *options_.database : ddl_db;
      if (auto done = target_.run_ddl(database, ddl); !done) {
        target_failed_ = true;
        return fail(done.error().with_context(fmt::format("the DDL at {}", origin_)));
      }
      // The tables it changed are described again by the table lines that follow it.
      flush_now = true;
    }
    ++stats_.ddls;
  } else {
    pending_lines_.clear();
    pending_ends_.clear();
    if (!in_transaction_) return std::optional<Stop>{};  // a commit without lines: nothing to do
    state_.changes += transaction_rows_;
    stats_.rows += transaction_rows_;
    in_transaction_ = false;
  }
  state_.position = std::string(position_text);
  applied_through_ = std::move(*position);
  state_.source_pos = fmt::format("{}:{}", end->file, end->offset);
  state_.gtid = std::string(end->gtid);
  ++state_.transactions;
  ++stats_.transactions;
  transaction_rows_ = 0;
  dirty_ = true;
  if (until_reached) {
    if (auto flushed = flush(); !flushed) return fail(flushed.error());
    return std::optional<Stop>{Stop::until};
  }
  if (flush_now || batch_.rows() >= options_.batch_rows || !more_ready) {
    if (auto flushed = flush(); !flushed) return fail(flushed.error());
  }
  return std::optional<Stop>{};
}

Result<void> Applier::flush() {
  if (!dirty_) return {};
  batch_.close();
  if (auto done = target_.commit(batch_, state_); !done) {
    target_failed_ = true;
    return done;
  }
  batch_.clear();
  dirty_ = false;
  ++stats_.target_commits;
  return {};
}

Result<void> Applier::finish() {
  if (in_transaction_) ++stats_.transactions_dropped;
  drop_transaction();
  return flush();
}

}  // namespace cdc::apply
