#pragma once

// A source table as the target writes it: what its table line says (columns, types, key),
// where it goes (the target database), and the pieces of SQL every row of it repeats, built
// once per table line.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "apply/sql_value.h"
#include "records/table_line.h"

namespace cdc::apply {

struct TargetTable {
  std::string source_name;  // db.table as the lines name it, for messages
  std::string qualified;    // `target_db`.`table`, or "schema"."table" for PostgreSQL
  std::vector<ColumnSql> columns;
  // The primary key's column indexes; empty for a table without one, whose rows an update or
  // delete finds by their whole image.
  std::vector<std::size_t> key_columns;
  std::string insert_prefix;  // INSERT INTO `d`.`t` (`a`,`b`) VALUES
  // MariaDB:  ON DUPLICATE KEY UPDATE `a`=VALUES(`a`),...
  // PostgreSQL:  ON CONFLICT ("k") DO UPDATE SET "a"=EXCLUDED."a",... (DO NOTHING when every
  // column is in the key). Empty without a key.
  std::string upsert_suffix;
  // MariaDB/MySQL: an update that keeps the key goes into the run of inserts as one more row of
  // an INSERT ... ON DUPLICATE KEY UPDATE (statement_batch.h). Not for PostgreSQL, whose row
  // count does not tell an inserted row from an updated one.
  bool updates_as_upserts = false;
  // How an update or delete finds its row: each key column compared with key_equals; a
  // keyless table's row by every column compared with row_equals (NULL equal to NULL),
  // between keyless_where and keyless_end, which pick one of rows alike: LIMIT 1 (MariaDB),
  // ctid=(SELECT ctid ... LIMIT 1) (PostgreSQL has no UPDATE ... LIMIT).
  std::string_view key_equals;
  std::string_view row_equals;
  std::string keyless_where;
  std::string_view keyless_end;
  // A MariaDB SEQUENCE (is_sequence()): its one row, which the server logs whole at each
  // change as a new row, a "c" line (the snapshot's: an "r" line), replaces the target's: a
  // DELETE of the table, then the INSERT.
  bool one_row = false;
  // MariaDB/MySQL: the ENUM columns whose members lack '': there '' (or 0) is the error value,
  // index 0, that a source not in a strict sql_mode stores for a value not among the members,
  // and that a strict session refuses. A row holding it is written in a statement of its own
  // under kMariadbRelaxedSqlMode (statement_batch.h).
  std::vector<std::size_t> enum_error_columns;

  [[nodiscard]] bool keyless() const noexcept { return key_columns.empty(); }
};

// Whether the table line is that of a MariaDB SEQUENCE: no key, and the eight columns of the
// server's sequence tables (sql/sql_sequence.cc, sequence_structure), which the binary log
// names no other way.
[[nodiscard]] bool is_sequence(const records::TableLine& line);

// target_db: where the table goes (--database, else the line's own db; a schema for PostgreSQL).
[[nodiscard]] TargetTable target_table(const records::TableLine& line, const std::string& target_db,
                                       Dialect dialect = Dialect::mariadb);

// CREATE TABLE IF NOT EXISTS with the line's column types, nullability, charsets and key
// (--create-tables); for PostgreSQL the types of pg_schema.h's mapping.
[[nodiscard]] std::string create_table_sql(const records::TableLine& line, const std::string& target_db,
                                           Dialect dialect = Dialect::mariadb);

}  // namespace cdc::apply
