#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "binlog/ddl_target.h"
#include "binlog/events/simple_events.h"

namespace {

std::string tables_of(const cdc::binlog::DdlTarget& target) {
  std::string out;
  for (const auto& table : target.tables) out += (out.empty() ? "" : " ") + table.database + "." + table.table;
  return out;
}

}  // namespace

TEST_CASE("ddl target: the tables and database a statement changes") {
  struct Case {
    std::string sql;
    std::string default_database;
    std::string tables;
    std::string database;
    bool parsed;
  };
  const Case cases[] = {
      {"CREATE TABLE t (id INT)", "shop", "shop.t", "shop", true},
      {"create table if not exists `crm`.`people` (x int)", "shop", "crm.people", "crm", true},
      {"CREATE OR REPLACE TEMPORARY TABLE tmp1 LIKE t", "shop", "shop.tmp1", "shop", true},
      {"ALTER TABLE orders ADD COLUMN note TEXT", "shop", "shop.orders", "shop", true},
      {"ALTER ONLINE IGNORE TABLE shop.orders DROP INDEX k", "", "shop.orders", "shop", true},
      {"DROP TABLE IF EXISTS a, b.c, `d``e`", "x", "x.a b.c x.d`e", "x", true},
      {"RENAME TABLE a TO b, s.c TO t.d", "x", "x.a x.b s.c t.d", "x", true},
      {"TRUNCATE TABLE logs", "ops", "ops.logs", "ops", true},
      {"TRUNCATE logs", "ops", "ops.logs", "ops", true},
      {"CREATE UNIQUE INDEX i ON shop.orders (id)", "", "shop.orders", "shop", true},
      {"DROP INDEX i ON orders", "shop", "shop.orders", "shop", true},
      {"CREATE DATABASE IF NOT EXISTS newdb", "", "", "newdb", true},
      {"DROP SCHEMA olddb", "shop", "", "olddb", true},
      {"/* comment */ -- line\n DROP DATABASE d", "", "", "d", true},
      {"/*!40000 ALTER TABLE `t` DISABLE KEYS */", "shop", "shop.t", "shop", true},
      {"CREATE VIEW v AS SELECT 1", "shop", "", "shop", false},
      {"GRANT SELECT ON *.* TO u", "", "", "", false},
      {"CREATE TABLE `ta.ble` (x INT)", "d", "d.ta.ble", "d", true},
  };
  for (const Case& c : cases) {
    CAPTURE(c.sql);
    const auto target = cdc::binlog::ddl_target(c.sql, c.default_database);
    CHECK(tables_of(target) == c.tables);
    CHECK(target.database == c.database);
    CHECK(target.parsed == c.parsed);
  }
}

TEST_CASE("ddl target: the statement's form, for the formats that name it") {
  using Kind = cdc::binlog::DdlTarget::Kind;
  struct Case {
    std::string sql;
    Kind kind;
  };
  const Case cases[] = {
      {"CREATE TABLE t (id INT)", Kind::create_table},
      {"create temporary table if not exists t like u", Kind::create_table},
      {"ALTER ONLINE TABLE t ADD x INT", Kind::alter_table},
      {"DROP TABLE IF EXISTS a, b", Kind::drop_table},
      {"RENAME TABLE a TO b", Kind::rename_table},
      {"TRUNCATE t", Kind::truncate_table},
      {"CREATE FULLTEXT INDEX i ON t (x)", Kind::create_index},
      {"DROP INDEX i ON t", Kind::drop_index},
      {"CREATE SCHEMA s", Kind::create_database},
      {"ALTER DATABASE s CHARACTER SET utf8mb4", Kind::alter_database},
      {"DROP DATABASE IF EXISTS s", Kind::drop_database},
      {"CREATE VIEW v AS SELECT 1", Kind::other},
      {"DROP TABLE", Kind::other},  // no table named: not parsed
  };
  for (const Case& c : cases) {
    CAPTURE(c.sql);
    CHECK(cdc::binlog::ddl_target(c.sql, "shop").kind == c.kind);
  }
}

TEST_CASE("ddl target: ALTER TABLE's first action") {
  using Action = cdc::binlog::DdlTarget::AlterAction;
  struct Case {
    std::string sql;
    Action action;
  };
  const Case cases[] = {
      {"ALTER TABLE t ADD INDEX i (x)", Action::add_index},
      {"alter table t add primary key (id)", Action::add_index},
      {"ALTER TABLE t ADD CONSTRAINT `c` UNIQUE (x)", Action::add_index},
      {"ALTER TABLE t ADD CONSTRAINT fk FOREIGN KEY (x) REFERENCES u (id)", Action::other},
      {"ALTER TABLE t DROP INDEX i", Action::drop_index},
      {"ALTER TABLE t DROP COLUMN x", Action::other},
      {"ALTER TABLE t RENAME AS u", Action::rename},
      {"ALTER TABLE t RENAME INDEX a TO b", Action::other},
      {"ALTER TABLE t ENGINE=InnoDB", Action::other},
      {"CREATE INDEX i ON t (x)", Action::other},
  };
  for (const Case& c : cases) {
    CAPTURE(c.sql);
    CHECK(cdc::binlog::ddl_target(c.sql, "shop").alter_action == c.action);
  }
}

TEST_CASE("query kind: what a QUERY event's statement is, read by the same tokens as ddl_target") {
  using cdc::binlog::QueryKind;
  struct Case {
    std::string sql;
    QueryKind kind;
  };
  const Case cases[] = {
      {"BEGIN", QueryKind::begin},
      {"  begin  ", QueryKind::begin},
      {"START TRANSACTION", QueryKind::begin},
      {"/* app */ START\n TRANSACTION WITH CONSISTENT SNAPSHOT", QueryKind::begin},
      {"START SLAVE", QueryKind::other},
      {"COMMIT", QueryKind::commit},
      {"ROLLBACK", QueryKind::rollback},
      {"ROLLBACK TO SAVEPOINT s1", QueryKind::savepoint},
      {"ROLLBACK TO s1", QueryKind::savepoint},
      {"SAVEPOINT s1", QueryKind::savepoint},
      {"RELEASE SAVEPOINT s1", QueryKind::savepoint},
      {"XA START 'x'", QueryKind::xa},
      {"GRANT SELECT ON *.* TO u", QueryKind::account},
      {"REVOKE ALL ON *.* FROM u", QueryKind::account},
      {"SET PASSWORD FOR u = PASSWORD('x')", QueryKind::account},
      {"SET DEFAULT ROLE r FOR u", QueryKind::account},
      {"SET @a = 1", QueryKind::other},
      {"CREATE USER 'u'@'%'", QueryKind::account},
      {"CREATE OR REPLACE USER u", QueryKind::account},
      {"DROP ROLE r", QueryKind::account},
      {"RENAME USER a TO b", QueryKind::account},
      {"ALTER USER u IDENTIFIED BY 'x'", QueryKind::account},
      {"CREATE DEFINER=`root`@`localhost` VIEW v AS SELECT 1", QueryKind::ddl},
      {"INSERT INTO t VALUES (1)", QueryKind::dml},
      {"replace into t values (1)", QueryKind::dml},
      {"LOAD DATA INFILE 'x' INTO TABLE t", QueryKind::dml},
      {"UPDATE t SET a = 1", QueryKind::dml},
      {"DELETE FROM t", QueryKind::dml},
      {"CREATE TABLE t (id INT)", QueryKind::ddl},
      {"/*!40000 ALTER TABLE t DISABLE KEYS */", QueryKind::ddl},
      {"# a comment\nDROP TABLE t", QueryKind::ddl},
      {"-- a comment\nTRUNCATE t", QueryKind::ddl},
      {"TRUNCATE_t", QueryKind::other},
      {"BEGINNING", QueryKind::other},
      {"", QueryKind::other},
      {"/* unterminated", QueryKind::other},
  };
  for (const Case& c : cases) {
    CAPTURE(c.sql);
    CHECK(cdc::binlog::classify_query(c.sql) == c.kind);
  }
}
