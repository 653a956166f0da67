// The reconnect schedule cdc-plan and cdc-snapshot share with cdc-stream (util/retry.h), and
// which errors of a query or a row fetch are a lost connection, retried on it
// (mysql/connection.h).

#include <doctest/doctest.h>

#include <thread>

#include "mysql/connection.h"
#include "util/retry.h"

using namespace std::chrono_literals;

TEST_CASE("retry schedule: 0.5 s doubling to 30 s, a success starts over") {
  cdc::RetrySchedule schedule(0);  // never gives up
  const std::chrono::milliseconds expected[] = {500ms, 1s, 2s, 4s, 8s, 16s, 30s, 30s, 30s};
  for (const auto want : expected) CHECK(schedule.after_failure() == want);
  schedule.succeeded();
  CHECK(schedule.after_failure() == 500ms);
}

TEST_CASE("retry schedule: gives up once the failures have lasted longer than --retry-for") {
  cdc::RetrySchedule schedule(1);
  CHECK(schedule.after_failure().has_value());
  std::this_thread::sleep_for(1100ms);
  CHECK_FALSE(schedule.after_failure().has_value());
  schedule.succeeded();  // a new series counts from its own first failure
  CHECK(schedule.after_failure().has_value());
}

TEST_CASE("retry schedule: which errors are a lost connection, retried, and which the server's answer") {
  using cdc::Errc;
  using cdc::mysql::error_category;
  CHECK(error_category(2013) == Errc::unavailable);  // CR_SERVER_LOST
  CHECK(error_category(2006) == Errc::unavailable);  // CR_SERVER_GONE_ERROR
  CHECK(error_category(1927) == Errc::unavailable);  // ER_CONNECTION_KILLED
  CHECK(error_category(1053) == Errc::unavailable);  // ER_SERVER_SHUTDOWN
  CHECK(error_category(0) == Errc::unavailable);     // a failure without a number
  CHECK(error_category(1146) == Errc::server);       // ER_NO_SUCH_TABLE
  CHECK(error_category(1317) == Errc::server);       // ER_QUERY_INTERRUPTED (KILL QUERY)
}

TEST_CASE("retry schedule: a row fetch whose error is on the connection, or nowhere, is a lost connection") {
  using cdc::Errc;
  using cdc::mysql::statement_error;
  const std::string what = "127.0.0.1:3306: reading the rows of 'SELECT `id` FROM `t`.`big`'";
  // Connector/C leaves a fetch's failure on the connection: the statement's error is 0.
  cdc::Error lost = statement_error(what, 0, "", 2013, "Lost connection to server during query");
  CHECK(lost.code == Errc::unavailable);
  CHECK(lost.message == what + " failed: Lost connection to server during query [2013]");
  cdc::Error killed = statement_error(what, 0, "", 1927, "Connection was killed");
  CHECK(killed.code == Errc::unavailable);
  CHECK(killed.message.ends_with("failed: Connection was killed [1927]"));
  // Neither has one (the message was once "failed:  [0]", exit 1): lost too, so read again.
  cdc::Error silent = statement_error(what, 0, "", 0, "");
  CHECK(silent.code == Errc::unavailable);
  CHECK(silent.message ==
        what + " failed with no error from the client library or the server: taken as a lost connection [0]");
  // The statement's own error comes first, and a refusal stays the server's.
  cdc::Error refused = statement_error(what, 1054, "Unknown column 'id' in 'SELECT'", 2013, "stale");
  CHECK(refused.code == Errc::server);
  CHECK(refused.message == what + " failed: Unknown column 'id' in 'SELECT' [1054]");
}
