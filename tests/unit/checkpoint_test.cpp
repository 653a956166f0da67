// The live stream's checkpoint (stream/checkpoint): the output's committed length, the state
// file and the resume position move together; a roll back returns all three to the last
// commit. These are the promises a lost connection and a restart rely on.

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "stream/checkpoint.h"
#include "unit_support.h"

namespace {

using cdc::gtid::FilePosition;
using cdc::gtid::Position;
using cdc::stream::Checkpoint;
using cdc::stream::ChangeWriter;

using unit_test::read_text;
using unit_test::TempDir;

Position pos(const char* text) { return *Position::parse(text); }

std::vector<std::string> notices;
void note(std::string_view text) { notices.emplace_back(text); }

}  // namespace

TEST_CASE("checkpoint: a roll back cuts the output to the last commit and resumes from it") {
  TempDir dir;
  const std::string state = dir.path + "/s.json";
  const std::string output = dir.path + "/out.ndjson";
  auto opened = Checkpoint::open(state, output, note);
  REQUIRE(opened.has_value());
  Checkpoint checkpoint = std::move(*opened);
  CHECK_FALSE(checkpoint.loaded().has_value());
  ChangeWriter writer(checkpoint.output_fd(), checkpoint.output_name());
  checkpoint.start_at(pos("0-1-10"), FilePosition{"binlog.000001", 400}, "0-1-10");
  REQUIRE(checkpoint.commit(writer, checkpoint.position(), checkpoint.file_position(), "0-1-10").has_value());
  CHECK(read_text(state).find(R"("output_bytes":0)") != std::string::npos);

  writer.write_span_start("0-1-10");
  REQUIRE(checkpoint.commit(writer, pos("0-1-11"), FilePosition{"binlog.000001", 900}, "0-1-11",
                            Checkpoint::Span::opened)
              .has_value());
  const std::string committed = read_text(output);
  CHECK(committed == "{\"op\":\"span_start\",\"v\":1,\"position\":\"0-1-10\"}\n");
  CHECK(checkpoint.committed_bytes() == committed.size());

  // Whole transactions read after the commit (group commit), some of them flushed already,
  // then the connection is lost: all of it goes, and the resume point is the commit's.
  writer.write_span_start("not committed 1");
  REQUIRE(writer.flush().has_value());
  writer.write_span_start("not committed 2");
  CHECK(read_text(output).size() > committed.size());
  REQUIRE(checkpoint.roll_back(writer).has_value());
  CHECK(read_text(output) == committed);
  CHECK(writer.bytes_flushed() == committed.size());
  CHECK(checkpoint.position().to_string() == "0-1-11");
  CHECK(checkpoint.file_position() == FilePosition{"binlog.000001", 900});
  CHECK(checkpoint.gtid() == "0-1-11");

  // What is written after the roll back lands right after the committed bytes.
  writer.write_span_start("0-1-11 again");
  REQUIRE(checkpoint.commit(writer, pos("0-1-12"), FilePosition{"binlog.000001", 1300}, "0-1-12").has_value());
  CHECK(read_text(output) == committed + "{\"op\":\"span_start\",\"v\":1,\"position\":\"0-1-11 again\"}\n");
  CHECK(read_text(state).find(R"("position":"0-1-12")") != std::string::npos);
  CHECK(read_text(state).find(R"("span":"open")") != std::string::npos);
}

TEST_CASE("checkpoint: a restart cuts the output back to what the state covers, also after a first run's torn line") {
  TempDir dir;
  const std::string state = dir.path + "/s.json";
  const std::string output = dir.path + "/out.ndjson";
  {
    auto opened = Checkpoint::open(state, output, note);
    REQUIRE(opened.has_value());
    ChangeWriter writer(opened->output_fd(), opened->output_name());
    opened->start_at(pos("0-1-5"), FilePosition{}, "");
    REQUIRE(opened->commit(writer, opened->position(), opened->file_position(), "").has_value());
  }
  // The first run dies in its first transaction, with half a line out.
  const std::string torn = R"({"op":"c","v":1,"db":"t","tab)";
  std::ofstream(output, std::ios::app) << torn;
  notices.clear();
  auto reopened = Checkpoint::open(state, output, note);
  REQUIRE(reopened.has_value());
  REQUIRE(reopened->loaded().has_value());
  CHECK(reopened->loaded()->position == "0-1-5");
  CHECK(read_text(output).empty());
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].find("cutting " + std::to_string(torn.size()) + " bytes") != std::string::npos);
}

TEST_CASE("checkpoint: a span closed by a commit stays closed only while nothing follows it") {
  TempDir dir;
  const std::string state = dir.path + "/s.json";
  const std::string output = dir.path + "/out.ndjson";
  auto opened = Checkpoint::open(state, output, note);
  REQUIRE(opened.has_value());
  Checkpoint checkpoint = std::move(*opened);
  ChangeWriter writer(checkpoint.output_fd(), checkpoint.output_name());
  writer.write_span_start("0-1-1");
  REQUIRE(checkpoint.commit(writer, pos("0-1-1"), FilePosition{}, "", Checkpoint::Span::opened).has_value());
  CHECK(checkpoint.span_open());
  writer.write_span_end("0-1-2", FilePosition{"binlog.000001", 700}, "0-1-2");
  REQUIRE(checkpoint.commit(writer, pos("0-1-2"), FilePosition{"binlog.000001", 700}, "0-1-2",
                            Checkpoint::Span::closed)
              .has_value());
  CHECK_FALSE(checkpoint.span_open());
  CHECK(checkpoint.span_closed());
  REQUIRE(checkpoint.commit(writer, pos("0-1-2"), FilePosition{"binlog.000001", 700}, "0-1-2").has_value());
  CHECK(checkpoint.span_closed());
  CHECK(read_text(state).find(R"("span":"closed")") != std::string::npos);
  writer.write_span_start("0-1-3");  // any line after the span_end
  REQUIRE(checkpoint.commit(writer, pos("0-1-3"), FilePosition{"binlog.000001", 900}, "0-1-3").has_value());
  CHECK_FALSE(checkpoint.span_closed());
  CHECK(read_text(state).find("span") == std::string::npos);
  CHECK(read_text(output) ==
        "{\"op\":\"span_start\",\"v\":1,\"position\":\"0-1-1\"}\n"
        "{\"op\":\"span_end\",\"v\":1,\"position\":\"0-1-2\",\"pos\":{\"file\":\"binlog.000001\",\"offset\":700},"
        "\"until\":\"0-1-2\"}\n"
        "{\"op\":\"span_start\",\"v\":1,\"position\":\"0-1-3\"}\n");
}

TEST_CASE("checkpoint: lines with no state are refused, a state without --output too") {
  TempDir dir;
  const std::string state = dir.path + "/s.json";
  const std::string output = dir.path + "/out.ndjson";
  std::ofstream(output) << "{\"op\":\"commit\"}\n";
  auto refused = Checkpoint::open(state, output, note);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == cdc::Errc::usage);
  CHECK(refused.error().message.find("does not exist yet") != std::string::npos);
}

namespace {

// A state file and the output it covers, as a run (or a bug) left them.
void leave_pair(const std::string& state, const std::string& output, const std::string& lines,
                const std::string& position, const std::string& gtid) {
  std::ofstream(output) << lines;
  std::ofstream(state) << R"({"v":1,"position":")" << position << R"(","file":"binlog.000001","offset":100,"gtid":")"
                       << gtid << R"(","output_bytes":)" << lines.size() << "}\n";
}

const std::string kCommit9 =
    R"({"op":"commit","v":1,"gtid":"0-1-9","pos":{"file":"binlog.000002","offset":4321},"position":"0-1-9","rows":1,"xid":7,"ts_ms":1000})"
    "\n";
const std::string kRow9 = R"({"op":"c","v":1,"db":"d","table":"t","after":{"id":9}})"
                          "\n";

}  // namespace

TEST_CASE("checkpoint: a state whose position is past its output's last transaction resumes after that transaction") {
  // Issue 29: the position of transactions cut away after a lost connection was saved with
  // the cut-back length; the rerun skipped them. The state's own last GTID is behind its
  // position, which no save writes.
  TempDir dir;
  const std::string state = dir.path + "/s.json";
  const std::string output = dir.path + "/out.ndjson";
  leave_pair(state, output, kRow9 + kCommit9, "0-1-58", "0-1-9");
  notices.clear();
  auto opened = Checkpoint::open(state, output, note);
  REQUIRE(opened.has_value());
  REQUIRE(opened->loaded().has_value());
  CHECK(opened->loaded()->position == "0-1-9");
  CHECK(opened->loaded()->file == "binlog.000002");
  CHECK(opened->loaded()->offset == 4321);
  CHECK(opened->loaded()->gtid == "0-1-9");
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].find("position 0-1-58 is past its last transaction 0-1-9") != std::string::npos);
  CHECK(notices[0].find("resuming after the last transaction") != std::string::npos);
  CHECK(read_text(output) == kRow9 + kCommit9);
}

TEST_CASE("checkpoint: a state behind its output's last transaction is trusted (cdc-sync's catch-up starts so)") {
  TempDir dir;
  const std::string state = dir.path + "/s.json";
  const std::string output = dir.path + "/out.ndjson";
  leave_pair(state, output, kRow9 + kCommit9 + "{\"op\":\"span_end\",\"v\":1,\"position\":\"0-1-9\"}\n", "0-1-5",
             "");
  notices.clear();
  auto opened = Checkpoint::open(state, output, note);
  REQUIRE(opened.has_value());
  CHECK(opened->loaded()->position == "0-1-5");
  CHECK(notices.empty());
}

TEST_CASE("checkpoint: a position ahead of the output by transactions of other tables is trusted") {
  TempDir dir;
  const std::string state = dir.path + "/s.json";
  const std::string output = dir.path + "/out.ndjson";
  leave_pair(state, output, kRow9 + kCommit9, "0-1-20,1-1-3", "0-1-20");
  notices.clear();
  auto opened = Checkpoint::open(state, output, note);
  REQUIRE(opened.has_value());
  CHECK(opened->loaded()->position == "0-1-20,1-1-3");
  CHECK(notices.empty());
}

TEST_CASE("checkpoint: a state past its own last transaction with no commit line of it to go by is kept, with a notice") {
  // gtid_strict_mode=OFF: a domain may move back, and a new file's GTID list then leaves a
  // healthy state so; a refusal would stop a correct stream.
  TempDir dir;
  const std::string state = dir.path + "/s.json";
  const std::string output = dir.path + "/out.ndjson";
  leave_pair(state, output, "{\"op\":\"span_start\",\"v\":1,\"position\":\"0-1-1\"}\n", "0-1-58", "0-1-9");
  notices.clear();
  {
    auto kept = Checkpoint::open(state, output, note);  // holds the state's lock while in scope
    REQUIRE(kept.has_value());
    CHECK(kept->loaded()->position == "0-1-58");
    REQUIRE(notices.size() == 1);
    CHECK(notices[0].find("0-1-58") != std::string::npos);
    CHECK(notices[0].find("not found") != std::string::npos);
  }

  // The output's last transaction is not the state's own: nothing says where to resume.
  leave_pair(state, output, kRow9 + kCommit9, "0-1-58", "0-1-12");
  notices.clear();
  auto other = Checkpoint::open(state, output, note);
  REQUIRE(other.has_value());
  CHECK(other->loaded()->position == "0-1-58");
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].find("of 0-1-9 at 0-1-9") != std::string::npos);
}

TEST_CASE("checkpoint: output_bytes that end inside a line are refused") {
  // A length that ends inside a line: the pair does not belong together.
  TempDir dir;
  const std::string state = dir.path + "/s.json";
  const std::string output = dir.path + "/out.ndjson";
  leave_pair(state, output, kRow9 + kCommit9, "0-1-9", "0-1-9");
  std::ofstream(state) << R"({"v":1,"position":"0-1-9","gtid":"0-1-9","output_bytes":)" << kRow9.size() + 10 << "}\n";
  auto torn = Checkpoint::open(state, output, note);
  REQUIRE_FALSE(torn.has_value());
  CHECK(torn.error().code == cdc::Errc::corrupt_input);
  CHECK(torn.error().message.find("inside a line") != std::string::npos);
}
