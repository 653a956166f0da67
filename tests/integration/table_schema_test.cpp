// Column metadata from information_schema must say what binlog_row_metadata=FULL says. The
// test server writes FULL metadata, so each TABLE_MAP it logs is the reference: strip its
// optional metadata, fill it back from read_table_schema(), and compare.

#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "binlog/decoder.h"
#include "binlog/file_reader.h"
#include "mysql/connection.h"
#include "schema/table_description.h"
#include "schema/table_schema.h"
#include "every_type.h"
#include "test_server.h"

namespace {

using cdc::binlog::TableMap;

// The TABLE_MAPs logged from `start_position` of `file` on, by table name (last one wins).
std::map<std::string, TableMap> table_maps_since(const std::string& file, std::uint64_t start_position,
                                                 const std::string& database) {
  auto reader = cdc::binlog::FileReader::open(file);
  REQUIRE_MESSAGE(reader.has_value(), reader.error().message);
  cdc::binlog::Decoder decoder(reader->name());
  std::map<std::string, TableMap> maps;
  for (;;) {
    auto event = reader->next();
    REQUIRE_MESSAGE(event.has_value(), event.error().message);
    if (!*event) break;
    auto decoded = decoder.decode((*event)->bytes, (*event)->offset);
    REQUIRE_MESSAGE(decoded.has_value(), decoded.error().message);
    if ((*event)->offset < start_position) continue;
    if (const auto* map = std::get_if<cdc::binlog::TableMapEvent>(&decoded->body);
        map != nullptr && map->map->database == database)
      maps[map->map->table] = *map->map;
  }
  return maps;
}

// What a server with binlog_row_metadata=NONE (or MySQL 5.7) would have logged.
TableMap stripped(const TableMap& full) {
  TableMap map = full;
  map.column_names.clear();
  map.enum_values.clear();
  map.set_values.clear();
  map.primary_key.clear();
  map.primary_key_prefix.clear();
  map.has_signedness = map.has_charsets = map.has_enum_set_strings = false;
  for (auto& column : map.columns) {
    column.is_unsigned = false;
    column.collation = 0;
  }
  return map;
}

const std::vector<std::string>& labels_at(const std::vector<std::vector<std::string>>& per_column, std::size_t i) {
  static const std::vector<std::string> kNone;
  return i < per_column.size() ? per_column[i] : kNone;
}

void check_same_metadata(const TableMap& filled, const TableMap& full) {
  CHECK(filled.column_names == full.column_names);
  REQUIRE(filled.columns.size() == full.columns.size());
  for (std::size_t i = 0; i < full.columns.size(); ++i) {
    CAPTURE(full.column_names[i]);
    CHECK(filled.columns[i].is_unsigned == full.columns[i].is_unsigned);
    CHECK(filled.columns[i].collation == full.columns[i].collation);
    CHECK(labels_at(filled.enum_values, i) == labels_at(full.enum_values, i));
    CHECK(labels_at(filled.set_values, i) == labels_at(full.set_values, i));
  }
  CHECK(filled.primary_key == full.primary_key);
  CHECK(filled.primary_key_prefix == full.primary_key_prefix);
}

// COLUMN_TYPE without what a TABLE_MAP cannot carry: integer and YEAR display widths.
std::string without_display_width(std::string type) {
  for (const std::string name : {"tinyint(", "smallint(", "mediumint(", "int(", "bigint(", "year("}) {
    if (!type.starts_with(name)) continue;
    const std::size_t close = type.find(')');
    if (close != std::string::npos) type.erase(name.size() - 1, close - name.size() + 2);
  }
  return type;
}

// The table line of cdc-stream --file (the binlog alone) says what cdc-snapshot's (from
// information_schema) says, but for display widths; that of a live cdc-stream (the map the
// catalog completed) says exactly the same.
void check_table_lines(const TableMap& full, const cdc::schema::TableSchema& schema) {
  const cdc::records::TableLine from_binlog = cdc::schema::describe_table_map(full);
  const cdc::records::TableLine from_catalog = cdc::schema::describe_table_schema(full.database, full.table, schema);
  TableMap completed = full;
  std::string mismatch;
  REQUIRE_MESSAGE(cdc::schema::apply_table_schema(schema, completed, mismatch), mismatch);
  const cdc::records::TableLine live = cdc::schema::describe_table_map(completed);
  REQUIRE(from_binlog.columns.size() == schema.columns.size());
  REQUIRE(live.columns.size() == schema.columns.size());
  std::size_t listed = 0;
  bool any_hidden = false;
  for (std::size_t i = 0; i < schema.columns.size(); ++i) {
    CAPTURE(schema.columns[i].name);
    if (schema.columns[i].hidden && !schema.columns[i].period) {  // a period column is in table lines
      any_hidden = true;
      CHECK(live.columns[i].type == from_binlog.columns[i].type);
      continue;
    }
    REQUIRE(listed < from_catalog.columns.size());
    const cdc::records::TableColumn& want = from_catalog.columns[listed++];
    const cdc::records::TableColumn& got = from_binlog.columns[i];
    CHECK(got.name == want.name);
    CHECK(got.type == without_display_width(want.type));
    CHECK(live.columns[i].type == want.type);
    CHECK(got.nullable == want.nullable);
    CHECK(got.charset == want.charset);
    CHECK(got.collation == want.collation);
    CHECK(got.values == want.values);
  }
  CHECK(listed == from_catalog.columns.size());
  if (!any_hidden) CHECK(from_binlog.key == from_catalog.key);
}

// Tables whose TABLE_MAPs the test compares; names and labels chosen to need escaping.
const char* const kDatabase = "cdc_schema";
const char* const kOddTable = "odd'name\\x";

const std::vector<std::string>& setup_statements() {
  static const std::vector<std::string> kStatements = {
      "DROP DATABASE IF EXISTS cdc_schema",
      "CREATE DATABASE cdc_schema CHARACTER SET latin1",
      // Every family of column, ENUM/SET labels with quotes, backslashes, commas, tabs, line
      // breaks and non-ASCII text in three charsets, a prefix key in utf8mb4 (SUB_PART is in
      // characters), invisible and generated columns.
      "CREATE TABLE cdc_schema.`odd'name\\x` ("
      " ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT UNSIGNED, mi MEDIUMINT UNSIGNED, i INT,"
      " id INT UNSIGNED NOT NULL, bi BIGINT UNSIGNED, dec1 DECIMAL(10,2) UNSIGNED, dec2 DECIMAL(65,30),"
      " f FLOAT UNSIGNED, d DOUBLE, bt BIT(9), dt DATE, tm TIME(3), dtm DATETIME(6), ts TIMESTAMP NULL,"
      " name VARCHAR(40) CHARACTER SET utf8mb4 NOT NULL, ch CHAR(10) CHARACTER SET utf8mb4,"
      " l1 VARCHAR(20), l1g TEXT CHARACTER SET latin1 COLLATE latin1_german2_ci,"
      " u2 VARCHAR(20) CHARACTER SET ucs2, uca VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_uca1400_ai_ci,"
      " bn BINARY(4), vb VARBINARY(20), bl BLOB, tx MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,"
      " e ENUM('a','b''c','d\\\\e','f,g','\xc3\xbc','x\"y','','tab\tx','nl\\nx') CHARACTER SET utf8mb4,"
      " el ENUM('\xc3\xa9t\xc3\xa9','plain') CHARACTER SET latin1,"
      " s SET('p','q''r','s\\\\t','\xc3\xa4') CHARACTER SET latin1,"
      " su SET('one','tw\xc3\xb6') CHARACTER SET ucs2,"
      " eb ENUM('x','y') CHARACTER SET binary,"
      " js JSON, geo GEOMETRY, inv INT INVISIBLE, v INT AS (id + 1) VIRTUAL, st BIGINT AS (id * 2) STORED,"
      // Last: MariaDB 10.11 writes a signedness bit for YEAR, which readers (mariadb-binlog
      // and ours) do not expect, so every numeric column after it would read as YEAR's bit.
      " yr YEAR,"
      " PRIMARY KEY (name(3), id))",
      "INSERT INTO cdc_schema.`odd'name\\x` (id, name, e, s) VALUES (1, 'caf\xc3\xa9', 'f,g', 'q''r,p')",
      // Columns the server logs but COLUMNS does not list.
      "CREATE TABLE cdc_schema.versioned (id INT PRIMARY KEY, b TEXT, z INT, UNIQUE(b), UNIQUE(z, b))"
      " WITH SYSTEM VERSIONING",
      "INSERT INTO cdc_schema.versioned VALUES (1, 'b', 2)",
      "CREATE TABLE cdc_schema.periods (id INT, rs TIMESTAMP(6) GENERATED ALWAYS AS ROW START INVISIBLE,"
      " re TIMESTAMP(6) GENERATED ALWAYS AS ROW END INVISIBLE, x INT, PERIOD FOR SYSTEM_TIME(rs, re),"
      " PRIMARY KEY (x, id)) WITH SYSTEM VERSIONING",
      "INSERT INTO cdc_schema.periods (id, x) VALUES (1, 2)",
      "CREATE TABLE cdc_schema.no_key (a INT, b VARCHAR(5)) ENGINE=MyISAM",
      "INSERT INTO cdc_schema.no_key VALUES (1, 'x')",
      "CREATE TABLE cdc_schema.memory_hash (id INT, v CHAR(3), PRIMARY KEY USING HASH (id), UNIQUE USING HASH (v))"
      " ENGINE=MEMORY",
      "INSERT INTO cdc_schema.memory_hash VALUES (1, 'x')",
  };
  return kStatements;
}

}  // namespace

TEST_CASE("table schema: information_schema fills a stripped TABLE_MAP exactly like FULL metadata") {
  const char* datadir = std::getenv("CDC_TEST_DATADIR");
  REQUIRE_MESSAGE(datadir != nullptr, "scripts/test.sh exports CDC_TEST_DATADIR");
  auto root = cdc::mysql::Connection::open(cdc::test::root_account());
  REQUIRE_MESSAGE(root.has_value(), root.error().message);
  auto run = [&](const std::string& sql) {
    CAPTURE(sql);
    auto done = root->query(sql);
    REQUIRE_MESSAGE(done.has_value(), done.error().message);
    return std::move(*done);
  };
  run("SET SESSION sql_mode = ''");
  const auto start = run("SHOW MASTER STATUS");
  REQUIRE(start.rows.size() == 1);
  for (const auto& sql : setup_statements()) run(sql);
  const auto maps = table_maps_since(std::string(datadir) + "/" + *start.rows[0][0], std::stoull(*start.rows[0][1]),
                                     kDatabase);
  REQUIRE(maps.size() == 5);

  auto connection = cdc::mysql::Connection::open(cdc::test::cdc_account());
  REQUIRE_MESSAGE(connection.has_value(), connection.error().message);
  for (const auto& entry : maps) {
    const auto& table = entry.first;  // not a structured binding: clang 14 lets no lambda capture one
    const auto& full = entry.second;
    CAPTURE(table);
    REQUIRE(full.has_column_names());
    auto schema = cdc::schema::read_table_schema(*connection, kDatabase, table);
    REQUIRE_MESSAGE(schema.has_value(), schema.error().message);
    REQUIRE(schema->has_value());
    TableMap map = stripped(full);
    std::string mismatch;
    REQUIRE_MESSAGE(cdc::schema::apply_table_schema(**schema, map, mismatch), mismatch);
    check_same_metadata(map, full);
    check_table_lines(full, **schema);
  }
  // The odd table really has what the comparison is meant to cover.
  const TableMap& odd = maps.at(kOddTable);
  CHECK(odd.primary_key_prefix == std::vector<std::uint32_t>{3, 0});
  CHECK(odd.columns.size() == 37);
  CHECK(maps.at("versioned").column_names.back() == "DB_ROW_HASH_2");
  run("DROP DATABASE cdc_schema");
}

TEST_CASE("table schema: the table line of every column type, from the binlog and from information_schema") {
  const char* datadir = std::getenv("CDC_TEST_DATADIR");
  REQUIRE_MESSAGE(datadir != nullptr, "scripts/test.sh exports CDC_TEST_DATADIR");
  std::string create = "CREATE TABLE cdc_table_line.every_type (";
  for (const auto& column : cdc::test::every_type_columns()) create += column.name + " " + column.definition + ", ";
  create += "geo GEOMETRY, pt POINT NOT NULL, u UUID, i6 INET6)";
  cdc::test::run_as_root("DROP DATABASE IF EXISTS cdc_table_line");
  cdc::test::run_as_root("CREATE DATABASE cdc_table_line");
  auto root = cdc::mysql::Connection::open(cdc::test::root_account());
  REQUIRE_MESSAGE(root.has_value(), root.error().message);
  auto start = root->query("SHOW MASTER STATUS");
  REQUIRE_MESSAGE(start.has_value(), start.error().message);
  REQUIRE(start->rows.size() == 1);
  cdc::test::run_as_root(create);
  cdc::test::run_as_root("INSERT INTO cdc_table_line.every_type (id, pt) VALUES (1, POINT(1, 2))");
  const auto maps = table_maps_since(std::string(datadir) + "/" + *start->rows[0][0],
                                     std::stoull(*start->rows[0][1]), "cdc_table_line");
  REQUIRE(maps.size() == 1);
  const TableMap& full = maps.at("every_type");
  auto connection = cdc::mysql::Connection::open(cdc::test::cdc_account());
  REQUIRE_MESSAGE(connection.has_value(), connection.error().message);
  auto schema = cdc::schema::read_table_schema(*connection, "cdc_table_line", "every_type");
  REQUIRE_MESSAGE(schema.has_value(), schema.error().message);
  REQUIRE(schema->has_value());
  // Not what COLUMN_TYPE says: MariaDB's UUID and INET6 are binary strings in the binlog.
  cdc::schema::TableSchema comparable = **schema;
  const std::size_t logged_as_binary = 2;
  comparable.columns.resize(comparable.columns.size() - logged_as_binary);
  TableMap comparable_map = full;
  comparable_map.columns.resize(comparable_map.columns.size() - logged_as_binary);
  comparable_map.column_names.resize(comparable_map.columns.size());
  check_table_lines(comparable_map, comparable);
  const cdc::records::TableLine from_binlog = cdc::schema::describe_table_map(full);
  const auto type_of = [&](std::string_view name) {
    for (const auto& column : from_binlog.columns)
      if (column.name == name) return column.type;
    return std::string("(none)");
  };
  CHECK(type_of("u") == "binary(16)");
  CHECK(type_of("i6") == "binary(16)");
  // What the comparison covers, spelled out for a few.
  CHECK(type_of("biu") == "bigint unsigned");
  CHECK(type_of("dec2") == "decimal(65,30)");
  CHECK(type_of("dtm3") == "datetime(3)");
  CHECK(type_of("u2") == "varchar(20)");
  CHECK(type_of("u16") == "char(5)");
  CHECK(type_of("bt9") == "bit(9)");
  CHECK(type_of("en") == "enum('small','medium','large')");
  CHECK(type_of("js") == "longtext");
  CHECK(type_of("pt") == "point");
  CHECK(from_binlog.key == std::vector<std::string>{"id"});
  // The catalog names them, for the values and the table line.
  TableMap completed = full;
  std::string mismatch;
  REQUIRE_MESSAGE(cdc::schema::apply_table_schema(**schema, completed, mismatch), mismatch);
  const std::size_t columns = completed.columns.size();
  CHECK(completed.columns[columns - 2].fixed_binary == cdc::FixedBinaryType::uuid);
  CHECK(completed.columns[columns - 1].fixed_binary == cdc::FixedBinaryType::inet6);
  CHECK(completed.columns[0].fixed_binary == cdc::FixedBinaryType::none);
  const cdc::records::TableLine from_catalog = cdc::schema::describe_table_map(completed);
  CHECK(from_catalog.columns[columns - 2].type == "uuid");
  CHECK(from_catalog.columns[columns - 1].type == "inet6");
  cdc::test::run_as_root("DROP DATABASE cdc_table_line");
}

TEST_CASE("table schema: a dropped table reads as absent and the cache sees DDL after invalidate") {
  cdc::test::run_as_root("DROP DATABASE IF EXISTS cdc_schema_cache");
  cdc::test::run_as_root("CREATE DATABASE cdc_schema_cache");
  cdc::test::run_as_root("CREATE TABLE cdc_schema_cache.t (a INT PRIMARY KEY)");
  auto connection = cdc::mysql::Connection::open(cdc::test::cdc_account());
  REQUIRE_MESSAGE(connection.has_value(), connection.error().message);

  auto missing = cdc::schema::read_table_schema(*connection, "cdc_schema_cache", "nope");
  REQUIRE_MESSAGE(missing.has_value(), missing.error().message);
  CHECK_FALSE(missing->has_value());
  // information_schema compares names case-insensitively on some servers; we do not.
  auto other_case = cdc::schema::read_table_schema(*connection, "cdc_schema_cache", "T");
  REQUIRE(other_case.has_value());
  CHECK_FALSE(other_case->has_value());

  cdc::schema::SchemaCache cache(*connection);
  auto first = cache.get("cdc_schema_cache", "t");
  REQUIRE_MESSAGE(first.has_value(), first.error().message);
  REQUIRE(*first != nullptr);
  CHECK((*first)->columns.size() == 1);

  cdc::test::run_as_root("ALTER TABLE cdc_schema_cache.t ADD b INT UNSIGNED");
  auto stale = cache.get("cdc_schema_cache", "t");
  REQUIRE(stale.has_value());
  CHECK((*stale)->columns.size() == 1);
  cache.invalidate("cdc_schema_cache", "t");
  auto fresh = cache.get("cdc_schema_cache", "t");
  REQUIRE(fresh.has_value());
  REQUIRE(*fresh != nullptr);
  REQUIRE((*fresh)->columns.size() == 2);
  CHECK((*fresh)->columns[1].is_unsigned);

  cdc::test::run_as_root("DROP DATABASE cdc_schema_cache");
  cache.invalidate_database("cdc_schema_cache");
  auto gone = cache.get("cdc_schema_cache", "t");
  REQUIRE(gone.has_value());
  CHECK(*gone == nullptr);
}
