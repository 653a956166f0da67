#pragma once

// Column metadata from information_schema, for binlogs written without
// binlog_row_metadata=FULL: their TABLE_MAP events carry column types only, so names,
// signedness, charsets, ENUM/SET labels and the primary key come from the server instead.
//
// What information_schema says, checked on MariaDB 10.11 (details in table_schema.cpp):
// * COLUMNS lists invisible and generated (VIRTUAL and STORED) columns, and the binlog logs
//   them all, values included, so ORDINAL_POSITION order is the TABLE_MAP order.
// * The binlog also logs columns COLUMNS does not list, always after the listed ones: the
//   implicit row_start/row_end of a table WITH SYSTEM VERSIONING, then one DB_ROW_HASH_<n> per
//   long UNIQUE key (a HASH index on a non-MEMORY table). They are added here as hidden
//   columns, and a versioned table's primary key gains its row end column, as in the binlog.
// * ENUM/SET labels in COLUMN_TYPE went through the server's append_unescaped() and were
//   converted to utf8mb3: '' and \\ \0 \n \r are escapes, and characters outside the BMP are
//   lost ('?' per byte). read_table_schema() converts labels back into the column's charset,
//   which is how the binlog carries them; labels with such characters stay wrong.
// * COLLATION_NAME is the full name (utf8mb4_uca1400_ai_ci); its id is in
//   COLLATION_CHARACTER_SET_APPLICABILITY (MariaDB 10.10+: one id per full name), else in
//   COLLATIONS. BINARY/VARBINARY/BLOB have no collation there; they get 63 (binary) here.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "binlog/events/table_map_event.h"
#include "mysql/connection.h"
#include "util/result.h"

namespace cdc::schema {

struct ColumnSchema {
  std::string name;
  std::string data_type;  // information_schema DATA_TYPE, lower case: "int", "varchar", "enum"...
  bool is_unsigned = false;
  std::uint32_t collation_id = 0;  // 0: not a string column, or a collation the server did not number
  std::string charset;             // CHARACTER_SET_NAME ("" when none)
  // Labels as TABLE_MAP's optional metadata carries them: bytes in the column's charset.
  // table_schema_from_rows() leaves them in UTF-8; read_table_schema() converts them.
  std::vector<std::string> enum_values;
  std::vector<std::string> set_values;
  std::uint64_t octet_length = 0;  // CHARACTER_OCTET_LENGTH of CHAR/VARCHAR/BINARY/VARBINARY, else 0
  std::uint32_t precision = 0;     // DECIMAL only
  std::uint32_t scale = 0;         // DECIMAL only
  bool hidden = false;             // logged by the server but not listed in COLUMNS (see above)
  // A hidden row_start/row_end: unlike the hash columns, a SELECT can name it, so it is in
  // table lines and keys like a listed column (type "timestamp(6)").
  bool period = false;
  std::string column_type;         // COLUMN_TYPE as the server writes it ("int(10) unsigned"); "" for hash columns
  bool is_nullable = true;         // IS_NULLABLE
};

struct TableSchema {
  std::vector<ColumnSchema> columns;            // binlog order: ORDINAL_POSITION, then hidden ones
  std::vector<std::uint32_t> primary_key;       // column indexes in key order; empty: no primary key
  std::vector<std::uint32_t> primary_key_prefix;  // per key column, in characters; 0 = whole column
};

// What read_table_schema() asks the server, so the parsing can be tested without one.
struct InformationSchemaRows {
  mysql::QueryResult tables;      // SELECT * FROM TABLES for the table: one row (TABLE_TYPE, ENGINE)
  mysql::QueryResult columns;     // SELECT * FROM COLUMNS for the table (any order)
  mysql::QueryResult statistics;  // SELECT * FROM STATISTICS for the table (server's key order)
  mysql::QueryResult collations;  // two columns: collation name, id
  // The ids are a MariaDB 10.10+ server's (it answered FULL_COLLATION_NAME, which MySQL lacks):
  // 255..308 are then its aliases of utf8mb4_uca1400 collations, kept as the aliased id so that
  // cdc-merge orders the column as MariaDB does, not as MySQL's utf8mb4_0900 of the same id.
  bool collation_ids_from_mariadb = false;
};

// Columns are found by header name (case-insensitive), so SELECT * from any server version
// works; missing optional ones (GENERATION_EXPRESSION before MariaDB 10.2) are skipped.
[[nodiscard]] Result<TableSchema> table_schema_from_rows(const InformationSchemaRows& rows);

// The schema as the server describes it now (four or five small queries); nullopt when the
// table does not exist. Names are matched byte for byte, whatever the server's collation.
[[nodiscard]] Result<std::optional<TableSchema>> read_table_schema(mysql::Connection& connection,
                                                                   std::string_view database,
                                                                   std::string_view table);

// Fills in `map` what the binlog did not write: names and the primary key (when the map has
// no names, i.e. not FULL metadata), signedness, charsets of text/ENUM/SET columns (where the
// collation is 0) and ENUM/SET labels, and always the COLUMN_TYPE texts (TableMap::column_types,
// for the table line); it never overrides what the binlog gave, and sets the
// has_* flags of what it filled, so applying twice is harmless. Returns false, leaving the map
// untouched, with the reason in `mismatch` when the schema cannot describe the map: another
// column count, or a column whose type, length or precision differs (the map is from before a
// DDL, or the schema from after one).
//
// Callers that cache what they derive from a map (rowimage::TablePlan keys on the map's address
// and generation) must apply before building those.
bool apply_table_schema(const TableSchema& schema, binlog::TableMap& map, std::string& mismatch);

// A string literal for `text` that means the same bytes under every sql_mode and client
// charset: 'text' for [A-Za-z0-9_] only, else X'hex' (which compares byte for byte).
[[nodiscard]] std::string sql_string_literal(std::string_view text);

// Parses the labels of an information_schema COLUMN_TYPE such as enum('a','b''c','d\\e');
// nullopt when it is not an enum(...) or set(...) list.
[[nodiscard]] std::optional<std::vector<std::string>> parse_enum_set_labels(std::string_view column_type);

// Schemas by (database, table), read on first use. Invalidate a table after DDL on it (or a
// RENAME to or from it), a database after DROP/ALTER DATABASE, everything when unsure.
class SchemaCache {
 public:
  explicit SchemaCache(mysql::Connection& connection) : connection_(&connection) {}

  // nullptr when the table does not exist (also cached until invalidated). The pointer stays
  // valid until that table, its database or everything is invalidated.
  Result<const TableSchema*> get(std::string_view database, std::string_view table);

  void invalidate(std::string_view database, std::string_view table);
  void invalidate_database(std::string_view database);
  void invalidate_all() { schemas_.clear(); }

 private:
  mysql::Connection* connection_;
  // Key: database '\0' table (identifiers cannot contain U+0000), so a database is a prefix.
  std::map<std::string, std::optional<TableSchema>, std::less<>> schemas_;
};

}  // namespace cdc::schema
