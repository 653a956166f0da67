#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "metrics/text_format.h"

using cdc::metrics::TextWriter;

TEST_CASE("metrics text: HELP and TYPE lines, then samples with their labels") {
  TextWriter out;
  out.family("cdc_stream_rows_total", "counter", "Row changes, by table");
  out.sample("cdc_stream_rows_total", std::uint64_t{12}, {{"database", "shop"}, {"table", "orders"}, {"op", "insert"}});
  out.family("cdc_stream_seconds_behind_server", "gauge", "Lag");
  out.sample("cdc_stream_seconds_behind_server", std::uint64_t{0});
  CHECK(out.text() ==
        "# HELP cdc_stream_rows_total Row changes, by table\n"
        "# TYPE cdc_stream_rows_total counter\n"
        "cdc_stream_rows_total{database=\"shop\",table=\"orders\",op=\"insert\"} 12\n"
        "# HELP cdc_stream_seconds_behind_server Lag\n"
        "# TYPE cdc_stream_seconds_behind_server gauge\n"
        "cdc_stream_seconds_behind_server 0\n");
}

TEST_CASE("metrics text: label values escape backslash, quote and newline, HELP backslash and newline") {
  TextWriter out;
  out.family("m", "gauge", "a \\ b\nc \"q\"");
  // Table names may hold any character MySQL allows in a quoted identifier.
  out.sample("m", std::uint64_t{1}, {{"table", "we\"ird\\na\nme"}});
  CHECK(out.text() ==
        "# HELP m a \\\\ b\\nc \"q\"\n"
        "# TYPE m gauge\n"
        "m{table=\"we\\\"ird\\\\na\\nme\"} 1\n");
}

TEST_CASE("metrics text: doubles in their shortest form, NaN and infinities as Prometheus spells them") {
  TextWriter out;
  out.sample("a", 0.25);
  out.sample("b", 1e21);
  out.sample("c", std::numeric_limits<double>::quiet_NaN());
  out.sample("d", std::numeric_limits<double>::infinity());
  out.sample("e", -std::numeric_limits<double>::infinity());
  out.sample("f", std::uint64_t{18446744073709551615U});
  CHECK(out.text() == "a 0.25\nb 1e+21\nc NaN\nd +Inf\ne -Inf\nf 18446744073709551615\n");
}

TEST_CASE("metrics replace_file: the whole text replaces the file, no temporary left") {
  char dir_template[] = "/tmp/cdc-metrics-test.XXXXXX";
  const char* dir = ::mkdtemp(dir_template);
  REQUIRE(dir != nullptr);
  const std::string path = std::string(dir) + "/cdc.prom";
  const auto read = [&path] {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  REQUIRE(cdc::metrics::replace_file(path, "a 1\nb 2\n"));
  CHECK(read() == "a 1\nb 2\n");
  REQUIRE(cdc::metrics::replace_file(path, "a 3\n"));
  CHECK(read() == "a 3\n");
  CHECK(::access((path + ".tmp").c_str(), F_OK) != 0);
  // A directory that does not exist: an error naming the file.
  const auto missing = cdc::metrics::replace_file(std::string(dir) + "/no/such/dir.prom", "a 1\n");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("no/such/dir.prom") != std::string::npos);
  ::unlink(path.c_str());
  ::rmdir(dir);
}
