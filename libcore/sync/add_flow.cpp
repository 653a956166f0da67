#include "sync/add_flow.h"

#include <dirent.h>

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <filesystem>

#include "records/state.h"
#include "stream/state_file.h"
#include "sync/add_resume.h"
#include "sync/snapshot_steps.h"
#include "util/table_filter.h"

namespace cdc::sync {

AdditionDirs find_additions(const SyncState& dir) {
  AdditionDirs found;
  std::uint64_t highest = 0;
  DIR* listing = ::opendir(dir.dir().c_str());
  if (listing != nullptr) {
    while (const dirent* entry = ::readdir(listing)) {
      const std::string name = entry->d_name;
      const auto number = add_dir_number(name);
      if (!number || !std::filesystem::is_directory(dir.path(name))) continue;
      highest = std::max(highest, *number);
      if (!SyncState::at(dir.path(name)).has("done")) found.in_progress = name;
    }
    ::closedir(listing);
  }
  found.next = fmt::format("add.{}", highest + 1);
  return found;
}

Result<void> begin_addition(const SyncState& dir, const std::string& name, std::string_view previous,
                            std::string_view wanted) {
  const std::string temporary = dir.path(name + ".tmp");
  std::error_code error;
  std::filesystem::remove_all(temporary, error);
  if (!std::filesystem::create_directory(temporary, error) || error)
    return fail(Errc::io, fmt::format("cannot create {}: {}", temporary, error.message()));
  const SyncState fresh = SyncState::at(temporary);
  if (auto written = fresh.mark("previous-settings", previous); !written) return written;
  if (auto written = fresh.mark("settings", wanted); !written) return written;
  return dir.publish(temporary, name);
}

namespace {

class AddFlow {
 public:
  AddFlow(Runner& runner, const SyncState& dir, const std::string& name)
      : runner_(runner), dir_(dir), add_(SyncState::at(dir.path(name))) {}

  Stop run() {
    if (const Stop stop = load_settings()) return stop;
    for (;;) {
      if (Children::stop_signal() != 0) return end(runner_.after_step(0));
      // The background stream ended by itself: so does cdc-sync.
      if (progress_.stream_running && runner_.children().background_status()) return end(std::nullopt);
      AddFacts facts;
      if (const Stop stop = read_facts(facts)) return end(stop);
      const AddAction action = next_add_action(with_output(), facts, progress_);
      runner_.write_metrics(phase_of(action));
      Stop stop;
      switch (action) {
        case AddAction::resume_stream: stop = resume_stream(); break;
        case AddAction::plan: stop = plan(); break;
        case AddAction::announce_add_snapshot_start:
          stop = runner_.phase("add_snapshot_start", steps().lowest_low());
          progress_.snapshot_start_announced = true;
          break;
        case AddAction::read_chunks:
          stop = steps().read_chunks();
          progress_.chunks_read = true;
          break;
        case AddAction::span: stop = steps().span(); break;
        case AddAction::read_deltas:
          // Never over an empty --tables, which would select every table.
          (void)steps();
          stop = steps_filter_.tables.empty()
                     ? runner_.die(kInternal, fmt::format("{} names no table", add_.path("plan.ndjson")))
                     : steps().read_deltas();
          break;
        case AddAction::merge: stop = steps().merge(progress_.deltas_rejected); break;
        case AddAction::stop_stream: stop = stop_stream(); break;
        case AddAction::catch_up_stream: stop = catch_up_stream(); break;
        case AddAction::emit_snapshot:
          stop = steps().emit("");
          progress_.emit_settled = true;
          break;
        case AddAction::skip_emit:
          stop = steps().read_high().second;
          progress_.emit_settled = true;
          break;
        case AddAction::announce_add_snapshot_end: {
          auto [high, failed] = steps().read_high();
          stop = failed ? failed : runner_.phase("add_snapshot_end", high);
          progress_.snapshot_end_announced = true;
          break;
        }
        case AddAction::catch_up_new_tables: stop = catch_up_new_tables(); break;
        case AddAction::replace_settings:
          if (auto written = dir_.mark("settings", target_text_); !written)
            stop = runner_.die(kIoError, written.error().message);
          break;
        case AddAction::finish:
          if (auto marked = add_.mark("done", stream_position().value_or("")); !marked)
            return runner_.die(kIoError, marked.error().message);
          runner_.console().note(fmt::format("notice: {} is done: the stream goes on with every table", add_.dir()));
          return std::nullopt;
      }
      if (stop) return end(stop);
    }
  }

 private:
  bool with_output() const { return !runner_.options().output.empty(); }

  Stop load_settings() {
    const auto previous = parse_settings(add_.read_text("previous-settings").value_or(""));
    target_text_ = add_.read_text("settings").value_or("");
    const auto target = parse_settings(target_text_);
    if (!previous || !target)
      return runner_.die(kDataError, fmt::format("{}: its settings or previous-settings file is not one cdc-sync "
                                                 "wrote; remove {} to give the addition up",
                                                 add_.dir(), add_.dir()));
    previous_ = *previous;
    target_ = *target;
    return std::nullopt;
  }

  // The tables streamed so far.
  TableSelection old_tables() const { return {previous_.tables, previous_.exclude}; }

  // Exactly the new tables, as add.N/plan.ndjson names them ("" before it is there: a
  // filter that must not be used, as it would select every table).
  TableSelection new_tables() const {
    if (auto plan = add_.read_text("plan.ndjson"))
      if (auto names = plan_tables(*plan); names && !names->empty()) return {exact_tables(*names), ""};
    return {};
  }

  // The snapshot steps on DIR/add.N; the deltas over exactly the new tables.
  SnapshotSteps& steps() {
    if (!steps_ || steps_filter_.tables.empty()) {
      steps_filter_ = new_tables();
      steps_.emplace(runner_, add_, steps_filter_, true);
    }
    return *steps_;
  }

  // ---- where things stand ----

  // H*, where the stream of the tables synced so far began.
  std::optional<std::string> first_high() const {
    auto high = read_merged_high(dir_.path("snapshot.ndjson"));
    if (!high) return std::nullopt;
    return high->position;
  }

  // P: where that stream resumes, its state's position; H* while it has saved none (stopped
  // as it started).
  std::optional<std::string> stream_position() const {
    if (!dir_.has("stream.state")) return first_high();
    auto state = records::parse_state(dir_.read_text("stream.state").value_or(""), dir_.path("stream.state"));
    if (!state) return std::nullopt;
    return state->position;
  }

  // cdc-stream of the tables synced so far, from stream.state, or from H* when it has none
  // (cdc-stream ignores --from when its state is there).
  std::optional<std::vector<std::string>> old_stream() {
    std::vector<std::string> argv = runner_.streaming(old_tables(), dir_.path("stream.state"));
    if (!dir_.has("stream.state")) {
      const auto high = first_high();
      if (!high) return std::nullopt;
      argv.push_back("--from=" + *high);
    }
    return argv;
  }

  Stop read_facts(AddFacts& facts) {
    facts.snapshot = add_.facts();
    if (facts.snapshot.plan) facts.no_new_tables = add_.read_text("plan.ndjson").value_or("").empty();
    facts.catchup_done = add_.has("catchup.done");
    facts.settings_replaced = dir_.read_text("settings") == target_text_;
    if (facts.snapshot.snapshot && !facts.settings_replaced) {
      const auto position = stream_position();
      if (!position)
        return runner_.die(kDataError, fmt::format("cannot read where the stream stands from {} or {}",
                                                   dir_.path("stream.state"), dir_.path("snapshot.ndjson")));
      auto high = read_merged_high(add_.path("snapshot.ndjson"));
      if (!high) return runner_.die(kDataError, high.error().message);
      auto order = order_of(*position, high->position);
      if (!order) return runner_.die(kDataError, order.error().message);
      facts.stream_vs_high = *order;
    }
    return std::nullopt;
  }

  // A step stopped the addition (or the background stream ended by itself): the background
  // stream is stopped too, and cdc-sync's status is the first that counts.
  Stop end(Stop stop) {
    Children& children = runner_.children();
    const std::optional<int> own_end = progress_.stream_running ? children.background_status() : std::nullopt;
    if (progress_.stream_running) {
      (void)children.stop_background();
      progress_.stream_running = false;
    }
    if (own_end && Children::stop_signal() == 0) {
      // 0: its reader went away (EPIPE), the quiet stop every tool makes of it.
      if (*own_end == 0) return 0;
      return runner_.die(*own_end, fmt::format("the stream of the tables synced so far ended (exit {}) while {} was "
                                               "read; what was done is kept: run the same command again to go on",
                                               *own_end, add_.dir()));
    }
    if (!stop && own_end) return 0;
    return stop;
  }

  // ---- the new tables ----

  Stop resume_stream() {
    auto old = old_stream();
    if (!old) return runner_.die(kDataError, fmt::format("{} does not end with its high line", dir_.path("snapshot.ndjson")));
    if (!dir_.has("stream.state"))
      if (const Stop stop = runner_.mark_stream_started(dir_)) return stop;
    std::vector<std::string> argv = std::move(*old);
    const Options& options = runner_.options();
    argv.insert(argv.end(), options.format_arguments.begin(), options.format_arguments.end());
    if (with_output()) argv.push_back("--output=" + options.output);
    // A server down as it starts (exit 69) is waited for as in the other steps, while the new
    // tables are read on.
    auto started = runner_.children().start_background(
        command(argv), runner_.rerunning_background("the stream of the tables synced so far", [this] {
          return dir_.read_text("stream.state").value_or("");
        }));
    if (!started) return runner_.die(kFailure, started.error().message);
    progress_.stream_resumed = progress_.stream_running = true;
    runner_.console().note(fmt::format("notice: the stream of the tables synced so far goes on from {} while the new "
                                       "tables are read",
                                       stream_position().value_or("?")));
    return std::nullopt;
  }

  // cdc-plan over the new settings' tables, then only the chunks of the tables the old
  // settings do not select: add.N/plan.ndjson. (The old tables are planned too, for nothing
  // but the decision: excluding them from cdc-plan's filter would leave a narrower --tables
  // with no table, which cdc-plan refuses, and an old --exclude can hide a new table.)
  Stop plan() {
    auto old_filter = TableFilter::parse(previous_.tables, previous_.exclude);
    if (!old_filter) return runner_.die(kDataError, fmt::format("{}: {}", add_.path("previous-settings"),
                                                                old_filter.error().message));
    auto new_filter = TableFilter::parse(target_.tables, target_.exclude);
    if (!new_filter) return runner_.die(kUsage, new_filter.error().message);
    SnapshotSteps planning(runner_, add_, {}, true);
    const TableSelection tables{target_.tables, target_.exclude};
    if (const Stop stop = planning.plan(tables, chunk_keys_for(target_.chunk_keys, *new_filter), "plan.all.ndjson"))
      return stop;
    const std::string all = add_.path("plan.all.ndjson");
    auto found = sync::new_tables(add_.read_text("plan.all.ndjson").value_or(""), *old_filter);
    if (!found) return runner_.die(kDataError, fmt::format("{}: {}", all, found.error().message));
    if (auto written = add_.write_whole("plan.ndjson", found->plan); !written)
      return runner_.die(kIoError, written.error().message);
    add_.remove({"plan.all.ndjson"});
    if (found->tables.empty()) {
      runner_.console().note("notice: no table to read: the stream resumes with the new --tables");
    } else {
      std::string names;
      for (const TableName& table : found->tables)
        names += fmt::format("{}{}.{}", names.empty() ? "" : ", ", table.db, table.table);
      runner_.console().note(fmt::format("notice: new tables to read: {}", names));
    }
    return std::nullopt;
  }

  // ---- the switch-over ----

  Stop stop_stream() {
    const std::optional<int> status = runner_.children().stop_background();
    progress_.stream_running = false;
    if (const Stop stop = runner_.after_step(0)) return stop;
    if (status && *status != 0 && *status != 128 + SIGTERM)
      return runner_.die(*status, fmt::format("the stream of the tables synced so far ended with exit {}", *status));
    runner_.console().note(
        fmt::format("notice: the stream of the tables synced so far stopped at {}", stream_position().value_or("?")));
    return std::nullopt;
  }

  // A run of cdc-stream that must end at --until; its status, and whether its state reached
  // it (a stream on stdout also ends, with 0, when its reader goes away).
  Stop bounded_stream(std::vector<std::string> argv, const std::string& state_name, const SyncState& where,
                      const std::string& until) {
    const Options& options = runner_.options();
    argv.insert(argv.end(), options.format_arguments.begin(), options.format_arguments.end());
    if (with_output()) argv.push_back("--output=" + options.output);
    argv.push_back("--until=" + until);
    const ChildSpec spec = command(argv);
    const int status = runner_.retrying("cdc-stream", [&] { return runner_.children().run(spec); });
    if (const Stop stop = runner_.after_step(status)) return stop;
    auto state = records::parse_state(where.read_text(state_name).value_or(""), where.path(state_name));
    if (!state) return runner_.die(kDataError, state.error().message);
    auto reached = order_of(state->position, until);
    if (!reached) return runner_.die(kDataError, reached.error().message);
    if (*reached == PositionOrder::before) {
      if (!with_output()) return 0;  // the reader of stdout went away
      return runner_.die(kFailure, fmt::format("cdc-stream --until {} ended at {}", until, state->position));
    }
    return std::nullopt;
  }

  // P before H: the tables synced so far, from P on to H, into the stream's output, before the
  // new tables' snapshot at H goes there.
  Stop catch_up_stream() {
    auto [high, failed] = steps().read_high();
    if (failed) return failed;
    runner_.console().note(fmt::format("notice: the stream stopped at {}, before the new tables' high watermark {}: "
                                       "it goes on to there first",
                                       stream_position().value_or("?"), high));
    auto old = old_stream();
    if (!old) return runner_.die(kDataError, fmt::format("{} does not end with its high line", dir_.path("snapshot.ndjson")));
    if (!dir_.has("stream.state"))
      if (const Stop stop = runner_.mark_stream_started(dir_)) return stop;
    return bounded_stream(std::move(*old), "stream.state", dir_, high);
  }

  // P after H: the new tables' changes from H to P, from add.N/catchup.state, into the
  // stream's output. With --output, cdc-stream's state then owns the file's length: this
  // run's state starts with stream.state's output_bytes and, once at P, hands its own over to
  // stream.state (a rerun after a crash finds catchup.state at P and hands it over again).
  Stop catch_up_new_tables() {
    auto stream = records::parse_state(dir_.read_text("stream.state").value_or(""), dir_.path("stream.state"));
    if (!stream) return runner_.die(kDataError, stream.error().message);
    if (!add_.has("catchup.state")) {
      auto high = read_merged_high(add_.path("snapshot.ndjson"));
      if (!high) return runner_.die(kDataError, high.error().message);
      if (with_output() && !stream->output_bytes)
        return runner_.die(kUsage, fmt::format("{} was not saved by a stream with --output: it does not say where {} "
                                               "ends",
                                               dir_.path("stream.state"), runner_.options().output));
      records::StreamState start;
      start.position = high->position;
      if (high->at) start.file = high->at->file, start.offset = high->at->offset;
      if (with_output()) start.output_bytes = stream->output_bytes;
      start.server = stream->server;
      start.server_id = stream->server_id;
      start.saved_at = stream->saved_at;
      if (auto written = add_.write_whole("catchup.state", records::format_state(start)); !written)
        return runner_.die(kIoError, written.error().message);
    }
    runner_.console().note(fmt::format("notice: the new tables' changes from their high watermark to {}, where the "
                                       "stream stopped",
                                       stream->position));
    const TableSelection tables = new_tables();
    if (tables.tables.empty()) return runner_.die(kInternal, fmt::format("{} names no table", add_.path("plan.ndjson")));
    if (const Stop stop = bounded_stream(runner_.streaming(tables, add_.path("catchup.state")), "catchup.state", add_,
                                         stream->position))
      return stop;
    if (with_output())
      if (const Stop stop = hand_over()) return stop;
    if (auto marked = add_.mark("catchup.done", stream->position); !marked)
      return runner_.die(kIoError, marked.error().message);
    return std::nullopt;
  }

  // stream.state takes catchup.state's output_bytes (and span): the file's lines up to there
  // are its own now. Written under its lock, whole.
  Stop hand_over() {
    auto catchup = records::parse_state(add_.read_text("catchup.state").value_or(""), add_.path("catchup.state"));
    if (!catchup) return runner_.die(kDataError, catchup.error().message);
    auto file = stream::StateFile::open(dir_.path("stream.state"));
    if (!file) return runner_.die(exit_code_for(file.error().code), file.error().message);
    auto loaded = file->load();
    if (!loaded || !*loaded)
      return runner_.die(kDataError, loaded ? fmt::format("{} is gone", dir_.path("stream.state"))
                                            : loaded.error().message);
    records::StreamState state = **loaded;
    if (state.output_bytes == catchup->output_bytes && state.span == catchup->span) return std::nullopt;
    state.output_bytes = catchup->output_bytes;
    state.span = catchup->span;
    if (auto saved = file->save(std::move(state)); !saved)
      return runner_.die(exit_code_for(saved.error().code), saved.error().message);
    return std::nullopt;
  }

  // ---- --metrics ----

  static std::string_view phase_of(AddAction action) {
    switch (action) {
      case AddAction::resume_stream:
      case AddAction::plan: return "add_plan";
      case AddAction::announce_add_snapshot_start:
      case AddAction::read_chunks: return "add_snapshot";
      case AddAction::span:
      case AddAction::read_deltas: return "add_deltas";
      case AddAction::merge: return "add_merge";
      case AddAction::emit_snapshot:
      case AddAction::skip_emit:
      case AddAction::announce_add_snapshot_end: return "add_emit";
      case AddAction::stop_stream:
      case AddAction::catch_up_stream:
      case AddAction::catch_up_new_tables:
      case AddAction::replace_settings:
      case AddAction::finish: break;
    }
    return "add_switch";
  }

  Runner& runner_;
  const SyncState& dir_;
  SyncState add_;
  Settings previous_;
  Settings target_;
  std::string target_text_;
  AddProgress progress_;
  TableSelection steps_filter_;
  std::optional<SnapshotSteps> steps_;
};

}  // namespace

Stop run_addition(Runner& runner, const SyncState& dir, const std::string& name) {
  AddFlow flow(runner, dir, name);
  return flow.run();
}

}  // namespace cdc::sync
