// cdc-apply's grouping of lines into source and target transactions, and what a rerun skips
// (libcore/apply/applier.h), against a target that records what it is given.

#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "apply/applier.h"
#include "ndjson/reader.h"
#include "util/unique_fd.h"

namespace {

using cdc::apply::AppliedState;
using cdc::apply::Stop;

struct Recorded {
  struct Commit {
    std::string sql;
    AppliedState state;
    std::string checks;  // each exact statement's kind and the rows the server must count: "update 1;..."
  };
  std::vector<Commit> commits;
  std::vector<std::string> created;
  std::vector<std::string> ddls;
};

struct RecordingTarget final : cdc::apply::Target {
  explicit RecordingTarget(Recorded& into) : recorded(into) {}
  Recorded& recorded;

  cdc::Result<void> commit(const cdc::apply::StatementBatch& batch, const AppliedState& state) override {
    std::string checks;
    for (const cdc::apply::StatementInfo& info : batch.statements())
      if (info.exact) checks += fmt::format("{}{} {}", checks.empty() ? "" : ";", info.kind, info.expected);
    recorded.commits.push_back({std::string(batch.sql()), state, checks});
    return {};
  }
  cdc::Result<void> create_table(const std::string& sql) override {
    recorded.created.push_back(sql);
    return {};
  }
  cdc::Result<void> run_ddl(const std::string& database, std::string_view sql) override {
    recorded.ddls.push_back(database + ": " + std::string(sql));
    return {};
  }
};

const std::string kTable =
    R"j({"op":"table","v":1,"db":"s","table":"t","columns":[{"name":"id","type":"int(11)","nullable":false},)j"
    R"j({"name":"v","type":"varchar(8)","nullable":true}],"key":["id"],"pos":null,"ts_ms":0})j";
const std::string kKeyless =
    R"({"op":"table","v":1,"db":"s","table":"k","columns":[{"name":"a","type":"float","nullable":true}],)"
    R"("key":null,"pos":null,"ts_ms":0})";

std::string row(int id, std::string_view v) {
  return fmt::format(R"({{"op":"r","v":1,"db":"s","table":"t","key":{{"id":{0}}},"before":null,)"
                     R"("after":{{"id":{0},"v":"{1}"}},"ts_ms":0}})",
                     id, v);
}
std::string high(std::string_view position) {
  return fmt::format(R"({{"op":"high","v":1,"position":"{}","file":null,"offset":null,"chunks":1,"rows":3,"ts_ms":0}})",
                     position);
}
std::string pos(int offset, int index) {
  return fmt::format(R"("pos":{{"file":"binlog.000001","offset":{},"index":{},"gtid":null}})", offset, index);
}
std::string insert(int id, std::string_view v, int offset, int index = 0) {
  return fmt::format(R"({{"op":"c","v":1,"db":"s","table":"t","key":{{"id":{0}}},"before":null,)"
                     R"("after":{{"id":{0},"v":"{1}"}},{2},"server_id":1,"thread":null,"ts_ms":0}})",
                     id, v, pos(offset, index));
}
std::string update(int id, std::string_view from, std::string_view to, int offset) {
  return fmt::format(R"({{"op":"u","v":1,"db":"s","table":"t","key":{{"id":{0}}},"before":{{"id":{0},"v":"{1}"}},)"
                     R"("after":{{"id":{0},"v":"{2}"}},{3},"server_id":1,"thread":null,"ts_ms":0}})",
                     id, from, to, pos(offset, 0));
}
std::string erase(int id, std::string_view v, int offset) {
  return fmt::format(R"({{"op":"d","v":1,"db":"s","table":"t","key":{{"id":{0}}},"before":{{"id":{0},"v":"{1}"}},)"
                     R"("after":null,{2},"server_id":1,"thread":null,"ts_ms":0}})",
                     id, v, pos(offset, 0));
}
std::string commit(int end) {
  return fmt::format(R"({{"op":"commit","v":1,"gtid":null,"pos":{{"file":"binlog.000001","offset":{0}}},)"
                     R"("position":"binlog.000001:{0}","rows":1,"xid":1,"ts_ms":0}})",
                     end);
}
std::string discard(int at) {
  return fmt::format(R"({{"op":"discard","v":1,"gtid":null,"pos":{{"file":"binlog.000001","offset":{}}},)"
                     R"("reason":"lost","ts_ms":0}})",
                     at);
}
std::string ddl(std::string_view sql, int offset) {
  return fmt::format(R"({{"op":"ddl","v":1,"db":"s","sql":"{}",{},"ts_ms":0}})", sql, pos(offset, 0));
}

struct Run {
  Recorded target;
  Stop stop = Stop::end_of_input;
  cdc::apply::ApplyStats stats;
  AppliedState state;
  std::string stop_reason;
};

// The lines through an Applier, as one input (a regular file: always ready, so target
// transactions are cut by --batch-rows alone), then finish().
Run apply(const std::vector<std::string>& lines, cdc::apply::ApplyOptions options = {}, AppliedState start = {}) {
  cdc::UniqueFd fd(::memfd_create("lines", MFD_CLOEXEC));
  REQUIRE(fd.valid());
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  REQUIRE(::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  REQUIRE(::lseek(fd.get(), 0, SEEK_SET) == 0);
  Run run;
  RecordingTarget target(run.target);
  cdc::apply::Applier applier(target, std::move(options), std::move(start));
  cdc::ndjson::Reader reader(fd.get(), "lines");
  auto stop = applier.read(reader);
  REQUIRE_MESSAGE(stop.has_value(), (stop.has_value() ? "" : stop.error().message));
  run.stop = *stop;
  if (run.stop == Stop::end_of_input) REQUIRE(applier.finish().has_value());
  run.stats = applier.stats();
  run.state = applier.state();
  run.stop_reason = applier.stop_reason();
  return run;
}

std::string error_of(const std::vector<std::string>& lines, cdc::apply::ApplyOptions options = {},
                     AppliedState start = {}) {
  cdc::UniqueFd fd(::memfd_create("lines", MFD_CLOEXEC));
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  REQUIRE(::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  REQUIRE(::lseek(fd.get(), 0, SEEK_SET) == 0);
  Recorded recorded;
  RecordingTarget target(recorded);
  cdc::apply::Applier applier(target, std::move(options), std::move(start));
  cdc::ndjson::Reader reader(fd.get(), "lines");
  auto stop = applier.read(reader);
  if (stop) {
    auto finished = applier.finish();
    return finished ? "" : finished.error().message;
  }
  return stop.error().message;
}

cdc::apply::ApplyOptions batch_of(std::uint64_t rows) {
  cdc::apply::ApplyOptions options;
  options.batch_rows = rows;
  return options;
}

}  // namespace

TEST_CASE("apply grouping: a snapshot is one multi-row upsert committed with its high position, then the stream") {
  const Run run = apply({kTable, row(1, "a"), row(2, "b"), high("binlog.000001:100"), kTable, insert(3, "c", 120),
                         insert(4, "d", 120, 1), commit(200), update(1, "a", "A", 220), commit(300),
                         erase(2, "b", 320), commit(400)});
  REQUIRE(run.target.commits.size() == 2);
  CHECK(run.target.commits[0].sql ==
        "INSERT INTO `s`.`t` (`id`,`v`) VALUES (1,'a'),(2,'b') ON DUPLICATE KEY UPDATE `id`=VALUES(`id`),"
        "`v`=VALUES(`v`)");
  CHECK(run.target.commits[0].state.position == "binlog.000001:100");
  CHECK(run.target.commits[0].state.snapshot_done);
  CHECK(run.target.commits[0].state.snapshot_rows == 2);
  // The update joins the inserts' run, which ends as an upsert the server must count 1 + 1 + 2.
  CHECK(run.target.commits[1].sql ==
        "INSERT INTO `s`.`t` (`id`,`v`) VALUES (3,'c'),(4,'d'),(1,'A') ON DUPLICATE KEY UPDATE `id`=VALUES(`id`),"
        "`v`=VALUES(`v`);DELETE FROM `s`.`t` WHERE `id` IN (2)");
  CHECK(run.target.commits[1].checks == "insert or update 4;delete 1");
  CHECK(run.state.position == "binlog.000001:400");
  CHECK(run.state.source_pos == "binlog.000001:400");
  CHECK(run.state.transactions == 3);
  CHECK(run.state.changes == 6);
  CHECK(run.stats.transactions == 3);
  CHECK(run.stats.rows == 6);
}

TEST_CASE("apply grouping: updates that keep their key join the run of inserts, others stay updates") {
  // A key that changes, and an update whose values stay, are UPDATEs of their own; a discarded
  // transaction's update leaves the run a plain INSERT again.
  const std::string moved = fmt::format(
      R"({{"op":"u","v":1,"db":"s","table":"t","key":{{"id":5}},"before":{{"id":5,"v":"x"}},"after":{{"id":6,"v":"x"}},{},)"
      R"("server_id":1,"thread":null,"ts_ms":0}})",
      pos(90, 0));
  const Run run = apply({kTable, update(1, "a", "b", 10), insert(2, "c", 10, 1), update(1, "b", "c", 10), commit(20),
                         moved, update(3, "same", "same", 90), commit(100), insert(7, "d", 110), update(7, "d", "e", 110),
                         discard(105), insert(8, "e", 120), commit(130)});
  REQUIRE(run.target.commits.size() == 1);
  CHECK(run.target.commits[0].sql ==
        "INSERT INTO `s`.`t` (`id`,`v`) VALUES (1,'b'),(2,'c'),(1,'c') ON DUPLICATE KEY UPDATE `id`=VALUES(`id`),"
        "`v`=VALUES(`v`);UPDATE `s`.`t` SET `id`=6 WHERE `id`<=>5;UPDATE `s`.`t` SET `v`='same' WHERE `id`<=>3;"
        "INSERT INTO `s`.`t` (`id`,`v`) VALUES (8,'e')");
  CHECK(run.target.commits[0].checks == "insert or update 5;update 1;update 1");
}

TEST_CASE("apply grouping: --batch-rows cuts target transactions at source transaction boundaries only") {
  const Run run = apply({kTable, insert(1, "a", 10), insert(2, "b", 10, 1), insert(3, "c", 10, 2), commit(50),
                         insert(4, "d", 60), commit(70), insert(5, "e", 80), commit(90)},
                        batch_of(2));
  REQUIRE(run.target.commits.size() == 2);
  CHECK(run.target.commits[0].sql == "INSERT INTO `s`.`t` (`id`,`v`) VALUES (1,'a'),(2,'b'),(3,'c')");
  CHECK(run.target.commits[0].state.position == "binlog.000001:50");
  // Inserts of one table stay one statement across source transactions.
  CHECK(run.target.commits[1].sql == "INSERT INTO `s`.`t` (`id`,`v`) VALUES (4,'d'),(5,'e')");
  CHECK(run.target.commits[1].state.position == "binlog.000001:90");
}

TEST_CASE("apply grouping: a transaction without its commit line, or voided by a discard line, is not applied") {
  const Run run = apply({kTable, insert(1, "a", 10), commit(50), insert(2, "lost", 60), discard(55),
                         insert(2, "b", 60), commit(70), insert(3, "cut", 80)});
  REQUIRE(run.target.commits.size() == 1);
  CHECK(run.target.commits[0].sql == "INSERT INTO `s`.`t` (`id`,`v`) VALUES (1,'a'),(2,'b')");
  CHECK(run.state.position == "binlog.000001:70");
  CHECK(run.stats.transactions_dropped == 2);
}

TEST_CASE("apply grouping: a rerun skips the transactions at or before the stored position") {
  AppliedState stored;
  stored.position = "binlog.000001:70";
  stored.snapshot_done = true;
  stored.transactions = 5;
  const Run run = apply({kTable, row(1, "a"), high("binlog.000001:40"), insert(1, "a", 50), commit(60),
                         insert(2, "b", 65), commit(70), insert(3, "c", 80), commit(90)},
                        {}, stored);
  REQUIRE(run.target.commits.size() == 1);
  CHECK(run.target.commits[0].sql == "INSERT INTO `s`.`t` (`id`,`v`) VALUES (3,'c')");
  CHECK(run.state.position == "binlog.000001:90");
  CHECK(run.state.transactions == 6);
  CHECK(run.stats.transactions_skipped == 2);
  CHECK(run.stats.snapshot_rows_skipped == 1);
}

TEST_CASE("apply grouping: a rerun inside the snapshot skips the rows applied and applies the rest") {
  AppliedState stored;
  stored.snapshot_rows = 2;
  const Run run = apply({kTable, row(1, "a"), row(2, "b"), row(3, "c"), high("binlog.000001:40")}, {}, stored);
  REQUIRE(run.target.commits.size() == 1);
  CHECK(run.target.commits[0].sql.starts_with("INSERT INTO `s`.`t` (`id`,`v`) VALUES (3,'c') ON DUPLICATE"));
  CHECK(run.state.snapshot_rows == 3);
  CHECK(run.state.snapshot_done);
}

TEST_CASE("apply grouping: a snapshot batch is committed every --batch-rows rows with the count of rows applied") {
  const Run run = apply({kTable, row(1, "a"), row(2, "b"), row(3, "c"), high("binlog.000001:40")}, batch_of(2));
  REQUIRE(run.target.commits.size() == 2);
  CHECK(run.target.commits[0].state.snapshot_rows == 2);
  CHECK_FALSE(run.target.commits[0].state.snapshot_done);
  CHECK(run.target.commits[0].state.position.empty());
  CHECK(run.target.commits[1].state.snapshot_done);
}

TEST_CASE("apply grouping: --until stops after the transaction that reaches it") {
  cdc::apply::ApplyOptions options;
  options.until = cdc::gtid::Position::parse("binlog.000001:65").value();
  const Run run = apply({kTable, insert(1, "a", 50), commit(60), insert(2, "b", 65), commit(70), insert(3, "c", 80),
                         commit(90)},
                        std::move(options));
  CHECK(run.stop == Stop::until);
  CHECK(run.state.position == "binlog.000001:70");
  REQUIRE(run.target.commits.size() == 1);
}

TEST_CASE("apply grouping: --on-ddl stop commits what came before and stops at the DDL, ignore and apply go on") {
  const std::vector<std::string> lines = {kTable, insert(1, "a", 50), commit(60), ddl("ALTER TABLE t ADD x INT", 70),
                                          commit(80), insert(2, "b", 90), commit(100)};
  const Run stopped = apply(lines);
  CHECK(stopped.stop == Stop::ddl);
  CHECK(stopped.state.position == "binlog.000001:60");
  REQUIRE(stopped.target.commits.size() == 1);
  CHECK(stopped.stop_reason.find("ALTER TABLE t ADD x INT") != std::string::npos);
  CHECK(stopped.stop_reason.find("binlog.000001:70") != std::string::npos);

  cdc::apply::ApplyOptions ignore;
  ignore.on_ddl = cdc::apply::OnDdl::ignore;
  const Run ignored = apply(lines, ignore);
  CHECK(ignored.stop == Stop::end_of_input);
  CHECK(ignored.target.ddls.empty());
  CHECK(ignored.state.position == "binlog.000001:100");

  cdc::apply::ApplyOptions run_it;
  run_it.on_ddl = cdc::apply::OnDdl::apply;
  run_it.database = "copy";
  const Run applied = apply(lines, run_it);
  REQUIRE(applied.target.ddls.size() == 1);
  CHECK(applied.target.ddls[0] == "copy: ALTER TABLE t ADD x INT");
  // The changes before the DDL are committed before it runs, the DDL's position after it.
  REQUIRE(applied.target.commits.size() == 3);
  CHECK(applied.target.commits[1].state.position == "binlog.000001:80");
  CHECK(applied.target.commits[1].sql.empty());
  CHECK(applied.target.commits[2].sql == "INSERT INTO `copy`.`t` (`id`,`v`) VALUES (2,'b')");
}

TEST_CASE("apply grouping: deletes of a one-column key in a row are one DELETE ... IN, an update sets what changed") {
  const Run run = apply({kTable, erase(1, "a", 10), erase(2, "b", 10), commit(20), erase(3, "c", 30),
                         update(4, "d", "d", 40), erase(5, "e", 50), commit(60)});
  REQUIRE(run.target.commits.size() == 1);
  CHECK(run.target.commits[0].sql ==
        "DELETE FROM `s`.`t` WHERE `id` IN (1,2,3);UPDATE `s`.`t` SET `v`='d' WHERE `id`<=>4;"
        "DELETE FROM `s`.`t` WHERE `id` IN (5)");
}

TEST_CASE("apply grouping: a keyless table's rows are found by their whole image, FLOAT cast back") {
  const std::string update_line =
      R"({"op":"u","v":1,"db":"s","table":"k","key":null,"before":{"a":1.1},"after":{"a":null},)" + pos(10, 0) +
      R"(,"server_id":1,"thread":null,"ts_ms":0})";
  const Run run = apply({kKeyless, update_line, commit(20)});
  REQUIRE(run.target.commits.size() == 1);
  CHECK(run.target.commits[0].sql == "UPDATE `s`.`k` SET `a`=NULL WHERE `a`<=>CAST(1.1 AS FLOAT) LIMIT 1");
}

TEST_CASE("apply grouping: --create-tables creates each table once, and its database, in --database") {
  cdc::apply::ApplyOptions options;
  options.create_tables = true;
  options.database = "copy";
  const Run run = apply({kTable, kTable, insert(1, "a", 10), commit(20)}, options);
  REQUIRE(run.target.created.size() == 2);
  CHECK(run.target.created[0] == "CREATE DATABASE IF NOT EXISTS `copy`");
  CHECK(run.target.created[1].starts_with("CREATE TABLE IF NOT EXISTS `copy`.`t`"));
}

TEST_CASE("apply grouping: input errors name the line") {
  CHECK(error_of({insert(1, "a", 10)}) ==
        "lines:1: no table line for s.t before its first row: give cdc-apply whole outputs of cdc-merge, cdc-stream "
        "or cdc-sync, which describe each table first");
  const std::string partial =
      R"({"op":"c","v":1,"db":"s","table":"t","key":{"id":1},"before":null,"after":{"id":1},)" + pos(10, 0) +
      R"(,"server_id":1,"thread":null,"ts_ms":0})";
  CHECK(error_of({kTable, partial, commit(20)})
            .starts_with("lines:2: s.t at binlog.000001:10#0 key {\"id\":1}: the after image has 1 columns"));
  CHECK(error_of({R"({"op":"low","v":1})"}).starts_with("lines:1: an op:\"low\" line"));
  AppliedState stored;
  stored.position = "0-1-5";
  stored.snapshot_done = true;
  CHECK(error_of({kTable, insert(1, "a", 10), commit(20)}, {}, stored).find("different forms") != std::string::npos);
}

TEST_CASE("apply grouping: before the input waits, the whole transactions are committed, not the one being read") {
  int ends[2];
  REQUIRE(::pipe(ends) == 0);
  cdc::UniqueFd reading(ends[0]);
  cdc::UniqueFd writing(ends[1]);
  Recorded recorded;
  std::atomic<std::size_t> commits{0};
  struct CountingTarget final : cdc::apply::Target {
    CountingTarget(Recorded& into, std::atomic<std::size_t>& count) : recording(into), counted(count) {}
    cdc::Result<void> commit(const cdc::apply::StatementBatch& batch, const AppliedState& state) override {
      recording.commits.push_back({std::string(batch.sql()), state, {}});
      ++counted;
      return {};
    }
    cdc::Result<void> create_table(const std::string&) override { return {}; }
    cdc::Result<void> run_ddl(const std::string&, std::string_view) override { return {}; }
    Recorded& recording;
    std::atomic<std::size_t>& counted;
  } target(recorded, commits);
  // The first transaction and half of the second, whose insert extends the first's INSERT;
  // then, once the first is committed, the rest.
  std::thread writer([&] {
    const std::string first = kTable + "\n" + insert(1, "a", 10) + "\n" + commit(20) + "\n" + insert(2, "b", 30) + "\n";
    REQUIRE(::write(writing.get(), first.data(), first.size()) == static_cast<ssize_t>(first.size()));
    for (int i = 0; i < 500 && commits == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const std::string rest = insert(3, "c", 30, 1) + "\n" + commit(40) + "\n";
    REQUIRE(::write(writing.get(), rest.data(), rest.size()) == static_cast<ssize_t>(rest.size()));
    writing.reset();
  });
  cdc::apply::Applier applier(target, {}, {});
  cdc::ndjson::Reader reader(reading.get(), "pipe");
  auto stop = applier.read(reader);
  writer.join();
  REQUIRE(stop.has_value());
  REQUIRE(applier.finish().has_value());
  REQUIRE(recorded.commits.size() == 2);
  CHECK(recorded.commits[0].sql == "INSERT INTO `s`.`t` (`id`,`v`) VALUES (1,'a')");
  CHECK(recorded.commits[0].state.position == "binlog.000001:20");
  CHECK(recorded.commits[1].sql == "INSERT INTO `s`.`t` (`id`,`v`) VALUES (2,'b'),(3,'c')");
  CHECK(recorded.commits[1].state.position == "binlog.000001:40");
}

TEST_CASE("apply grouping: a transaction that comes again (a file cut back and written on) is skipped") {
  const Run run = apply({kTable, insert(1, "a", 10), commit(20), insert(2, "b", 30), discard(25), insert(1, "a", 10),
                         commit(20), insert(2, "b", 30), commit(40)});
  REQUIRE(run.target.commits.size() == 1);
  CHECK(run.target.commits[0].sql == "INSERT INTO `s`.`t` (`id`,`v`) VALUES (1,'a'),(2,'b')");
  CHECK(run.stats.transactions_skipped == 1);
  CHECK(run.stats.transactions_dropped == 1);
}

TEST_CASE("apply grouping: --retry-for commits a target transaction again after a lost connection, once") {
  // A target with a position table of its own, whose connection is lost at the first commit:
  // before the commit (nothing applied), or after it (applied, the answer lost).
  struct FlakyTarget final : cdc::apply::Target {
    enum class Loss { before_commit, after_commit, moved_by_another };
    explicit FlakyTarget(Loss how) : loss(how) {}
    cdc::Result<void> commit(const cdc::apply::StatementBatch& batch, const AppliedState& state) override {
      ++attempts;
      if (attempts == 1 && loss != Loss::after_commit)
        return cdc::fail(cdc::Errc::unavailable, "Lost connection to server during query");
      applied.emplace_back(batch.sql());
      stored = state;
      if (attempts == 1) return cdc::fail(cdc::Errc::unavailable, "Lost connection to server during query");
      return {};
    }
    cdc::Result<void> create_table(const std::string&) override { return {}; }
    cdc::Result<void> run_ddl(const std::string&, std::string_view) override { return {}; }
    cdc::Result<AppliedState> reconnect() override {
      ++reconnects;
      if (reconnects == 1) return cdc::fail(cdc::Errc::unavailable, "Can't connect to server");
      if (loss == Loss::moved_by_another) stored.position = "binlog.000009:4";
      return stored;
    }
    Loss loss;
    int attempts = 0;
    int reconnects = 0;
    std::vector<std::string> applied;
    AppliedState stored;
  };
  const std::vector<std::string> lines{kTable, insert(1, "a", 10), commit(20), insert(2, "b", 30), commit(40)};
  const auto run = [&lines](FlakyTarget& target, std::optional<unsigned> retry_for) {
    cdc::UniqueFd fd(::memfd_create("lines", MFD_CLOEXEC));
    std::string text;
    for (const std::string& line : lines) text += line + "\n";
    REQUIRE(::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    REQUIRE(::lseek(fd.get(), 0, SEEK_SET) == 0);
    cdc::apply::ApplyOptions options;
    options.retry_for = retry_for;
    std::vector<std::string> notices;
    options.notice = [&notices](std::string_view said) { notices.emplace_back(said); };
    cdc::apply::Applier applier(target, std::move(options), {});
    cdc::ndjson::Reader reader(fd.get(), "lines");
    auto stop = applier.read(reader);
    cdc::Result<void> done = stop ? applier.finish() : cdc::Result<void>(cdc::fail(stop.error()));
    if (!done) return done.error();
    return cdc::Error{cdc::Errc::internal, ""};
  };
  SUBCASE("lost before the commit: committed again on the new connection") {
    FlakyTarget target(FlakyTarget::Loss::before_commit);
    CHECK(run(target, 30u).message.empty());
    CHECK(target.reconnects == 2);  // the first reconnect fails too
    CHECK(target.applied.size() == 1);
    CHECK(target.stored.position == "binlog.000001:40");
  }
  SUBCASE("lost after the commit: the position table says it went through, nothing is applied twice") {
    FlakyTarget target(FlakyTarget::Loss::after_commit);
    CHECK(run(target, 30u).message.empty());
    CHECK(target.attempts == 1);
    CHECK(target.applied.size() == 1);
    CHECK(target.stored.position == "binlog.000001:40");
  }
  SUBCASE("the position table moved by another writer meanwhile: a data error, nothing applied") {
    FlakyTarget target(FlakyTarget::Loss::moved_by_another);
    const cdc::Error error = run(target, 30u);
    CHECK(error.code == cdc::Errc::corrupt_input);
    CHECK(error.message.find("does another cdc-apply write there?") != std::string::npos);
    CHECK(target.applied.empty());
  }
  SUBCASE("without --retry-for the lost connection is the error (exit 69)") {
    FlakyTarget target(FlakyTarget::Loss::before_commit);
    const cdc::Error error = run(target, std::nullopt);
    CHECK(error.code == cdc::Errc::unavailable);
    CHECK(target.reconnects == 0);
  }
}

TEST_CASE("apply grouping: a discarded transaction whose update joined a run of inserts leaves the run as it was") {
  const Run run = apply({kTable, insert(10, "a", 10), commit(20), update(10, "a", "b", 30), discard(25),
                         insert(11, "c", 40), commit(50)});
  REQUIRE(run.target.commits.size() == 1);
  CHECK(run.target.commits[0].sql == "INSERT INTO `s`.`t` (`id`,`v`) VALUES (10,'a'),(11,'c')");
  CHECK(run.target.commits[0].checks.empty());
}

// Found by tests/integration/apply_types.sh: type_differential.py's ENUM column given 'nonesuch'
// on a source whose sql_mode is '' holds the error value '' (index 0), which the target's
// strict session refused ("Data truncated for column 'en'", exit 65).
TEST_CASE("apply grouping: a row with an ENUM's error value stands alone under a relaxed sql_mode, MariaDB only") {
  const std::string table =
      R"j({"op":"table","v":1,"db":"s","table":"e","columns":[{"name":"id","type":"int(11)","nullable":false},)j"
      R"j({"name":"en","type":"enum('a','b')","nullable":true,"values":["a","b"]},)j"
      R"j({"name":"em","type":"enum('','x')","nullable":true,"values":["","x"]}],"key":["id"],"pos":null,"ts_ms":0})j";
  auto change = [](std::string_view op, int id, std::string_view before, std::string_view after, int offset) {
    return fmt::format(R"j({{"op":"{}","v":1,"db":"s","table":"e","key":{{"id":{}}},"before":{},"after":{},{},)j"
                       R"j("server_id":1,"thread":null,"ts_ms":0}})j",
                       op, id, before, after, pos(offset, 0));
  };
  const std::vector<std::string> lines = {
      table,
      change("c", 1, "null", R"j({"id":1,"en":"a","em":""})j", 10),  // '' a member of em: no relaxing
      change("c", 2, "null", R"j({"id":2,"en":"","em":"x"})j", 11),
      change("c", 3, "null", R"j({"id":3,"en":"b","em":"x"})j", 12),
      change("u", 3, R"j({"id":3,"en":"b","em":"x"})j", R"j({"id":3,"en":"","em":"x"})j", 13),
      change("c", 4, "null", R"j({"id":4,"en":0,"em":"x"})j", 14),  // the index, without labels
      commit(20)};
  const std::string relaxed = "SET SESSION sql_mode='NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION'";
  const std::string strict = "SET SESSION sql_mode='STRICT_ALL_TABLES,NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION'";
  const Run run = apply(lines);
  REQUIRE(run.target.commits.size() == 1);
  CHECK(run.target.commits[0].sql ==
        "INSERT INTO `s`.`e` (`id`,`en`,`em`) VALUES (1,'a','');" + relaxed +
            ";INSERT INTO `s`.`e` (`id`,`en`,`em`) VALUES (2,'','x');" + strict +
            ";INSERT INTO `s`.`e` (`id`,`en`,`em`) VALUES (3,'b','x');" + relaxed +
            ";UPDATE `s`.`e` SET `en`='' WHERE `id`<=>3;" + strict + ";" + relaxed +
            ";INSERT INTO `s`.`e` (`id`,`en`,`em`) VALUES (4,0,'x');" + strict);
  CHECK(run.target.commits[0].checks == "update 1");
  CHECK(run.stats.rows == 5);

  SUBCASE("PostgreSQL stores '' as the text it is") {
    cdc::apply::ApplyOptions options;
    options.dialect = cdc::apply::Dialect::postgres;
    const Run pg = apply({lines[0], lines[1], lines[2], commit(20)}, options);
    REQUIRE(pg.target.commits.size() == 1);
    CHECK(pg.target.commits[0].sql == R"j(INSERT INTO "s"."e" ("id","en","em") VALUES (1,'a',''),(2,'','x'))j");
  }
  SUBCASE("a transaction discarded after such a row leaves no SET behind") {
    const Run discarded = apply({lines[0], lines[1], commit(10), lines[2], discard(11)});
    REQUIRE(discarded.target.commits.size() == 1);
    CHECK(discarded.target.commits[0].sql == "INSERT INTO `s`.`e` (`id`,`en`,`em`) VALUES (1,'a','')");
  }
}

// Found by tests/integration/apply_types.sh: each NEXTVAL of type_differential.py's sequence
// is a "c" line of the whole new row, which a keyless target table kept as one more row.
TEST_CASE("apply grouping: a SEQUENCE's row replaces the target's one row, in the snapshot and the stream") {
  const std::string table =
      R"j({"op":"table","v":1,"db":"s","table":"sq","columns":[)j"
      R"j({"name":"next_not_cached_value","type":"bigint(21)","nullable":false},)j"
      R"j({"name":"minimum_value","type":"bigint(21)","nullable":false},)j"
      R"j({"name":"maximum_value","type":"bigint(21)","nullable":false},)j"
      R"j({"name":"start_value","type":"bigint(21)","nullable":false},)j"
      R"j({"name":"increment","type":"bigint(21)","nullable":false},)j"
      R"j({"name":"cache_size","type":"bigint(21) unsigned","nullable":false},)j"
      R"j({"name":"cycle_option","type":"tinyint(1) unsigned","nullable":false},)j"
      R"j({"name":"cycle_count","type":"bigint(21)","nullable":false}],"key":null,"pos":null,"ts_ms":0})j";
  auto state = [](std::string_view op, int next, int offset) {
    return fmt::format(R"j({{"op":"{}","v":1,"db":"s","table":"sq","key":null,"before":null,"after":)j"
                       R"j({{"next_not_cached_value":{},"minimum_value":1,"maximum_value":1000,"start_value":100,)j"
                       R"j("increment":7,"cache_size":0,"cycle_option":1,"cycle_count":0}}{}"ts_ms":0}})j",
                       op, next, op == "r" ? "," : "," + pos(offset, 0) + R"j(,"server_id":1,"thread":null,)j");
  };
  const Run run = apply({table, state("r", 107, 0), high("binlog.000001:5"), state("c", 114, 10), commit(20),
                         state("c", 121, 30), commit(40)});
  REQUIRE(run.target.commits.size() == 2);
  const std::string insert =
      "INSERT INTO `s`.`sq` (`next_not_cached_value`,`minimum_value`,`maximum_value`,`start_value`,`increment`,"
      "`cache_size`,`cycle_option`,`cycle_count`) VALUES ";
  CHECK(run.target.commits[0].sql == "DELETE FROM `s`.`sq`;" + insert + "(107,1,1000,100,7,0,1,0)");
  CHECK(run.target.commits[1].sql == "DELETE FROM `s`.`sq`;" + insert + "(114,1,1000,100,7,0,1,0);DELETE FROM `s`.`sq`;" +
                                         insert + "(121,1,1000,100,7,0,1,0)");

  SUBCASE("a table of those columns with a key is no sequence") {
    auto parsed = [](const std::string& text) {
      simdjson::dom::parser parser;
      simdjson::dom::object object;
      REQUIRE(parser.parse(text).get_object().get(object) == simdjson::SUCCESS);
      auto line = cdc::records::parse_table_line(object);
      REQUIRE(line.has_value());
      return *line;
    };
    std::string keyed = table;
    keyed.replace(keyed.find(R"j("key":null)j"), 10, R"j("key":["next_not_cached_value"])j");
    CHECK(cdc::apply::is_sequence(parsed(table)));
    CHECK_FALSE(cdc::apply::is_sequence(parsed(keyed)));
  }
}

namespace {

// A target whose server differs from the source: the statement that holds `failing` counts one
// row less than it should, and run again a row at a time, each row counts what `counts` says of
// the text it holds (as a server would: 1 for a row inserted, 2 for one updated, 1 or 0 for a
// delete). What cdc-apply then runs to find the row is recorded.
struct MissingRowTarget final : cdc::apply::Target {
  std::string failing;
  std::vector<std::pair<std::string, std::uint64_t>> counts;
  std::vector<std::string> ran;

  cdc::Result<void> commit(const cdc::apply::StatementBatch& batch, const AppliedState&) override {
    const auto& statements = batch.statements();
    for (std::size_t i = 0; i < statements.size(); ++i) {
      const cdc::apply::StatementInfo& info = statements[i];
      const std::string_view text = batch.sql().substr(info.start, info.end - info.start);
      if (!info.exact || text.find(failing) == std::string_view::npos) continue;
      return cdc::apply::unexpected_count(
          batch, i, info.expected - 1,
          [this](std::string_view sql, std::size_t count, std::vector<std::uint64_t>& affected) -> cdc::Result<void> {
            ran.emplace_back(sql);
            affected.assign(count, 0);
            for (const auto& [holds, counted] : counts)
              if (count == 1 && sql.find(holds) != std::string_view::npos) affected[0] = counted;
            return {};
          });
    }
    return {};
  }
  cdc::Result<void> create_table(const std::string&) override { return {}; }
  cdc::Result<void> run_ddl(const std::string&, std::string_view) override { return {}; }
};

std::string apply_to(MissingRowTarget& target, const std::vector<std::string>& lines) {
  cdc::UniqueFd fd(::memfd_create("lines", MFD_CLOEXEC));
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  REQUIRE(::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  REQUIRE(::lseek(fd.get(), 0, SEEK_SET) == 0);
  cdc::apply::Applier applier(target, {}, {});
  cdc::ndjson::Reader reader(fd.get(), "lines");
  auto stop = applier.read(reader);
  if (!stop) return stop.error().message;
  auto finished = applier.finish();
  return finished ? "" : finished.error().message;
}

}  // namespace

TEST_CASE("apply grouping: a multi-row statement that counts wrong is run again row by row to name the row") {
  MissingRowTarget target;
  SUBCASE("an update without its row in a run of changes") {
    target.failing = "(3,'z')";
    target.counts = {{"(1,'a')", 1}, {"(2,'c')", 2}, {"(3,'z')", 1}, {"(4,'d')", 1}};
    const std::string error = apply_to(target, {kTable, erase(9, "x", 5), commit(8), insert(1, "a", 10),
                                                update(2, "b", "c", 10), update(3, "y", "z", 10), insert(4, "d", 10),
                                                commit(20)});
    CHECK(error.find("the target has no row to update, or already a row to insert, for the insert or update of s.t "
                     "at binlog.000001:10#0 key {\"id\":3} (counted 1, 2 expected; one of the 4 rows of a statement "
                     "that counted 5, 6 expected)") != std::string::npos);
    // The failed transaction rolled back, then in a new one the statement before and each row
    // alone up to the one, all rolled back.
    REQUIRE(target.ran.size() == 7);
    CHECK(target.ran[0] == "ROLLBACK");
    CHECK(target.ran[1] == "BEGIN");
    CHECK(target.ran[2] == "DELETE FROM `s`.`t` WHERE `id` IN (9)");
    CHECK(target.ran[3].starts_with("INSERT INTO `s`.`t` (`id`,`v`) VALUES (1,'a') ON DUPLICATE KEY UPDATE"));
    CHECK(target.ran[5].starts_with("INSERT INTO `s`.`t` (`id`,`v`) VALUES (3,'z') ON DUPLICATE KEY UPDATE"));
    CHECK(target.ran[6] == "ROLLBACK");
  }
  SUBCASE("a delete of a row the target lacks, in a DELETE ... IN") {
    target.failing = "IN (1,2,3)";
    target.counts = {{"IN (1)", 1}, {"IN (2)", 0}, {"IN (3)", 1}};
    const std::string error =
        apply_to(target, {kTable, erase(1, "a", 10), erase(2, "b", 11), erase(3, "c", 12), commit(20)});
    CHECK(error.find("the target has no row for the delete of s.t at binlog.000001:11#0 key {\"id\":2} (counted 0, 1 "
                     "expected; one of the 3 rows of a statement that counted 2, 3 expected)") != std::string::npos);
    CHECK(target.ran.back() == "ROLLBACK");
  }
  SUBCASE("no row alone counts wrong (the rows only fail together): the first and last rows are named") {
    target.failing = "IN (1,2)";
    target.counts = {{"IN (1)", 1}, {"IN (2)", 1}};
    const std::string error = apply_to(target, {kTable, erase(1, "a", 10), erase(2, "b", 11), commit(20)});
    CHECK(error.find("the target has no row for the delete of s.t at binlog.000001:10#0 key {\"id\":1} (one of 2 "
                     "rows, the last at binlog.000001:11#0 key {\"id\":2})") != std::string::npos);
  }
  SUBCASE("a statement of one row is named as it is, nothing run again") {
    target.failing = "WHERE `id`<=>5";
    const std::string error = apply_to(target, {kTable, update(5, "a", "a", 10), commit(20)});
    CHECK(error.find("the target has no row for the update of s.t at binlog.000001:10#0 key {\"id\":5}") !=
          std::string::npos);
    CHECK(target.ran.empty());
  }
}
