// cdc-snapshot's watermarks against the live test server: the low and high lines bracket what a
// chunk holds, each chunk holds exactly the transactions up to its low (with one read view per
// chunk, and with views shared by consecutive chunks), and a shared view is given up whenever
// it could not be the one the next chunk needs.

#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "mysql/connection.h"
#include "ndjson/writer.h"
#include "snapshot/gtid_at_offset.h"
#include "snapshot/run_snapshot.h"
#include "snapshot_test_util.h"
#include "test_server.h"

using namespace snapshot_test;

TEST_CASE("snapshot watermarks: low before high, rows streamed, a commit during the SELECT stays out") {
  auto connection = root();
  run(connection, "DROP DATABASE IF EXISTS cdc_snapshot_wm");
  run(connection, "CREATE DATABASE cdc_snapshot_wm");
  run(connection, "CREATE TABLE cdc_snapshot_wm.t (id INT PRIMARY KEY, pad CHAR(60))");
  run(connection, "INSERT INTO cdc_snapshot_wm.t SELECT seq, REPEAT('p', 60) FROM mysql.seq_1_to_20000");
  auto other = root();
  Collected out;
  bool inserted = false;
  cdc::snapshot::ChunkReader reader(cdc::test::cdc_account());
  // The first flush happens while rows are still being fetched: commit a row meanwhile.
  auto result = read(connection, parse(chunk_line(connection, "cdc_snapshot_wm", "t")), out, &reader, [&] {
    if (inserted) return;
    run(other, "INSERT INTO cdc_snapshot_wm.t VALUES (50000, 'late')");
    inserted = true;
  });
  REQUIRE_MESSAGE(result.has_value(), result.error().message);
  CHECK(result->rows == 20000);  // the late row is not in the read view
  CHECK(out.flushes > 10);       // written as they arrived, not held
  CHECK(out.max_capacity < (std::size_t{1} << 20));
  CHECK(out.text.find("\"id\":50000") == std::string::npos);
  // The late commit is after low and covered by high.
  CHECK(result->low.file == result->high.file);
  CHECK(result->low.offset < result->high.offset);
  CHECK(result->low.position != result->high.position);
  const auto lines = lines_of(out.text);
  REQUIRE(lines.size() == 20003);
  CHECK(lines[1].starts_with(R"({"op":"table","v":1,"db":"cdc_snapshot_wm","table":"t","columns":[)"));
  CHECK(lines.front().starts_with("{\"op\":\"low\",\"v\":1,\"db\":\"cdc_snapshot_wm\",\"table\":\"t\",\"index\":0,"
                                  "\"count\":1,\"position\":\"" + result->low.position + "\""));
  CHECK(lines.back().find("\"rows\":20000") != std::string::npos);
  CHECK(raw_member(lines.back(), "position") == "\"" + result->high.position + "\"");
}

namespace {

// Two writers committing single-row inserts into `table` (id INT PRIMARY KEY), each pausing
// `pause` after its commit, and noting each insert's GTID sequence number (domain 0).
class GtidWriters {
 public:
  GtidWriters(std::string table, std::chrono::microseconds pause)
      : table_(std::move(table)), pause_(pause), first_(&GtidWriters::write, this, 1), second_(&GtidWriters::write, this, 2) {}
  GtidWriters(const GtidWriters&) = delete;
  GtidWriters& operator=(const GtidWriters&) = delete;
  ~GtidWriters() { stop(); }

  void stop() {
    stop_ = true;
    if (first_.joinable()) first_.join();
    if (second_.joinable()) second_.join();
  }
  // After stop().
  [[nodiscard]] const std::map<int, std::uint64_t>& seq_of() const { return seq_of_; }
  [[nodiscard]] const std::vector<std::string>& errors() const { return errors_; }

  // "" when every insert is in the chunk read at `low_seq` exactly when its GTID is in the low
  // (rows are the chunk's ids); else the first that is not.
  [[nodiscard]] std::string first_wrong(std::uint64_t low_seq, const std::set<int>& rows) const {
    for (const auto& [id, seq] : seq_of_) {
      const bool want = seq <= low_seq;
      if (want == rows.contains(id)) continue;
      return fmt::format("row {} (inserted by GTID 0-x-{}) {} the chunk read at low 0-x-{}", id, seq,
                         want ? "is missing from" : "is in, though committed after,", low_seq);
    }
    return {};
  }

 private:
  void write(int first) {
    auto writer = cdc::mysql::Connection::open(cdc::test::root_account());
    if (!writer) {
      const std::lock_guard lock(mutex_);
      errors_.push_back(writer.error().message);
      return;
    }
    for (int id = first; !stop_.load(); id += 2) {
      auto inserted = writer->query(fmt::format("INSERT INTO {} VALUES ({})", table_, id));
      auto gtid = inserted ? writer->query("SELECT @@last_gtid") : inserted;
      if (!gtid || gtid->rows.empty() || !gtid->rows[0][0]) {
        const std::lock_guard lock(mutex_);
        errors_.push_back(gtid ? "no @@last_gtid" : gtid.error().message);
        return;
      }
      {
        const std::lock_guard lock(mutex_);
        seq_of_[id] = domain0_seq(*gtid->rows[0][0]);
      }
      // A commit every few hundred microseconds, however fast the reader: every chunk reads
      // the whole table, which must grow with the test's time and not with how much faster
      // the writers are than the reader (unthrottled, a sanitized build's reader fell behind
      // further with every chunk and took minutes).
      std::this_thread::sleep_for(pause_);
    }
  }

  std::string table_;
  std::chrono::microseconds pause_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::map<int, std::uint64_t> seq_of_;
  std::vector<std::string> errors_;
  std::thread first_;
  std::thread second_;
};

}  // namespace

TEST_CASE("snapshot low watermarks under concurrent commits: each chunk holds exactly the transactions up to its low") {
  // Two writers commit single-row inserts as fast as they can, each noting its insert's GTID;
  // one process reads chunk after chunk, as cdc-snapshot does, its low watermarks' GTID
  // positions found by GtidAtOffset (asked once, then advanced over the replication protocol).
  // In every chunk a row must be there exactly when its insert's GTID is in the chunk's low:
  // a low one transaction late or early loses or doubles a row in the merge.
  auto connection = root();
  run(connection, "DROP DATABASE IF EXISTS cdc_snapshot_lw");
  run(connection, "CREATE DATABASE cdc_snapshot_lw");
  run(connection, "CREATE TABLE cdc_snapshot_lw.t (id INT PRIMARY KEY)");
  const cdc::records::Chunk chunk = parse(chunk_line(connection, "cdc_snapshot_lw", "t"));
  // One read view per chunk, or views shared by the chunks read within 60 ms of each other
  // (cdc-snapshot --share-view): either way, each chunk is exactly its low.
  std::chrono::milliseconds share_view{0};
  SUBCASE("a read view per chunk") {}
  SUBCASE("read views shared for 60 ms") { share_view = std::chrono::milliseconds(60); }
  CAPTURE(share_view.count());
  GtidWriters writers("cdc_snapshot_lw.t", std::chrono::microseconds(500));
  cdc::snapshot::ChunkReader reader(cdc::test::cdc_account(), share_view);
  struct Read {
    std::uint64_t low_seq = 0;
    std::set<int> ids;
  };
  std::vector<Read> reads;
  int advanced = 0;
  int killed = 0;
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < 120; ++i) {
    // Now and then the kept replication connection is dropped between two chunks (as
    // net_write_timeout or a proxy would): the next low must not suffer.
    if ((i == 39 || i == 79) && reader.gtids().stream_thread_id() != 0) {
      run(connection, fmt::format("KILL {}", reader.gtids().stream_thread_id()));
      ++killed;
    }
    Collected out;
    auto result = read(connection, chunk, out, &reader);
    if (!result) {
      writers.stop();
      FAIL(result.error().message);
    }
    advanced += reader.gtids().last_source() == cdc::snapshot::GtidAtOffset::Source::advanced ? 1 : 0;
    Read got;
    got.low_seq = domain0_seq(result->low.position);
    for (const std::string& line : lines_of(out.text))
      if (op_of(line) == "\"r\"") got.ids.insert(std::stoi(raw_member(raw_member(line, "key"), "id")));
    reads.push_back(std::move(got));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  writers.stop();
  REQUIRE_MESSAGE(writers.errors().empty(), writers.errors().front());
  std::size_t same_low = 0;  // reads whose low is the one before's: a shared view
  for (std::size_t i = 1; i < reads.size(); ++i) if (reads[i].low_seq == reads[i - 1].low_seq) ++same_low;
  if (share_view.count() == 0) {
    CHECK(reader.views_opened() == 120);
    CHECK_MESSAGE(advanced > 50, "most lows advanced from the last one, not asked of BINLOG_GTID_POS");
  } else {
    // Shared while the writers committed, and renewed once 60 ms old: each view but the last
    // lived 60 ms or more (about 120 * 7 ms / 60 ms views here; more under the sanitizers,
    // whose slower reader may take 60 ms for a chunk), and every chunk read in the view before
    // it has its low.
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    CAPTURE(elapsed.count());
    CHECK(reader.views_opened() > 3);
    CHECK(reader.views_opened() <= static_cast<std::uint64_t>(elapsed / share_view) + 1);
    CHECK(same_low + reader.views_opened() >= 120);
    CHECK_MESSAGE(advanced * 2 > static_cast<int>(reader.views_opened()), "lows advanced, not asked again");
  }
  // One replication connection kept from chunk to chunk, opened again only after each KILL.
  CHECK(killed >= 2);
  CHECK(reader.gtids().streams_opened() == static_cast<std::uint64_t>(killed) + 1);
  std::string first_wrong;
  for (const Read& got : reads)
    if (first_wrong.empty()) first_wrong = writers.first_wrong(got.low_seq, got.ids);
  CHECK_MESSAGE(first_wrong.empty(), first_wrong);
  CHECK(writers.seq_of().size() > 200);  // the writers were busy while the chunks were read
}

TEST_CASE("snapshot's first low watermark: advanced from a sampled point while commits go on, exact") {
  // Each process's first low comes from the binlog's end and @@gtid_binlog_pos read between
  // two SHOW MASTER STATUS, when no commit came in between (else from BINLOG_GTID_POS), and is
  // advanced from there over the replication protocol: a sampled point one transaction off
  // would lose or double a row. Fresh readers, as many processes would, while two writers
  // commit, each more slowly than in the test above so that most samples find a still moment.
  auto connection = root();
  run(connection, "DROP DATABASE IF EXISTS cdc_snapshot_first");
  run(connection, "CREATE DATABASE cdc_snapshot_first");
  run(connection, "CREATE TABLE cdc_snapshot_first.t (id INT PRIMARY KEY)");
  const cdc::records::Chunk chunk = parse(chunk_line(connection, "cdc_snapshot_first", "t"));
  GtidWriters writers("cdc_snapshot_first.t", std::chrono::milliseconds(3));
  int sampled = 0;
  std::vector<std::pair<std::uint64_t, std::set<int>>> reads;
  for (int i = 0; i < 40; ++i) {
    cdc::snapshot::ChunkReader reader(cdc::test::cdc_account(), std::chrono::milliseconds{0});
    Collected out;
    auto result = read(connection, chunk, out, &reader);
    if (!result) {
      writers.stop();
      FAIL(result.error().message);
    }
    sampled += static_cast<int>(reader.gtids().points_sampled());
    if (reader.gtids().points_sampled() > 0)
      CHECK(reader.gtids().last_source() != cdc::snapshot::GtidAtOffset::Source::asked);
    std::set<int> ids;
    for (const std::string& line : lines_of(out.text))
      if (op_of(line) == "\"r\"") ids.insert(std::stoi(raw_member(raw_member(line, "key"), "id")));
    reads.emplace_back(domain0_seq(result->low.position), std::move(ids));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  writers.stop();
  REQUIRE_MESSAGE(writers.errors().empty(), writers.errors().front());
  std::string first_wrong;
  for (const auto& [low_seq, ids] : reads)
    if (first_wrong.empty()) first_wrong = writers.first_wrong(low_seq, ids);
  CHECK_MESSAGE(first_wrong.empty(), first_wrong);
  CHECK_MESSAGE(sampled > 10, "most first lows came from a sampled point, not BINLOG_GTID_POS");
  CHECK(writers.seq_of().size() > 50);
}

namespace {

std::size_t rows_in(const Collected& out) {
  std::size_t rows = 0;
  for (const std::string& line : lines_of(out.text)) if (op_of(line) == "\"r\"") ++rows;
  return rows;
}

}  // namespace

TEST_CASE("snapshot shared read views: reused for the next chunk of a table in the same open transaction, else new") {
  auto connection = root();
  run(connection, "DROP DATABASE IF EXISTS cdc_snapshot_sv");
  run(connection, "CREATE DATABASE cdc_snapshot_sv");
  run(connection, "CREATE TABLE cdc_snapshot_sv.t (id INT PRIMARY KEY)");
  run(connection, "CREATE TABLE cdc_snapshot_sv.u (id INT PRIMARY KEY)");
  run(connection, "INSERT INTO cdc_snapshot_sv.t SELECT seq FROM mysql.seq_1_to_100");
  run(connection, "INSERT INTO cdc_snapshot_sv.u SELECT seq FROM mysql.seq_1_to_10");
  auto other = root();
  const auto below_50 = parse(chunk_line(connection, "cdc_snapshot_sv", "t", "null", "[50]", 0, 2));
  const auto from_50 = parse(chunk_line(connection, "cdc_snapshot_sv", "t", "[50]", "null", 1, 2));
  const auto whole_u = parse(chunk_line(connection, "cdc_snapshot_sv", "u"));
  cdc::snapshot::ChunkReader reader(cdc::test::cdc_account(), std::chrono::minutes(1));

  Collected first;
  auto low_half = read(connection, below_50, first, &reader);
  REQUIRE_MESSAGE(low_half.has_value(), low_half.error().message);
  CHECK(rows_in(first) == 49);
  CHECK(reader.views_opened() == 1);
  CHECK(reader.view_open());
  CHECK(connection.in_transaction());

  // The next chunk of the table: the same view, so a row committed meanwhile is not in it,
  // and its low is the first chunk's; its high is its own, after that commit.
  run(other, "INSERT INTO cdc_snapshot_sv.t VALUES (1000)");
  Collected second;
  auto high_half = read(connection, from_50, second, &reader);
  REQUIRE_MESSAGE(high_half.has_value(), high_half.error().message);
  CHECK(reader.views_opened() == 1);
  CHECK(rows_in(second) == 51);
  CHECK(high_half->low.position == low_half->low.position);
  CHECK(high_half->low.offset == low_half->low.offset);
  CHECK(high_half->high.position != high_half->low.position);
  CHECK(high_half->high.offset > low_half->high.offset);

  // Another table: a new view (START TRANSACTION commits the old one), which sees the row.
  Collected third;
  REQUIRE(read(connection, whole_u, third, &reader).has_value());
  CHECK(reader.views_opened() == 2);
  Collected fourth;
  auto again = read(connection, from_50, fourth, &reader);
  REQUIRE(again.has_value());
  CHECK(reader.views_opened() == 3);
  CHECK(rows_in(fourth) == 52);
  CHECK(again->low.position != high_half->low.position);

  // The session's transaction ended behind the reader's back (a COMMIT, or a DDL statement's
  // implicit one, on the same connection): a new view, not a statement outside any.
  run(connection, "COMMIT");
  CHECK_FALSE(connection.in_transaction());
  run(other, "INSERT INTO cdc_snapshot_sv.t VALUES (1001)");
  Collected fifth;
  REQUIRE(read(connection, from_50, fifth, &reader).has_value());
  CHECK(reader.views_opened() == 4);
  CHECK(rows_in(fifth) == 53);

  // On another connection: a new view there.
  auto second_connection = root();
  Collected sixth;
  REQUIRE(read(second_connection, from_50, sixth, &reader).has_value());
  CHECK(reader.views_opened() == 5);

  // end_view commits; nothing is kept.
  reader.end_view(second_connection);
  CHECK_FALSE(reader.view_open());
  CHECK_FALSE(second_connection.in_transaction());

  // Too old to share: a view younger than the limit only.
  cdc::snapshot::ChunkReader brief(cdc::test::cdc_account(), std::chrono::milliseconds(20));
  Collected seventh;
  REQUIRE(read(connection, below_50, seventh, &brief).has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  REQUIRE(read(connection, from_50, seventh, &brief).has_value());
  CHECK(brief.views_opened() == 2);
  // A view already past its age when its chunk ends is committed then, not kept.
  CHECK_FALSE((brief.view_open() && !connection.in_transaction()));
  run(connection, "DROP DATABASE cdc_snapshot_sv");
}

TEST_CASE("snapshot waiting for its next chunk line holds no read view: an ALTER TABLE meanwhile goes through") {
  // A pipe feeds cdc-snapshot's run() one chunk line, then nothing for a while (cdc-plan
  // walking a big table, a slow producer). A view kept open then would hold the table's
  // metadata lock, and an ALTER TABLE (with every statement queued behind it) would wait.
  auto connection = root();
  run(connection, "DROP DATABASE IF EXISTS cdc_snapshot_wait");
  run(connection, "CREATE DATABASE cdc_snapshot_wait");
  run(connection, "CREATE TABLE cdc_snapshot_wait.t (id INT PRIMARY KEY)");
  run(connection, "INSERT INTO cdc_snapshot_wait.t SELECT seq FROM mysql.seq_1_to_100");
  const std::string first = chunk_line(connection, "cdc_snapshot_wait", "t", "null", "[50]", 0, 2) + "\n";

  int input[2];
  REQUIRE(::pipe(input) == 0);
  const std::string out_path = "/tmp/cdc_snapshot_wait." + std::to_string(::getpid());
  const int out_fd = ::open(out_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  REQUIRE(out_fd >= 0);
  REQUIRE(err_fd >= 0);
  cdc::snapshot::Options options;
  options.connection = cdc::test::cdc_account();
  options.share_view = std::chrono::minutes(1);
  std::optional<cdc::Result<cdc::snapshot::Summary>> summary;
  std::thread snapshot([&] { summary = cdc::snapshot::run(options, input[0], out_fd, err_fd); });
  REQUIRE(::write(input[1], first.data(), first.size()) == static_cast<ssize_t>(first.size()));

  const auto output = [&] {
    std::ifstream in(out_path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (output().find("\"op\":\"high\"") == std::string::npos && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const bool first_done = output().find("\"op\":\"high\"") != std::string::npos;
  CHECK(first_done);
  // What the server says: no transaction of the cdc account is open, and the ALTER does not
  // wait for a metadata lock (it would fail after 5 s).
  const auto open_transactions = run(connection,
                                     "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id IN "
                                     "(SELECT ID FROM information_schema.PROCESSLIST WHERE USER = '" +
                                         cdc::test::cdc_account().user.value_or("") + "')");
  CHECK(*open_transactions.rows.at(0).at(0) == "0");
  run(connection, "SET SESSION lock_wait_timeout = 5");
  const auto altered = connection.query("ALTER TABLE cdc_snapshot_wait.t ADD COLUMN extra INT");
  CHECK_MESSAGE(altered.has_value(), (altered ? std::string() : altered.error().message));

  // The next chunk, planned after the ALTER: read in a new view, with the new column.
  const std::string second = chunk_line(connection, "cdc_snapshot_wait", "t", "[50]", "null", 1, 2) + "\n";
  REQUIRE(::write(input[1], second.data(), second.size()) == static_cast<ssize_t>(second.size()));
  ::close(input[1]);
  snapshot.join();
  ::close(input[0]);
  ::close(out_fd);
  ::close(err_fd);
  REQUIRE(summary.has_value());
  REQUIRE_MESSAGE(summary->has_value(), summary->error().message);
  CHECK((*summary)->chunks_read == 2);
  CHECK((*summary)->rows == 100);
  const auto lines = lines_of(output());
  REQUIRE(lines.size() == 2 + 49 + 1 + 2 + 51 + 1);
  CHECK(lines[53].find("\"name\":\"extra\"") != std::string::npos);
  CHECK(raw_member(lines[51], "rows") == "49");
  CHECK(raw_member(lines.back(), "rows") == "51");
  std::remove(out_path.c_str());
  run(connection, "DROP DATABASE cdc_snapshot_wait");
}
