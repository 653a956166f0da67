#include "apply/target_table.h"

#include <fmt/format.h>

#include "mysql/sql_text.h"

namespace cdc::apply {

TargetTable target_table(const records::TableLine& line, const std::string& target_db) {
  TargetTable table;
  table.source_name = fmt::format("{}.{}", line.db, line.table);
  table.qualified = mysql::quote_identifier(target_db) + '.' + mysql::quote_identifier(line.table);
  table.columns.reserve(line.columns.size());
  for (const records::TableColumn& column : line.columns) table.columns.push_back(column_sql(column));
  if (line.key) {
    for (const std::string& name : *line.key)
      for (std::size_t i = 0; i < line.columns.size(); ++i)
        if (line.columns[i].name == name) table.key_columns.push_back(i);
  }
  table.insert_prefix = "INSERT INTO " + table.qualified + " (";
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    if (i > 0) table.insert_prefix += ',';
    table.insert_prefix += table.columns[i].quoted;
  }
  table.insert_prefix += ") VALUES ";
  if (!table.keyless()) {
    table.upsert_suffix = " ON DUPLICATE KEY UPDATE ";
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      if (i > 0) table.upsert_suffix += ',';
      table.upsert_suffix += fmt::format("{0}=VALUES({0})", table.columns[i].quoted);
    }
  }
  return table;
}

std::string create_table_sql(const records::TableLine& line, const std::string& target_db) {
  std::string sql = fmt::format("CREATE TABLE IF NOT EXISTS {}.{} (", mysql::quote_identifier(target_db),
                                mysql::quote_identifier(line.table));
  for (std::size_t i = 0; i < line.columns.size(); ++i) {
    const records::TableColumn& column = line.columns[i];
    if (i > 0) sql += ", ";
    sql += mysql::quote_identifier(column.name) + ' ' + column.type;
    if (column.charset) sql += " CHARACTER SET " + *column.charset;
    if (column.collation) sql += " COLLATE " + *column.collation;
    sql += column.nullable ? " NULL" : " NOT NULL";
  }
  if (line.key && !line.key->empty()) {
    sql += ", PRIMARY KEY (";
    for (std::size_t i = 0; i < line.key->size(); ++i) {
      if (i > 0) sql += ',';
      sql += mysql::quote_identifier((*line.key)[i]);
    }
    sql += ')';
  }
  sql += ") ENGINE=InnoDB";
  return sql;
}

}  // namespace cdc::apply
