// The progress line of cdc-snapshot and cdc-sync (util/progress.h), as their man pages show it.
#include <doctest/doctest.h>

#include "util/progress.h"

TEST_CASE("progress: counts and times as the line shows them") {
  CHECK(cdc::human_count(42) == "42");
  CHECK(cdc::human_count(1234) == "1.2k");
  CHECK(cdc::human_count(85000) == "85k");
  CHECK(cdc::human_count(5600000) == "5.6M");
  CHECK(cdc::human_count(2500000000) == "2.5G");
  CHECK(cdc::clock_text(42) == "0:42");
  CHECK(cdc::clock_text(3723) == "1:02:03");
}

TEST_CASE("progress: the line, its rate and its ETA") {
  // 10 chunks read by this run in 1 s, 28 left: 2.8 s at this run's pace.
  CHECK(cdc::progress_text("cdc-sync: snapshot", {12, 40, 1200000, 10, 850000, 1000000}) ==
        "cdc-sync: snapshot 12/40 chunks, 1.2M rows, 850k rows/s, ETA 0:02");
  // Nothing read yet: no rate, no ETA (and no division by a zero time).
  CHECK(cdc::progress_text("cdc-sync: snapshot", {3, 40, 0, 0, 0, 0}) ==
        "cdc-sync: snapshot 3/40 chunks, 0 rows, 0 rows/s, ETA -");
  // Chunks an earlier run finished count as done but not in the pace: 30 of 40 done, 5 of them
  // now in 10 s, 10 left: 20 s.
  CHECK(cdc::progress_text("cdc-snapshot:", {30, 40, 5000, 5, 5000, 10000000}) ==
        "cdc-snapshot: 30/40 chunks, 5.0k rows, 500 rows/s, ETA 0:20");
  // A plan on a pipe: the total is not known, nor the time left.
  CHECK(cdc::progress_text("cdc-snapshot:", {7, std::nullopt, 700, 7, 700, 1000000}) ==
        "cdc-snapshot: 7/? chunks, 700 rows, 700 rows/s, ETA -");
}
