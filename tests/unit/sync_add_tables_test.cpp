// Adding tables to a running sync (sync/add_resume.h), without a server: which rerun is an
// addition, which tables are new, where the stream stands against the new tables' high
// watermark, and the switch-over's next step at every crash point, in both orders.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sync/add_resume.h"
#include "unit_support.h"
#include "util/table_filter.h"

using cdc::sync::AddAction;
using cdc::sync::AddFacts;
using cdc::sync::AddProgress;
using cdc::sync::Mode;
using cdc::sync::PositionOrder;
using cdc::sync::Rerun;
using cdc::sync::Settings;

namespace {

std::string settings(std::string tables, std::string exclude = "", std::optional<std::uint64_t> chunk_size = 50,
                     std::vector<std::string> keys = {}, Mode mode = Mode::initial) {
  return cdc::sync::settings_text(Settings{mode, std::move(tables), std::move(exclude), chunk_size, std::move(keys), {}, {}});
}

using unit_test::chunk_line;

std::vector<std::string> names_of(const std::vector<cdc::sync::TableName>& tables) {
  std::vector<std::string> out;
  for (const auto& table : tables) out.push_back(table.db + "." + table.table);
  return out;
}

}  // namespace

// ---- settings ------------------------------------------------------------------------------

TEST_CASE("sync add settings: the settings text reads back as written") {
  const Settings written{Mode::initial, "s.a,s.b", "s.x", 50, {"s.t=a,b", "s.u=c"}, {}, {}};
  const auto read = cdc::sync::parse_settings(cdc::sync::settings_text(written));
  REQUIRE(read.has_value());
  CHECK(read->tables == "s.a,s.b");
  CHECK(read->exclude == "s.x");
  CHECK(read->chunk_size == 50u);
  CHECK(read->chunk_keys == std::vector<std::string>{"s.t=a,b", "s.u=c"});
  CHECK(cdc::sync::parse_settings(settings("s.a", "", std::nullopt, {}, Mode::no_data))->mode == Mode::no_data);
  Settings filtered = written;
  filtered.wheres = {"s.a:x = 'a:b' AND y > 2", "s.b:z IS NULL"};
  filtered.columns = {"s.a:x,`y,z`"};
  const auto read_filtered = cdc::sync::parse_settings(cdc::sync::settings_text(filtered));
  REQUIRE(read_filtered.has_value());
  CHECK(read_filtered->wheres == filtered.wheres);
  CHECK(read_filtered->columns == filtered.columns);
  CHECK_FALSE(cdc::sync::parse_settings("tables=s.a").has_value());                        // no family
  CHECK_FALSE(cdc::sync::parse_settings("family=snapshot\nwhat=s.a").has_value());         // unknown line
  CHECK_FALSE(cdc::sync::parse_settings("family=snapshot\nchunk-size=ten").has_value());   // not a number
}

TEST_CASE("sync add settings: only the tables, the exclusions and added chunk keys may change") {
  const auto was = *cdc::sync::parse_settings(settings("s.a", "", 50, {"s.a=k"}));
  struct Case {
    const char* name;
    std::string now;
    bool allowed;
  };
  const Case cases[] = {
      {"wider --tables", settings("s.a,s.b", "", 50, {"s.a=k"}), true},
      {"narrower --tables", settings("s.b", "", 50, {"s.a=k"}), true},
      {"an --exclude", settings("s.*", "s.c", 50, {"s.a=k"}), true},
      {"a chunk key added for a new table", settings("s.a,s.n", "", 50, {"s.a=k", "s.n=c"}), true},
      {"another chunk size", settings("s.a,s.b", "", 60, {"s.a=k"}), false},
      {"no chunk size", settings("s.a,s.b", "", std::nullopt, {"s.a=k"}), false},
      {"a chunk key taken away", settings("s.a,s.b", "", 50, {}), false},
      {"a chunk key changed", settings("s.a", "", 50, {"s.a=j"}), false},
      {"another family", settings("s.a", "", std::nullopt, {}, Mode::no_data), false},
  };
  for (const Case& c : cases) {
    const std::string case_name = c.name;
    CAPTURE(case_name);
    CHECK(cdc::sync::only_tables_differ(was, *cdc::sync::parse_settings(c.now)) == c.allowed);
  }
}

TEST_CASE("sync add settings: a rerun with other tables adds them once the stream has started") {
  const std::string old_text = settings("s.a");
  const std::string wider = settings("s.a,s.b");
  cdc::sync::RerunFacts facts;
  facts.existing = old_text;
  facts.bound = true;
  facts.stream_started = true;
  CHECK(cdc::sync::decide_rerun(facts, old_text, Mode::initial) == Rerun::keep);
  CHECK(cdc::sync::decide_rerun(facts, wider, Mode::initial) == Rerun::add_tables);
  CHECK(cdc::sync::decide_rerun(facts, settings("s.b"), Mode::initial) == Rerun::add_tables);  // s.b may be new
  CHECK(cdc::sync::decide_rerun(facts, settings("s.a", "s.x"), Mode::initial) == Rerun::switch_tables);  // narrower
  SUBCASE("initial_only has no stream to add to") {
    CHECK(cdc::sync::decide_rerun(facts, wider, Mode::initial_only) == Rerun::refuse);
  }
  SUBCASE("another --where or --columns is refused, also with new tables") {
    Settings was = *cdc::sync::parse_settings(old_text);
    Settings now = *cdc::sync::parse_settings(wider);
    now.wheres = {"s.a:id > 1"};
    CHECK(cdc::sync::decide_rerun(facts, cdc::sync::settings_text(now), Mode::initial) == Rerun::refuse);
    now.wheres.clear();
    now.columns = {"s.a:id"};
    CHECK(cdc::sync::decide_rerun(facts, cdc::sync::settings_text(now), Mode::initial) == Rerun::refuse);
    was.wheres = {"s.a:id > 1"};
    now = was;
    CHECK(cdc::sync::decide_rerun(facts, cdc::sync::settings_text(was), Mode::initial) == Rerun::refuse);  // was: none
  }
  SUBCASE("another chunk size stays refused") {
    CHECK(cdc::sync::decide_rerun(facts, settings("s.a,s.b", "", 60), Mode::initial) == Rerun::refuse);
  }
  SUBCASE("before the stream started (the snapshot is being made): refused as before") {
    facts.stream_started = false;
    CHECK(cdc::sync::decide_rerun(facts, wider, Mode::initial) == Rerun::refuse);
  }
  SUBCASE("not bound yet (a typo fixed before the plan): simply written") {
    facts.bound = false;
    facts.stream_started = false;
    CHECK(cdc::sync::decide_rerun(facts, wider, Mode::initial) == Rerun::write);
  }
  SUBCASE("no_data: the stream resumes with the other tables, no snapshot") {
    const std::string stream_old = settings("s.a", "", std::nullopt, {}, Mode::no_data);
    facts.existing = stream_old;
    CHECK(cdc::sync::decide_rerun(facts, settings("s.a,s.b", "", std::nullopt, {}, Mode::no_data), Mode::no_data) ==
          Rerun::switch_tables);
  }
  SUBCASE("an addition in progress goes on with its own settings only, in mode initial") {
    facts.addition = wider;
    CHECK(cdc::sync::decide_rerun(facts, wider, Mode::initial) == Rerun::continue_addition);
    CHECK(cdc::sync::decide_rerun(facts, old_text, Mode::initial) == Rerun::refuse_addition_in_progress);
    CHECK(cdc::sync::decide_rerun(facts, settings("s.a,s.c"), Mode::initial) == Rerun::refuse_addition_in_progress);
    CHECK(cdc::sync::decide_rerun(facts, wider, Mode::initial_only) == Rerun::refuse_addition_in_progress);
    // Its settings already replaced DIR's (a crash before add.N/done): still its own.
    facts.existing = wider;
    CHECK(cdc::sync::decide_rerun(facts, wider, Mode::initial) == Rerun::continue_addition);
  }
}

TEST_CASE("sync add settings: a narrower filter is told from the patterns when it can be, else planned") {
  struct Case {
    const char* name;
    std::string was;
    std::string now;
    bool surely;
  };
  const Case cases[] = {
      {"a table dropped from the list", settings("s.a,s.b"), settings("s.a"), true},
      {"an exclusion added", settings("s.*"), settings("s.*", "s.b"), true},
      {"a table of a glob named alone", settings("s.*"), settings("s.a"), true},
      {"a table the old exclusion left out, named alone", settings("s.*", "s.b"), settings("s.b"), false},
      {"a table named alone the old globs select, exclusions gone", settings("s.*", "s.b"), settings("s.a"), true},
      {"an escaped literal name", settings("s.*"), settings("s.a\\.x"), true},
      {"a new table", settings("s.a"), settings("s.a,s.b"), false},
      {"a wider glob", settings("s.a*"), settings("s.*"), false},
      {"a narrower glob: not told from the text", settings("s.*"), settings("s.a*"), false},
      {"the same glob with an exclusion dropped", settings("s.*", "s.b"), settings("s.*"), false},
      {"the same glob, the exclusion kept and one added", settings("s.*", "s.b"), settings("s.*", "s.b,s.c"), true},
      {"a database glob named as a database", settings("s"), settings("s.a"), true},
  };
  for (const Case& c : cases) {
    const std::string case_name = c.name;
    CAPTURE(case_name);
    CHECK(cdc::sync::surely_no_new_tables(*cdc::sync::parse_settings(c.was), *cdc::sync::parse_settings(c.now)) ==
          c.surely);
  }
}

// ---- which tables are new ------------------------------------------------------------------

TEST_CASE("sync add tables: the new tables are those the old globs do not select, decided per table") {
  const std::string plan = chunk_line("s", "a", 0, 2) + chunk_line("s", "a", 1, 2) + chunk_line("s", "b", 0, 1) +
                           chunk_line("s", "big", 0, 2) + chunk_line("s", "big", 1, 2) + chunk_line("t", "a", 0, 1);
  struct Case {
    const char* name;
    const char* tables;
    const char* exclude;
    std::vector<std::string> wanted;
  };
  const Case cases[] = {
      {"one table before", "s.a", "", {"s.b", "s.big", "t.a"}},
      {"a glob that also matches a new table's prefix", "s.b*", "", {"s.a", "t.a"}},
      {"a database", "s", "", {"t.a"}},
      {"an excluded table becomes new", "s.*", "s.big", {"s.big", "t.a"}},
      {"everything before: nothing new", "*.*", "", {}},
  };
  for (const Case& c : cases) {
    const std::string case_name = c.name;
    CAPTURE(case_name);
    auto filter = cdc::TableFilter::parse(c.tables, c.exclude);
    REQUIRE(filter.has_value());
    auto found = cdc::sync::new_tables(plan, *filter);
    REQUIRE_MESSAGE(found.has_value(), found.error().message);
    CHECK(names_of(found->tables) == c.wanted);
    // The plan keeps every chunk line of each new table, and no other.
    auto replanned = cdc::sync::plan_tables(found->plan);
    REQUIRE(replanned.has_value());
    CHECK(names_of(*replanned) == c.wanted);
    const auto lines = static_cast<std::size_t>(std::count(found->plan.begin(), found->plan.end(), '\n'));
    std::size_t want_lines = 0;
    for (const auto& name : c.wanted) want_lines += name == "s.big" || name == "s.a" ? 2U : 1U;
    CHECK(lines == want_lines);
  }
  auto filter = cdc::TableFilter::parse("s.a");
  auto bad = cdc::sync::new_tables(chunk_line("s", "b", 0, 1) + "{\"op\":\"low\"}\n", *filter);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == cdc::Errc::corrupt_input);
  CHECK(bad.error().message.find("plan line 2") != std::string::npos);
}

TEST_CASE("sync add tables: the exact --tables of the new tables selects them and nothing else") {
  const std::vector<cdc::sync::TableName> tables = {{"s", "a"}, {"shop.eu", "or*ders"}, {"d,b", "t?\\x"}};
  const std::string text = cdc::sync::exact_tables(tables);
  CHECK(text == "s.a,shop\\.eu.or\\*ders,d\\,b.t\\?\\\\x");
  auto filter = cdc::TableFilter::parse(text);
  REQUIRE_MESSAGE(filter.has_value(), filter.error().message);
  for (const auto& table : tables) CHECK(filter->selects(table.db, table.table));
  CHECK_FALSE(filter->selects("s", "ab"));
  CHECK_FALSE(filter->selects("shop", "eu"));
  CHECK_FALSE(filter->selects("shop.eu", "orXders"));
  CHECK_FALSE(filter->selects("d", "b"));
  CHECK_FALSE(filter->selects("d,b", "tx\\x"));
}

TEST_CASE("sync add tables: cdc-plan gets the chunk keys of the tables it plans only") {
  auto filter = cdc::TableFilter::parse("s.*", "s.gone");
  REQUIRE(filter.has_value());
  const std::vector<std::string> keys = {"s.kept=a,b", "s.gone=c", "t.other=d", "malformed"};
  CHECK(cdc::sync::chunk_keys_for(keys, *filter) == std::vector<std::string>{"s.kept=a,b", "malformed"});
}

// ---- the switch-over -----------------------------------------------------------------------

TEST_CASE("sync add switch-over: where the stream stopped against the new tables' high watermark") {
  struct Case {
    const char* name;
    const char* stream;
    const char* high;
    PositionOrder order;
  };
  const Case cases[] = {
      {"MariaDB, at it", "0-1-100", "0-1-100", PositionOrder::same},
      {"MariaDB, after it", "0-1-120", "0-1-100", PositionOrder::after},
      {"MariaDB, before it", "0-1-90", "0-1-100", PositionOrder::before},
      {"MariaDB, a domain more than it", "0-1-100,1-1-5", "0-1-100", PositionOrder::after},
      {"MariaDB, a domain it has and the stream has not", "0-1-100", "0-1-100,1-1-5", PositionOrder::before},
      {"MariaDB, each ahead in one domain: on to H first", "0-1-101,1-1-4", "0-1-100,1-1-5", PositionOrder::before},
      {"MySQL, at it", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-57", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-57",
       PositionOrder::same},
      {"MySQL, after it", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-60", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-57",
       PositionOrder::after},
      {"MySQL, before it", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-50", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-57",
       PositionOrder::before},
      {"FILE:OFFSET, after it in a later file", "binlog.000004:120", "binlog.000003:9000", PositionOrder::after},
      {"FILE:OFFSET, before it", "binlog.000003:120", "binlog.000003:9000", PositionOrder::before},
      {"FILE:OFFSET, at it", "binlog.000003:9000", "binlog.000003:9000", PositionOrder::same},
  };
  for (const Case& c : cases) {
    const std::string case_name = c.name;
    CAPTURE(case_name);
    auto order = cdc::sync::order_of(c.stream, c.high);
    REQUIRE_MESSAGE(order.has_value(), order.error().message);
    CHECK(*order == c.order);
  }
  auto mixed = cdc::sync::order_of("0-1-100", "binlog.000003:9000");
  REQUIRE_FALSE(mixed.has_value());
  CHECK(mixed.error().code == cdc::Errc::corrupt_input);
  CHECK_FALSE(cdc::sync::order_of("nonsense", "0-1-1").has_value());
}

namespace {

// The world of one addition: the files in DIR/add.N, where the stream stands (P) against H,
// and what each step changes. A crash keeps the files and loses the run's progress.
struct World {
  AddFacts facts;
  PositionOrder initial_order = PositionOrder::after;  // where the background stream will stop
  bool with_output = false;
};

void apply(AddAction action, World& world, AddProgress& progress) {
  auto& files = world.facts.snapshot;
  switch (action) {
    case AddAction::resume_stream: progress.stream_resumed = progress.stream_running = true; break;
    case AddAction::plan: files.plan = true; break;
    case AddAction::announce_add_snapshot_start: progress.snapshot_start_announced = true; break;
    case AddAction::read_chunks: progress.chunks_read = true; break;
    case AddAction::span: files.span = true; break;
    case AddAction::read_deltas: files.deltas = files.deltas_state = files.deltas_done = true; break;
    case AddAction::merge:
      files.snapshot = true;
      // The stream still runs: it will stop after H unless it lags.
      world.facts.stream_vs_high = world.initial_order;
      break;
    case AddAction::stop_stream: progress.stream_running = false; break;
    case AddAction::catch_up_stream: world.facts.stream_vs_high = PositionOrder::same; break;
    case AddAction::emit_snapshot: files.snapshot_emitted = true; [[fallthrough]];
    case AddAction::skip_emit: progress.emit_settled = true; break;
    case AddAction::announce_add_snapshot_end: progress.snapshot_end_announced = true; break;
    case AddAction::catch_up_new_tables: world.facts.catchup_done = true; break;
    case AddAction::replace_settings: world.facts.settings_replaced = true; break;
    case AddAction::finish: break;
  }
}

// The actions of one run from the world as it is, up to finish; the world is updated.
std::vector<std::string> run_from(World& world, int crash_after = -1) {
  AddProgress progress;
  std::vector<std::string> actions;
  for (int guard = 0; guard < 40; ++guard) {
    if (static_cast<int>(actions.size()) == crash_after) return actions;
    const AddAction action = cdc::sync::next_add_action(world.with_output, world.facts, progress);
    actions.emplace_back(cdc::sync::add_action_name(action));
    if (action == AddAction::finish) return actions;
    apply(action, world, progress);
  }
  FAIL("the addition does not end");
  return actions;
}

using unit_test::names;

bool has(const std::vector<std::string>& actions, const char* name) {
  return std::find(actions.begin(), actions.end(), name) != actions.end();
}

std::size_t index_of(const std::vector<std::string>& actions, const char* name) {
  return static_cast<std::size_t>(std::find(actions.begin(), actions.end(), name) - actions.begin());
}

}  // namespace

TEST_CASE("sync add switch-over: a whole addition, the stream stopped after H: the new tables' changes H..P follow") {
  World world;
  CHECK(run_from(world) ==
        names({"resume_stream", "plan", "announce_add_snapshot_start", "read_chunks", "span", "read_deltas", "merge",
               "stop_stream", "emit_snapshot", "announce_add_snapshot_end", "catch_up_new_tables", "replace_settings",
               "finish"}));
}

TEST_CASE("sync add switch-over: the stream stopped before H: it goes on to H, before the snapshot goes out") {
  World world;
  world.initial_order = PositionOrder::before;
  const auto actions = run_from(world);
  CHECK(actions == names({"resume_stream", "plan", "announce_add_snapshot_start", "read_chunks", "span", "read_deltas",
                          "merge", "stop_stream", "catch_up_stream", "emit_snapshot", "announce_add_snapshot_end",
                          "replace_settings", "finish"}));
  CHECK_FALSE(has(actions, "catch_up_new_tables"));  // P = H after it: nothing between
}

TEST_CASE("sync add switch-over: the stream stopped exactly at H: no catch-up either way") {
  World world;
  world.initial_order = PositionOrder::same;
  const auto actions = run_from(world);
  CHECK_FALSE(has(actions, "catch_up_stream"));
  CHECK_FALSE(has(actions, "catch_up_new_tables"));
}

TEST_CASE("sync add switch-over: with --output the new tables' snapshot stays in DIR/add.N") {
  World world;
  world.with_output = true;
  const auto actions = run_from(world);
  CHECK_FALSE(has(actions, "emit_snapshot"));
  CHECK(has(actions, "skip_emit"));
  CHECK(has(actions, "catch_up_new_tables"));
}

TEST_CASE("sync add switch-over: no new table (a narrower --tables): no snapshot, the stream resumes with the filter") {
  World world;
  world.facts.no_new_tables = true;  // what the plan will find
  AddProgress progress;
  CHECK(cdc::sync::next_add_action(false, world.facts, progress) == AddAction::resume_stream);
  apply(AddAction::resume_stream, world, progress);
  CHECK(cdc::sync::next_add_action(false, world.facts, progress) == AddAction::plan);
  apply(AddAction::plan, world, progress);
  CHECK(cdc::sync::next_add_action(false, world.facts, progress) == AddAction::stop_stream);
  apply(AddAction::stop_stream, world, progress);
  CHECK(cdc::sync::next_add_action(false, world.facts, progress) == AddAction::replace_settings);
  // A rerun after a crash there does not start the old stream again.
  CHECK(run_from(world) == names({"replace_settings", "finish"}));
}

TEST_CASE("sync add switch-over: every crash point converges, never redoing a finished step nor skipping one") {
  for (const PositionOrder order : {PositionOrder::before, PositionOrder::same, PositionOrder::after}) {
    for (const bool with_output : {false, true}) {
      for (int crash = 0; crash < 14; ++crash) {
        CAPTURE(static_cast<int>(order));
        CAPTURE(with_output);
        CAPTURE(crash);
        World world;
        world.initial_order = order;
        world.with_output = with_output;
        const auto first = run_from(world, crash);
        const auto second = run_from(world);
        REQUIRE(second.back() == "finish");
        // Files that are whole are not made again.
        if (has(first, "plan")) CHECK_FALSE(has(second, "plan"));
        if (has(first, "span")) CHECK_FALSE(has(second, "read_chunks"));
        if (has(first, "merge")) {
          CHECK_FALSE(has(second, "merge"));
          // Once the snapshot is merged, its H is fixed: the stream is not resumed beside it.
          CHECK_FALSE(has(second, "resume_stream"));
        }
        if (has(first, "emit_snapshot")) CHECK_FALSE(has(second, "emit_snapshot"));
        if (has(first, "catch_up_new_tables")) CHECK_FALSE(has(second, "catch_up_new_tables"));
        // Each needed step happens in one of the two runs, in the switch-over's order.
        std::vector<std::string> all = first;
        all.insert(all.end(), second.begin(), second.end());
        CHECK(has(all, "merge"));
        CHECK(has(all, "replace_settings"));
        CHECK(has(all, "catch_up_stream") == (order == PositionOrder::before));
        CHECK(has(all, "catch_up_new_tables") == (order == PositionOrder::after));
        CHECK(has(all, "emit_snapshot") == !with_output);
        // Within the run that does them: the old tables up to H, the snapshot, then H..P.
        if (has(second, "catch_up_stream") && has(second, "emit_snapshot"))
          CHECK(index_of(second, "catch_up_stream") < index_of(second, "emit_snapshot"));
        if (has(second, "emit_snapshot") && has(second, "catch_up_new_tables"))
          CHECK(index_of(second, "emit_snapshot") < index_of(second, "catch_up_new_tables"));
        if (has(second, "replace_settings")) CHECK(index_of(second, "replace_settings") == second.size() - 2);
        // The background stream is stopped before anything of the switch-over writes.
        if (has(second, "resume_stream")) CHECK(index_of(second, "stop_stream") < index_of(second, "replace_settings"));
      }
    }
  }
}

TEST_CASE("sync add dirs: add.N numbers") {
  CHECK(cdc::sync::add_dir_number("add.1") == 1u);
  CHECK(cdc::sync::add_dir_number("add.12") == 12u);
  CHECK_FALSE(cdc::sync::add_dir_number("add.").has_value());
  CHECK_FALSE(cdc::sync::add_dir_number("add.01").has_value());
  CHECK_FALSE(cdc::sync::add_dir_number("add.1.tmp").has_value());
  CHECK_FALSE(cdc::sync::add_dir_number("added.1").has_value());
}
