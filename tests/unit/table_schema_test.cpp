#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "schema/table_schema.h"

namespace {

using cdc::ColumnType;
using Row = std::vector<std::optional<std::string>>;

const std::vector<std::string> kColumnHeaders = {"TABLE_SCHEMA",      "TABLE_NAME",    "COLUMN_NAME",
                                                 "ORDINAL_POSITION",  "DATA_TYPE",     "COLUMN_TYPE",
                                                 "CHARACTER_SET_NAME", "COLLATION_NAME", "CHARACTER_OCTET_LENGTH",
                                                 "NUMERIC_PRECISION", "NUMERIC_SCALE", "GENERATION_EXPRESSION"};

// One COLUMNS row; "" stands for NULL.
Row column_row(std::string name, int position, std::string data_type, std::string column_type,
               std::string charset = "", std::string collation = "", std::string octets = "",
               std::string precision = "", std::string scale = "", std::string generation = "") {
  const auto value = [](std::string text) -> std::optional<std::string> {
    if (text.empty()) return std::nullopt;
    return text;
  };
  return {"d", "t", name, std::to_string(position), data_type, column_type, value(charset), value(collation),
          value(octets), value(precision), value(scale), value(generation)};
}

Row key_row(std::string index, int seq, std::string column, std::string sub_part = "", std::string type = "BTREE") {
  std::optional<std::string> sub;
  if (!sub_part.empty()) sub = sub_part;
  return {"d", "t", index, std::to_string(seq), column, sub, type, "0"};
}

cdc::schema::InformationSchemaRows base_rows() {
  cdc::schema::InformationSchemaRows rows;
  rows.tables.columns = {"TABLE_SCHEMA", "TABLE_NAME", "TABLE_TYPE", "ENGINE"};
  rows.tables.rows = {{"d", "t", "BASE TABLE", "InnoDB"}};
  rows.columns.columns = kColumnHeaders;
  rows.statistics.columns = {"TABLE_SCHEMA", "TABLE_NAME", "INDEX_NAME", "SEQ_IN_INDEX",
                             "COLUMN_NAME",  "SUB_PART",   "INDEX_TYPE", "NON_UNIQUE"};
  rows.collations.columns = {"FULL_COLLATION_NAME", "ID"};
  rows.collations.rows = {{"latin1_swedish_ci", "8"}, {"utf8mb4_general_ci", "45"}, {"utf8mb4_uca1400_ai_ci", "2304"}};
  return rows;
}

// CREATE TABLE d.t (id INT UNSIGNED NOT NULL, name VARCHAR(20) CHARACTER SET latin1 NOT NULL,
//   e ENUM('a','b''c') CHARACTER SET utf8mb4, amount DECIMAL(10,2) UNSIGNED, raw VARBINARY(8),
//   note TEXT COLLATE utf8mb4_uca1400_ai_ci, PRIMARY KEY (name(3), id))
// with the COLUMNS rows deliberately out of ORDINAL_POSITION order.
cdc::schema::InformationSchemaRows sample_rows() {
  auto rows = base_rows();
  rows.columns.rows = {
      column_row("e", 3, "enum", "enum('a','b''c')", "utf8mb4", "utf8mb4_general_ci", "12"),
      column_row("id", 1, "int", "int(10) unsigned", "", "", "", "10", "0"),
      column_row("name", 2, "varchar", "varchar(20)", "latin1", "latin1_swedish_ci", "20"),
      column_row("amount", 4, "decimal", "decimal(10,2) unsigned", "", "", "", "10", "2"),
      column_row("raw", 5, "varbinary", "varbinary(8)", "", "", "8"),
      column_row("note", 6, "text", "text", "utf8mb4", "utf8mb4_uca1400_ai_ci", "65535"),
  };
  rows.statistics.rows = {key_row("PRIMARY", 2, "id"), key_row("PRIMARY", 1, "name", "3")};
  return rows;
}

// The TABLE_MAP the server writes for sample_rows() without binlog_row_metadata=FULL.
cdc::binlog::TableMap sample_map() {
  cdc::binlog::TableMap map;
  map.database = "d";
  map.table = "t";
  map.columns = {{ColumnType::long_int, 0, false, false, 0}, {ColumnType::varchar, 20, false, false, 0},
                 {ColumnType::enum_type, 1, false, true, 0}, {ColumnType::newdecimal, 10 << 8 | 2, false, true, 0},
                 {ColumnType::varchar, 8, false, true, 0},   {ColumnType::blob, 2, false, true, 0}};
  return map;
}

}  // namespace

TEST_CASE("schema: ENUM and SET labels are read from COLUMN_TYPE with its escapes") {
  struct Case {
    std::string column_type;
    std::optional<std::vector<std::string>> labels;
  };
  const Case cases[] = {
      {"enum('a','b')", std::vector<std::string>{"a", "b"}},
      {"enum('b''c')", std::vector<std::string>{"b'c"}},
      // COLUMN_TYPE of ENUM('d\\e') as MariaDB 10.11 returns it: d, two backslashes, e.
      {"enum('d\\\\e')", std::vector<std::string>{"d\\e"}},
      {"set('f,g','','x\"y')", std::vector<std::string>{"f,g", "", "x\"y"}},
      {"enum('\xc3\xbc','tab\tx')", std::vector<std::string>{"\xc3\xbc", "tab\tx"}},
      {"enum('nl\\n','cr\\r','nul\\0')", std::vector<std::string>{"nl\n", "cr\r", std::string("nul\0", 4)}},
      {"ENUM('Upper')", std::vector<std::string>{"Upper"}},
      {"enum('a''''')", std::vector<std::string>{"a''"}},
      {"enum('a'''')", std::nullopt},
      {"enum()", std::vector<std::string>{}},
      {"enum('a'", std::nullopt},
      {"enum('a' 'b')", std::nullopt},
      {"enum(a)", std::nullopt},
      {"varchar(20)", std::nullopt},
  };
  for (const Case& c : cases) {
    CAPTURE(c.column_type);
    CHECK(cdc::schema::parse_enum_set_labels(c.column_type) == c.labels);
  }
}

TEST_CASE("schema: names become literals that mean the same bytes under any sql_mode") {
  CHECK(cdc::schema::sql_string_literal("orders_2024") == "'orders_2024'");
  CHECK(cdc::schema::sql_string_literal("it's") == "X'69742773'");
  CHECK(cdc::schema::sql_string_literal("a\\b") == "X'615C62'");
  CHECK(cdc::schema::sql_string_literal("") == "''");
  CHECK(cdc::schema::sql_string_literal("caf\xc3\xa9") == "X'636166C3A9'");
}

TEST_CASE("schema: information_schema rows give columns in ordinal order") {
  auto schema = cdc::schema::table_schema_from_rows(sample_rows());
  REQUIRE_MESSAGE(schema.has_value(), schema.error().message);
  REQUIRE(schema->columns.size() == 6);
  const std::vector<std::string> names = {"id", "name", "e", "amount", "raw", "note"};
  for (std::size_t i = 0; i < names.size(); ++i) CHECK(schema->columns[i].name == names[i]);
  CHECK(schema->columns[0].is_unsigned);
  CHECK(schema->columns[0].collation_id == 0);
  CHECK_FALSE(schema->columns[1].is_unsigned);
  CHECK(schema->columns[1].collation_id == 8);
  CHECK(schema->columns[1].octet_length == 20);
  CHECK(schema->columns[2].enum_values == std::vector<std::string>{"a", "b'c"});
  CHECK(schema->columns[2].collation_id == 45);
  CHECK(schema->columns[3].is_unsigned);
  CHECK(schema->columns[3].precision == 10);
  CHECK(schema->columns[3].scale == 2);
  CHECK(schema->columns[4].collation_id == 63);  // binary strings have no collation in COLUMNS
  CHECK(schema->columns[5].collation_id == 2304);
  CHECK_FALSE(schema->columns[5].is_unsigned);
}

TEST_CASE("schema: MariaDB's utf8mb4_0900 aliases are read as the uca1400 collations they stand for") {
  // MariaDB 11.4.5+ takes MySQL's 0900 names and ids as aliases of its uca1400 NO PAD
  // collations; cdc-merge must then order the column as MariaDB does, not as MySQL's 0900.
  auto rows = base_rows();
  rows.collations.rows = {{"utf8mb4_0900_ai_ci", "255"}, {"utf8mb4_0900_as_ci", "305"},
                          {"utf8mb4_0900_as_cs", "278"}, {"utf8mb4_vi_0900_as_cs", "300"},
                          {"utf8mb4_0900_bin", "309"}};
  rows.columns.rows = {column_row("a", 1, "varchar", "varchar(8)", "utf8mb4", "utf8mb4_0900_ai_ci", "32"),
                       column_row("b", 2, "varchar", "varchar(8)", "utf8mb4", "utf8mb4_0900_as_ci", "32"),
                       column_row("c", 3, "varchar", "varchar(8)", "utf8mb4", "utf8mb4_0900_as_cs", "32"),
                       column_row("d", 4, "varchar", "varchar(8)", "utf8mb4", "utf8mb4_vi_0900_as_cs", "32"),
                       column_row("e", 5, "varchar", "varchar(8)", "utf8mb4", "utf8mb4_0900_bin", "32")};
  rows.collation_ids_from_mariadb = true;
  auto mariadb = cdc::schema::table_schema_from_rows(rows);
  REQUIRE_MESSAGE(mariadb.has_value(), mariadb.error().message);
  // utf8mb4_uca1400_nopad_ai_ci, _nopad_as_ci, _nopad_as_cs, vietnamese_nopad_as_cs; 309 is no alias.
  const std::vector<std::uint32_t> aliased = {2308, 2310, 2311, 2495, 309};
  for (std::size_t i = 0; i < aliased.size(); ++i) CHECK(mariadb->columns[i].collation_id == aliased[i]);
  rows.collation_ids_from_mariadb = false;  // MySQL: its own ids
  auto mysql = cdc::schema::table_schema_from_rows(rows);
  REQUIRE_MESSAGE(mysql.has_value(), mysql.error().message);
  const std::vector<std::uint32_t> own = {255, 305, 278, 300, 309};
  for (std::size_t i = 0; i < own.size(); ++i) CHECK(mysql->columns[i].collation_id == own[i]);
}

TEST_CASE("schema: the primary key follows SEQ_IN_INDEX with prefix lengths") {
  auto schema = cdc::schema::table_schema_from_rows(sample_rows());
  REQUIRE_MESSAGE(schema.has_value(), schema.error().message);
  CHECK(schema->primary_key == std::vector<std::uint32_t>{1, 0});
  CHECK(schema->primary_key_prefix == std::vector<std::uint32_t>{3, 0});

  auto rows = sample_rows();
  rows.statistics.rows = {key_row("other", 1, "id")};
  auto no_key = cdc::schema::table_schema_from_rows(rows);
  REQUIRE(no_key.has_value());
  CHECK(no_key->primary_key.empty());

  rows.statistics.rows = {key_row("PRIMARY", 1, "gone")};
  CHECK_FALSE(cdc::schema::table_schema_from_rows(rows).has_value());
}

TEST_CASE("schema: a missing required column in information_schema is an error") {
  auto rows = sample_rows();
  rows.columns.columns[5] = "SOMETHING_ELSE";  // COLUMN_TYPE
  auto schema = cdc::schema::table_schema_from_rows(rows);
  REQUIRE_FALSE(schema.has_value());
  CHECK(schema.error().message.find("COLUMN_TYPE") != std::string::npos);
}

TEST_CASE("schema: hidden columns of MariaDB versioned tables and long unique keys") {
  SUBCASE("implicit row_start and row_end join the primary key") {
    // CREATE TABLE d.t (id INT PRIMARY KEY, b TEXT, UNIQUE(b)) WITH SYSTEM VERSIONING
    auto rows = base_rows();
    rows.tables.rows = {{"d", "t", "SYSTEM VERSIONED", "InnoDB"}};
    rows.columns.rows = {column_row("id", 1, "int", "int(11)"),
                         column_row("b", 2, "text", "text", "latin1", "latin1_swedish_ci", "65535")};
    rows.statistics.rows = {key_row("PRIMARY", 1, "id"), key_row("b", 1, "b", "", "HASH")};
    auto schema = cdc::schema::table_schema_from_rows(rows);
    REQUIRE_MESSAGE(schema.has_value(), schema.error().message);
    REQUIRE(schema->columns.size() == 5);
    CHECK(schema->columns[2].name == "row_start");
    CHECK(schema->columns[3].name == "row_end");
    CHECK(schema->columns[4].name == "DB_ROW_HASH_1");
    CHECK(schema->columns[4].is_unsigned);
    CHECK(schema->columns[4].hidden);
    CHECK(schema->primary_key == std::vector<std::uint32_t>{0, 3});
    CHECK(schema->primary_key_prefix == std::vector<std::uint32_t>{0, 0});
  }
  SUBCASE("explicit period columns are listed and the row end joins the key") {
    auto rows = base_rows();
    rows.tables.rows = {{"d", "t", "SYSTEM VERSIONED", "InnoDB"}};
    rows.columns.rows = {column_row("id", 1, "int", "int(11)"),
                         column_row("rs", 2, "timestamp", "timestamp(6)", "", "", "", "", "", "ROW START"),
                         column_row("re", 3, "timestamp", "timestamp(6)", "", "", "", "", "", "ROW END"),
                         column_row("x", 4, "int", "int(11)")};
    rows.statistics.rows = {key_row("PRIMARY", 1, "id")};
    auto schema = cdc::schema::table_schema_from_rows(rows);
    REQUIRE_MESSAGE(schema.has_value(), schema.error().message);
    CHECK(schema->columns.size() == 4);
    CHECK(schema->primary_key == std::vector<std::uint32_t>{0, 2});
  }
  SUBCASE("MEMORY tables have real HASH indexes") {
    auto rows = base_rows();
    rows.tables.rows = {{"d", "t", "BASE TABLE", "MEMORY"}};
    rows.columns.rows = {column_row("id", 1, "int", "int(11)")};
    rows.statistics.rows = {key_row("id", 1, "id", "", "HASH")};
    auto schema = cdc::schema::table_schema_from_rows(rows);
    REQUIRE(schema.has_value());
    CHECK(schema->columns.size() == 1);
  }
}

TEST_CASE("schema: apply fills what a map without FULL metadata lacks") {
  auto schema = cdc::schema::table_schema_from_rows(sample_rows());
  REQUIRE(schema.has_value());
  auto map = sample_map();
  std::string mismatch;
  REQUIRE_MESSAGE(cdc::schema::apply_table_schema(*schema, map, mismatch), mismatch);
  CHECK(mismatch.empty());
  CHECK(map.column_names == std::vector<std::string>{"id", "name", "e", "amount", "raw", "note"});
  CHECK(map.columns[0].is_unsigned);
  CHECK(map.columns[3].is_unsigned);
  CHECK(map.columns[0].collation == 0);
  CHECK(map.columns[1].collation == 8);
  CHECK(map.columns[2].collation == 45);
  CHECK(map.columns[4].collation == 63);
  CHECK(map.columns[5].collation == 2304);
  REQUIRE(map.enum_values.size() == 6);
  CHECK(map.enum_values[2] == std::vector<std::string>{"a", "b'c"});
  CHECK(map.enum_values[0].empty());
  CHECK(map.set_values.size() == 6);
  CHECK(map.primary_key == std::vector<std::uint32_t>{1, 0});
  CHECK(map.primary_key_prefix == std::vector<std::uint32_t>{3, 0});
  CHECK(map.has_signedness);
  CHECK(map.has_charsets);
  CHECK(map.has_enum_set_strings);

  // Applying again changes nothing.
  const auto before = map.column_names;
  REQUIRE(cdc::schema::apply_table_schema(*schema, map, mismatch));
  CHECK(map.column_names == before);
  CHECK(map.primary_key == std::vector<std::uint32_t>{1, 0});
}

TEST_CASE("schema: apply never overrides what the binlog gave") {
  auto schema = cdc::schema::table_schema_from_rows(sample_rows());
  REQUIRE(schema.has_value());
  auto map = sample_map();
  map.column_names = {"c1", "c2", "c3", "c4", "c5", "c6"};  // FULL metadata, a table without primary key
  map.has_signedness = true;  // and every column signed
  map.columns[1].collation = 31;
  std::string mismatch;
  REQUIRE(cdc::schema::apply_table_schema(*schema, map, mismatch));
  CHECK(map.column_names[0] == "c1");
  CHECK(map.primary_key.empty());
  CHECK_FALSE(map.columns[0].is_unsigned);
  CHECK(map.columns[1].collation == 31);
  CHECK(map.columns[2].collation == 45);  // ENUM charset was not given
}

TEST_CASE("schema: apply refuses a map from before a DDL and leaves it alone") {
  auto schema = cdc::schema::table_schema_from_rows(sample_rows());
  REQUIRE(schema.has_value());
  struct Case {
    std::string name;
    void (*change)(cdc::binlog::TableMap&);
    std::string reason;
  };
  const Case cases[] = {
      {"a column more", [](cdc::binlog::TableMap& m) { m.columns.push_back({ColumnType::tiny, 0, false, true, 0}); },
       "7"},
      {"INT became BIGINT", [](cdc::binlog::TableMap& m) { m.columns[0].type = ColumnType::longlong; }, "LONGLONG"},
      {"VARCHAR(20) became VARCHAR(30)", [](cdc::binlog::TableMap& m) { m.columns[1].meta = 30; }, "byte length"},
      {"DECIMAL(10,2) became DECIMAL(12,2)",
       [](cdc::binlog::TableMap& m) { m.columns[3].meta = static_cast<std::uint16_t>(12 << 8 | 2); }, "DECIMAL(12,2)"},
      {"ENUM became SET", [](cdc::binlog::TableMap& m) { m.columns[2].type = ColumnType::set; }, "enum"},
      {"ENUM grew past 255 labels", [](cdc::binlog::TableMap& m) { m.columns[2].meta = 2; }, "pack length"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    auto map = sample_map();
    c.change(map);
    const auto untouched = map.columns;
    std::string mismatch;
    CHECK_FALSE(cdc::schema::apply_table_schema(*schema, map, mismatch));
    CAPTURE(mismatch);
    CHECK(mismatch.find(c.reason) != std::string::npos);
    CHECK(map.column_names.empty());
    CHECK(map.primary_key.empty());
    CHECK_FALSE(map.has_signedness);
    for (std::size_t i = 0; i < untouched.size(); ++i) CHECK(map.columns[i].collation == untouched[i].collation);
  }
}
