#include "test_server.h"

#include <doctest/doctest.h>

#include <cstdlib>

namespace cdc::test {

namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

mysql::ConnectionOptions base() {
  mysql::ConnectionOptions options;
  options.host = "127.0.0.1";
  options.port = static_cast<unsigned>(std::atoi(env("CDC_TEST_PORT").c_str()));
  options.defaults_group = "cdc-test-nothing";
  return options;
}

}  // namespace

mysql::ConnectionOptions cdc_account() {
  auto options = base();
  options.user = env("CDC_TEST_USER");
  options.password = env("CDC_TEST_PASSWORD");
  return options;
}

mysql::ConnectionOptions root_account() {
  auto options = base();
  options.host.reset();
  options.port.reset();
  options.socket = env("CDC_TEST_SOCKET");
  options.user = "root";
  return options;
}

void run_as_root(const std::string& sql) {
  auto connection = mysql::Connection::open(root_account());
  REQUIRE_MESSAGE(connection.has_value(), connection.error().message);
  auto done = connection->query(sql);
  REQUIRE_MESSAGE(done.has_value(), done.error().message);
}

}  // namespace cdc::test
