// cdc-apply's PostgreSQL dialect without a server: each type's literal (libcore/apply/pg_value.h),
// the values PostgreSQL cannot hold, the type mapping of --create-tables (pg_schema.h), and the
// statements StatementBatch writes for a PostgreSQL table (target_table.h): the upsert, the
// keyless update and delete through ctid, DELETE ... IN, and the row named in an error.

#include <doctest/doctest.h>

#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "apply/applied_state.h"
#include "apply/pg_schema.h"
#include "apply/sql_value.h"
#include "apply/statement_batch.h"
#include "apply/target_table.h"

namespace {

using cdc::apply::Dialect;
using cdc::apply::LiteralUse;

cdc::records::TableColumn pg_source_column(std::string_view name, std::string_view type, bool nullable = true) {
  cdc::records::TableColumn column;
  column.name = std::string(name);
  column.type = std::string(type);
  column.nullable = nullable;
  return column;
}

// The PostgreSQL literal of a JSON value in a column of that type; "ERROR: ..." on failure.
std::string pg_literal(std::string_view type, std::string_view json) {
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(json);
  simdjson::dom::element value;
  REQUIRE(parser.parse(padded).get(value) == simdjson::SUCCESS);
  std::string out;
  std::string scratch;
  const cdc::apply::ColumnSql column = cdc::apply::column_sql(pg_source_column("c", type), Dialect::postgres);
  auto done = cdc::apply::append_literal(out, column, value, LiteralUse::comparison, scratch);
  if (!done) return "ERROR: " + done.error().message;
  return out;
}

}  // namespace

TEST_CASE("apply postgres values: integers, YEAR and DECIMAL are numbers, BIT(n) n binary digits") {
  CHECK(pg_literal("tinyint(4)", "-128") == "-128");
  CHECK(pg_literal("bigint(20) unsigned", "18446744073709551615") == "18446744073709551615");
  CHECK(pg_literal("bigint(20)", "-9223372036854775808") == "-9223372036854775808");
  CHECK(pg_literal("year(4)", "2155") == "2155");
  CHECK(pg_literal("decimal(20,6)", "\"-99999999999999.999999\"") == "-99999999999999.999999");
  CHECK(pg_literal("decimal(5,2)", "\"1;DROP\"").starts_with("ERROR: column \"c\" (decimal(5,2)): "));
  CHECK(pg_literal("bit(10)", "5") == "B'0000000101'");
  CHECK(pg_literal("bit(1)", "1") == "B'1'");
  CHECK(pg_literal("bit(64)", "18446744073709551615") == "B'" + std::string(64, '1') + "'");
  CHECK(pg_literal("bit(3)", "8").starts_with("ERROR: column \"c\" (bit(3)): 8 has more than the column's 3 bits"));
  CHECK(pg_literal("int(11)", "\"5\"").starts_with("ERROR: column \"c\" (int(11)): expected an integer"));
}

TEST_CASE("apply postgres values: FLOAT and DOUBLE as their shortest text, quoted for the column's type to read") {
  CHECK(pg_literal("float", "1.1") == "'1.1'");
  CHECK(pg_literal("float", "-3.4e38") == "'-3.4e+38'");
  CHECK(pg_literal("double", "-5e-324") == "'-5e-324'");
  CHECK(pg_literal("double", "1.7976931348623157e308") == "'1.7976931348623157e+308'");
  CHECK(pg_literal("double", "3") == "'3'");
  CHECK(pg_literal("double", "\"x\"").starts_with("ERROR: "));
}

TEST_CASE("apply postgres values: dates, DATETIME, TIMESTAMP with its Z and TIME as an interval") {
  CHECK(pg_literal("date", "\"2024-02-29\"") == "'2024-02-29'");
  CHECK(pg_literal("datetime(6)", "\"9999-12-31 23:59:59.999999\"") == "'9999-12-31 23:59:59.999999'");
  CHECK(pg_literal("timestamp(3)", "\"2038-01-19 03:14:07.999Z\"") == "'2038-01-19 03:14:07.999Z'");
  CHECK(pg_literal("time(3)", "\"-838:59:59.000\"") == "'-838:59:59.000'");
}

TEST_CASE("apply postgres values: zero dates and zero parts are refused, never changed") {
  CHECK(pg_literal("date", "\"0000-00-00\"") ==
        "ERROR: column \"c\" (date): \"0000-00-00\" has a zero year, month or day, which PostgreSQL's date cannot hold");
  CHECK(pg_literal("date", "\"2024-00-10\"").starts_with("ERROR: "));
  CHECK(pg_literal("date", "\"2024-05-00\"").starts_with("ERROR: "));
  CHECK(pg_literal("date", "\"0000-01-01\"").starts_with("ERROR: "));
  CHECK(pg_literal("datetime", "\"0000-00-00 00:00:00\"").find("timestamp cannot hold") != std::string::npos);
  CHECK(pg_literal("timestamp(3)", "\"0000-00-00 00:00:00.000\"").starts_with("ERROR: "));
}

TEST_CASE("apply postgres values: text quoted with ' doubled and \\ as itself, NUL refused") {
  CHECK(pg_literal("varchar(40)", R"("it's a \\ back\\slash")") == R"('it''s a \ back\slash')");
  CHECK(pg_literal("text", "\"tab\\tnew\\nline 😀\"") == "'tab\tnew\nline 😀'");
  CHECK(pg_literal("char(5)", "\"\"") == "''");
  CHECK(pg_literal("text", "\"a\\u0000b\"") ==
        "ERROR: column \"c\" (text): the text holds the NUL character (U+0000), which PostgreSQL's text types cannot "
        "hold");
  CHECK(pg_literal("enum('s','m')", "\"m\"") == "'m'");
  CHECK(pg_literal("set('a','b','c')", "\"a,c\"") == "'a,c'");
  CHECK(pg_literal("enum('s','m')", "2").starts_with("ERROR: column \"c\" (enum('s','m')): an ENUM or SET number"));
}

TEST_CASE("apply postgres values: binary, BLOB and GEOMETRY as bytea hex, JSON, INET6 and UUID as text") {
  CHECK(pg_literal("binary(4)", "\"AAECAw==\"") == "'\\x00010203'");
  CHECK(pg_literal("blob", "\"\"") == "'\\x'");
  CHECK(pg_literal("varbinary(16)", "\"/w==\"") == "'\\xff'");
  CHECK(pg_literal("point", "\"AAAAAAEBAAAAAAAAAAAA8D8AAAAAAAAAQA==\"") ==
        "'\\x000000000101000000000000000000f03f0000000000000040'");
  CHECK(pg_literal("blob", "\"!!\"").starts_with("ERROR: "));
  CHECK(pg_literal("json", R"({"a":[1,2.5,"it's"]})") == R"('{"a":[1,2.5,"it''s"]}')");
  CHECK(pg_literal("json", R"({"a":"\u0000"})").find("jsonb cannot hold") != std::string::npos);
  CHECK(pg_literal("inet6", "\"::ffff:10.0.0.1\"") == "'::ffff:10.0.0.1'");
  CHECK(pg_literal("inet4", "\"10.0.0.1\"") == "'10.0.0.1'");
  CHECK(pg_literal("uuid", "\"123e4567-e89b-12d3-a456-426614174000\"") == "'123e4567-e89b-12d3-a456-426614174000'");
  for (const char* type : {"int(11)", "varchar(3)", "blob", "json", "timestamp", "decimal(5,2)", "uuid", "bit(4)"})
    CHECK(pg_literal(type, "null") == "NULL");
}

TEST_CASE("apply postgres tables: the type mapping of --create-tables") {
  struct Case {
    const char* source;
    const char* target;
  };
  const Case cases[] = {
      {"tinyint(4)", "smallint"},         {"tinyint(3) unsigned", "smallint"},
      {"smallint(6)", "smallint"},        {"smallint(5) unsigned", "integer"},
      {"mediumint(9)", "integer"},        {"mediumint(8) unsigned", "integer"},
      {"int(11)", "integer"},             {"int(10) unsigned", "bigint"},
      {"bigint(20)", "bigint"},           {"bigint(20) unsigned", "numeric(20,0)"},
      {"decimal(20,6)", "numeric(20,6)"}, {"decimal(65,30) unsigned", "numeric(65,30)"},
      {"float", "real"},                  {"double", "double precision"},
      {"bit(10)", "bit varying(10)"},     {"year(4)", "smallint"},
      {"date", "date"},                   {"time(3)", "interval(3)"},
      {"time", "interval"},               {"datetime(6)", "timestamp(6) without time zone"},
      {"datetime", "timestamp without time zone"},
      {"timestamp(3)", "timestamp(3) with time zone"},
      {"char(5)", "varchar(5)"},          {"varchar(40)", "varchar(40)"},
      {"text", "text"},                   {"longtext", "text"},
      {"enum('s','m','l')", "text"},      {"set('a','b')", "text"},
      {"binary(4)", "bytea"},             {"varbinary(16)", "bytea"},
      {"blob", "bytea"},                  {"point", "bytea"},
      {"json", "jsonb"},                  {"inet6", "inet"},
      {"inet4", "inet"},                  {"uuid", "uuid"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.source);
    cdc::records::TableColumn column = pg_source_column("c", c.source);
    if (std::string_view(c.source).find("char") != std::string_view::npos ||
        std::string_view(c.source).find("text") != std::string_view::npos)
      column.charset = "utf8mb4";
    CHECK(cdc::apply::pg_column_type(column) == c.target);
  }
  cdc::records::TableLine line;
  line.db = "shop";
  line.table = "or\"ders";
  line.columns = {pg_source_column("id", "int(11)", false), pg_source_column("note", "varchar(20)")};
  line.columns[1].charset = "utf8mb4";
  line.key = std::vector<std::string>{"id"};
  CHECK(cdc::apply::create_table_sql(line, "copy", Dialect::postgres) ==
        "CREATE TABLE IF NOT EXISTS \"copy\".\"or\"\"ders\" (\"id\" integer NOT NULL, \"note\" varchar(20), "
        "PRIMARY KEY (\"id\"))");
  CHECK(cdc::apply::create_namespace_sql(Dialect::postgres, "copy") == "CREATE SCHEMA IF NOT EXISTS \"copy\"");
}

namespace {

// Row images for the batch, each parsed by a parser of its own (a parser's next document
// replaces its last).
struct PgImages {
  std::deque<simdjson::dom::parser> parsers;

  simdjson::dom::object image(std::string_view json) {
    simdjson::dom::object object;
    REQUIRE(parsers.emplace_back().parse(json.data(), json.size()).get(object) == simdjson::SUCCESS);
    return object;
  }
};

cdc::records::TableLine pg_line_of(std::optional<std::vector<std::string>> key, bool with_v = true) {
  cdc::records::TableLine line;
  line.db = "s";
  line.table = "t";
  line.columns = {pg_source_column("k1", "varchar(10)", false), pg_source_column("k2", "int(11)", false)};
  line.columns[0].charset = "utf8mb4";
  if (with_v) line.columns.push_back(pg_source_column("f", "float"));
  line.key = std::move(key);
  return line;
}

}  // namespace

TEST_CASE("apply postgres statements: multi-row upsert ON CONFLICT, DO NOTHING when every column is the key") {
  const auto table = cdc::apply::target_table(pg_line_of(std::vector<std::string>{"k1", "k2"}), "copy", Dialect::postgres);
  CHECK(table.insert_prefix == "INSERT INTO \"copy\".\"t\" (\"k1\",\"k2\",\"f\") VALUES ");
  CHECK(table.upsert_suffix == " ON CONFLICT (\"k1\",\"k2\") DO UPDATE SET \"f\"=EXCLUDED.\"f\"");
  const auto all_key =
      cdc::apply::target_table(pg_line_of(std::vector<std::string>{"k1", "k2"}, false), "copy", Dialect::postgres);
  CHECK(all_key.upsert_suffix == " ON CONFLICT (\"k1\",\"k2\") DO NOTHING");

  simdjson::dom::parser parser;
  simdjson::padded_string a(std::string_view(R"({"k1":"x","k2":1,"f":1.1})"));
  simdjson::padded_string b(std::string_view(R"({"k1":"y'","k2":2,"f":null})"));
  simdjson::dom::object row_a, row_b;
  simdjson::dom::parser parser_b;
  REQUIRE(parser.parse(a).get(row_a) == simdjson::SUCCESS);
  REQUIRE(parser_b.parse(b).get(row_b) == simdjson::SUCCESS);
  cdc::apply::StatementBatch batch;
  const cdc::apply::RowOrigin origin{"snapshot row 1", {}, false, {}, false};
  REQUIRE(batch.add_insert(table, row_a, true, origin));
  REQUIRE(batch.add_insert(table, row_b, true, origin));
  batch.close();
  CHECK(batch.sql() ==
        "INSERT INTO \"copy\".\"t\" (\"k1\",\"k2\",\"f\") VALUES ('x',1,'1.1'),('y''',2,NULL) ON CONFLICT "
        "(\"k1\",\"k2\") DO UPDATE SET \"f\"=EXCLUDED.\"f\"");
  CHECK(batch.statements().size() == 1);
}

TEST_CASE("apply postgres statements: updates and deletes by key with =, keyless ones through one ctid") {
  PgImages f;
  const auto keyed = cdc::apply::target_table(pg_line_of(std::vector<std::string>{"k1", "k2"}), "copy", Dialect::postgres);
  const auto keyless = cdc::apply::target_table(pg_line_of(std::nullopt), "copy", Dialect::postgres);
  const auto before = f.image(R"({"k1":"x","k2":1,"f":1.1})");
  const auto after = f.image(R"({"k1":"x","k2":1,"f":null})");
  const cdc::apply::RowOrigin origin{"binlog.000001:4#0", {}, false, {}, false};
  cdc::apply::StatementBatch batch;
  REQUIRE(batch.add_update(keyed, before, after, origin));
  REQUIRE(batch.add_update(keyless, before, after, origin));
  REQUIRE(batch.add_delete(keyless, before, origin));
  REQUIRE(batch.add_delete(keyed, before, origin));
  batch.close();
  CHECK(batch.sql() ==
        "UPDATE \"copy\".\"t\" SET \"f\"=NULL WHERE \"k1\"='x' AND \"k2\"=1;"
        "UPDATE \"copy\".\"t\" SET \"f\"=NULL WHERE ctid=(SELECT ctid FROM \"copy\".\"t\" WHERE \"k1\" IS NOT DISTINCT "
        "FROM 'x' AND \"k2\" IS NOT DISTINCT FROM 1 AND \"f\" IS NOT DISTINCT FROM '1.1' LIMIT 1);"
        "DELETE FROM \"copy\".\"t\" WHERE ctid=(SELECT ctid FROM \"copy\".\"t\" WHERE \"k1\" IS NOT DISTINCT FROM 'x' "
        "AND \"k2\" IS NOT DISTINCT FROM 1 AND \"f\" IS NOT DISTINCT FROM '1.1' LIMIT 1);"
        "DELETE FROM \"copy\".\"t\" WHERE \"k1\"='x' AND \"k2\"=1");
  REQUIRE(batch.statements().size() == 4);
  for (const auto& statement : batch.statements()) CHECK(statement.exact);
}

TEST_CASE("apply postgres statements: deletes of a one-column key grouped in one IN list") {
  PgImages f;
  auto line = pg_line_of(std::vector<std::string>{"k2"});
  const auto table = cdc::apply::target_table(line, "copy", Dialect::postgres);
  const cdc::apply::RowOrigin origin{"binlog.000001:4#0", {}, false, {}, false};
  cdc::apply::StatementBatch batch;
  REQUIRE(batch.add_delete(table, f.image(R"({"k1":"x","k2":1,"f":null})"), origin));
  REQUIRE(batch.add_delete(table, f.image(R"({"k1":"y","k2":2,"f":null})"), origin));
  batch.close();
  CHECK(batch.sql() == "DELETE FROM \"copy\".\"t\" WHERE \"k2\" IN (1,2)");
  CHECK(batch.statements().front().rows == 2);
}

TEST_CASE("apply postgres statements: a value PostgreSQL cannot hold names the table, position, key and column") {
  PgImages f;
  cdc::records::TableLine line;
  line.db = "s";
  line.table = "d";
  line.columns = {pg_source_column("id", "int(11)", false), pg_source_column("day", "date")};
  line.key = std::vector<std::string>{"id"};
  const auto table = cdc::apply::target_table(line, "copy", Dialect::postgres);
  simdjson::dom::parser key_parser;
  simdjson::padded_string key_text(std::string_view(R"({"id":7})"));
  simdjson::dom::element key;
  REQUIRE(key_parser.parse(key_text).get(key) == simdjson::SUCCESS);
  const cdc::apply::RowOrigin origin{"binlog.000001:4711#0 (gtid 0-1-5)", key, true, {}, false};
  cdc::apply::StatementBatch batch;
  auto added = batch.add_insert(table, f.image(R"({"id":7,"day":"0000-00-00"})"), false, origin);
  REQUIRE_FALSE(added);
  CHECK(added.error().code == cdc::Errc::corrupt_input);
  CHECK(added.error().message ==
        "s.d at binlog.000001:4711#0 (gtid 0-1-5) key {\"id\":7}: column \"day\" (date): \"0000-00-00\" has a zero "
        "year, month or day, which PostgreSQL's date cannot hold");
  CHECK(batch.empty());
}

TEST_CASE("apply postgres position table: created, and written with INSERT ... ON CONFLICT") {
  cdc::apply::AppliedState state;
  state.position = "0-1-42";
  state.snapshot_done = true;
  state.snapshot_rows = 3;
  state.source_pos = "binlog.000001:4711";
  state.gtid = "0-1-42";
  state.transactions = 5;
  state.changes = 9;
  std::string sql;
  cdc::apply::append_write_position_sql(sql, "\"copy\".\"cdc_apply_position\"", state, Dialect::postgres);
  CHECK(sql.starts_with("INSERT INTO \"copy\".\"cdc_apply_position\" (applier,position,snapshot_done,snapshot_rows,"
                        "source_pos,gtid,transactions,changes,applied_at) VALUES ('default','0-1-42',1,3,"
                        "'binlog.000001:4711','0-1-42',5,9,now() AT TIME ZONE 'UTC') ON CONFLICT (applier) DO UPDATE "
                        "SET position=EXCLUDED.position,"));
  CHECK(cdc::apply::create_position_table_sql("\"copy\".\"p\"", Dialect::postgres)
            .starts_with("CREATE TABLE IF NOT EXISTS \"copy\".\"p\" (applier varchar(64) NOT NULL PRIMARY KEY"));
}
