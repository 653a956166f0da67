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
  std::string qualified;    // `target_db`.`table`
  std::vector<ColumnSql> columns;
  // The primary key's column indexes; empty for a table without one, whose rows an update or
  // delete finds by their whole image.
  std::vector<std::size_t> key_columns;
  std::string insert_prefix;  // INSERT INTO `d`.`t` (`a`,`b`) VALUES
  std::string upsert_suffix;  //  ON DUPLICATE KEY UPDATE `a`=VALUES(`a`),...; empty without a key

  [[nodiscard]] bool keyless() const noexcept { return key_columns.empty(); }
};

// target_db: where the table goes (--database, else the line's own db).
[[nodiscard]] TargetTable target_table(const records::TableLine& line, const std::string& target_db);

// CREATE TABLE IF NOT EXISTS with the line's column types, nullability, charsets and key
// (--create-tables).
[[nodiscard]] std::string create_table_sql(const records::TableLine& line, const std::string& target_db);

}  // namespace cdc::apply
