#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "check/server_check.h"
#include "mysql/connection.h"
#include "test_server.h"

namespace {

const cdc::check::CheckLine& line_named(const cdc::check::Report& report, std::string_view name) {
  const auto found = std::find_if(report.lines.begin(), report.lines.end(),
                                  [&](const cdc::check::CheckLine& line) { return line.name == name; });
  REQUIRE_MESSAGE(found != report.lines.end(), "no check line named " << name);
  return *found;
}

}  // namespace

TEST_CASE("the test server, as the cdc account, is usable and reports what it runs") {
  auto connection = cdc::mysql::Connection::open(cdc::test::cdc_account());
  REQUIRE_MESSAGE(connection.has_value(), connection.error().message);
  auto facts = cdc::check::gather_facts(*connection);
  REQUIRE_MESSAGE(facts.has_value(), facts.error().message);
  CHECK(facts->current_user == "cdc@127.0.0.1");
  const cdc::check::Report report = cdc::check::evaluate(*facts);
  CHECK(report.flavor == cdc::check::Flavor::mariadb);
  for (const auto& line : report.lines) {
    CAPTURE(line.name);
    CAPTURE(line.value);
    CHECK(line.status == cdc::check::Status::ok);
  }
  CHECK(line_named(report, "binlog_format").value == "ROW");
  CHECK(line_named(report, "binlog_row_image").value == "FULL");
  CHECK(line_named(report, "binlog_row_metadata").value == "FULL");
  CHECK(line_named(report, "gtid_strict_mode").value == "ON");
  CHECK(line_named(report, "server_id").value == "1");
}

TEST_CASE("an account without grants is told which GRANT statements it needs") {
  cdc::test::run_as_root(
      "CREATE USER IF NOT EXISTS 'cdc_nogrants'@'127.0.0.1' IDENTIFIED BY 'pw-nogrants'");
  auto options = cdc::test::cdc_account();
  options.user = "cdc_nogrants";
  options.password = "pw-nogrants";
  auto connection = cdc::mysql::Connection::open(options);
  REQUIRE_MESSAGE(connection.has_value(), connection.error().message);
  auto facts = cdc::check::gather_facts(*connection);
  REQUIRE_MESSAGE(facts.has_value(), facts.error().message);
  const cdc::check::Report report = cdc::check::evaluate(*facts);
  CHECK_FALSE(report.usable());
  CHECK(line_named(report, "grant_replication_slave").fix ==
        "GRANT REPLICATION SLAVE ON *.* TO 'cdc_nogrants'@'127.0.0.1';");
  CHECK(line_named(report, "grant_binlog_monitor").fix ==
        "GRANT BINLOG MONITOR ON *.* TO 'cdc_nogrants'@'127.0.0.1';");
  CHECK(line_named(report, "grant_select").status == cdc::check::Status::fail);
}

TEST_CASE("connection failures are 'unavailable' errors that say what to check") {
  SUBCASE("wrong password") {
    auto options = cdc::test::cdc_account();
    options.password = "not-the-password";
    auto connection = cdc::mysql::Connection::open(options);
    REQUIRE_FALSE(connection.has_value());
    CHECK(connection.error().code == cdc::Errc::unavailable);
    CHECK(connection.error().message.find("Access denied") != std::string::npos);
    CHECK(connection.error().message.find("check --user and the password") != std::string::npos);
  }
  SUBCASE("nothing listening") {
    auto options = cdc::test::cdc_account();
    options.port = 1;
    options.connect_timeout_seconds = 2;
    auto connection = cdc::mysql::Connection::open(options);
    REQUIRE_FALSE(connection.has_value());
    CHECK(connection.error().code == cdc::Errc::unavailable);
    CHECK(connection.error().message.find("127.0.0.1:1") != std::string::npos);
    CHECK(connection.error().message.find("check --host/--port or --socket") != std::string::npos);
  }
  SUBCASE("TLS required but the server has none") {
    auto options = cdc::test::cdc_account();
    options.ssl_mode = cdc::mysql::SslMode::required;
    auto connection = cdc::mysql::Connection::open(options);
    REQUIRE_FALSE(connection.has_value());
    CHECK(connection.error().code == cdc::Errc::unavailable);
  }
}

TEST_CASE("queries return rows and NULLs, and failures name the query") {
  auto connection = cdc::mysql::Connection::open(cdc::test::cdc_account());
  REQUIRE_MESSAGE(connection.has_value(), connection.error().message);
  auto rows = connection->query("SELECT 1 AS one, NULL AS nothing, 'x' UNION ALL SELECT 2, NULL, 'y'");
  REQUIRE_MESSAGE(rows.has_value(), rows.error().message);
  CHECK(rows->columns == std::vector<std::string>{"one", "nothing", "x"});
  REQUIRE(rows->rows.size() == 2);
  CHECK(rows->rows[1][0] == "2");
  CHECK_FALSE(rows->rows[1][1].has_value());
  auto broken = connection->query("SELECT * FROM no_such_db.no_such_table");
  REQUIRE_FALSE(broken.has_value());
  CHECK(broken.error().code == cdc::Errc::server);
  CHECK(broken.error().message.find("no_such_db.no_such_table") != std::string::npos);
  auto again = connection->query("SELECT 3");  // the connection survives a failed query
  REQUIRE(again.has_value());
  CHECK(again->rows[0][0] == "3");
}
