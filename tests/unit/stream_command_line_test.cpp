// cdc-stream's command line (stream/command_line.h): what goes with what, and which run it is.
#include <doctest/doctest.h>

#include <string>
#include <variant>
#include <vector>

#include "stream/command_line.h"

// GCC 12 at -O2 warns that copies of a CommandLine (its std::optional<std::string> members)
// "may be used uninitialized", a known false positive; the tests copy lines on purpose.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace {

using cdc::stream::CommandLine;

std::string refusal(CommandLine line) {
  auto run = cdc::stream::resolve_command_line(std::move(line));
  REQUIRE_FALSE(run.has_value());
  CHECK(run.error().code == cdc::Errc::usage);
  return run.error().message;
}

}  // namespace

TEST_CASE("stream command line: the archive alone takes no option about changes") {
  CommandLine line;
  line.archive_dir = "/backup/db1";
  line.columns = {"s.t:a"};
  line.given = {"--archive", "--columns"};
  CHECK(refusal(line).starts_with("--columns is about changes"));
  line.given = {"--archive"};
  line.columns.clear();
  line.format_given = true;
  CHECK(refusal(line).starts_with("--format, its options and --include-query are about changes"));
  line.format_given = false;
  auto run = cdc::stream::resolve_command_line(line);
  REQUIRE(run.has_value());
  REQUIRE(std::holds_alternative<cdc::stream::ArchiveOptions>(*run));
  CHECK(std::get<cdc::stream::ArchiveOptions>(*run).dir == "/backup/db1");
  line.given.push_back("--output");
  line.live.output_path = "-";
  run = cdc::stream::resolve_command_line(line);
  REQUIRE(run.has_value());
  REQUIRE(std::holds_alternative<cdc::stream::LiveOptions>(*run));  // both, from one connection
  CHECK_FALSE(std::get<cdc::stream::LiveOptions>(*run).output_path.has_value());  // "-" is stdout
}

TEST_CASE("stream command line: --file takes times, offsets and filters, and no server state") {
  CommandLine line;
  line.files.files = {"binlog.000001"};
  line.live.from = "2026-11-30T10:00:00Z";
  line.wheres = {"s.t:id = 42"};
  line.columns = {"s.t:a,b"};
  auto run = cdc::stream::resolve_command_line(line);
  REQUIRE(run.has_value());
  const auto& files = std::get<cdc::stream::FileOptions>(*run);
  CHECK(files.from_time.has_value());
  CHECK(files.wheres.size() == 1);
  CHECK(files.columns.size() == 1);
  line.live.from = "binlog.000001:4";
  CHECK(refusal(line).find("--from takes a time") != std::string::npos);
  line.live.from.reset();
  line.live.state_path = "s.state";
  CHECK(refusal(line).starts_with("--file decodes files"));
  line.live.state_path.reset();
  line.wheres = {"s.t:id = = 1"};
  CHECK(refusal(line).find("character") != std::string::npos);
}

TEST_CASE("stream command line: a live stream's own checks") {
  CommandLine line;
  line.files.start_position = 4;
  CHECK(refusal(line).starts_with("--start-position and --stop-position go with --file"));
  line.files.start_position.reset();
  line.live.accepted_ddls = {"0-1-5"};
  CHECK(refusal(line) == "--accept-ddl goes with --on-ddl stop");
  line.on_ddl = "stop";
  auto run = cdc::stream::resolve_command_line(line);
  REQUIRE(run.has_value());
  CHECK(std::get<cdc::stream::LiveOptions>(*run).stop_on_ddl);
  line.archive_keep = {"7d"};
  CHECK(refusal(line) == "--archive-keep goes with --archive DIR");
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
