#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "check/grants.h"
#include "check/server_check.h"
#include "ndjson/writer.h"

namespace {

using cdc::check::CheckLine;
using cdc::check::Report;
using cdc::check::ServerFacts;
using cdc::check::Status;

// SHOW GRANTS of the account scripts/lib/throwaway_mariadb.sh creates.
ServerFacts ready_mariadb() {
  ServerFacts facts;
  facts.version = "10.11.6-MariaDB-0+deb12u1-log";
  facts.version_comment = "Debian 12";
  facts.current_user = "cdc@127.0.0.1";
  facts.variables = {{"log_bin", "ON"},
                     {"binlog_format", "ROW"},
                     {"binlog_row_image", "FULL"},
                     {"binlog_row_metadata", "FULL"},
                     {"gtid_strict_mode", "ON"},
                     {"gtid_binlog_pos", "0-1-42"},
                     {"binlog_expire_logs_seconds", "604800"},
                     {"expire_logs_days", "7.000000"},
                     {"server_id", "1"},
                     {"binlog_checksum", "CRC32"}};
  facts.grants = {
      "GRANT SELECT, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `cdc`@`127.0.0.1` "
      "IDENTIFIED BY PASSWORD '*ABC'"};
  return facts;
}

ServerFacts ready_mysql8() {
  ServerFacts facts;
  facts.version = "8.0.36";
  facts.version_comment = "MySQL Community Server - GPL";
  facts.current_user = "cdc@%";
  facts.variables = {{"log_bin", "ON"},
                     {"binlog_format", "ROW"},
                     {"binlog_row_image", "FULL"},
                     {"binlog_row_metadata", "FULL"},
                     {"binlog_row_value_options", ""},
                     {"gtid_mode", "ON"},
                     {"enforce_gtid_consistency", "ON"},
                     {"binlog_expire_logs_seconds", "2592000"},
                     {"expire_logs_days", "0"},
                     {"server_id", "1"},
                     {"binlog_checksum", "CRC32"}};
  facts.grants = {"GRANT SELECT, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO `cdc`@`%`"};
  return facts;
}

const CheckLine& line_named(const Report& report, std::string_view name) {
  const auto found = std::find_if(report.lines.begin(), report.lines.end(),
                                  [&](const CheckLine& line) { return line.name == name; });
  REQUIRE_MESSAGE(found != report.lines.end(), "no check line named " << name);
  return *found;
}

}  // namespace

TEST_CASE("a well configured MariaDB passes every check") {
  const Report report = cdc::check::evaluate(ready_mariadb());
  CHECK(report.flavor == cdc::check::Flavor::mariadb);
  CHECK(report.usable());
  for (const CheckLine& line : report.lines) {
    CAPTURE(line.name);
    CHECK(line.status == Status::ok);
  }
  CHECK(line_named(report, "server").value == "MariaDB 10.11.6-MariaDB-0+deb12u1-log");
  CHECK(line_named(report, "gtid_binlog_pos").value == "0-1-42");
  CHECK(line_named(report, "binlog_retention").value == "7 days");
  CHECK(line_named(report, "grant_binlog_monitor").status == Status::ok);
}

TEST_CASE("a well configured MySQL 8 passes every check and uses MySQL's names") {
  const Report report = cdc::check::evaluate(ready_mysql8());
  CHECK(report.flavor == cdc::check::Flavor::mysql);
  CHECK(report.usable());
  CHECK(line_named(report, "gtid_mode").status == Status::ok);
  CHECK(line_named(report, "grant_replication_client").status == Status::ok);
  CHECK(line_named(report, "binlog_retention").value == "30 days");
  for (const CheckLine& line : report.lines) {
    CAPTURE(line.name);
    CHECK(line.status == Status::ok);
  }
}

TEST_CASE("each unusable setting fails with the value found and the statement that fixes it") {
  struct Case {
    std::string variable;
    std::string bad_value;
    std::string line;
    std::string fix_fragment;
  };
  const Case cases[] = {
      {"binlog_format", "STATEMENT", "binlog_format", "SET GLOBAL binlog_format = 'ROW'"},
      {"binlog_format", "MIXED", "binlog_format", "binlog_format = ROW' under [mysqld]"},
      {"binlog_row_image", "MINIMAL", "binlog_row_image", "SET GLOBAL binlog_row_image = 'FULL'"},
      {"binlog_row_image", "NOBLOB", "binlog_row_image", "binlog_row_image = FULL' under [mysqld]"},
      {"log_bin", "OFF", "log_bin", "log_bin = mysql-bin"},
      {"server_id", "0", "server_id", "SET GLOBAL server_id"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.variable);
    CAPTURE(c.bad_value);
    ServerFacts facts = ready_mariadb();
    facts.variables[c.variable] = c.bad_value;
    const Report report = cdc::check::evaluate(facts);
    CHECK_FALSE(report.usable());
    const CheckLine& line = line_named(report, c.line);
    CHECK(line.status == Status::fail);
    CHECK(line.value == c.bad_value);
    CHECK(line.fix.find(c.fix_fragment) != std::string::npos);
    const std::string human = cdc::check::describe_problem(line);
    CHECK(human.find(c.line) != std::string::npos);
    CHECK(human.find(c.bad_value) != std::string::npos);
    CHECK(human.find(c.fix_fragment) != std::string::npos);
  }
}

TEST_CASE("recommended settings only warn") {
  SUBCASE("binlog_row_metadata MINIMAL") {
    ServerFacts facts = ready_mariadb();
    facts.variables["binlog_row_metadata"] = "MINIMAL";
    const Report report = cdc::check::evaluate(facts);
    CHECK(report.usable());
    CHECK(line_named(report, "binlog_row_metadata").status == Status::warn);
    CHECK(line_named(report, "binlog_row_metadata").fix.find("SET GLOBAL binlog_row_metadata = 'FULL'") !=
          std::string::npos);
  }
  SUBCASE("binlog_row_metadata missing on an old server") {
    ServerFacts facts = ready_mariadb();
    facts.version = "10.3.39-MariaDB";
    facts.variables.erase("binlog_row_metadata");
    const Report report = cdc::check::evaluate(facts);
    CHECK(report.usable());
    CHECK(line_named(report, "binlog_row_metadata").status == Status::warn);
    CHECK(line_named(report, "binlog_row_metadata").value == "(not available)");
    CHECK(line_named(report, "grant_replication_client").status == Status::ok);  // BINLOG MONITOR is 10.5+
  }
  SUBCASE("partial JSON updates on MySQL") {
    ServerFacts facts = ready_mysql8();
    facts.variables["binlog_row_value_options"] = "PARTIAL_JSON";
    const Report report = cdc::check::evaluate(facts);
    CHECK(report.usable());
    CHECK(line_named(report, "binlog_row_value_options").status == Status::warn);
  }
  SUBCASE("MySQL without GTIDs") {
    ServerFacts facts = ready_mysql8();
    facts.variables["gtid_mode"] = "OFF";
    const Report report = cdc::check::evaluate(facts);
    CHECK(report.usable());
    CHECK(line_named(report, "gtid_mode").status == Status::warn);
    CHECK(line_named(report, "gtid_mode").fix.find("enforce_gtid_consistency = ON") != std::string::npos);
  }
  SUBCASE("MariaDB without strict GTIDs") {
    ServerFacts facts = ready_mariadb();
    facts.variables["gtid_strict_mode"] = "OFF";
    CHECK(line_named(cdc::check::evaluate(facts), "gtid_strict_mode").status == Status::warn);
  }
}

TEST_CASE("statement logging: a note without --include-query, a warning with it, never a failure") {
  struct Case {
    const char* name;
    ServerFacts facts;
    std::string variable;
    std::optional<std::string> value;  // nullopt: the server has no such variable
    Status wanted_status;              // with CheckWants{.statements = true}
    std::string fix_fragment;
  };
  const std::vector<Case> cases = {
      {"MariaDB, on (its default)", ready_mariadb(), "binlog_annotate_row_events", "ON", Status::ok, ""},
      {"MariaDB, off", ready_mariadb(), "binlog_annotate_row_events", "OFF", Status::warn,
       "SET GLOBAL binlog_annotate_row_events = 'ON'; and add 'binlog_annotate_row_events = ON' under [mysqld]"},
      {"MySQL, on", ready_mysql8(), "binlog_rows_query_log_events", "ON", Status::ok, ""},
      {"MySQL, off (its default)", ready_mysql8(), "binlog_rows_query_log_events", "OFF", Status::warn,
       "SET GLOBAL binlog_rows_query_log_events = 'ON';"},
      {"MySQL 5.5, none", ready_mysql8(), "binlog_rows_query_log_events", std::nullopt, Status::warn,
       "upgrade the server"},
  };
  for (Case c : cases) {
    CAPTURE(c.name);
    if (c.value) c.facts.variables[c.variable] = *c.value;
    const Report plain = cdc::check::evaluate(c.facts);
    CHECK(plain.usable());
    CHECK(line_named(plain, c.variable).status == Status::ok);
    const Report wanted = cdc::check::evaluate(c.facts, cdc::check::CheckWants{true});
    CHECK(wanted.usable());
    const CheckLine& line = line_named(wanted, c.variable);
    CHECK(line.status == c.wanted_status);
    CHECK(line.value == c.value.value_or("(not available)"));
    CHECK(line.fix.find(c.fix_fragment) != std::string::npos);
    if (c.wanted_status == Status::ok) {
      CHECK(line.message.empty());
    } else {
      CHECK(line.message.find("\"query\":null") != std::string::npos);
      // Without --include-query the same facts are told as a note on an ok line.
      CHECK(line_named(plain, c.variable).message == line.message);
    }
  }
  // A MariaDB replica that does not write the statements of what it applies.
  ServerFacts replica = ready_mariadb();
  replica.variables["binlog_annotate_row_events"] = "ON";
  replica.variables["replicate_annotate_row_events"] = "OFF";
  const Report report = cdc::check::evaluate(replica, cdc::check::CheckWants{true});
  const CheckLine& line = line_named(report, "binlog_annotate_row_events");
  CHECK(line.status == Status::ok);
  CHECK(line.message.find("replicate_annotate_row_events is OFF") == 0);
}

TEST_CASE("binlog retention is read from whichever variable is in force") {
  struct Case {
    std::string name;
    const char* seconds;  // nullptr: the server has no such variable
    std::string days;
    std::string shown;
    Status status;
  };
  const Case cases[] = {
      {"seconds win", "3600", "7", "1 hour", Status::warn},
      {"days only (MariaDB 10.5)", nullptr, "3.000000", "3 days", Status::ok},
      {"fractional days", "0", "0.5", "12 hours", Status::warn},
      {"never purged", "0", "0", "never purged automatically", Status::ok},
      {"MySQL 8 default", "2592000", "0", "30 days", Status::ok},
      {"odd seconds", "90061", "0", "90061 seconds", Status::ok},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    ServerFacts facts = ready_mariadb();
    facts.variables.erase("binlog_expire_logs_seconds");
    if (c.seconds != nullptr) facts.variables["binlog_expire_logs_seconds"] = c.seconds;
    facts.variables["expire_logs_days"] = c.days;
    const Report report = cdc::check::evaluate(facts);
    const CheckLine& line = line_named(report, "binlog_retention");
    CHECK(line.value == c.shown);
    CHECK(line.status == c.status);
  }
}

TEST_CASE("the flavor comes from the version text or its comment") {
  ServerFacts facts;
  facts.version = "5.5.5-10.6.12-MariaDB";  // what MariaDB reports through some proxies
  CHECK(cdc::check::flavor_of(facts) == cdc::check::Flavor::mariadb);
  facts.version = "8.0.36";
  facts.version_comment = "mariadb.org binary distribution";
  CHECK(cdc::check::flavor_of(facts) == cdc::check::Flavor::mariadb);
  facts.version_comment = "Percona Server (GPL), Release 27";
  CHECK(cdc::check::flavor_of(facts) == cdc::check::Flavor::mysql);
}

TEST_CASE("servers too old for row-based CDC fail the server line") {
  ServerFacts facts = ready_mysql8();
  facts.version = "5.5.62-log";
  CHECK(line_named(cdc::check::evaluate(facts), "server").status == Status::fail);
  facts.version = "5.6.51";
  CHECK(line_named(cdc::check::evaluate(facts), "server").status == Status::ok);
}

TEST_CASE("missing grants fail with a GRANT statement for this very account") {
  ServerFacts facts = ready_mariadb();
  facts.current_user = "reader@10.0.0.%";
  facts.grants = {"GRANT USAGE ON *.* TO `reader`@`10.0.0.%`"};
  const Report report = cdc::check::evaluate(facts);
  CHECK_FALSE(report.usable());
  CHECK(line_named(report, "grant_replication_slave").fix == "GRANT REPLICATION SLAVE ON *.* TO 'reader'@'10.0.0.%';");
  CHECK(line_named(report, "grant_binlog_monitor").fix == "GRANT BINLOG MONITOR ON *.* TO 'reader'@'10.0.0.%';");
  CHECK(line_named(report, "grant_select").status == Status::fail);
  CHECK(line_named(report, "grant_show_databases").status == Status::warn);
}

TEST_CASE("SHOW GRANTS parsing") {
  SUBCASE("ALL PRIVILEGES on *.* holds everything") {
    const auto grants = cdc::check::parse_grants(
        {"GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` IDENTIFIED VIA unix_socket WITH GRANT OPTION"});
    CHECK(grants.all_global);
    CHECK(grants.has_global("REPLICATION SLAVE"));
  }
  SUBCASE("database-level SELECT is not global") {
    const auto grants = cdc::check::parse_grants(
        {"GRANT REPLICATION SLAVE ON *.* TO `u`@`%`", "GRANT SELECT, INSERT ON `shop`.* TO `u`@`%`",
         "GRANT SELECT (`id`, `name`) ON `crm`.`people` TO `u`@`%`"});
    CHECK(grants.has_global("REPLICATION SLAVE"));
    CHECK_FALSE(grants.has_global("SELECT"));
    REQUIRE(grants.select_objects.size() == 2);
    CHECK(grants.select_objects[0] == "`shop`.*");
    CHECK(grants.select_objects[1] == "`crm`.`people`");
  }
  SUBCASE("column lists do not split privileges") {
    const auto grants =
        cdc::check::parse_grants({"GRANT SELECT (`a`, `b`), UPDATE (`c`), REPLICATION CLIENT ON *.* TO `u`@`%`"});
    CHECK(grants.has_global("SELECT"));
    CHECK(grants.has_global("UPDATE"));
    CHECK(grants.has_global("REPLICATION CLIENT"));
  }
  SUBCASE("role grants are recorded, not mistaken for privileges") {
    const auto grants = cdc::check::parse_grants({"GRANT `cdc_role` TO `u`@`%`", "GRANT USAGE ON *.* TO `u`@`%`"});
    REQUIRE(grants.roles.size() == 1);
    CHECK(grants.roles[0] == "`cdc_role`");
    CHECK_FALSE(grants.has_global("SELECT"));
  }
  SUBCASE("a database named like a keyword") {
    const auto grants = cdc::check::parse_grants({"GRANT SELECT ON `x ON y`.* TO `u`@`%`"});
    REQUIRE(grants.select_objects.size() == 1);
    CHECK(grants.select_objects[0] == "`x ON y`.*");
  }
  SUBCASE("lower-case and MySQL 8 dynamic privileges") {
    const auto grants = cdc::check::parse_grants(
        {"grant select on *.* to u@'%'", "GRANT BACKUP_ADMIN,REPLICATION_SLAVE_ADMIN ON *.* TO `u`@`%`"});
    CHECK(grants.has_global("SELECT"));
    CHECK(grants.has_global("BACKUP_ADMIN"));
  }
}

TEST_CASE("the report is NDJSON: one check line each, then the summary") {
  ServerFacts facts = ready_mariadb();
  facts.variables["binlog_format"] = "STATEMENT";
  facts.variables["binlog_row_metadata"] = "MINIMAL";
  cdc::ndjson::Writer out;
  cdc::check::write_report(cdc::check::evaluate(facts), out);
  const std::string text(out.buffered());
  CHECK(text.find(R"({"op":"check","v":1,"name":"binlog_format","status":"fail","value":"STATEMENT","want":"ROW",)") !=
        std::string::npos);
  CHECK(text.ends_with(
      R"({"op":"check_summary","v":1,"flavor":"mariadb","usable":false,"failed":["binlog_format"],)"
      R"("warnings":["binlog_row_metadata"]})"
      "\n"));
  CHECK(std::count(text.begin(), text.end(), '\n') == 17);
}

TEST_CASE("snapshot_length: only with --tables, weighed against the retention at the assumed rates") {
  ServerFacts facts = ready_mariadb();  // binlog kept 7 days
  const Report without_tables = cdc::check::evaluate(facts);
  CHECK(std::none_of(without_tables.lines.begin(), without_tables.lines.end(),
                     [](const CheckLine& line) { return line.name == "snapshot_length"; }));

  // 50M rows, 8 GiB: 500 s by rows at 100k rows/s, 164 s by bytes at 50 MiB/s.
  facts.tables = ServerFacts::Tables{3, 50'000'000, std::uint64_t{8} << 30};
  Report report = cdc::check::evaluate(facts);
  const CheckLine* line = &line_named(report, "snapshot_length");
  CHECK(line->status == Status::ok);
  CHECK(line->value ==
        "3 table(s), about 50000000 rows and 8192 MiB: about 8 min for one cdc-snapshot at 100000 rows/s or 50 MiB/s");
  CHECK(line->want == "a binlog retention of at least 1 h 25 min (three times that, and an hour)");

  // 10 billion rows: 100,000 s; three times that and an hour, 3.5 days, is within the 7 days.
  facts.tables = ServerFacts::Tables{1, 10'000'000'000, 0};
  report = cdc::check::evaluate(facts);
  line = &line_named(report, "snapshot_length");
  CHECK(line->status == Status::ok);

  // A retention of one day against that: a warning naming the setting, rounded up to days.
  facts.variables["binlog_expire_logs_seconds"] = "86400";
  report = cdc::check::evaluate(facts);
  line = &line_named(report, "snapshot_length");
  CHECK(line->status == Status::warn);
  CHECK(line->message.find("the binlog is kept 1 day:") == 0);
  CHECK(line->fix.find("SET GLOBAL binlog_expire_logs_seconds = 345600;") == 0);  // 3 * 100000 + 3600 -> 4 days
  CHECK(report.usable());  // a warning: the server works, the snapshot may outlast its binlog

  // Sizes by bytes win when the rows are wide: 1 TiB at 50 MiB/s is about 5.8 h.
  facts.tables = ServerFacts::Tables{1, 1000, std::uint64_t{1} << 40};
  report = cdc::check::evaluate(facts);
  CHECK(line_named(report, "snapshot_length").value.find("about 5 h 49 min") != std::string::npos);

  // Never purged: nothing to weigh.
  facts.variables["binlog_expire_logs_seconds"] = "0";
  facts.variables["expire_logs_days"] = "0";
  CHECK(line_named(cdc::check::evaluate(facts), "snapshot_length").status == Status::ok);

  // Patterns that select nothing.
  facts.tables = ServerFacts::Tables{};
  report = cdc::check::evaluate(facts);
  CHECK(line_named(report, "snapshot_length").status == Status::warn);
  CHECK(line_named(report, "snapshot_length").message == "--tables selects no table on this server");
}
