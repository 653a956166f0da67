#include "sync/run_sync.h"

#include <unistd.h>

#include <fmt/format.h>

#include <csignal>
#include <filesystem>

#include "records/state.h"
#include "sync/add_flow.h"
#include "sync/add_resume.h"
#include "sync/children.h"
#include "sync/runner.h"
#include "sync/snapshot_steps.h"
#include "sync/state_dir.h"
#include "sync/tools.h"
#include "util/fd_io.h"

namespace cdc::sync {

std::string stream_metrics_path(const std::string& metrics_path) {
  constexpr std::string_view kSuffix = ".prom";
  if (metrics_path.size() > kSuffix.size() && metrics_path.ends_with(kSuffix))
    return metrics_path.substr(0, metrics_path.size() - kSuffix.size()) + "-stream.prom";
  return metrics_path + ".stream";
}

namespace {

class Flow {
 public:
  Flow(Options options, SyncState state, std::string tools)
      : state_(std::move(state)),
        runner_(std::move(options), std::move(tools), state_.dir()),
        steps_(runner_, state_, runner_.selection(), false) {}

  int run() {
    if (const Stop stop = check_settings()) return *stop;
    // Other tables than the directory's: the new ones are read while the stream of the
    // others goes on, then every table is streamed (sync/add_flow.h).
    if (addition_)
      if (const Stop stop = run_addition(runner_, state_, *addition_)) return *stop;
    RunProgress progress;
    for (;;) {
      // A stop signal between two steps: the next one is not begun.
      if (Children::stop_signal() != 0) return *runner_.after_step(0);
      const Action action = next_action(options().mode, !options().output.empty(), state_.facts(), progress);
      runner_.write_metrics(phase_of(action));
      Stop stop;
      switch (action) {
        case Action::pin_stream_start: stop = pin_stream_start(); break;
        case Action::plan: stop = steps_.plan(runner_.selection(), options().chunk_keys, "plan.ndjson"); break;
        case Action::announce_snapshot_start:
          stop = runner_.phase("snapshot_start", steps_.lowest_low());
          progress.snapshot_start_announced = true;
          break;
        case Action::read_chunks:
          stop = steps_.read_chunks();
          progress.chunks_read = true;
          break;
        case Action::span: stop = steps_.span(); break;
        case Action::read_deltas: stop = steps_.read_deltas(); break;
        case Action::merge: stop = steps_.merge(progress.deltas_rejected); break;
        case Action::emit_snapshot:
          // initial_only with --output: the snapshot to the file.
          stop = steps_.emit(options().mode == Mode::initial_only ? options().output : std::string());
          progress.emit_settled = true;
          break;
        case Action::skip_emit:
          stop = steps_.read_high().second;
          progress.emit_settled = true;
          break;
        case Action::announce_snapshot_end: {
          auto [high, failed] = steps_.read_high();
          if (failed) return *failed;
          stop = runner_.phase("snapshot_end", high);
          progress.snapshot_end_announced = true;
          break;
        }
        case Action::finish: return 0;
        case Action::stream: return stream();
      }
      if (stop) return *stop;
    }
  }

 private:
  const Options& options() const { return runner_.options(); }
  Stop die(int status, std::string_view message) { return runner_.die(status, message); }

  // The settings file against this run's options (man cdc-sync, "Adding and dropping
  // tables"): the same, first written, refused, or other tables for a running stream.
  Stop check_settings() {
    const Options& given = options();
    Settings settings{given.mode, given.tables, given.exclude, given.chunk_size, given.chunk_keys, given.wheres,
                      given.columns};
    const std::string wanted = settings_text(settings);
    RerunFacts facts;
    facts.existing = state_.read_text("settings");
    facts.bound = state_.has("plan.ndjson") || std::filesystem::exists(state_.path("stream.started"));
    facts.stream_started = state_.has("stream.state") || state_.has("stream.started");
    const AdditionDirs additions = find_additions(state_);
    if (additions.in_progress)
      facts.addition = SyncState::at(state_.path(*additions.in_progress)).read_text("settings").value_or("");
    switch (decide_rerun(facts, wanted, given.mode)) {
      case Rerun::keep: return std::nullopt;
      case Rerun::write:
        if (auto written = state_.mark("settings", wanted); !written) return die(kIoError, written.error().message);
        return std::nullopt;
      case Rerun::continue_addition: addition_ = *additions.in_progress; return std::nullopt;
      case Rerun::add_tables: {
        auto begun = begin_addition(state_, additions.next, *facts.existing, wanted);
        if (!begun) return die(kIoError, begun.error().message);
        runner_.console().note(fmt::format("notice: other tables than {}'s: the new ones are read into {} while the "
                                           "stream of the others goes on",
                                           state_.dir(), state_.path(additions.next)));
        addition_ = additions.next;
        return std::nullopt;
      }
      case Rerun::switch_tables:
        runner_.console().note(fmt::format("notice: other tables than {}'s, and none of them new: the stream resumes "
                                           "from its state with them",
                                           state_.dir()));
        if (auto written = state_.mark("settings", wanted); !written) return die(kIoError, written.error().message);
        return std::nullopt;
      case Rerun::refuse_addition_in_progress: {
        const std::string dir = state_.path(*additions.in_progress);
        std::string message = fmt::format(
            "cdc-sync: error: {} is adding tables ({}): run it with its settings, in mode initial, to finish it (or, "
            "before its switch-over, remove {} to give it up):\n",
            state_.dir(), dir, dir);
        for (const std::string& line : settings_difference(facts.addition.value_or(""), wanted))
          message += line + "\n";
        message += "Try 'cdc-sync --help' for more information.\n";
        runner_.console().relay(message);
        return kUsage;
      }
      case Rerun::refuse: break;
    }
    std::string message = fmt::format(
        "cdc-sync: error: {} was started with other settings; give the same ones, or another --dir:\n", state_.dir());
    for (const std::string& line : settings_difference(*facts.existing, wanted)) message += line + "\n";
    const auto was = parse_settings(*facts.existing);
    if (was && only_tables_differ(*was, settings))
      message += "(--tables and --exclude may change once the stream has started, in mode initial or no_data)\n";
    if (was && (was->wheres != settings.wheres || was->columns != settings.columns))
      message += "(--where and --columns decide which rows and columns the copy holds, and the snapshot already read "
                 "holds these: to read the tables with others, sync them into another --dir)\n";
    message += "Try 'cdc-sync --help' for more information.\n";
    runner_.console().relay(message);
    return kUsage;
  }

  // ---- the stream ----

  std::vector<std::string> streaming() const {
    std::vector<std::string> argv = runner_.streaming(runner_.selection(), state_.path("stream.state"));
    argv.insert(argv.end(), options().format_arguments.begin(), options().format_arguments.end());
    return argv;
  }

  // no_data's first run: "now" pinned by a bounded run that saves the server's end in
  // stream.state at once, so that a crash before the first transaction cannot move the start.
  Stop pin_stream_start() {
    if (const Stop stop = runner_.mark_stream_started(state_)) return stop;
    std::vector<std::string> argv = streaming();
    argv.insert(argv.end(), {"--from=now", "--until=now"});
    if (!options().output.empty()) argv.push_back("--output=" + options().output);
    ChildSpec spec = command(argv);
    spec.relay_stderr = [](std::string_view line) {
      return !line.starts_with("cdc-stream: notice: reached --until") &&
             !line.starts_with("cdc-stream: notice: nothing to do");
    };
    // A run that lost the server after saving its state has pinned the start: not again.
    const int status = runner_.retrying(
        "cdc-stream", [&] { return state_.has("stream.state") ? 0 : runner_.children().run(spec); });
    if (const Stop stop = runner_.after_step(status)) return stop;
    if (!state_.has("stream.state"))
      return die(kInternal, fmt::format("cdc-stream --from now --until now ended without saving {}",
                                        state_.path("stream.state")));
    return std::nullopt;
  }

  // The final stream: from H* the first time, from stream.state after. Its status is
  // cdc-sync's, also after a signal (0: stopped cleanly, saved).
  int stream() {
    std::vector<std::string> argv = streaming();
    if (options().until) argv.push_back("--until=" + *options().until);
    if (!options().output.empty() && options().mode != Mode::initial_only)
      argv.push_back("--output=" + options().output);
    std::string from;
    if (state_.has("stream.state")) {
      const std::string file = state_.path("stream.state");
      auto state = records::parse_state(state_.read_text("stream.state").value_or(""), file);
      if (!state) return *die(kDataError, state.error().message);
      from = state->position;
    } else {
      auto [high, failed] = steps_.read_high();
      if (failed) return *failed;
      from = high;
      if (const Stop stop = runner_.mark_stream_started(state_)) return *stop;
      argv.push_back("--from=" + from);
    }
    if (const Stop stop = runner_.phase("stream_start", from)) return *stop;
    // A stop signal in the final stream is a clean stop (exit 0): cdc-stream saves its state
    // and ends. One that comes before cdc-stream has set up its handler (here, or while it
    // starts) ends it by the signal, its state as last saved: the same clean stop.
    const auto stopped = [this] {
      runner_.console().note(fmt::format("stopped by {}; run the same command again to resume",
                                         signal_name(Children::stop_signal())));
      return 0;
    };
    if (Children::stop_signal() != 0) return stopped();
    // cdc-stream reconnects by itself once it runs; a server that is down when it starts
    // (its first connection, exit 69) is waited for here, as for the other steps.
    // One that streamed before it gave up reconnecting has a whole --retry-for again.
    const int status = runner_.retrying(
        "cdc-stream", [&] { return runner_.children().run(command(argv)); },
        [this] { return state_.read_text("stream.state").value_or(""); });
    if (Children::stop_signal() != 0 && status == 128 + Children::stop_signal()) return stopped();
    return status;
  }

  // ---- --metrics ----

  static std::string_view phase_of(Action action) {
    switch (action) {
      case Action::pin_stream_start:
      case Action::plan: return "plan";
      case Action::announce_snapshot_start:
      case Action::read_chunks: return "snapshot";
      case Action::span:
      case Action::read_deltas: return "deltas";
      case Action::merge: return "merge";
      case Action::emit_snapshot:
      case Action::skip_emit:
      case Action::announce_snapshot_end: return "emit";
      case Action::stream: return "stream";
      case Action::finish: break;
    }
    return "done";
  }

  SyncState state_;
  Runner runner_;
  SnapshotSteps steps_;
  std::optional<std::string> addition_;  // DIR/add.N's name, when this run adds tables
};

}  // namespace

int run(Options options) {
  auto tools = find_tools();
  if (!tools) {
    Console().error(tools.error().message);
    return kFailure;
  }
  if (options.mode != Mode::no_data && !is_executable(*tools + "/cdc-merge")) {
    Console().error(fmt::format("{}/cdc-merge is missing: the snapshot modes need cdc-merge", *tools));
    return kFailure;
  }
  // The password goes to the tools in MYSQL_PWD, in their environment, which only the same
  // user (and root) can read; never on their command line, which ps shows to everyone.
  if (options.password) ::setenv("MYSQL_PWD", options.password->c_str(), 1);
  // The stream's output file is named by its full path in stream.started, whatever the
  // working directory of a later run.
  if (!options.output.empty()) {
    std::error_code ignored;
    options.output = std::filesystem::weakly_canonical(std::filesystem::absolute(options.output), ignored).string();
  }
  constexpr std::chrono::seconds kLockWait{10};
  auto state = SyncState::open(options.dir, kLockWait, [&] {
    Console().note(fmt::format("notice: {}/lock is held by another process (another cdc-sync, or a tool of one that was just "
                               "killed and is still exiting): waiting up to {} s",
                               options.dir, kLockWait.count()));
  });
  if (!state) {
    Console().error(state.error().message);
    if (state.error().code == Errc::usage) {
      (void)write_all(STDERR_FILENO, "Try 'cdc-sync --help' for more information.\n", "stderr");
      return kUsage;
    }
    return kIoError;
  }
  Flow flow(std::move(options), std::move(*state), std::move(*tools));
  return flow.run();
}

}  // namespace cdc::sync
