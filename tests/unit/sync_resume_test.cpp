// cdc-sync's resume state machine (sync/resume.h) at every crash point, without a server: a
// crash leaves some of the state directory's files whole (each is renamed into place), and
// the next run must go on from exactly there, never redoing a step whose file is there.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sync/resume.h"
#include "unit_support.h"
#include "sync/run_sync.h"
#include "sync/runner.h"

using cdc::sync::Action;
using cdc::sync::DirFacts;
using cdc::sync::Mode;
using cdc::sync::RunProgress;

namespace {

// What a finished step leaves in the directory, and in the run's progress.
void apply(Action action, DirFacts& facts, RunProgress& progress) {
  switch (action) {
    case Action::pin_stream_start: facts.stream_state = true; break;
    case Action::plan: facts.plan = true; break;
    case Action::announce_snapshot_start: progress.snapshot_start_announced = true; break;
    case Action::read_chunks: progress.chunks_read = true; break;
    case Action::span: facts.span = true; break;
    case Action::read_deltas: facts.deltas = facts.deltas_state = facts.deltas_done = true; break;
    case Action::merge: facts.snapshot = true; break;
    case Action::emit_snapshot: facts.snapshot_emitted = true; [[fallthrough]];
    case Action::skip_emit: progress.emit_settled = true; break;
    case Action::announce_snapshot_end: progress.snapshot_end_announced = true; break;
    case Action::finish:
    case Action::stream: break;
  }
}

// The actions of one whole run from these facts, up to finish or the stream.
std::vector<std::string> run_from(Mode mode, bool with_output, DirFacts facts) {
  RunProgress progress;
  std::vector<std::string> actions;
  for (int guard = 0; guard < 40; ++guard) {
    const Action action = cdc::sync::next_action(mode, with_output, facts, progress);
    actions.emplace_back(cdc::sync::action_name(action));
    if (action == Action::finish || action == Action::stream) return actions;
    apply(action, facts, progress);
  }
  FAIL("the run does not end");
  return actions;
}

using unit_test::names;

const std::vector<std::string> kAfterMerge = names({"emit_snapshot", "announce_snapshot_end", "stream"});

}  // namespace

TEST_CASE("sync resume: initial, from an empty directory, runs every step once in order") {
  CHECK(run_from(Mode::initial, false, {}) ==
        names({"plan", "announce_snapshot_start", "read_chunks", "span", "read_deltas", "merge", "emit_snapshot",
               "announce_snapshot_end", "stream"}));
}

TEST_CASE("sync resume: initial, each crash point between the steps") {
  DirFacts facts;
  SUBCASE("before the plan was renamed into place: planned again") {
    CHECK(run_from(Mode::initial, false, facts).front() == "plan");
  }
  facts.plan = true;
  SUBCASE("plan.ndjson whole, chunks partly read: the chunks are read (the done ones skipped), no plan") {
    CHECK(run_from(Mode::initial, false, facts) ==
          names({"announce_snapshot_start", "read_chunks", "span", "read_deltas", "merge", "emit_snapshot",
                 "announce_snapshot_end", "stream"}));
  }
  facts.span = true;
  SUBCASE("span whole: the deltas next, no chunk read again") {
    CHECK(run_from(Mode::initial, false, facts) ==
          names({"announce_snapshot_start", "read_deltas", "merge", "emit_snapshot", "announce_snapshot_end",
                 "stream"}));
  }
  SUBCASE("deltas.ndjson begun, no state saved yet: read again from FROM") {
    facts.deltas = true;
    CHECK(run_from(Mode::initial, false, facts)[1] == "read_deltas");
    CHECK(cdc::sync::deltas_start_over(facts));
  }
  SUBCASE("deltas.ndjson with its state, not at UNTIL: resumed from deltas.state") {
    facts.deltas = facts.deltas_state = true;
    CHECK(run_from(Mode::initial, false, facts)[1] == "read_deltas");
    CHECK_FALSE(cdc::sync::deltas_start_over(facts));
  }
  SUBCASE("deltas.done without deltas.ndjson (removed by hand): read again from FROM") {
    facts.deltas_done = facts.deltas_state = true;
    CHECK(run_from(Mode::initial, false, facts)[1] == "read_deltas");
    CHECK(cdc::sync::deltas_start_over(facts));
  }
  facts.deltas = facts.deltas_state = facts.deltas_done = true;
  SUBCASE("deltas done, the merge cut short (snapshot.ndjson.tmp does not count): merged again") {
    CHECK(run_from(Mode::initial, false, facts) ==
          names({"announce_snapshot_start", "merge", "emit_snapshot", "announce_snapshot_end", "stream"}));
  }
  facts.snapshot = true;
  SUBCASE("snapshot.ndjson whole, not emitted: the whole snapshot goes out again") {
    auto actions = run_from(Mode::initial, false, facts);
    CHECK(actions == names({"announce_snapshot_start", "emit_snapshot", "announce_snapshot_end", "stream"}));
  }
  SUBCASE("the plan removed after the merge: not needed, not made again") {
    facts.plan = facts.span = false;
    CHECK(run_from(Mode::initial, false, facts).front() == "announce_snapshot_start");
  }
  facts.snapshot_emitted = true;
  SUBCASE("snapshot.emitted, the stream not started: the stream, the snapshot not written again") {
    CHECK(run_from(Mode::initial, false, facts) ==
          names({"announce_snapshot_start", "skip_emit", "announce_snapshot_end", "stream"}));
  }
  facts.stream_state = true;
  SUBCASE("stream.state saved: the stream resumes at once, no snapshot phase") {
    CHECK(run_from(Mode::initial, false, facts) == names({"stream"}));
  }
}

TEST_CASE("sync resume: initial with --output keeps the snapshot in DIR") {
  CHECK(run_from(Mode::initial, true, {}) ==
        names({"plan", "announce_snapshot_start", "read_chunks", "span", "read_deltas", "merge", "skip_emit",
               "announce_snapshot_end", "stream"}));
}

TEST_CASE("sync resume: initial_only writes the snapshot on every run and never streams") {
  CHECK(run_from(Mode::initial_only, false, {}).back() == "finish");
  DirFacts finished;
  finished.plan = finished.span = finished.deltas = finished.deltas_state = finished.deltas_done = true;
  finished.snapshot = finished.snapshot_emitted = true;
  CHECK(run_from(Mode::initial_only, false, finished) ==
        names({"announce_snapshot_start", "emit_snapshot", "announce_snapshot_end", "finish"}));
  CHECK(run_from(Mode::initial_only, true, finished) ==
        names({"announce_snapshot_start", "emit_snapshot", "announce_snapshot_end", "finish"}));
  // An initial run's stream state does not make initial_only stream.
  finished.stream_state = true;
  CHECK(run_from(Mode::initial_only, false, finished).back() == "finish");
}

TEST_CASE("sync resume: initial after initial_only reuses the snapshot and does not write it again") {
  DirFacts finished;
  finished.plan = finished.span = finished.deltas = finished.deltas_state = finished.deltas_done = true;
  finished.snapshot = finished.snapshot_emitted = true;
  CHECK(run_from(Mode::initial, false, finished) ==
        names({"announce_snapshot_start", "skip_emit", "announce_snapshot_end", "stream"}));
}

TEST_CASE("sync resume: no_data pins its start once, then only streams") {
  CHECK(run_from(Mode::no_data, false, {}) == names({"pin_stream_start", "stream"}));
  DirFacts pinned;
  pinned.stream_state = true;
  CHECK(run_from(Mode::no_data, true, pinned) == names({"stream"}));
}

TEST_CASE("sync resume: every crash point of a whole initial run converges without redoing a finished step") {
  // The files in the order a run renames them into place; a crash may come after any of them.
  const std::vector<void (*)(DirFacts&)> writes = {
      [](DirFacts& f) { f.plan = true; },         [](DirFacts& f) { f.span = true; },
      [](DirFacts& f) { f.deltas = true; },       [](DirFacts& f) { f.deltas_state = true; },
      [](DirFacts& f) { f.deltas_done = true; },  [](DirFacts& f) { f.snapshot = true; },
      [](DirFacts& f) { f.snapshot_emitted = true; }, [](DirFacts& f) { f.stream_state = true; },
  };
  for (const Mode mode : {Mode::initial, Mode::initial_only}) {
    for (const bool with_output : {false, true}) {
      DirFacts facts;
      for (std::size_t written = 0; written <= writes.size(); ++written) {
        CAPTURE(written);
        const auto actions = run_from(mode, with_output, facts);
        const auto has = [&](const char* name) { return std::find(actions.begin(), actions.end(), name) != actions.end(); };
        if (facts.plan || facts.snapshot) CHECK_FALSE(has("plan"));
        if (facts.span || facts.snapshot) CHECK_FALSE(has("read_chunks"));
        if (facts.snapshot) CHECK_FALSE(has("merge"));
        if (mode == Mode::initial && (facts.snapshot_emitted || with_output)) CHECK_FALSE(has("emit_snapshot"));
        CHECK(actions.back() == (mode == Mode::initial_only ? "finish" : "stream"));
        if (written < writes.size()) writes[written](facts);
      }
    }
  }
}

TEST_CASE("sync resume: the merge runs again after cdc-merge's check refused the deltas") {
  DirFacts facts;
  facts.plan = facts.span = true;
  RunProgress progress;
  progress.snapshot_start_announced = true;
  progress.deltas_rejected = 1;  // the files were removed: read again from FROM, then merged
  CHECK(cdc::sync::next_action(Mode::initial, false, facts, progress) == Action::read_deltas);
  CHECK(cdc::sync::deltas_start_over(facts));
}

TEST_CASE("sync settings: kept, written, or refused once the directory depends on them") {
  using cdc::sync::SettingsDecision;
  cdc::sync::Settings settings{Mode::initial, "s.items", "", 50, {"s.t=a,b"}, {}, {}};
  const std::string text = cdc::sync::settings_text(settings);
  // The shell version's exact text: a --dir it wrote resumes.
  CHECK(text == "family=snapshot\ntables=s.items\nexclude=\nchunk-size=50\nchunk-key=s.t=a,b");
  settings.mode = Mode::no_data;
  settings.chunk_size.reset();
  settings.chunk_keys.clear();
  CHECK(cdc::sync::settings_text(settings) == "family=stream\ntables=s.items\nexclude=\nchunk-size=");

  CHECK(cdc::sync::decide_settings(std::nullopt, false, text) == SettingsDecision::write);
  CHECK(cdc::sync::decide_settings(text, true, text) == SettingsDecision::keep);
  CHECK(cdc::sync::decide_settings(std::string("family=snapshot\ntables=s.*"), false, text) == SettingsDecision::write);
  CHECK(cdc::sync::decide_settings(std::string("family=snapshot\ntables=s.*"), true, text) ==
        SettingsDecision::refuse);
}

TEST_CASE("sync settings: the difference as was/now lines, hunk by hunk") {
  const auto lines = cdc::sync::settings_difference("family=snapshot\ntables=s.items\nexclude=\nchunk-size=50",
                                                    "family=snapshot\ntables=s.*\nexclude=\nchunk-size=50\nchunk-key=k");
  CHECK(lines == std::vector<std::string>{"  was: tables=s.items", "  now: tables=s.*", "  now: chunk-key=k"});
  CHECK(cdc::sync::settings_difference("a\nb", "a\nb").empty());
}

TEST_CASE("sync stream output: emptied only when a started stream left lines and saved no state") {
  CHECK(cdc::sync::must_empty_output(std::string("/o.ndjson"), "/o.ndjson", 10));
  CHECK_FALSE(cdc::sync::must_empty_output(std::string("/o.ndjson"), "/o.ndjson", 0));
  CHECK_FALSE(cdc::sync::must_empty_output(std::string("-"), "/o.ndjson", 10));  // it wrote to stdout
  CHECK_FALSE(cdc::sync::must_empty_output(std::nullopt, "/o.ndjson", 10));      // never started: not ours
  CHECK_FALSE(cdc::sync::must_empty_output(std::string("/o.ndjson"), "", 10));
}

TEST_CASE("sync reruns: 1 s doubling to 30 s, given up when the next pause would pass --retry-for") {
  cdc::sync::RerunSchedule schedule(60);
  CHECK(schedule.after_failure(0) == 1u);
  CHECK(schedule.after_failure(1) == 2u);
  CHECK(schedule.after_failure(3) == 4u);
  CHECK(schedule.after_failure(7) == 8u);
  CHECK(schedule.after_failure(15) == 16u);
  CHECK_FALSE(schedule.after_failure(31).has_value());  // 31 + 30 > 60
  cdc::sync::RerunSchedule short_one(2);
  CHECK(short_one.after_failure(0) == 1u);
  CHECK_FALSE(short_one.after_failure(1).has_value());  // 1 + 2 > 2
}

TEST_CASE("sync reruns: a run that moved the tool on opens a new --retry-for window") {
  cdc::sync::Console console;
  // --retry-for 2, runs that fail at once: pauses of 1 and 2 s, then 1 + 4 > 2, given up.
  cdc::sync::UnavailableReruns stuck(console, 2, "cdc-stream", [] { return std::string("0-1-5"); });
  for (int run = 1; run <= 2; ++run) {
    stuck.before_run();
    CHECK(stuck.after_unavailable().has_value());
  }
  stuck.before_run();
  CHECK_FALSE(stuck.after_unavailable().has_value());
  // The same runs, each of which moved the state on before it failed: never given up.
  int position = 0;
  cdc::sync::UnavailableReruns moving(console, 2, "cdc-stream", [&] { return std::to_string(position); });
  for (int run = 1; run <= 10; ++run) {
    moving.before_run();
    ++position;
    const auto pause = moving.after_unavailable();
    REQUIRE(pause.has_value());
    CHECK(*pause == 1u);  // a new outage starts with the shortest pause
  }
  // Without a progress reading, the window is the first failure's.
  cdc::sync::UnavailableReruns plain(console, 2, "cdc-plan");
  plain.before_run();
  CHECK(plain.after_unavailable() == 1u);
  plain.before_run();
  CHECK(plain.after_unavailable() == 2u);
  plain.before_run();
  CHECK_FALSE(plain.after_unavailable().has_value());
}

TEST_CASE("sync command line: cdc-sync's own checks, in the shell version's order and words") {
  using cdc::sync::CommandLine;
  using cdc::sync::Options;
  const auto message = [](CommandLine line, Options options) {
    auto checked = cdc::sync::apply_command_line(line, options);
    if (checked) return std::string();
    CHECK(checked.error().code == cdc::Errc::usage);
    return checked.error().message;
  };
  Options base;
  base.tables = "s.items";
  base.dir = "d";
  CommandLine line;
  CHECK(message(line, base).empty());
  CHECK(message(line, Options{}).starts_with("give --dir DIR"));
  line.mode = "everything";
  CHECK(message(line, base) == "--mode: 'everything' is not a mode: give initial, initial_only or no_data");
  line = {};
  line.jobs = "99999999999999999999";  // past 18 digits: not wrapped around
  CHECK(message(line, base) == "-j: '99999999999999999999' is not a number of processes (1 or more)");
  line.jobs = "09";  // nine, not octal
  line.chunk_size = "0";
  CHECK(message(line, base) == "--chunk-size: '0' is not a number of rows (1 or more)");
  line = {};
  line.mode = "no_data";
  line.jobs_given = true;
  CHECK(message(line, base) == "-j, --chunk-size and --chunk-key shape a snapshot, and --mode no_data takes none");
  line = {};
  line.mode = "no_data";
  line.snapshot_command_given = true;
  Options with_command = base;
  with_command.snapshot_command = "ssh w{index} cdc-snapshot {args}";
  CHECK(message(line, with_command) == "--snapshot-command reads a snapshot's chunks, and --mode no_data takes none");
  line = {};
  line.snapshot_command_given = true;
  with_command.snapshot_command = " \t";
  CHECK(message(line, with_command).starts_with("--snapshot-command needs a command"));
  with_command.snapshot_command = "{cdc-snapshot} {args}";
  CHECK(message(line, with_command).empty());
  line = {};
  line.mode = "initial_only";
  line.until_given = true;
  CHECK(message(line, base).starts_with("--until stops the stream"));
  line = {};
  line.retry_for = "-1";
  CHECK(message(line, base) == "--retry-for: '-1' is not a number of seconds");

  Options options = base;
  line = {};
  line.jobs = "09";
  line.chunk_size = "050";
  line.retry_for = "0";  // the tools never give up; cdc-sync's reruns keep their 60 s
  REQUIRE(cdc::sync::apply_command_line(line, options));
  CHECK(options.jobs == 9);
  CHECK(options.chunk_size == 50u);
  CHECK(options.rerun_for_seconds == 60);
  CHECK(options.retry_options == std::vector<std::string>{"--retry-for=0"});
  options = base;
  line.retry_for = "5";
  REQUIRE(cdc::sync::apply_command_line(line, options));
  CHECK(options.rerun_for_seconds == 5);
}
