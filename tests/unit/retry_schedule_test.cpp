// The reconnect schedule cdc-plan and cdc-snapshot share with cdc-stream (util/retry.h).

#include <doctest/doctest.h>

#include <thread>

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
