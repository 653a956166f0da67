#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cdc::binlog {

// What a DDL statement changes, read from its text: the tables (database-qualified with the
// session's default database where the statement does not say), or just a database for
// CREATE/ALTER/DROP DATABASE. Statements this reader does not know (views, routines, grants,
// events...) name only the default database, with no table.
struct DdlTarget {
  // The statement's form, for the output formats that name it (Canal's CREATE/ALTER/ERASE/...,
  // Maxwell's table-create/table-alter/...).
  enum class Kind : std::uint8_t {
    other,
    create_table,
    alter_table,
    drop_table,
    rename_table,
    truncate_table,
    create_index,
    drop_index,
    create_database,
    alter_database,
    drop_database,
  };
  struct Table {
    std::string database;
    std::string table;
  };
  std::vector<Table> tables;   // empty for database-level statements
  std::string database;        // the database the statement is about (or the default one)
  bool parsed = false;         // false: not a statement form we recognize
  Kind kind = Kind::other;     // set with parsed
  // ALTER TABLE's first action, for Canal, which types an ALTER by it (DruidDdlParser):
  // ADD INDEX/KEY/UNIQUE/PRIMARY KEY (also as a CONSTRAINT), DROP INDEX/KEY/CONSTRAINT, RENAME [TO].
  enum class AlterAction : std::uint8_t { other, add_index, drop_index, rename };
  AlterAction alter_action = AlterAction::other;
};

DdlTarget ddl_target(std::string_view sql, std::string_view default_database);

}  // namespace cdc::binlog
