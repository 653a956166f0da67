#pragma once

// The SQL of the source transactions that go into one target transaction, as text: statements
// joined by ';' in one buffer, sent to the server in few round trips (mariadb_target.h).
// Inserts of one table in a row, across source transactions too, are one multi-row INSERT, and
// deletes of one table with a one-column key one DELETE ... WHERE key IN (...); updates are a
// statement each, setting the columns that changed. Updates and deletes must find their rows:
// the rows they affect are checked.
//
// Two kinds of rows stand alone, in statements no other row joins: a row of a SEQUENCE
// (TargetTable::one_row), after a DELETE of the table's row; and, on MariaDB/MySQL, a row with
// an ENUM's error value (TargetTable::enum_error_columns), between a SET of the session's
// sql_mode to kMariadbRelaxedSqlMode and one back to kMariadbSqlMode.
//
// The source transaction being read is in the buffer too, after a mark(): rewind() to it drops
// that transaction's statements (a discard line, an input that ends before its commit, a
// transaction already applied), restoring an INSERT it had extended. Nothing here allocates
// per row once the buffers have grown, but for the description of an update or delete.
//
// Each row of a multi-row statement is noted (where its text is, what the server must count for
// it, and where it comes from), so that when the statement counts other than it should, the row
// that did can be found and named (unexpected_count()).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "apply/target_table.h"
#include "util/result.h"

namespace cdc::apply {

// Where a row comes from, for the messages that name it.
struct RowOrigin {
  std::string_view position;  // "binlog.000001:4711#0 (gtid 0-1-5)" or "snapshot row 17"
  simdjson::dom::element key;  // the line's "key" (an object, or null) when has_key
  bool has_key = false;
  // A keyless table's row: the image that finds it (before) or that it gets (after), named in
  // the messages in place of a key.
  simdjson::dom::element row;
  bool has_row = false;
};

struct StatementInfo {
  std::size_t end = 0;         // where its text ends in sql()
  std::uint64_t rows = 0;      // source rows it applies
  // An update or delete: it must find exactly `rows` rows; a run of inserts and updates
  // (changes), as one INSERT ... ON DUPLICATE KEY UPDATE: the server must count 1 for each row
  // inserted and 2 for each updated (CLIENT_FOUND_ROWS), `expected` in all.
  bool exact = false;
  std::uint64_t expected = 0;
  std::string_view kind;       // "insert", "upsert", "update", "delete"
  const TargetTable* table = nullptr;
  std::string first;           // the first row's origin and key, for messages
  std::size_t start = 0;       // where its text starts in sql()
  std::size_t rows_from = 0;   // its rows in StatementBatch::row(), when it has several
  std::size_t rows_to = 0;
};

// One row of a multi-row statement: its text in sql() (a "(...)" of an INSERT's VALUES, a key of
// a DELETE's IN list), what the server must count for it alone (0: not checked), and its origin
// and key as the messages write them, in StatementBatch::origins().
struct StatementRow {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::uint64_t expected = 0;
  std::size_t origin_begin = 0;
  std::size_t origin_end = 0;
};


class StatementBatch {
 public:
  struct Mark {
    std::size_t sql_size = 0;
    std::size_t statements = 0;
    std::size_t rows_noted = 0;
    std::size_t origins_size = 0;
    std::uint64_t rows = 0;
    std::uint64_t open_rows = 0;  // the rows of an open INSERT
    std::uint64_t open_expected = 0;
    bool open_exact = false;
    std::string_view open_name;
    const TargetTable* open_table = nullptr;
    int open_kind = 0;
    std::size_t open_start = 0;
  };

  // An "r" line (upsert: a snapshot row may be applied again) or a "c" line (plain insert).
  [[nodiscard]] Result<void> add_insert(const TargetTable& table, simdjson::dom::object after, bool upsert,
                                        const RowOrigin& origin);
  // UPDATE ... SET the columns whose value changed WHERE the key (or, keyless, the whole
  // before image, one row of those alike: TargetTable's keyless_where). For a table with
  // updates_as_upserts, an update that keeps the key and changes a column is instead one more
  // row of the open run of inserts of its table (which then ends as an upsert), or starts one:
  // fewer statements where inserts and updates alternate.
  // Each add_* fails with "db.t at <position> key {...}: <why>" (Errc::corrupt_input) for a
  // row that cannot be written, and leaves the batch as it was.
  [[nodiscard]] Result<void> add_update(const TargetTable& table, simdjson::dom::object before,
                                        simdjson::dom::object after, const RowOrigin& origin);
  [[nodiscard]] Result<void> add_delete(const TargetTable& table, simdjson::dom::object before,
                                        const RowOrigin& origin);

  [[nodiscard]] Mark mark() const;
  void rewind(const Mark& mark);
  // Ends an open INSERT (its upsert clause) or DELETE (its IN list): the statements are then whole.
  void close();
  void clear();

  [[nodiscard]] std::string_view sql() const noexcept { return sql_; }
  [[nodiscard]] const std::vector<StatementInfo>& statements() const noexcept { return statements_; }
  [[nodiscard]] std::uint64_t rows() const noexcept { return rows_; }
  [[nodiscard]] bool empty() const noexcept { return statements_.empty(); }
  [[nodiscard]] const StatementRow& row(std::size_t index) const noexcept { return rows_noted_[index]; }
  [[nodiscard]] std::string_view origin(const StatementRow& row) const noexcept {
    return std::string_view(origins_).substr(row.origin_begin, row.origin_end - row.origin_begin);
  }
  // "update of db.t at <position> key {...}" (and "(one of N rows, the last at ...)"): the
  // statement as the target's errors name it.
  [[nodiscard]] std::string describe(const StatementInfo& info) const;
  // The statement `info` with only its row `row` (one of info's): its text before its first
  // row, that row's, and its text after its last row.
  [[nodiscard]] std::string one_row_sql(const StatementInfo& info, const StatementRow& row) const;

  // A multi-row statement is ended at about this many bytes, below the server's max_allowed_packet.
  static constexpr std::size_t kMaxStatementBytes = std::size_t{1} << 20;

 private:
  void begin_statement(const TargetTable& table, std::string_view kind, bool exact, const RowOrigin& origin);
  // A statement whose rows are not counted (a SET, the DELETE of a sequence's row): whole at once.
  void add_statement(const TargetTable& table, std::string_view kind, std::string_view sql, const RowOrigin& origin);
  // Whether the image holds an ENUM's error value in one of table.enum_error_columns.
  Result<bool> holds_enum_error(const TargetTable& table, simdjson::dom::object image);
  Result<void> append_row_values(const TargetTable& table, simdjson::dom::object image, std::string_view image_name);
  Result<void> append_where(const TargetTable& table);  // by before_values_
  // The after image as one more row of the open run of the table's INSERT when `joins` says
  // that run takes it (and it is not full), else as the first row of a new INSERT statement
  // `name`: whether it extended. Nothing changed on failure.
  Result<bool> add_values_row(const TargetTable& table, simdjson::dom::object after, bool joins,
                              std::string_view name, bool exact, const RowOrigin& origin);
  // update_row's other way: the after image as a row of a run of changes.
  Result<void> update_as_upsert(const TargetTable& table, simdjson::dom::object after, const RowOrigin& origin);
  // The image's values in the table's column order (the lines write them so; a name out of
  // place is looked up): a column the image lacks is an error (a partial image).
  Result<void> gather(const TargetTable& table, simdjson::dom::object image, std::string_view image_name,
                      std::vector<simdjson::dom::element>& values);
  void describe(std::string& out, const RowOrigin& origin) const;
  Result<void> insert_row(const TargetTable& table, simdjson::dom::object after, bool upsert, const RowOrigin& origin);
  Result<void> update_row(const TargetTable& table, simdjson::dom::object before, simdjson::dom::object after,
                          const RowOrigin& origin);
  // UPDATE ... SET what changed WHERE the key: a statement of its own.
  Result<void> update_statement(const TargetTable& table, simdjson::dom::object before, simdjson::dom::object after,
                                const RowOrigin& origin);
  // insert_row and update_row for the rows that stand alone.
  Result<void> insert_alone(const TargetTable& table, simdjson::dom::object after, bool upsert, bool relax,
                            const RowOrigin& origin);
  Result<void> delete_row(const TargetTable& table, simdjson::dom::object before, const RowOrigin& origin);
  // "db.t at <position> key {...}: <why>": a row that cannot be written names itself.
  Unexpected row_error(const TargetTable& table, const RowOrigin& origin, const Error& error);
  // Notes the row of the open statement whose text runs from `begin` to the end of sql_.
  void note_row(std::size_t begin, std::uint64_t expected, const RowOrigin& origin);

  std::string sql_;
  std::vector<StatementInfo> statements_;
  std::uint64_t rows_ = 0;
  std::vector<StatementRow> rows_noted_;
  std::string origins_;
  // The multi-row statement that the next row of this table and kind extends.
  // changes: a run of "c" and "u" lines of a table with updates_as_upserts, once it holds an
  // update; it ends with the upsert clause.
  enum class OpenKind : int { insert, upsert, delete_in, changes };
  const TargetTable* open_table_ = nullptr;
  OpenKind open_kind_ = OpenKind::insert;
  std::size_t open_start_ = 0;
  std::string scratch_;
  std::vector<simdjson::dom::element> values_;         // gather()'s: the after image
  std::vector<simdjson::dom::element> before_values_;  // the before image
};

// How a target runs SQL text of `count` statements joined by ';', giving each one's count of
// rows (the targets' execute_batch()).
using RunStatements =
    std::function<Result<void>(std::string_view sql, std::size_t count, std::vector<std::uint64_t>& affected)>;

// The error for statement `index` of `batch`, which counted `counted` rows where it should have
// counted info.expected (exit 65: the target differs from the source). A statement of several
// rows is run again row by row to name the one that counted wrong: the transaction it was in is
// rolled back, then in a new one the statements before it and each of its rows alone, and that
// one is rolled back too. When that finds no single row (or fails), the message names the
// statement's first and last rows.
[[nodiscard]] Unexpected unexpected_count(const StatementBatch& batch, std::size_t index, std::uint64_t counted,
                                          const RunStatements& run);

}  // namespace cdc::apply
