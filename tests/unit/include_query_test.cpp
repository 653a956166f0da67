// cdc-stream --include-query on a hand-made MariaDB binlog (stream::run_files): which statement
// each row line carries, through the one-thread writer, the rows thread and every format.
// The live and server-written cases are tests/integration/stream_include_query.sh.

#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include "archive_support.h"
#include "ndjson/json_scan.h"
#include "stream/file_stream.h"

namespace {

using namespace cdc::test_archive;  // NOLINT: the byte builders of archive_support.h

constexpr std::uint8_t kTableMap = 19;      // TABLE_MAP_EVENT
constexpr std::uint8_t kWriteRowsV1 = 23;   // WRITE_ROWS_EVENT_V1, as MariaDB writes them
constexpr std::uint8_t kAnnotateRows = 160; // ANNOTATE_ROWS_EVENT
constexpr std::uint16_t kStatementEnd = 1;  // STMT_END_F

// TABLE_MAP of db.table (id INT NOT NULL) under table_id.
Bytes int_table_map(std::uint32_t log_pos, std::uint64_t table_id, const std::string& db, const std::string& table) {
  Bytes body;
  put(body, table_id, 6);
  put(body, 1, 2);  // flags
  body.push_back(static_cast<std::uint8_t>(db.size()));
  body.insert(body.end(), db.begin(), db.end());
  body.push_back(0);
  body.push_back(static_cast<std::uint8_t>(table.size()));
  body.insert(body.end(), table.begin(), table.end());
  body.push_back(0);
  body.push_back(1);     // column count
  body.push_back(3);     // MYSQL_TYPE_LONG
  body.push_back(0);     // no metadata
  body.push_back(0x00);  // NOT NULL
  return event(kTableMap, log_pos, body);
}

// WRITE_ROWS_V1 of the ids, into the table that table_id maps.
Bytes int_write_rows(std::uint32_t log_pos, std::uint64_t table_id, std::initializer_list<std::uint32_t> ids,
                 std::uint16_t flags) {
  Bytes body;
  put(body, table_id, 6);
  put(body, flags, 2);
  body.push_back(1);     // column count
  body.push_back(0x01);  // present columns
  for (const std::uint32_t id : ids) {
    body.push_back(0x00);  // null bitmap
    put(body, id, 4);
  }
  return event(kWriteRowsV1, log_pos, body);
}

Bytes annotate_rows(std::uint32_t log_pos, const std::string& sql) { return event(kAnnotateRows, log_pos, Bytes(sql.begin(), sql.end())); }

// A statement with quotes, a backslash, a newline, a tab and UTF-8: escaped once, as JSON.
const std::string kFirstQuery = "INSERT INTO t.a VALUES (1), (2), (3) /* it's \"ü\" \\ 😀\n\tend */";
const std::string kFirstQueryJson = R"j("INSERT INTO t.a VALUES (1), (2), (3) /* it's \"ü\" \\ 😀\n\tend */")j";
const std::string kTriggerQuery = "INSERT INTO t.a VALUES (10)";

// Transaction 0-1-1: the first statement's rows in two rows events (STMT_END_F on the second),
// then a statement the session did not annotate, then one whose rows go to two tables (a
// trigger) in one statement. Transaction 0-1-2: rows without an annotation of their own.
Bytes annotated_binlog() {
  FileBuilder file;
  file.add([](std::uint32_t at) { return format_description(at); });
  file.add([](std::uint32_t at) { return mariadb_gtid_list(at, {}); });
  file.add([](std::uint32_t at) { return mariadb_gtid(at, 0, 1); });
  file.add([](std::uint32_t at) { return annotate_rows(at, kFirstQuery); });
  file.add([](std::uint32_t at) { return int_table_map(at, 70, "t", "a"); });
  file.add([](std::uint32_t at) { return int_write_rows(at, 70, {1, 2}, 0); });
  file.add([](std::uint32_t at) { return int_write_rows(at, 70, {3}, kStatementEnd); });
  file.add([](std::uint32_t at) { return int_table_map(at, 70, "t", "a"); });
  file.add([](std::uint32_t at) { return int_write_rows(at, 70, {4}, kStatementEnd); });
  file.add([](std::uint32_t at) { return annotate_rows(at, kTriggerQuery); });
  file.add([](std::uint32_t at) { return int_table_map(at, 70, "t", "a"); });
  file.add([](std::uint32_t at) { return int_table_map(at, 71, "t", "audit"); });
  file.add([](std::uint32_t at) { return int_write_rows(at, 70, {10}, 0); });
  file.add([](std::uint32_t at) { return int_write_rows(at, 71, {10}, kStatementEnd); });
  file.add([](std::uint32_t at) { return xid(at, 21); });
  file.add([](std::uint32_t at) { return mariadb_gtid(at, 0, 2); });
  file.add([](std::uint32_t at) { return int_table_map(at, 70, "t", "a"); });
  file.add([](std::uint32_t at) { return int_write_rows(at, 70, {5}, kStatementEnd); });
  file.add([](std::uint32_t at) { return xid(at, 22); });
  return file.bytes;
}

// What run_files writes for the file with these options.
std::string stream_text(const std::string& path, cdc::output::OutputOptions output,
                   std::optional<std::size_t> rows_thread_min_bytes) {
  cdc::stream::FileOptions options;
  options.files = {path};
  options.output = std::move(output);
  options.rows_thread_min_bytes = rows_thread_min_bytes;
  const int fd = ::memfd_create("include-query", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  auto run = cdc::stream::run_files(options, fd, [](std::string_view warning) { FAIL_CHECK(warning); });
  REQUIRE_MESSAGE(run, run.error().message);
  const off_t size = ::lseek(fd, 0, SEEK_END);
  std::string text(static_cast<std::size_t>(size), '\0');
  REQUIRE(::pread(fd, text.data(), text.size(), 0) == size);
  ::close(fd);
  return text;
}

std::vector<std::string> text_lines(const std::string& text) {
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at);
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

// Each line's member `key` (found by `path`, e.g. "source" then "query"), as JSON text;
// "(none)" where the line has none.
std::vector<std::string> members_found(const std::string& text, std::initializer_list<std::string_view> path,
                                 std::string_view only_lines_with = "") {
  std::vector<std::string> found;
  for (const std::string& line : text_lines(text)) {
    if (line.find(only_lines_with) == std::string::npos) continue;
    std::optional<std::string_view> value = line;
    for (const std::string_view key : path) value = value ? cdc::ndjson::find_member(*value, key) : std::nullopt;
    found.emplace_back(value.value_or("(none)"));
  }
  return found;
}

struct AnnotatedFile {
  TempDir dir;
  std::string path;
  AnnotatedFile() : path(dir.path + "/binlog.000001") { write_file(path, annotated_binlog()); }
};

}  // namespace

TEST_CASE("--include-query: a statement's rows carry it up to STMT_END_F, other rows null") {
  const AnnotatedFile file;
  cdc::output::OutputOptions queries;
  queries.include_query = true;
  const std::string trigger = "\"" + kTriggerQuery + "\"";
  const std::vector<std::string> want = {kFirstQueryJson, kFirstQueryJson, kFirstQueryJson, "null", trigger, trigger, "null"};
  // One thread, and the rows thread for every rows event: the same lines.
  const std::string one_thread = stream_text(file.path, queries, std::nullopt);
  CHECK(members_found(one_thread, {"\"query\""}, R"("op":"c")") == want);
  CHECK(stream_text(file.path, queries, 0) == one_thread);
  // "query" comes right before "pos".
  CHECK(one_thread.find(R"("after":{"@1":4},"query":null,"pos":{"file":"binlog.000001",)") != std::string::npos);

  // Without the option nothing changes: no "query", the same lines otherwise.
  const std::string plain = stream_text(file.path, {}, std::nullopt);
  CHECK(members_found(plain, {"\"query\""}, R"("op":"c")") == std::vector<std::string>(7, "(none)"));
  std::string stripped = one_thread;
  for (const std::string& value : {kFirstQueryJson, trigger, std::string("null")})
    for (std::size_t at = stripped.find(",\"query\":" + value); at != std::string::npos;
         at = stripped.find(",\"query\":" + value))
      stripped.erase(at, 9 + value.size());
  CHECK(stripped == plain);
}

TEST_CASE("--include-query in the formats: Debezium's source.query, Maxwell's query, Canal's sql") {
  const AnnotatedFile file;
  const std::string trigger = "\"" + kTriggerQuery + "\"";
  for (const bool include_query : {false, true}) {
    CAPTURE(include_query);
    cdc::output::OutputOptions options;
    options.include_query = include_query;

    options.format = cdc::output::Format::debezium;
    const std::vector<std::string> debezium =
        include_query ? std::vector<std::string>{kFirstQueryJson, kFirstQueryJson, kFirstQueryJson, "null", trigger, trigger, "null"}
                      : std::vector<std::string>(7, "null");
    CHECK(members_found(stream_text(file.path, options, std::nullopt), {"\"source\"", "\"query\""}) == debezium);

    // Maxwell: after "table", and none where the server logged none (RowMap.toJSON).
    options.format = cdc::output::Format::maxwell;
    const std::string maxwell = stream_text(file.path, options, std::nullopt);
    const std::vector<std::string> none(7, "(none)");
    CHECK(members_found(maxwell, {"\"query\""}) ==
          (include_query ? std::vector<std::string>{kFirstQueryJson, kFirstQueryJson, kFirstQueryJson, "(none)", trigger, trigger,
                                                    "(none)"}
                         : none));
    if (include_query)
      CHECK(maxwell.find(R"j({"database":"t","table":"a","query":"INSERT INTO t.a VALUES (10)","type":"insert",)j") !=
            std::string::npos);

    // Canal: one message per rows event, its "sql" the statement ("" without).
    options.format = cdc::output::Format::canal;
    const std::vector<std::string> canal =
        include_query ? std::vector<std::string>{kFirstQueryJson, kFirstQueryJson, "\"\"", trigger, trigger, "\"\""}
                      : std::vector<std::string>(6, "\"\"");
    CHECK(members_found(stream_text(file.path, options, std::nullopt), {"\"sql\""}) == canal);
  }
}
