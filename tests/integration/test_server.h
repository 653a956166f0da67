#pragma once

#include <string>

#include "mysql/connection.h"

namespace cdc::test {

// The throwaway server of scripts/test.sh, as CDC_TEST_* describes it. The "cdc" account
// holds exactly the grants DESIGN.md lists; root is for test setup only.
mysql::ConnectionOptions cdc_account();
mysql::ConnectionOptions root_account();

// Runs SQL as root, failing the current test on error.
void run_as_root(const std::string& sql);

}  // namespace cdc::test
