// schema/table_description: the table line's columns from a TABLE_MAP alone (what cdc-stream
// --file writes) and from information_schema (cdc-snapshot). The live comparison against
// COLUMN_TYPE is tests/integration/table_schema_test.cpp; here, the branches a server of the
// test suite does not log (no charsets, vectors, every geometry and BLOB size).

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "schema/table_description.h"

namespace {

using cdc::ColumnType;

constexpr std::uint16_t kUtf8mb4 = 45;  // utf8mb4_general_ci
constexpr std::uint16_t kLatin1 = 8;    // latin1_swedish_ci
constexpr std::uint16_t kBinary = 63;

cdc::binlog::TableMap map_of(std::vector<cdc::Column> columns) {
  cdc::binlog::TableMap map;
  map.database = "shop";
  map.table = "t";
  map.columns = std::move(columns);
  return map;
}

std::vector<std::string> types_of(const cdc::binlog::TableMap& map) {
  std::vector<std::string> types;
  for (std::size_t i = 0; i < map.columns.size(); ++i) types.push_back(cdc::schema::column_type_text(map, i));
  return types;
}

}  // namespace

TEST_CASE("table description: numbers, temporals and BIT from the map's types and metadata") {
  auto map = map_of({{ColumnType::tiny, 0, true, true, 0},
                     {ColumnType::longlong, 0, false, true, 0},
                     {ColumnType::newdecimal, (10 << 8) | 2, true, true, 0},
                     {ColumnType::float_type, 4, false, true, 0},
                     {ColumnType::year, 0, true, true, 0},
                     {ColumnType::time2, 3, false, true, 0},
                     {ColumnType::datetime2, 0, false, true, 0},
                     {ColumnType::timestamp2, 6, false, false, 0},
                     {ColumnType::bit, (1 << 8) | 1, false, true, 0},
                     {ColumnType::bit, 8 << 8, false, true, 0}});
  map.has_signedness = true;
  CHECK(types_of(map) == std::vector<std::string>{"tinyint unsigned", "bigint", "decimal(10,2) unsigned", "float",
                                                   "year", "time(3)", "datetime", "timestamp(6)", "bit(9)",
                                                   "bit(64)"});
  // Without the signedness metadata, nothing is said of it.
  map.has_signedness = false;
  CHECK(types_of(map)[0] == "tinyint");
}

TEST_CASE("table description: strings by charset, BLOB sizes, and no length without a charset") {
  const auto map = map_of({{ColumnType::varchar, 128, false, true, kUtf8mb4},
                           {ColumnType::varchar, 20, false, true, kBinary},
                           {ColumnType::varchar, 20, false, true, 0},
                           {ColumnType::string, 10, false, true, kLatin1},
                           {ColumnType::string, 16, false, true, kBinary},
                           {ColumnType::string, 40, false, true, 0},
                           {ColumnType::blob, 1, false, true, kUtf8mb4},
                           {ColumnType::blob, 2, false, true, kBinary},
                           {ColumnType::blob, 3, false, true, kUtf8mb4},
                           {ColumnType::blob, 4, false, true, kBinary},
                           {ColumnType::blob, 2, false, true, 0},
                           {ColumnType::json, 4, false, true, 0}});
  CHECK(types_of(map) == std::vector<std::string>{"varchar(32)", "varbinary(20)", "varchar", "char(10)", "binary(16)",
                                                   "char", "tinytext", "blob", "mediumtext", "longblob", "text",
                                                   "json"});
  const auto line = cdc::schema::describe_table_map(map);
  CHECK(line.columns[0].charset == "utf8mb4");
  CHECK(line.columns[0].collation == "utf8mb4_general_ci");
  CHECK(line.columns[3].charset == "latin1");
  CHECK(line.columns[3].collation == "latin1_swedish_ci");
  CHECK_FALSE(line.columns[1].charset.has_value());  // binary strings have none
  CHECK_FALSE(line.columns[2].charset.has_value());  // not logged
}

TEST_CASE("table description: ENUM and SET labels quoted as COLUMN_TYPE quotes them, in UTF-8") {
  auto map = map_of({{ColumnType::enum_type, 1, false, true, kUtf8mb4},
                     {ColumnType::set, 1, false, true, kLatin1},
                     {ColumnType::enum_type, 1, false, true, kUtf8mb4}});
  map.enum_values = {{"a", "b'c", "d\\e", "nl\nx", ""}, {}, {}};
  map.set_values = {{}, {"\xe9t\xe9", "x"}, {}};  // latin1 bytes
  map.has_enum_set_strings = true;
  CHECK(types_of(map) ==
        std::vector<std::string>{"enum('a','b''c','d\\\\e','nl\\nx','')", "set('\xc3\xa9t\xc3\xa9','x')", "enum"});
  const auto line = cdc::schema::describe_table_map(map);
  CHECK(line.columns[0].values == std::vector<std::string>{"a", "b'c", "d\\e", "nl\nx", ""});
  CHECK(line.columns[1].values == std::vector<std::string>{"\xc3\xa9t\xc3\xa9", "x"});
  CHECK(line.columns[2].values.empty());  // labels not logged
}

TEST_CASE("table description: geometries and vectors") {
  auto map = map_of({{ColumnType::geometry, 4, false, true, 0},
                     {ColumnType::geometry, 4, false, true, 0},
                     {ColumnType::geometry, 4, false, true, 0},
                     {ColumnType::vector, 4, false, true, 0},
                     {ColumnType::vector, 4, false, true, 0}});
  CHECK(types_of(map) == std::vector<std::string>{"geometry", "geometry", "geometry", "vector", "vector"});
  map.geometry_types = {1, 7, 99, 0, 0};
  map.vector_dimensions = {0, 0, 0, 3, 0};
  CHECK(types_of(map) == std::vector<std::string>{"point", "geometrycollection", "geometry", "vector(3)", "vector"});
}

TEST_CASE("table description: names, nullability, the key, and the catalog's COLUMN_TYPE first") {
  auto map = map_of({{ColumnType::long_int, 0, false, false, 0}, {ColumnType::varchar, 80, false, true, kUtf8mb4}});
  map.primary_key = {0};  // with no names, a key cannot be named
  auto line = cdc::schema::describe_table_map(map);
  CHECK(line.db == "shop");
  CHECK(line.table == "t");
  CHECK(line.columns[0].name == "@1");
  CHECK(line.columns[1].name == "@2");
  CHECK_FALSE(line.columns[0].nullable);
  CHECK(line.columns[1].nullable);
  CHECK_FALSE(line.key.has_value());
  CHECK_FALSE(line.pos.has_value());
  map.column_names = {"id", "name"};
  map.column_types = {"int(11)", ""};  // "": a column the catalog does not list
  line = cdc::schema::describe_table_map(map);
  CHECK(line.key == std::vector<std::string>{"id"});
  CHECK(line.columns[0].type == "int(11)");
  CHECK(line.columns[1].type == "varchar(20)");
}

TEST_CASE("table description: from information_schema, without the columns it does not list") {
  cdc::schema::TableSchema schema;
  cdc::schema::ColumnSchema id;
  id.name = "id";
  id.data_type = "int";
  id.column_type = "int(11)";
  id.is_nullable = false;
  cdc::schema::ColumnSchema size;
  size.name = "size";
  size.data_type = "enum";
  size.column_type = "enum('s','m')";
  size.collation_id = kUtf8mb4;
  size.charset = "utf8mb4";
  size.enum_values = {"s", "m"};
  cdc::schema::ColumnSchema odd;
  odd.name = "odd";
  odd.data_type = "varchar";
  odd.column_type = "varchar(3)";
  odd.charset = "somecharset";  // a collation the server did not number
  cdc::schema::ColumnSchema row_end;
  row_end.name = "row_end";
  row_end.data_type = "timestamp";
  row_end.hidden = true;
  schema.columns = {id, size, odd, row_end};
  schema.primary_key = {0, 3};
  const auto line = cdc::schema::describe_table_schema("shop", "items", schema);
  CHECK(line.table == "items");
  REQUIRE(line.columns.size() == 3);
  CHECK(line.columns[0].type == "int(11)");
  CHECK_FALSE(line.columns[0].nullable);
  CHECK(line.columns[1].values == std::vector<std::string>{"s", "m"});
  CHECK(line.columns[1].collation == "utf8mb4_general_ci");
  CHECK(line.columns[2].charset == "somecharset");
  CHECK_FALSE(line.columns[2].collation.has_value());
  CHECK(line.key == std::vector<std::string>{"id"});
}
