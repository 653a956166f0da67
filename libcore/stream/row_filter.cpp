#include "stream/row_filter.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "plan/planner.h"
#include "rowimage/column_value.h"
#include "schema/table_description.h"
#include "schema/table_schema.h"
#include "util/bits.h"

namespace cdc::stream {

namespace {

// A table line whose columns are "@1", "@2", ...: the binlog did not name them.
bool positional_names(const records::TableLine& line) {
  return !line.columns.empty() && std::all_of(line.columns.begin(), line.columns.end(), [](const auto& column) {
    return column.name.size() > 1 && column.name.front() == '@';
  });
}

// A TINYINT..BIGINT value's little-endian bytes as 64 bits, sign-extended when signed (as
// write_column_value reads them).
std::uint64_t integer_bits(std::span<const std::uint8_t> bytes, bool is_unsigned) noexcept {
  const std::uint64_t raw = load_le(bytes.data(), bytes.size());
  if (is_unsigned) return raw;
  const auto unused_bits = static_cast<unsigned>(64 - 8 * bytes.size());
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(raw << unused_bits) >> unused_bits);
}

}  // namespace

RowVerdict row_verdict(binlog::RowsKind kind, filter::Truth before, filter::Truth after) noexcept {
  const bool before_matches = before == filter::Truth::is_true;
  const bool after_matches = after == filter::Truth::is_true;
  switch (kind) {
    case binlog::RowsKind::write: return after_matches ? RowVerdict::keep : RowVerdict::drop;
    case binlog::RowsKind::erase: return before_matches ? RowVerdict::keep : RowVerdict::drop;
    case binlog::RowsKind::update:
    case binlog::RowsKind::partial_update: break;
  }
  if (before_matches && after_matches) return RowVerdict::keep;
  if (before_matches) return RowVerdict::as_delete;  // the row leaves the filtered set
  if (after_matches) return RowVerdict::as_insert;   // the row enters it
  return RowVerdict::drop;
}

RowFilter::RowFilter(filter::BoundFilter bound, const filter::WhereOption& option, std::string db, std::string table)
    : bound_(std::move(bound)), option_(&option), db_(std::move(db)), table_(std::move(table)) {
  for (const std::size_t column : bound_.columns()) sliced_columns_ = std::max(sliced_columns_, column + 1);
}

bool RowFilter::same_values(const std::vector<rowimage::ColumnSlice>& before,
                            const std::vector<rowimage::ColumnSlice>& after) const noexcept {
  for (const std::size_t column : bound_.columns()) {
    const rowimage::ColumnSlice& b = before[column];
    const rowimage::ColumnSlice& a = after[column];
    if (b.present != a.present || b.is_null != a.is_null || b.bytes.size() != a.bytes.size() ||
        !std::equal(b.bytes.begin(), b.bytes.end(), a.bytes.begin()))
      return false;
  }
  return true;
}

Result<Verdicts> RowFilter::judge(std::span<const std::uint8_t> rows_bytes, std::uint64_t rows_offset,
                                  const rowimage::TablePlan& plan, const rowimage::RowsShape& shape,
                                  const RowsSource& source, rowimage::RowScratch& scratch,
                                  std::vector<RowVerdict>& verdicts, std::vector<rowimage::RowSizes>* sizes) {
  Verdicts judged;
  std::vector<rowimage::RowSizes>* const noted = shape.full_images ? sizes : nullptr;
  const std::size_t noted_before = noted != nullptr ? noted->size() : 0;
  ByteReader rows(rows_bytes, rows_offset);
  for (std::uint64_t row = 0; !rows.empty(); ++row) {
    rowimage::RowSizes row_sizes;
    if (shape.full_images) {
      // Sized whole, as count_rows() sizes them, and only the expression's columns (and those
      // before them) sliced.
      const std::span<const std::uint8_t> rest = rows.peek_rest();
      const std::optional<std::size_t> before_size =
          shape.has_before ? rowimage::row_image_size(rest, plan, shape.before) : std::optional<std::size_t>{0};
      const std::optional<std::size_t> after_size =
          before_size && shape.has_after ? rowimage::row_image_size(rest.subspan(*before_size), plan, shape.after)
                                         : std::optional<std::size_t>{0};
      if (!before_size || !after_size) {
        judged.complete = false;
        break;
      }
      row_sizes = {static_cast<std::uint32_t>(*before_size), static_cast<std::uint32_t>(*after_size)};
      if (shape.has_before)
        rowimage::slice_full_row_image(rest.first(*before_size), rows.offset(), plan, sliced_columns_, before_);
      if (shape.has_after)
        rowimage::slice_full_row_image(rest.subspan(*before_size, *after_size), rows.offset() + *before_size, plan,
                                       sliced_columns_, after_);
      rows.skip(*before_size + *after_size);
    } else {
      // Scanned as write_row_change scans a row: where each value is, none decoded yet.
      const std::uint64_t row_start = rows.offset();
      if (shape.has_before) {
        rowimage::scan_row_image(rows, plan, shape.before, before_, scratch);
        row_sizes.before = static_cast<std::uint32_t>(rows.offset() - row_start);
      }
      if (shape.has_after && rows.ok()) {
        const auto partial_json = shape.partial_update
                                      ? rowimage::read_partial_json_header(rows, plan.map(), shape.columns_after)
                                      : std::span<const std::uint8_t>{};
        const std::uint64_t after_start = rows.offset();
        rowimage::scan_row_image(rows, plan, shape.after, after_, scratch, partial_json);
        row_sizes.after = static_cast<std::uint32_t>(rows.offset() - after_start);
      }
      if (!rows.ok()) {
        judged.complete = false;
        break;
      }
    }
    if (noted != nullptr) noted->push_back(row_sizes);
    filter::Truth before = filter::Truth::unknown;
    filter::Truth after = filter::Truth::unknown;
    if (shape.has_before) {
      auto truth = image_truth(plan, before_, scratch, source, row, "before");
      if (!truth) return fail(std::move(truth).error());
      before = *truth;
    }
    if (shape.has_after && shape.has_before && same_values(before_, after_)) {
      after = before;  // an update that left the expression's columns as they were
    } else if (shape.has_after) {
      auto truth = image_truth(plan, after_, scratch, source, row, "after");
      if (!truth) return fail(std::move(truth).error());
      after = *truth;
    }
    const RowVerdict verdict = row_verdict(source.kind, before, after);
    verdicts.push_back(verdict);
    if (verdict == RowVerdict::drop) continue;
    ++judged.kept;
    if (verdict == RowVerdict::as_insert) ++judged.as_inserts;
    if (verdict == RowVerdict::as_delete) ++judged.as_deletes;
  }
  if (!judged.complete && noted != nullptr) noted->resize(noted_before);
  return judged;
}

Result<filter::Truth> RowFilter::image_truth(const rowimage::TablePlan& plan,
                                             const std::vector<rowimage::ColumnSlice>& slices,
                                             rowimage::RowScratch& scratch, const RowsSource& source,
                                             std::uint64_t row, std::string_view which) {
  // Each column's JSON text as the line would hold it, which is what the evaluator reads.
  texts_.clear();
  texts_.begin_object();
  text_ends_.clear();
  ByteReader errors;
  const std::span<const std::size_t> columns = bound_.columns();
  for (std::size_t slot = 0; slot < columns.size(); ++slot) {
    const std::size_t column = columns[slot];
    const rowimage::ColumnSlice& slice = slices[column];
    if (!slice.present)
      return fail(Errc::config,
                  fmt::format("{}.{}: the {} image of row {} at {}:{} has no column {} (a column of --where '{}'): "
                              "--where needs the columns it names in every row image (binlog_row_image=FULL)",
                              db_, table_, which, row, source.file, source.offset,
                              rowimage::column_name(plan.map(), column, scratch.name),
                              option_->text));
    // An integer is compared from its bytes, without its text (the common filter by an id,
    // a tenant or a status code): the text and its parse cost as much as the rest of the judging.
    const rowimage::TablePlan::Layout& layout = plan.layout(column);
    if (!slice.is_null && layout.integer_width != 0 && slice.bytes.size() == layout.integer_width &&
        bound_.takes_integer(slot, layout.is_unsigned)) {
      bound_.give_integer(slot, integer_bits(slice.bytes, layout.is_unsigned));
      text_ends_.push_back(texts_.bytes_buffered());
      text_ends_.push_back(texts_.bytes_buffered());
      continue;
    }
    texts_.raw_comma_key(plan.key(column));
    text_ends_.push_back(texts_.bytes_buffered());
    rowimage::write_column_value(plan, column, slice, texts_, scratch, errors);
    if (!errors.ok()) return fail(row_failure(source, row, errors.failure_text()));
    text_ends_.push_back(texts_.bytes_buffered());
  }
  values_.clear();
  const std::string_view text = texts_.buffered();
  for (std::size_t i = 0; i + 1 < text_ends_.size(); i += 2)
    values_.push_back(text.substr(text_ends_[i], text_ends_[i + 1] - text_ends_[i]));
  auto truth = bound_.evaluate(values_);
  if (!truth) return fail(row_failure(source, row, truth.error().message));
  return *truth;
}

Result<std::shared_ptr<RowFilter>> RowFilters::for_table(const records::TableLine& line,
                                                         std::string_view description, std::string_view at) {
  key_.assign(line.db).append(1, '\0').append(line.table);
  const auto found = tables_.find(key_);
  if (found != tables_.end() && found->second.description == description) return found->second.filter;
  // A filtered table described anew: a DDL changed it.
  const bool changed = found != tables_.end() && found->second.filter != nullptr;
  auto where = filter::where_for(options_, line.db, line.table);
  if (!where) return fail(std::move(where).error());
  std::shared_ptr<RowFilter> made;
  if (*where != nullptr) {
    auto bound = filter::BoundFilter::bind((*where)->expression, line.columns);
    if (!bound) {
      const std::string hint = positional_names(line)
                                   ? " (the binlog does not name the columns, binlog_row_metadata=MINIMAL: stream "
                                     "from the server, or add --catalog to --file)"
                                   : "";
      if (changed)
        return fail(Errc::usage,
                    fmt::format("--where '{}' no longer fits {}.{}, which a DDL changed (its rows at {}): {}{}; rerun "
                                "with a --where for its new columns (with --state the stream goes on from the last "
                                "transaction saved)",
                                (*where)->text, line.db, line.table, at, bound.error().message, hint));
      return fail(Errc::usage, fmt::format("--where '{}' on {}.{} (as its rows at {} describe it): {}{}", (*where)->text,
                                           line.db, line.table, at, bound.error().message, hint));
    }
    made = std::make_shared<RowFilter>(std::move(*bound), **where, line.db, line.table);
  }
  tables_.insert_or_assign(key_, Bound{std::string(description), made});
  return made;
}

Result<void> check_wheres_now(mysql::Connection& connection, std::span<const filter::WhereOption> wheres,
                              std::string_view include, std::string_view exclude,
                              const std::function<void(std::string_view)>& warn) {
  if (wheres.empty()) return {};
  auto tables = plan::discover_tables(connection, include, exclude);
  if (!tables) return fail(std::move(tables).error());
  for (const filter::WhereOption& option : wheres) {
    const bool selects = std::any_of(tables->begin(), tables->end(), [&option](const plan::TableRef& ref) {
      return option.filter.selects(ref.database, ref.table);
    });
    if (!selects && warn)
      warn(fmt::format("--where '{}' selects none of the streamed tables the server has now; it filters such a table "
                       "if its rows appear",
                       option.text));
  }
  for (const plan::TableRef& ref : *tables) {
    auto where = filter::where_for(wheres, ref.database, ref.table);
    if (!where) return fail(std::move(where).error());
    if (*where == nullptr) continue;
    auto schema = schema::read_table_schema(connection, ref.database, ref.table);
    if (!schema) return fail(std::move(schema).error());
    if (!*schema) continue;  // dropped meanwhile
    const records::TableLine line = schema::describe_table_schema(ref.database, ref.table, **schema);
    if (auto bound = filter::BoundFilter::bind((*where)->expression, line.columns); !bound)
      return fail(Errc::usage, fmt::format("--where '{}' on {}.{}: {}", (*where)->text, ref.database, ref.table,
                                           bound.error().message));
  }
  return {};
}

}  // namespace cdc::stream
