#include "apply/statement_batch.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

namespace cdc::apply {

namespace {

// What is wrong with a row; the public add_* functions put the table, position and key before it.
Unexpected bad_row(std::string_view why) { return fail(Errc::corrupt_input, std::string(why)); }

// Whether two values of a column are the same: the same JSON, as the lines write a value one
// way only.
bool same_value(simdjson::dom::element a, simdjson::dom::element b) {
  using simdjson::dom::element_type;
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case element_type::STRING: return a.get_string().value_unsafe() == b.get_string().value_unsafe();
    case element_type::INT64: return a.get_int64().value_unsafe() == b.get_int64().value_unsafe();
    case element_type::UINT64: return a.get_uint64().value_unsafe() == b.get_uint64().value_unsafe();
    case element_type::DOUBLE: return a.get_double().value_unsafe() == b.get_double().value_unsafe();
    case element_type::BOOL: return a.get_bool().value_unsafe() == b.get_bool().value_unsafe();
    case element_type::NULL_VALUE: return true;
    default: return simdjson::minify(a) == simdjson::minify(b);
  }
}

}  // namespace

std::string StatementBatch::describe(const StatementInfo& info) const {
  std::string text = fmt::format("{} of {} at {}", info.kind, info.table != nullptr ? info.table->source_name : "?",
                                 info.first);
  // Only statements of noted rows have several.
  if (info.rows > 1 && info.rows_to > info.rows_from)
    text += fmt::format(" (one of {} rows, the last at {})", info.rows, origin(rows_noted_[info.rows_to - 1]));
  return text;
}

void StatementBatch::describe(std::string& out, const RowOrigin& origin) const {
  out.assign(origin.position);
  if (origin.has_key && origin.key.is_object()) {
    out.append(" key ");
    out.append(simdjson::minify(origin.key));
  } else if (origin.has_row) {
    out.append(" row ");
    out.append(simdjson::minify(origin.row));
  }
}

Result<void> StatementBatch::gather(const TargetTable& table, simdjson::dom::object image,
                                    std::string_view image_name, std::vector<simdjson::dom::element>& values) {
  values.resize(table.columns.size());
  std::size_t index = 0;
  for (const simdjson::dom::key_value_pair member : image) {
    if (index < table.columns.size() && member.key == table.columns[index].name) {
      values[index++] = member.value;
      continue;
    }
    break;  // out of order: look the rest up by name
  }
  if (index == table.columns.size() && image.size() == index) return {};
  if (image.size() != table.columns.size())
    return bad_row(fmt::format("the {} image has {} columns, the table line {}: a partial image (binlog_row_image "
                                      "must be FULL) or a table line of another shape",
                                      image_name, image.size(), table.columns.size()));
  for (; index < table.columns.size(); ++index) {
    if (image.at_key(table.columns[index].name).get(values[index]) != simdjson::SUCCESS)
      return bad_row(fmt::format("the {} image lacks column {}", image_name, table.columns[index].quoted));
  }
  return {};
}

void StatementBatch::begin_statement(const TargetTable& table, std::string_view kind, bool exact,
                                     const RowOrigin& origin) {
  if (!statements_.empty()) sql_.push_back(';');
  StatementInfo& info = statements_.emplace_back();
  info.start = sql_.size();
  info.rows_from = info.rows_to = rows_noted_.size();
  info.exact = exact;
  info.kind = kind;
  info.table = &table;
  describe(info.first, origin);
}

void StatementBatch::add_statement(const TargetTable& table, std::string_view kind, std::string_view sql,
                                   const RowOrigin& origin) {
  close();
  begin_statement(table, kind, false, origin);
  sql_.append(sql);
  statements_.back().end = sql_.size();
}

Result<bool> StatementBatch::holds_enum_error(const TargetTable& table, simdjson::dom::object image) {
  if (table.enum_error_columns.empty()) return false;
  if (auto gathered = gather(table, image, "after", values_); !gathered) return fail(std::move(gathered).error());
  for (const std::size_t i : table.enum_error_columns) {
    const simdjson::dom::element value = values_[i];
    std::string_view text;
    std::uint64_t index = 1;
    // '' by its label, or 0 by its index (a binlog without the labels)
    if ((value.get_string().get(text) == simdjson::SUCCESS && text.empty()) ||
        (value.get_uint64().get(index) == simdjson::SUCCESS && index == 0))
      return true;
  }
  return false;
}

Result<void> StatementBatch::append_row_values(const TargetTable& table, simdjson::dom::object image,
                                               std::string_view image_name) {
  if (auto gathered = gather(table, image, image_name, values_); !gathered) return gathered;
  sql_.push_back('(');
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    if (i > 0) sql_.push_back(',');
    if (auto done = append_literal(sql_, table.columns[i], values_[i], LiteralUse::value, scratch_); !done)
      return bad_row(done.error().message);
  }
  sql_.push_back(')');
  return {};
}

Unexpected StatementBatch::row_error(const TargetTable& table, const RowOrigin& origin, const Error& error) {
  describe(scratch_, origin);
  return fail(error.code, fmt::format("{} at {}: {}", table.source_name, scratch_, error.message));
}

void StatementBatch::note_row(std::size_t begin, std::uint64_t expected, const RowOrigin& origin) {
  StatementRow& row = rows_noted_.emplace_back();
  row.begin = begin;
  row.end = sql_.size();
  row.expected = expected;
  row.origin_begin = origins_.size();
  describe(scratch_, origin);
  origins_.append(scratch_);
  row.origin_end = origins_.size();
  statements_.back().rows_to = rows_noted_.size();
}

std::string StatementBatch::one_row_sql(const StatementInfo& info, const StatementRow& row) const {
  const StatementRow& first = rows_noted_[info.rows_from];
  const StatementRow& last = rows_noted_[info.rows_to - 1];
  std::string sql(std::string_view(sql_).substr(info.start, first.begin - info.start));
  sql.append(std::string_view(sql_).substr(row.begin, row.end - row.begin));
  sql.append(std::string_view(sql_).substr(last.end, info.end - last.end));
  return sql;
}

Result<void> StatementBatch::add_insert(const TargetTable& table, simdjson::dom::object after, bool upsert,
                                        const RowOrigin& origin) {
  if (auto done = insert_row(table, after, upsert, origin); !done) return row_error(table, origin, done.error());
  return {};
}

Result<void> StatementBatch::add_update(const TargetTable& table, simdjson::dom::object before,
                                        simdjson::dom::object after, const RowOrigin& origin) {
  if (auto done = update_row(table, before, after, origin); !done) return row_error(table, origin, done.error());
  return {};
}

Result<void> StatementBatch::add_delete(const TargetTable& table, simdjson::dom::object before,
                                        const RowOrigin& origin) {
  if (auto done = delete_row(table, before, origin); !done) return row_error(table, origin, done.error());
  return {};
}

Result<bool> StatementBatch::add_values_row(const TargetTable& table, simdjson::dom::object after, bool joins,
                                            std::string_view name, bool exact, const RowOrigin& origin) {
  const bool extend = joins && open_table_ == &table && sql_.size() - open_start_ < kMaxStatementBytes;
  if (!extend) close();
  const std::size_t rollback = sql_.size();
  if (extend) {
    sql_.push_back(',');
  } else {
    begin_statement(table, name, exact, origin);
    open_start_ = sql_.size();
    sql_.append(table.insert_prefix);
  }
  const std::size_t row_begin = sql_.size();
  if (auto done = append_row_values(table, after, "after"); !done) {
    sql_.resize(rollback);
    if (!extend) statements_.pop_back();
    return fail(std::move(done).error());
  }
  note_row(row_begin, 1, origin);  // an insert counts 1; update_as_upsert makes it 2
  open_table_ = &table;
  ++statements_.back().rows;
  ++rows_;
  statements_.back().end = sql_.size();
  return extend;
}

Result<void> StatementBatch::insert_alone(const TargetTable& table, simdjson::dom::object after, bool upsert,
                                          bool relax, const RowOrigin& origin) {
  const Mark at = mark();
  if (relax) add_statement(table, "sql_mode", fmt::format("SET SESSION sql_mode='{}'", kMariadbRelaxedSqlMode), origin);
  if (table.one_row) add_statement(table, "delete", "DELETE FROM " + table.qualified, origin);
  close();
  auto added = add_values_row(table, after, false, upsert ? "upsert" : "insert", false, origin);
  if (!added) {
    rewind(at);
    return fail(std::move(added).error());
  }
  open_kind_ = upsert ? OpenKind::upsert : OpenKind::insert;
  ++statements_.back().expected;
  close();
  if (relax) add_statement(table, "sql_mode", fmt::format("SET SESSION sql_mode='{}'", kMariadbSqlMode), origin);
  return {};
}

Result<void> StatementBatch::insert_row(const TargetTable& table, simdjson::dom::object after, bool upsert,
                                        const RowOrigin& origin) {
  upsert = upsert && !table.keyless();
  auto relax = holds_enum_error(table, after);
  if (!relax) return fail(std::move(relax).error());
  if (*relax || table.one_row) return insert_alone(table, after, upsert, *relax, origin);
  const OpenKind kind = upsert ? OpenKind::upsert : OpenKind::insert;
  // A "c" line also extends a run of changes: one more row counted 1.
  const bool into_changes = !upsert && open_kind_ == OpenKind::changes;
  auto extended = add_values_row(table, after, open_kind_ == kind || into_changes, upsert ? "upsert" : "insert",
                                 false, origin);
  if (!extended) return fail(std::move(extended).error());
  if (!(*extended && into_changes)) open_kind_ = kind;
  ++statements_.back().expected;
  return {};
}

Result<void> StatementBatch::update_as_upsert(const TargetTable& table, simdjson::dom::object after,
                                              const RowOrigin& origin) {
  auto extended = add_values_row(table, after, open_kind_ == OpenKind::insert || open_kind_ == OpenKind::changes,
                                 "insert or update", true, origin);
  if (!extended) return fail(std::move(extended).error());
  // The run of inserts becomes a run of changes: its inserts must insert (1 each), its updates
  // find their row (2 each), so that nothing is inserted where an update found no row.
  StatementInfo& info = statements_.back();
  info.kind = "insert or update";
  info.exact = true;
  info.expected += 2;
  rows_noted_.back().expected = 2;  // an update found its row
  open_kind_ = OpenKind::changes;
  return {};
}

Result<void> StatementBatch::append_where(const TargetTable& table) {
  if (table.keyless()) {
    // The whole row, NULLs too; of rows alike, any one is the one the source changed.
    sql_.append(table.keyless_where);
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      if (i > 0) sql_.append(" AND ");
      sql_.append(table.columns[i].quoted);
      sql_.append(table.row_equals);
      if (auto done = append_literal(sql_, table.columns[i], before_values_[i], LiteralUse::comparison, scratch_); !done)
        return bad_row(done.error().message);
    }
    sql_.append(table.keyless_end);
    return {};
  }
  sql_.append(" WHERE ");
  for (std::size_t k = 0; k < table.key_columns.size(); ++k) {
    const std::size_t i = table.key_columns[k];
    if (k > 0) sql_.append(" AND ");
    sql_.append(table.columns[i].quoted);
    sql_.append(table.key_equals);
    if (auto done = append_literal(sql_, table.columns[i], before_values_[i], LiteralUse::comparison, scratch_); !done)
      return bad_row(done.error().message);
  }
  return {};
}

Result<void> StatementBatch::update_row(const TargetTable& table, simdjson::dom::object before,
                                        simdjson::dom::object after, const RowOrigin& origin) {
  auto relax = holds_enum_error(table, after);
  if (!relax) return fail(std::move(relax).error());
  if (*relax) {
    const Mark at = mark();
    add_statement(table, "sql_mode", fmt::format("SET SESSION sql_mode='{}'", kMariadbRelaxedSqlMode), origin);
    if (auto done = update_statement(table, before, after, origin); !done) {
      rewind(at);
      return done;
    }
    add_statement(table, "sql_mode", fmt::format("SET SESSION sql_mode='{}'", kMariadbSqlMode), origin);
    return {};
  }
  if (table.updates_as_upserts) {
    if (auto gathered = gather(table, after, "after", values_); !gathered) return gathered;
    if (auto gathered = gather(table, before, "before", before_values_); !gathered) return gathered;
    bool same_key = true;
    for (const std::size_t k : table.key_columns) same_key = same_key && same_value(before_values_[k], values_[k]);
    bool changed = false;
    for (std::size_t i = 0; i < table.columns.size() && !changed; ++i)
      changed = !same_value(before_values_[i], values_[i]);
    // A row whose values stay is counted 1, like an insert: only a change tells the two apart.
    if (same_key && changed) return update_as_upsert(table, after, origin);
  }
  return update_statement(table, before, after, origin);
}

Result<void> StatementBatch::update_statement(const TargetTable& table, simdjson::dom::object before,
                                              simdjson::dom::object after, const RowOrigin& origin) {
  close();
  const std::size_t rollback = sql_.size();
  begin_statement(table, "update", true, origin);
  sql_.append("UPDATE ");
  sql_.append(table.qualified);
  sql_.append(" SET ");
  auto failed = [&](Result<void> error) {
    sql_.resize(rollback);
    statements_.pop_back();
    return error;
  };
  if (auto gathered = gather(table, after, "after", values_); !gathered) return failed(gathered);
  if (auto gathered = gather(table, before, "before", before_values_); !gathered) return failed(gathered);
  // The columns that changed: less for the server to write and log. None (an update of
  // columns that --columns left out) sets the last to its value, which still finds the row.
  bool any = false;
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    if (same_value(before_values_[i], values_[i]) && (any || i + 1 < table.columns.size())) continue;
    if (any) sql_.push_back(',');
    any = true;
    sql_.append(table.columns[i].quoted);
    sql_.push_back('=');
    if (auto done = append_literal(sql_, table.columns[i], values_[i], LiteralUse::value, scratch_); !done)
      return failed(bad_row(done.error().message));
  }
  if (auto done = append_where(table); !done) return failed(done);
  statements_.back().rows = 1;
  statements_.back().expected = 1;
  statements_.back().end = sql_.size();
  ++rows_;
  return {};
}

Result<void> StatementBatch::delete_row(const TargetTable& table, simdjson::dom::object before,
                                        const RowOrigin& origin) {
  if (auto gathered = gather(table, before, "before", before_values_); !gathered) return gathered;
  if (table.key_columns.size() == 1) {
    // DELETE ... WHERE key IN (...), extended while deletes of the table follow each other.
    const std::size_t key = table.key_columns.front();
    const bool extend = open_table_ == &table && open_kind_ == OpenKind::delete_in &&
                        sql_.size() - open_start_ < kMaxStatementBytes;
    if (!extend) close();
    const std::size_t rollback = sql_.size();
    if (extend) {
      sql_.push_back(',');
    } else {
      begin_statement(table, "delete", true, origin);
      open_start_ = sql_.size();
      sql_.append("DELETE FROM ");
      sql_.append(table.qualified);
      sql_.append(" WHERE ");
      sql_.append(table.columns[key].quoted);
      sql_.append(" IN (");
    }
    const std::size_t row_begin = sql_.size();
    if (auto done = append_literal(sql_, table.columns[key], before_values_[key], LiteralUse::comparison, scratch_);
        !done) {
      sql_.resize(rollback);
      if (!extend) statements_.pop_back();
      return bad_row(done.error().message);
    }
    note_row(row_begin, 1, origin);
      open_table_ = &table;
    open_kind_ = OpenKind::delete_in;
    ++statements_.back().rows;
    ++statements_.back().expected;
    ++rows_;
    statements_.back().end = sql_.size();
    return {};
  }
  close();
  const std::size_t rollback = sql_.size();
  begin_statement(table, "delete", true, origin);
  sql_.append("DELETE FROM ");
  sql_.append(table.qualified);
  if (auto done = append_where(table); !done) {
    sql_.resize(rollback);
    statements_.pop_back();
    return done;
  }
  statements_.back().rows = 1;
  statements_.back().expected = 1;
  statements_.back().end = sql_.size();
  ++rows_;
  return {};
}

void StatementBatch::close() {
  if (open_table_ == nullptr) return;
  if (open_kind_ == OpenKind::upsert || open_kind_ == OpenKind::changes) sql_.append(open_table_->upsert_suffix);
  if (open_kind_ == OpenKind::delete_in) sql_.push_back(')');
  statements_.back().end = sql_.size();
  open_table_ = nullptr;
}

StatementBatch::Mark StatementBatch::mark() const {
  Mark at;
  at.sql_size = sql_.size();
  at.statements = statements_.size();
  at.rows_noted = rows_noted_.size();
  at.origins_size = origins_.size();
  at.rows = rows_;
  at.open_table = open_table_;
  at.open_kind = static_cast<int>(open_kind_);
  at.open_start = open_start_;
  if (open_table_ != nullptr) {
    at.open_rows = statements_.back().rows;
    at.open_expected = statements_.back().expected;
    at.open_exact = statements_.back().exact;
    at.open_name = statements_.back().kind;
  }
  return at;
}

void StatementBatch::rewind(const Mark& mark) {
  sql_.resize(mark.sql_size);
  statements_.resize(mark.statements);
  rows_noted_.resize(mark.rows_noted);
  origins_.resize(mark.origins_size);
  rows_ = mark.rows;
  open_table_ = mark.open_table;
  open_kind_ = static_cast<OpenKind>(mark.open_kind);
  open_start_ = mark.open_start;
  if (open_table_ != nullptr) {
    // A run of inserts that the rewound transaction made a run of changes is one again.
    statements_.back().rows = mark.open_rows;
    statements_.back().expected = mark.open_expected;
    statements_.back().exact = mark.open_exact;
    statements_.back().kind = mark.open_name;
    statements_.back().end = sql_.size();
    statements_.back().rows_to = std::min(statements_.back().rows_to, rows_noted_.size());
  }
}

void StatementBatch::clear() {
  sql_.clear();
  statements_.clear();
  rows_ = 0;
  rows_noted_.clear();
  origins_.clear();
  open_table_ = nullptr;
}

Unexpected unexpected_count(const StatementBatch& batch, std::size_t index, std::uint64_t counted,
                            const RunStatements& run) {
  const StatementInfo& info = batch.statements()[index];
  const std::string_view why = info.kind == "insert or update"
                                   ? "the target has no row to update, or already a row to insert,"
                                   : "the target has no row";
  const auto message = [&](std::string_view which) {
    return fail(Errc::corrupt_input, fmt::format("{} for the {}: the target differs from the source; nothing of this "
                                                 "target transaction was applied",
                                                 why, which));
  };
  if (info.rows_to - info.rows_from < 2) return message(batch.describe(info));
  // The statements before it again, then its rows one by one: the first that counts other
  // than its own share is the row; all rolled back.
  std::vector<std::uint64_t> affected;
  std::optional<std::string> found;
  if (run("ROLLBACK", 1, affected) && run("BEGIN", 1, affected)) {
    const auto& statements = batch.statements();
    bool replayed = true;
    if (index > 0) replayed = static_cast<bool>(run(batch.sql().substr(0, statements[index - 1].end), index, affected));
    for (std::size_t r = info.rows_from; replayed && r < info.rows_to && !found; ++r) {
      const StatementRow& row = batch.row(r);
      affected.clear();
      if (!run(batch.one_row_sql(info, row), 1, affected) || affected.size() != 1) break;
      if (affected[0] != row.expected)
        found = fmt::format("{} of {} at {} (counted {}, {} expected; one of the {} rows of a statement that counted "
                            "{}, {} expected)",
                            info.kind, info.table != nullptr ? info.table->source_name : "?", batch.origin(row),
                            affected[0], row.expected, info.rows, counted, info.expected);
    }
    (void)run("ROLLBACK", 1, affected);
  }
  return message(found ? *found : batch.describe(info));
}

}  // namespace cdc::apply
