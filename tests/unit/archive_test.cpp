// cdc-stream --archive DIR without a server (archive/): the directory's scan and cut-back, the
// events a dump sends turned into the server's files, and --archive-keep.

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "archive/archive_dir.h"
#include "archive/file_scan.h"
#include "archive/retention.h"
#include "archive_support.h"
#include "binlog/checksum.h"

namespace {

using namespace cdc::test_archive;  // NOLINT: the byte builders of archive_support.h

using cdc::Errc;
using cdc::archive::ArchiveDir;
using cdc::archive::CompleteFile;
using cdc::archive::Retention;

void notice_ignored(std::string_view) {}

// The server's binlog.000001 of the tests: FDE, two queries, ROTATE to binlog.000002.
struct ServerFile {
  Bytes fde = format_description(4 + 128);
  Bytes q1 = query(4 + 128 + 100, 100 - 23);
  Bytes q2 = query(4 + 128 + 100 + 60, 60 - 23, 0x52);
  Bytes end = rotate(4 + 128 + 100 + 60 + 44, "binlog.000002", 4, 0);
  [[nodiscard]] Bytes closed() const { return cat({fde, q1, q2, end}); }
};

}  // namespace

TEST_CASE("archive: the events of a dump become the server's file, byte for byte") {
  ServerFile server;
  REQUIRE(server.fde.size() == 128);
  REQUIRE(server.end.size() == 44);
  TempDir dir;
  auto archive = ArchiveDir::open(dir.path, Retention{}, notice_ignored);
  REQUIRE(archive);
  CHECK(archive->empty());
  CHECK_FALSE(archive->end());
  archive->begin_dump(false, cdc::binlog::ChecksumAlgorithm::crc32);
  // As MySQL sends the FDE: log_pos 0, the in-use flag clear, its checksum computed so.
  const Bytes sent_fde = format_description(0);
  const Bytes heartbeat = event(27, 4, Bytes{'b', 'i', 'n'}, kArtificial, 0);
  const Bytes artificial_gtid_list = event(163, 300, Bytes(10, 0), kArtificial, 0);
  for (const Bytes& sent : {fake_rotate("binlog.000001", 4), sent_fde, heartbeat, server.q1, artificial_gtid_list,
                            server.q2, server.end, fake_rotate("binlog.000002", 4)}) {
    auto appended = archive->append(sent);
    REQUIRE_MESSAGE(appended, appended.error().message);
  }
  CHECK(read_file(dir.path + "/binlog.000001") == server.closed());
  // The next file begins at the ROTATE, with the magic only so far.
  REQUIRE(archive->end());
  CHECK(archive->end()->file == "binlog.000002");
  CHECK(archive->end()->size == 4);
  REQUIRE(archive->close());
  CHECK(read_file(dir.path + "/.binlog.000002.partial") == cat({}));
  struct stat info {};
  REQUIRE(::stat((dir.path + "/binlog.000001").c_str(), &info) == 0);
  CHECK(info.st_mtime == 1700000100);  // the ROTATE's time
}

TEST_CASE("archive: the file in progress has the in-use flag, as the server's open file does") {
  ServerFile server;
  TempDir dir;
  auto archive = ArchiveDir::open(dir.path, Retention{}, notice_ignored);
  REQUIRE(archive);
  archive->begin_dump(false, cdc::binlog::ChecksumAlgorithm::crc32);
  for (const Bytes& sent : {fake_rotate("binlog.000001", 4), server.fde, server.q1}) REQUIRE(archive->append(sent));
  REQUIRE(archive->close());
  const Bytes partial = read_file(dir.path + "/.binlog.000001.partial");
  CHECK(partial == cat({format_description(4 + 128, kInUse), server.q1}));
  CHECK(cdc::binlog::event_checksum_matches(std::span(partial).subspan(4, 128)));
}

TEST_CASE("archive: a restart cuts a torn or corrupt end back and resumes there without writing the FDE twice") {
  ServerFile server;
  const Bytes open_fde = format_description(4 + 128, kInUse);
  const Bytes whole = cat({open_fde, server.q1});
  struct Case {
    const char* name;
    Bytes on_disk;
  };
  Bytes torn = cat({open_fde, server.q1, server.q2});
  torn.resize(torn.size() - 7);
  Bytes corrupt = cat({open_fde, server.q1, server.q2});
  corrupt[whole.size() + 30] ^= 0xff;  // inside q2's body: its CRC no longer matches
  Bytes wrong_offset = cat({open_fde, server.q1, query(999, 60 - 23)});
  const Case cases[] = {
      {"half an event (kill -9 inside a write)", torn},
      {"an event whose checksum does not match", corrupt},
      {"an event whose log_pos does not follow", wrong_offset},
      {"nothing to cut", whole},
  };
  for (const auto& c : cases) {
    const std::string name = c.name;
    CAPTURE(name);
    TempDir dir;
    write_file(dir.path + "/.binlog.000001.partial", c.on_disk);
    std::vector<std::string> notices;
    auto archive = ArchiveDir::open(dir.path, Retention{}, [&](std::string_view text) { notices.emplace_back(text); });
    REQUIRE(archive);
    REQUIRE(archive->end());
    CHECK(archive->end()->file == "binlog.000001");
    CHECK(archive->end()->size == whole.size());
    CHECK_FALSE(archive->end()->complete);
    CHECK(notices.size() == (c.on_disk == whole ? 0U : 1U));
    CHECK(read_file(dir.path + "/.binlog.000001.partial") == whole);
    // The dump from binlog.000001:<end>: a fake ROTATE there, the FDE again (log_pos 0), then
    // the events after.
    archive->begin_dump(false, cdc::binlog::ChecksumAlgorithm::crc32);
    for (const Bytes& sent : {fake_rotate("binlog.000001", whole.size()), format_description(0), server.q2,
                              server.end}) {
      auto appended = archive->append(sent);
      REQUIRE_MESSAGE(appended, appended.error().message);
    }
    CHECK(read_file(dir.path + "/binlog.000001") == server.closed());
  }
}

TEST_CASE("archive: an empty directory, and files of less than the magic") {
  TempDir dir;
  {
    auto archive = ArchiveDir::open(dir.path + "/new", Retention{}, notice_ignored);  // created
    REQUIRE(archive);
    CHECK(archive->empty());
    CHECK(archive->server_id() == 0);
  }
  for (const Bytes& stub : {Bytes{}, Bytes{0xfe, 0x62}}) {
    write_file(dir.path + "/.binlog.000007.partial", stub);
    auto archive = ArchiveDir::open(dir.path, Retention{}, notice_ignored);
    REQUIRE(archive);
    REQUIRE(archive->end());
    CHECK(archive->end()->file == "binlog.000007");
    CHECK(archive->end()->size == 4);
    REQUIRE(archive->close());
    CHECK(read_file(dir.path + "/.binlog.000007.partial") == cat({}));
  }
  write_file(dir.path + "/.binlog.000007.partial", Bytes{'n', 'o', 't', ' ', 'a', ' ', 'b', 'i', 'n', 'l', 'o', 'g'});
  auto foreign = ArchiveDir::open(dir.path, Retention{}, notice_ignored);
  REQUIRE_FALSE(foreign);
  CHECK(foreign.error().code == Errc::corrupt_input);
  CHECK(read_file(dir.path + "/.binlog.000007.partial").size() == 12);  // left alone
}

TEST_CASE("archive: a file in progress that ends with the server's ROTATE is completed at open") {
  ServerFile server;
  TempDir dir;
  Bytes killed = cat({format_description(4 + 128, kInUse), server.q1, server.q2, server.end});
  write_file(dir.path + "/.binlog.000001.partial", killed);
  auto archive = ArchiveDir::open(dir.path, Retention{}, notice_ignored);
  REQUIRE(archive);
  REQUIRE(archive->end());
  CHECK(archive->end()->complete);
  CHECK(read_file(dir.path + "/binlog.000001") == server.closed());
  CHECK_FALSE(exists(dir.path + "/.binlog.000001.partial"));
  CHECK(archive->server_id() == kServerId);
}

TEST_CASE("archive: a checksum that does not match is an error naming file and offset, and nothing is written") {
  ServerFile server;
  TempDir dir;
  auto archive = ArchiveDir::open(dir.path, Retention{}, notice_ignored);
  REQUIRE(archive);
  archive->begin_dump(false, cdc::binlog::ChecksumAlgorithm::crc32);
  REQUIRE(archive->append(fake_rotate("binlog.000001", 4)));
  REQUIRE(archive->append(server.fde));
  Bytes bad = server.q1;
  bad[40] ^= 0x01;
  auto appended = archive->append(bad);
  REQUIRE_FALSE(appended);
  CHECK(appended.error().code == Errc::corrupt_input);
  CHECK(appended.error().message.find("binlog.000001:132") != std::string::npos);
  CHECK(appended.error().message.find("CRC32") != std::string::npos);
  REQUIRE(archive->close());
  CHECK(read_file(dir.path + "/.binlog.000001.partial").size() == 4 + 128);
}

TEST_CASE("archive: an event that leaves a gap or overlaps the end is an error") {
  ServerFile server;
  struct Case {
    const char* name;
    Bytes event;
    const char* says;
  };
  const Case cases[] = {
      {"a gap: q2 without q1", server.q2, "gap"},
      {"an overlap: an event that starts inside q1", query(4 + 128 + 100 + 10, 60 - 23), "overlaps"},
  };
  for (const auto& c : cases) {
    const std::string name = c.name;
    CAPTURE(name);
    TempDir dir;
    auto archive = ArchiveDir::open(dir.path, Retention{}, notice_ignored);
    REQUIRE(archive);
    archive->begin_dump(false, cdc::binlog::ChecksumAlgorithm::crc32);
    REQUIRE(archive->append(fake_rotate("binlog.000001", 4)));
    REQUIRE(archive->append(server.fde));
    if (std::string_view(c.says) == "overlaps") REQUIRE(archive->append(server.q1));
    auto appended = archive->append(c.event);
    REQUIRE_FALSE(appended);
    CHECK(appended.error().code == Errc::corrupt_input);
    CHECK(appended.error().message.find(c.says) != std::string::npos);
  }
}

TEST_CASE("archive: a dump by GTID does not begin a file: it starts inside one") {
  ServerFile server;
  TempDir dir;
  std::vector<std::string> notices;
  auto archive = ArchiveDir::open(dir.path, Retention{}, [&](std::string_view text) { notices.emplace_back(text); });
  REQUIRE(archive);
  archive->begin_dump(true, cdc::binlog::ChecksumAlgorithm::crc32);
  // MariaDB by GTID: the first file from its FDE, then only what the position lacks.
  for (const Bytes& sent : {fake_rotate("binlog.000001", 4), server.fde, server.q2, server.end,
                            fake_rotate("binlog.000002", 4), format_description(4 + 128)}) {
    auto appended = archive->append(sent);
    REQUIRE_MESSAGE(appended, appended.error().message);
  }
  CHECK_FALSE(exists(dir.path + "/binlog.000001"));
  CHECK(notices.size() == 1);
  REQUIRE(archive->close());
  CHECK(read_file(dir.path + "/.binlog.000002.partial") == cat({format_description(4 + 128, kInUse)}));
}

TEST_CASE("archive: a second run on the same directory is refused") {
  TempDir dir;
  auto first = ArchiveDir::open(dir.path, Retention{}, notice_ignored);
  REQUIRE(first);
  auto second = ArchiveDir::open(dir.path, Retention{}, notice_ignored);
  REQUIRE_FALSE(second);
  CHECK(second.error().code == Errc::usage);
  CHECK(second.error().message.find("in use") != std::string::npos);
}

TEST_CASE("archive: the listing keeps binlog order and refuses two files in progress") {
  TempDir dir;
  for (const char* name : {"binlog.000010", "binlog.000009", "binlog.1000000", "README", ".binlog.1000001.partial"})
    write_file(dir.path + "/" + name, cat({}));
  auto listing = cdc::archive::list_directory(dir.path);
  REQUIRE(listing);
  REQUIRE(listing->complete.size() == 3);
  CHECK(listing->complete[0].name == "binlog.000009");
  CHECK(listing->complete[1].name == "binlog.000010");
  CHECK(listing->complete[2].name == "binlog.1000000");
  REQUIRE(listing->in_progress);
  CHECK(*listing->in_progress == "binlog.1000001");
  write_file(dir.path + "/.binlog.000011.partial", cat({}));
  auto two = cdc::archive::list_directory(dir.path);
  REQUIRE_FALSE(two);
  CHECK(two.error().code == Errc::corrupt_input);
}

TEST_CASE("archive: the name of the next file") {
  CHECK(cdc::archive::next_binlog_name("binlog.000042") == "binlog.000043");
  CHECK(cdc::archive::next_binlog_name("binlog.000099") == "binlog.000100");
  CHECK(cdc::archive::next_binlog_name("mysql-bin.999999") == "mysql-bin.1000000");
  CHECK(cdc::archive::next_binlog_name("binlog").empty());
  CHECK(cdc::archive::next_binlog_name("binlog.index").empty());
}

TEST_CASE("archive: --archive-keep values") {
  struct Case {
    const char* text;
    std::optional<std::int64_t> age;
    std::optional<std::uint64_t> bytes;
  };
  const Case good[] = {
      {"7d", 7 * 86400, {}},           {"36h", 36 * 3600, {}},
      {"90min", 90 * 60, {}},          {"2w", 14 * 86400, {}},
      {"45s", 45, {}},                 {"500M", {}, 500ULL << 20},
      {"50G", {}, 50ULL << 30},        {"1T", {}, 1ULL << 40},
      {"10KiB", {}, 10ULL << 10},      {"5gb", {}, 5ULL << 30},
  };
  for (const auto& c : good) {
    const std::string text = c.text;
    CAPTURE(text);
    auto parsed = cdc::archive::parse_retention({c.text});
    REQUIRE_MESSAGE(parsed, parsed.error().message);
    CHECK(parsed->max_age_seconds == c.age);
    CHECK(parsed->max_bytes == c.bytes);
  }
  const char* bad[] = {"", "7", "0d", "5m", "7x", "d", "1.5G", "-1d", "99999999999999999999G"};
  for (const char* text : bad) {
    CAPTURE(text);
    auto parsed = cdc::archive::parse_retention({text});
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().code == Errc::usage);
    CHECK(parsed.error().message.find("--archive-keep") != std::string::npos);
  }
  auto both = cdc::archive::parse_retention({"7d", "50G"});
  REQUIRE(both);
  CHECK(both->to_string() == "1w and 50G");
  CHECK_FALSE(cdc::archive::parse_retention({"7d", "3d"}));
  CHECK_FALSE(cdc::archive::parse_retention({"5G", "3M"}));
  CHECK(cdc::archive::parse_retention({})->keeps_everything());
}

TEST_CASE("archive: retention deletes the oldest complete files, never one after a kept file") {
  const std::int64_t now = 1700000000;
  const std::int64_t day = 86400;
  const std::vector<CompleteFile> files = {
      {"binlog.000001", 100, now - 10 * day},
      {"binlog.000002", 100, now - 8 * day},
      {"binlog.000003", 100, now - 6 * day},
      {"binlog.000004", 100, now - 9 * day},  // older than its predecessor (a copy, a clock step)
      {"binlog.000005", 100, now - 1 * day},
  };
  Retention by_age;
  by_age.max_age_seconds = 7 * day;
  CHECK(cdc::archive::files_to_delete(files, 50, by_age, now) ==
        std::vector<std::string>{"binlog.000001", "binlog.000002"});
  Retention by_size;
  by_size.max_bytes = 300;  // 5 x 100 + 50 in progress
  CHECK(cdc::archive::files_to_delete(files, 50, by_size, now) ==
        std::vector<std::string>{"binlog.000001", "binlog.000002", "binlog.000003"});
  by_size.max_bytes = 10;  // smaller than one file: every complete file goes, the one in progress stays
  CHECK(cdc::archive::files_to_delete(files, 50, by_size, now).size() == files.size());
  Retention both = by_age;
  both.max_bytes = 450;
  CHECK(cdc::archive::files_to_delete(files, 50, both, now) ==
        std::vector<std::string>{"binlog.000001", "binlog.000002"});
  CHECK(cdc::archive::files_to_delete(files, 50, Retention{}, now).empty());
}

TEST_CASE("archive: a completed file over --archive-keep's size deletes the oldest") {
  ServerFile server;
  TempDir dir;
  write_file(dir.path + "/binlog.000000", server.closed());
  Retention keep;
  keep.max_bytes = server.closed().size() + 10;  // room for one complete file and the next's magic
  std::vector<std::string> notices;
  auto archive = ArchiveDir::open(dir.path, keep, [&](std::string_view text) { notices.emplace_back(text); });
  REQUIRE(archive);
  CHECK(notices.empty());
  archive->begin_dump(false, cdc::binlog::ChecksumAlgorithm::crc32);
  for (const Bytes& sent : {fake_rotate("binlog.000001", 4), server.fde, server.q1, server.q2, server.end})
    REQUIRE(archive->append(sent));
  CHECK_FALSE(exists(dir.path + "/binlog.000000"));
  CHECK(exists(dir.path + "/binlog.000001"));
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].find("deleted binlog.000000") != std::string::npos);
}

TEST_CASE("archive: scan of a whole file") {
  ServerFile server;
  TempDir dir;
  write_file(dir.path + "/binlog.000001", server.closed());
  auto scan = cdc::archive::scan_binlog_file(dir.path + "/binlog.000001");
  REQUIRE(scan);
  CHECK(scan->valid_length == server.closed().size());
  CHECK(scan->problem.empty());
  CHECK(scan->events == 4);
  CHECK(scan->ends_file());
  CHECK(scan->checksum == cdc::binlog::ChecksumAlgorithm::crc32);
}

TEST_CASE("archive: a dump by GTID that starts at a file the archive has only begun writes its FDE when it is the file's") {
  ServerFile server;
  const Bytes next_fde = format_description(4 + 128);  // created 0, as in every file begun by a rotation
  struct Case {
    const char* name;
    bool previous_ends_with_rotate;
    bool written;
  };
  const Case cases[] = {
      {"the previous file ends with the ROTATE to it", true, true},
      {"the previous file ends otherwise (a server restart)", false, false},
  };
  for (const auto& c : cases) {
    const std::string name = c.name;
    CAPTURE(name);
    TempDir dir;
    write_file(dir.path + "/binlog.000001",
               c.previous_ends_with_rotate ? server.closed() : cat({server.fde, server.q1, server.q2}));
    write_file(dir.path + "/.binlog.000002.partial", cat({}));
    auto archive = ArchiveDir::open(dir.path, Retention{}, notice_ignored);
    REQUIRE(archive);
    archive->begin_dump(true, cdc::binlog::ChecksumAlgorithm::crc32);
    REQUIRE(archive->append(fake_rotate("binlog.000002", 4)));
    auto appended = archive->append(next_fde);
    CHECK(appended.has_value() == c.written);
    if (!appended) CHECK(appended.error().message.find("alone once") != std::string::npos);
    REQUIRE(archive->close());
    CHECK(read_file(dir.path + "/.binlog.000002.partial").size() == (c.written ? 4U + 128U : 4U));
  }
}
