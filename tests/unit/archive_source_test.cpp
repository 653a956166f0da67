// cdc-stream --archive-source (stream/archive_source): where a position continues in a binlog
// archive, on hand-made MariaDB files.

#include <doctest/doctest.h>

#include <string>

#include "archive_support.h"
#include "gtid/position.h"
#include "stream/archive_source.h"

namespace {

using namespace cdc::test_archive;  // NOLINT: the byte builders of archive_support.h
using cdc::gtid::FilePosition;
using cdc::gtid::Position;
using cdc::stream::ArchiveSource;

// binlog.000001 (complete): transactions 0-1-1 and 0-1-2, then the ROTATE; binlog.000002 (in
// progress): GTID_LIST 0-1-2, then transaction 0-1-3.
struct Archive {
  TempDir dir;
  std::uint64_t second_gtid = 0;  // where 0-1-2 starts in binlog.000001
  std::uint64_t third_gtid = 0;   // where 0-1-3 starts in binlog.000002
  std::uint64_t first_size = 0;

  Archive() {
    FileBuilder first;
    first.add([](std::uint32_t at) { return format_description(at); });
    first.add([](std::uint32_t at) { return mariadb_gtid_list(at, {}); });
    first.add([](std::uint32_t at) { return mariadb_gtid(at, 0, 1); });
    first.add([](std::uint32_t at) { return query(at, 37); });
    first.add([](std::uint32_t at) { return xid(at, 11); });
    second_gtid = first.add([](std::uint32_t at) { return mariadb_gtid(at, 0, 2); });
    first.add([](std::uint32_t at) { return query(at, 37); });
    first.add([](std::uint32_t at) { return xid(at, 12); });
    first.add([](std::uint32_t at) { return rotate(at, "binlog.000002", 4, 0); });
    first_size = first.bytes.size();
    write_file(dir.path + "/binlog.000001", first.bytes);
    FileBuilder second;
    second.add([](std::uint32_t at) { return format_description(at, kInUse); });
    second.add([](std::uint32_t at) { return mariadb_gtid_list(at, {2}); });
    third_gtid = second.add([](std::uint32_t at) { return mariadb_gtid(at, 0, 3); });
    second.add([](std::uint32_t at) { return query(at, 37); });
    second.add([](std::uint32_t at) { return xid(at, 13); });
    write_file(dir.path + "/.binlog.000002.partial", second.bytes);
  }
};

std::optional<FilePosition> locate(const ArchiveSource& source, const std::string& text) {
  auto position = Position::parse(text);
  REQUIRE(position);
  auto found = source.locate(*position);
  REQUIRE_MESSAGE(found, found.error().message);
  return *found;
}

}  // namespace

TEST_CASE("archive source: a GTID position continues at the first transaction it does not hold") {
  Archive archive;
  auto source = ArchiveSource::open(archive.dir.path);
  REQUIRE(source);
  CHECK(source->range_text() == "binlog.000001 to binlog.000002, in progress");
  CHECK(locate(*source, "0-1-1") == FilePosition{"binlog.000001", archive.second_gtid});
  // 0-1-2 is the GTID_LIST of binlog.000002: the search starts there.
  CHECK(locate(*source, "0-1-2") == FilePosition{"binlog.000002", archive.third_gtid});
  CHECK(locate(*source, "0-1-0") == FilePosition{"binlog.000001", 4 + 128 + 27});  // 0-1-1, after the header
  CHECK_FALSE(locate(*source, "0-1-3"));  // nothing after it
  CHECK_FALSE(locate(*source, "0-1-9"));
  CHECK(locate(*source, "1-1-5") == FilePosition{"binlog.000001", 4 + 128 + 27});  // a domain the archive lacks
}

TEST_CASE("archive source: FILE:OFFSET is itself, the end of a complete file the next one's start") {
  Archive archive;
  auto source = ArchiveSource::open(archive.dir.path);
  REQUIRE(source);
  CHECK(locate(*source, "binlog.000001:4") == FilePosition{"binlog.000001", 4});
  CHECK(locate(*source, "binlog.000002:" + std::to_string(archive.third_gtid)) ==
        FilePosition{"binlog.000002", archive.third_gtid});
  CHECK(locate(*source, "binlog.000001:" + std::to_string(archive.first_size)) == FilePosition{"binlog.000002", 4});
  CHECK_FALSE(locate(*source, "binlog.000000:4"));  // before the archive
  const auto files = source->files_from("binlog.000002");
  REQUIRE(files.size() == 1);
  CHECK(files[0].in_progress);
  CHECK(files[0].path == archive.dir.path + "/.binlog.000002.partial");
}

TEST_CASE("archive source: an empty directory has nothing") {
  TempDir dir;
  auto source = ArchiveSource::open(dir.path);
  REQUIRE(source);
  CHECK(source->empty());
  CHECK(source->range_text() == "nothing");
  CHECK_FALSE(locate(*source, "0-1-1"));
}
