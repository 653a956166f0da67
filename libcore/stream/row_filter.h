#pragma once

// cdc-stream --where 'DB.TABLE:EXPR' (issue 31): which row images of a rows event its filter
// keeps, judged before any line of the event is written, so that rows it drops are never
// formatted. On the reading thread, which then knows the count of an event's lines (the commit
// line's "rows") whichever thread writes them; or, reading files, mostly on the rows thread,
// which then writes the commit line (ChangeWriter::judge_rows_on_rows_thread).
//
// An insert is kept when its after image matches (the expression is TRUE on it), a delete when
// its before image does. An update whose images both match stays an update; one whose before
// image alone matches leaves the filtered set, and is written as a delete of its before image;
// one whose after image alone matches enters it, and is written as an insert of its after
// image; one with neither is dropped. A consumer that applies the lines to the rows the
// expression is true on at the start then holds the rows it is true on at the end.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "binlog/events/rows_event.h"
#include "filter/evaluate.h"
#include "filter/where_option.h"
#include "mysql/connection.h"
#include "ndjson/writer.h"
#include "records/table_line.h"
#include "rowimage/row_change.h"
#include "rowimage/row_image.h"
#include "stream/row_lines.h"
#include "util/byte_reader.h"
#include "util/result.h"

namespace cdc::stream {

// The verdict (RowVerdict, stream/row_lines.h) on a row of a rows event of this kind, from the
// truth of the expression on its before and after images (an image the kind has not is ignored).
[[nodiscard]] RowVerdict row_verdict(binlog::RowsKind kind, filter::Truth before, filter::Truth after) noexcept;

// How the rows of one event fared.
struct Verdicts {
  std::uint64_t kept = 0;        // lines to write
  std::uint64_t as_inserts = 0;  // of them, updates written as "c"
  std::uint64_t as_deletes = 0;  // and as "d"
  // False when a row did not scan: the verdicts stop before it, and writing the rows fails on
  // it with the usual message (write_row_lines).
  bool complete = true;
};

// One table's --where, bound to its columns as one description of the table has them.
class RowFilter {
 public:
  RowFilter(filter::BoundFilter bound, const filter::WhereOption& option, std::string db, std::string table);
  // The same filter with scratch buffers of its own, for another thread (judge() is not
  // thread-safe).
  [[nodiscard]] std::shared_ptr<RowFilter> copy() const {
    return std::make_shared<RowFilter>(bound_, *option_, db_, table_);
  }

  // One verdict per row of a rows event's `rows` (at `rows_offset`, for messages) appended to
  // `verdicts`. With `sizes`, rows of FULL images also append their image sizes, as
  // rowimage::count_rows() does (removed again when the verdicts are not complete).
  // Errc::config when an image lacks a column of the expression (binlog_row_image is not
  // FULL); Errc::corrupt_input naming the row (row_failure) when a value does not decode.
  [[nodiscard]] Result<Verdicts> judge(std::span<const std::uint8_t> rows, std::uint64_t rows_offset,
                                       const rowimage::TablePlan& plan,
                                       const rowimage::RowsShape& shape, const RowsSource& source,
                                       rowimage::RowScratch& scratch, std::vector<RowVerdict>& verdicts,
                                       std::vector<rowimage::RowSizes>* sizes);

 private:
  // The expression on one scanned image.
  // The expression on one scanned image; `which` ("before", "after") and `row` for messages.
  Result<filter::Truth> image_truth(const rowimage::TablePlan& plan, const std::vector<rowimage::ColumnSlice>& slices,
                                    rowimage::RowScratch& scratch, const RowsSource& source, std::uint64_t row,
                                    std::string_view which);

  // Whether the expression's columns hold the same bytes in both images: then they have the
  // same truth (an update of other columns), evaluated once.
  [[nodiscard]] bool same_values(const std::vector<rowimage::ColumnSlice>& before,
                                 const std::vector<rowimage::ColumnSlice>& after) const noexcept;

  filter::BoundFilter bound_;
  const filter::WhereOption* option_;
  // How many leading columns of a FULL image are sliced: up to the last the expression names.
  std::size_t sliced_columns_ = 0;
  std::string db_;
  std::string table_;
  // Reused from row to row: no allocation once warm.
  std::vector<rowimage::ColumnSlice> before_;
  std::vector<rowimage::ColumnSlice> after_;
  ndjson::Writer texts_;  // the expression's columns' JSON texts, as the line would have them
  std::vector<std::size_t> text_ends_;
  std::vector<std::string_view> values_;
};

// Every --where of a run, and each table's filter bound to the table's description.
class RowFilters {
 public:
  explicit RowFilters(std::vector<filter::WhereOption> options) : options_(std::move(options)) {}

  [[nodiscard]] bool empty() const noexcept { return options_.empty(); }
  [[nodiscard]] const std::vector<filter::WhereOption>& options() const noexcept { return options_; }

  // The filter of the table `line` describes (null: no --where selects it), bound to its
  // columns once per description (`description`: the line as text, to compare). Errc::usage
  // naming the option, the table and the character of the expression when it does not fit the
  // columns: when the table first appears, or after a DDL changed it. `at` (FILE:OFFSET) is
  // where its rows are, for the message.
  [[nodiscard]] Result<std::shared_ptr<RowFilter>> for_table(const records::TableLine& line,
                                                             std::string_view description, std::string_view at);

 private:
  struct Bound {
    std::string description;
    std::shared_ptr<RowFilter> filter;
  };
  std::vector<filter::WhereOption> options_;
  std::map<std::string, Bound, std::less<>> tables_;  // key: db '\0' table
  std::string key_;
};

// Before streaming (a live run): every --where checked against the tables --tables `include`
// and --exclude `exclude` select as the server has them now, as cdc-plan checks them.
// Errc::usage as RowFilters::for_table(), or when two options select one table; a --where that
// selects no such table is a warning (the table may come later).
[[nodiscard]] Result<void> check_wheres_now(mysql::Connection& connection, std::span<const filter::WhereOption> wheres,
                                            std::string_view include, std::string_view exclude,
                                            const std::function<void(std::string_view)>& warn);

}  // namespace cdc::stream
