#include "sync/run_sync.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <csignal>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <ctime>
#include <map>

#include "metrics/text_format.h"
#include "ndjson/writer.h"
#include "output/converter.h"
#include "records/state.h"
#include "sync/children.h"
#include "sync/state_dir.h"
#include "sync/tools.h"
#include "util/exit_code.h"
#include "util/fd_io.h"
#include "util/progress.h"

namespace cdc::sync {

namespace {

constexpr int kUnavailable = static_cast<int>(ExitCode::unavailable);
constexpr int kUsage = static_cast<int>(ExitCode::usage);
constexpr int kDataError = static_cast<int>(ExitCode::data_error);
constexpr int kInternal = static_cast<int>(ExitCode::internal);
constexpr int kIoError = static_cast<int>(ExitCode::io_error);
constexpr int kFailure = static_cast<int>(ExitCode::failure);
constexpr int kInterrupted = static_cast<int>(ExitCode::temp_failure);

// A step's verdict: nullopt goes on, a value is cdc-sync's exit status.
using Stop = std::optional<int>;

std::uint64_t file_size(const std::string& path) {
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0 ? static_cast<std::uint64_t>(status.st_size) : 0;
}

// "FROM UNTIL": the first word and the rest of the first line, as `read -r FROM UNTIL` splits.
std::pair<std::string, std::string> split_span(std::string_view text) {
  text = text.substr(0, text.find('\n'));
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  std::size_t end = 0;
  while (end < text.size() && !blank(text[end])) ++end;
  std::string_view rest = text.substr(end);
  while (!rest.empty() && blank(rest.front())) rest.remove_prefix(1);
  return {std::string(text.substr(0, end)), std::string(rest)};
}

// A child with its stdout and stderr in files ("": cdc-sync's).
ChildSpec command(std::vector<std::string> argv, std::string stdout_file = "", std::string stderr_file = "") {
  ChildSpec spec;
  spec.argv = std::move(argv);
  spec.stdout_file = std::move(stdout_file);
  spec.stderr_file = std::move(stderr_file);
  return spec;
}

}  // namespace

std::string stream_metrics_path(const std::string& metrics_path) {
  constexpr std::string_view kSuffix = ".prom";
  if (metrics_path.size() > kSuffix.size() && metrics_path.ends_with(kSuffix))
    return metrics_path.substr(0, metrics_path.size() - kSuffix.size()) + "-stream.prom";
  return metrics_path + ".stream";
}

namespace {

// plan.part.aa, plan.part.ab, ...: the names split(1) gives the parts.
std::string part_suffix(std::size_t index) {
  std::string suffix;
  do {
    suffix.insert(suffix.begin(), static_cast<char>('a' + index % 26));
    index /= 26;
  } while (index > 0);
  while (suffix.size() < 2) suffix.insert(suffix.begin(), 'a');
  return suffix;
}

class Flow {
 public:
  Flow(Options options, SyncState state, std::string tools)
      : options_(std::move(options)), state_(std::move(state)), tools_(std::move(tools)), children_(console_) {}

  int run() {
    if (const Stop stop = check_settings()) return *stop;
    RunProgress progress;
    for (;;) {
      // A stop signal between two steps: the next one is not begun.
      if (Children::stop_signal() != 0) return *after_step(0);
      const Action action = next_action(options_.mode, !options_.output.empty(), state_.facts(), progress);
      write_metrics(phase_of(action));
      Stop stop;
      switch (action) {
        case Action::pin_stream_start: stop = pin_stream_start(); break;
        case Action::plan: stop = plan(); break;
        case Action::announce_snapshot_start: {
          std::string lowest_low;
          if (auto span = state_.read_text("span")) lowest_low = split_span(*span).first;
          stop = phase("snapshot_start", lowest_low);
          progress.snapshot_start_announced = true;
          break;
        }
        case Action::read_chunks:
          stop = read_chunks();
          progress.chunks_read = true;
          break;
        case Action::span: stop = span(); break;
        case Action::read_deltas: stop = read_deltas(); break;
        case Action::merge: stop = merge(progress); break;
        case Action::emit_snapshot:
          stop = emit_snapshot();
          progress.emit_settled = true;
          break;
        case Action::skip_emit:
          stop = read_high().second;
          progress.emit_settled = true;
          break;
        case Action::announce_snapshot_end: {
          auto [high, failed] = read_high();
          if (failed) return *failed;
          stop = phase("snapshot_end", high);
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
  // ---- messages and steps ----

  Stop die(int status, std::string_view message) {
    console_.error(message);
    return status;
  }

  // A step that failed or was cut short by a signal stops cdc-sync: exit 75 after a signal
  // (rerunning resumes), unless the tool failed for a reason of its own.
  Stop after_step(int status) {
    if (const int signal = Children::stop_signal(); signal != 0) {
      if (status != 0 && status < 128) return status;
      console_.note(fmt::format("stopped by {}; run the same command again to resume", signal_name(signal)));
      return kInterrupted;
    }
    if (status != 0) return status;
    return std::nullopt;
  }

  // Runs attempt(); while it returns 69 (the server unavailable, or the connection lost),
  // runs it again after a pause, with a notice, up to --retry-for (or 60) seconds from the
  // first failure. The tools resume where they stopped, so a rerun repeats no work.
  int retrying(std::string_view what, const std::function<int()>& attempt) {
    RerunSchedule schedule(options_.rerun_for_seconds);
    std::optional<std::chrono::steady_clock::time_point> first_failure;
    for (;;) {
      const int status = attempt();
      if (status != kUnavailable || Children::stop_signal() != 0) return status;
      const auto now = std::chrono::steady_clock::now();
      if (!first_failure) first_failure = now;
      const auto waited =
          static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(now - *first_failure).count());
      const auto pause = schedule.after_failure(waited);
      if (!pause) {
        console_.note(fmt::format("notice: {} exited 69 (server unavailable) again after {}s of retrying; giving up "
                                  "(--retry-for {})",
                                  what, waited, schedule.retry_for()));
        return status;
      }
      console_.note(fmt::format("notice: {} exited 69 (server unavailable); running it again in {}s (for up to {}s)",
                                what, *pause, schedule.retry_for()));
      if (!children_.sleep(std::chrono::seconds(*pause))) return status;
    }
  }

  std::string tool(std::string_view name) const { return fmt::format("{}/{}", tools_, name); }

  // The tool's path, the connection options, the table filter.
  std::vector<std::string> connecting(std::string_view name, bool with_filter) const {
    std::vector<std::string> argv{tool(name)};
    argv.insert(argv.end(), options_.connection.begin(), options_.connection.end());
    if (with_filter) {
      argv.push_back("--tables=" + options_.tables);
      if (!options_.exclude.empty()) argv.push_back("--exclude=" + options_.exclude);
    }
    return argv;
  }
  std::vector<std::string> streaming(std::string_view state_file) const {
    std::vector<std::string> argv = connecting("cdc-stream", true);
    argv.insert(argv.end(), options_.stream_options.begin(), options_.stream_options.end());
    if (options_.metrics_path) argv.push_back("--metrics=" + stream_metrics_path(*options_.metrics_path));
    argv.push_back(fmt::format("--state={}", state_.path(state_file)));
    return argv;
  }

  Stop check_settings() {
    Settings settings{options_.mode, options_.tables, options_.exclude, options_.chunk_size, options_.chunk_keys};
    const std::string wanted = settings_text(settings);
    const auto existing = state_.read_text("settings");
    const bool bound = state_.has("plan.ndjson") || std::filesystem::exists(state_.path("stream.started"));
    switch (decide_settings(existing, bound, wanted)) {
      case SettingsDecision::keep: return std::nullopt;
      case SettingsDecision::refuse: {
        std::string message = fmt::format(
            "cdc-sync: error: {} was started with other settings; give the same ones, or another --dir:\n", state_.dir());
        for (const std::string& line : settings_difference(*existing, wanted)) message += line + "\n";
        message += "Try 'cdc-sync --help' for more information.\n";
        console_.relay(message);
        return kUsage;
      }
      case SettingsDecision::write:
        if (auto written = state_.mark("settings", wanted); !written) return die(kIoError, written.error().message);
        return std::nullopt;
    }
    return std::nullopt;
  }

  // phase NAME POSITION: announced on stderr, and --on-phase CMD NAME POSITION run.
  Stop phase(std::string_view name, std::string_view position) {
    console_.note(fmt::format("phase {} position{}{}", name, position.empty() ? "" : " ", position));
    if (options_.on_phase.empty()) return std::nullopt;
    ChildSpec hook;
    hook.argv = {"bash", "-c", options_.on_phase + " \"$@\"", "cdc-sync", std::string(name), std::string(position)};
    hook.stdout_to_stderr = true;
    hook.environment = {fmt::format("CDC_SYNC_PHASE={}", name), fmt::format("CDC_SYNC_POSITION={}", position),
                        fmt::format("CDC_SYNC_DIR={}", state_.dir())};
    const int status = children_.run(hook);
    if (Children::stop_signal() != 0)
      if (const Stop stop = after_step(status)) return stop;
    if (status != 0)
      return die(status, fmt::format("--on-phase command failed at phase {} (exit {}): {}", name, status,
                                     options_.on_phase));
    return std::nullopt;
  }

  // H*: the position of snapshot.ndjson's high line.
  std::pair<std::string, Stop> read_high() {
    auto high = read_merged_high(state_.path("snapshot.ndjson"));
    if (!high) return {"", die(kDataError, high.error().message)};
    return {high->position, std::nullopt};
  }

  // ---- step 1: the plan ----

  Stop plan() {
    std::vector<std::string> argv = connecting("cdc-plan", true);
    argv.insert(argv.end(), options_.retry_options.begin(), options_.retry_options.end());
    if (options_.chunk_size) argv.push_back(fmt::format("--chunk-size={}", *options_.chunk_size));
    for (const std::string& key : options_.chunk_keys) argv.push_back("--chunk-key=" + key);
    const ChildSpec spec = command(argv, state_.path("plan.ndjson.tmp"));
    const int status = retrying("cdc-plan", [&] { return children_.run(spec); });
    if (status != 0) state_.remove({"plan.ndjson.tmp"});
    if (const Stop stop = after_step(status)) return stop;
    if (auto published = state_.publish(spec.stdout_file, "plan.ndjson"); !published)
      return die(kIoError, published.error().message);
    return std::nullopt;
  }

  // ---- step 2: the chunks ----

  // Finished chunk files and their rows (the high line's "rows"), each file read once.
  void count_chunks() {
    chunks_done_ = 0;
    for (const std::string& file : state_.chunk_files()) {
      ++chunks_done_;
      if (chunk_rows_.contains(file)) continue;
      const std::uint64_t rows = chunk_file_rows(file);
      chunk_rows_.emplace(file, rows);
      rows_done_ += rows;
    }
  }

  void remove_parts() {
    std::error_code ignored;
    for (const auto& entry : std::filesystem::directory_iterator(state_.dir(), ignored))
      if (entry.path().filename().string().starts_with("plan.part.")) std::filesystem::remove(entry.path(), ignored);
  }

  // One run of the -j processes over the plan, dealt round-robin; the first failure's status
  // (the others are stopped then).
  int read_chunks_once(std::uint64_t total) {
    const bool show = options_.progress == ProgressMode::always ||
                      (options_.progress == ProgressMode::automatic && ::isatty(STDERR_FILENO) == 1);
    chunks_total_ = total;
    std::error_code error;
    std::filesystem::create_directories(state_.path("chunks"), error);
    if (error) return *die(kIoError, fmt::format("cannot create {}", state_.path("chunks")));
    remove_parts();
    const std::uint64_t parts = std::max<std::uint64_t>(1, std::min(options_.jobs, total));
    std::vector<std::string> dealt(parts);
    {
      const int fd = ::open(state_.path("plan.ndjson").c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) return *die(kIoError, fmt::format("cannot split {}", state_.path("plan.ndjson")));
      std::string plan;
      char buffer[1 << 16];
      for (;;) {
        auto got = read_some(fd, buffer, sizeof buffer, "plan.ndjson");
        if (!got || *got == 0) break;
        plan.append(buffer, *got);
      }
      ::close(fd);
      std::size_t line = 0;
      for (std::size_t at = 0; at < plan.size(); ++line) {
        const std::size_t end = std::min(plan.find('\n', at), plan.size() - 1);
        dealt[line % parts].append(plan, at, end - at + 1);
        at = end + 1;
      }
    }
    // cdc-snapshot draws its own progress line when stderr is a terminal; cdc-sync draws one
    // for all of them, so theirs go through a pipe.
    const bool relay = ::isatty(STDERR_FILENO) == 1;
    int first_failure = 0;
    for (std::size_t part = 0; part < parts; ++part) {
      if (dealt[part].empty()) continue;
      const std::string name = "plan.part." + part_suffix(part);
      if (auto written = write_all_to(state_.path(name), dealt[part]); !written)
        return *die(kIoError, fmt::format("cannot split {}: {}", state_.path("plan.ndjson"), written.error().message));
      std::vector<std::string> argv = connecting("cdc-snapshot", false);
      argv.insert(argv.end(), options_.retry_options.begin(), options_.retry_options.end());
      argv.insert(argv.end(), {"--output-dir", state_.path("chunks"), state_.path(name)});
      ChildSpec spec = command(argv);
      if (relay) spec.relay_stderr = [](std::string_view) { return true; };
      if (auto started = children_.start(spec); !started) {
        console_.error(started.error().message);
        first_failure = 127;
        children_.terminate_all();
        break;
      }
    }
    count_chunks();
    const std::uint64_t start_chunks = chunks_done_;
    const std::uint64_t start_rows = rows_done_;
    const auto start = std::chrono::steady_clock::now();
    const auto draw = [&] {
      count_chunks();
      if (!show) return;
      const auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
      console_.progress(progress_text("cdc-sync: snapshot", {chunks_done_, total, rows_done_, chunks_done_ - start_chunks,
                                                             rows_done_ - start_rows,
                                                             static_cast<std::uint64_t>(elapsed.count())}));
    };
    children_.wait_all(
        [&](std::size_t, int status) {
          if (status != 0 && first_failure == 0) {
            first_failure = status;
            children_.terminate_all();
          }
        },
        show || options_.metrics_path ? std::function<void()>([&] {
          draw();
          if (metrics_file_.due()) write_metrics("snapshot");
        })
                                      : std::function<void()>());
    if (show) {
      draw();
      console_.end_progress();  // the last line stays
    }
    remove_parts();
    return first_failure;
  }

  static Result<void> write_all_to(const std::string& path, std::string_view text) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);  // NOLINT
    if (fd < 0) return fail(Errc::io, std::strerror(errno));
    auto written = write_all(fd, text, path);
    ::close(fd);
    return written;
  }

  Stop read_chunks() {
    auto total = count_lines(state_.path("plan.ndjson"));
    if (!total) return die(kIoError, total.error().message);
    const int status = retrying("cdc-snapshot", [&] { return read_chunks_once(*total); });
    if (const Stop stop = after_step(status)) return stop;
    count_chunks();
    if (chunks_done_ != *total)
      return die(kFailure, fmt::format("{} has {} chunk files, and the plan has {} chunks: remove {} and {} to read "
                                       "them again",
                                       state_.path("chunks"), chunks_done_, *total, state_.path("chunks"),
                                       state_.path("span")));
    return std::nullopt;
  }

  // ---- step 3: the span ----

  Stop span() {
    std::vector<std::string> argv{tool("cdc-merge"), "--span"};
    for (std::string& file : state_.chunk_files()) argv.push_back(std::move(file));
    const std::string temporary = state_.path("span.tmp");
    const int status = children_.run(command(argv, temporary));
    if (status != 0) state_.remove({"span.tmp"});
    if (const Stop stop = after_step(status)) return stop;
    const auto [from, until] = split_span(state_.read_text("span.tmp").value_or(""));
    if (from.empty() || until.empty())
      return die(kInternal, fmt::format("cdc-merge --span printed '{}', not FROM UNTIL",
                                        state_.read_text("span.tmp").value_or("").substr(0, 200)));
    if (auto published = state_.publish(temporary, "span"); !published) return die(kIoError, published.error().message);
    return std::nullopt;
  }

  // ---- step 4: the deltas ----

  // cdc-stream from FROM to UNTIL into deltas.ndjson, even for an empty span (then just its
  // span lines). A rerun resumes from deltas.state; without it nothing of deltas.ndjson is
  // known to be whole, and it starts over. deltas.done marks that cdc-stream reached UNTIL;
  // what the deltas hold is trusted only through cdc-merge's check.
  Stop read_deltas() {
    const auto [from, until] = split_span(state_.read_text("span").value_or(""));
    const int status = retrying("cdc-stream", [&, &from = from, &until = until] {
      const bool start_over = deltas_start_over(state_.facts());
      if (start_over) state_.remove({"deltas.ndjson", "deltas.done", "deltas.state"});
      std::vector<std::string> argv = streaming("deltas.state");
      argv.push_back(fmt::format("--output={}", state_.path("deltas.ndjson")));
      argv.push_back(fmt::format("--until={}", until));
      if (start_over) argv.push_back(fmt::format("--from={}", from));
      return children_.run(command(argv));
    });
    if (const Stop stop = after_step(status)) return stop;
    if (auto marked = state_.mark("deltas.done", until); !marked) return die(kIoError, marked.error().message);
    return std::nullopt;
  }

  // ---- step 5: the merge ----

  std::vector<std::string> merge_inputs(std::vector<std::string> argv) const {
    for (std::string& file : state_.chunk_files()) argv.push_back(std::move(file));
    argv.insert(argv.end(), {"--deltas", state_.path("deltas.ndjson")});
    return argv;
  }

  // False when cdc-merge --check-deltas refuses deltas.ndjson (its message, in deltas.check,
  // names the file: a chunk it refuses is not the deltas' fault).
  bool deltas_pass_check() {
    const int status =
        children_.run(command(merge_inputs({tool("cdc-merge"), "--check-deltas"}), "", state_.path("deltas.check")));
    const std::string first = first_line_of("deltas.check");
    return !(status == kDataError && first.starts_with(fmt::format("cdc-merge: error: {}", state_.path("deltas.ndjson"))));
  }

  std::string first_line_of(std::string_view name) const {
    const std::string text = state_.read_text(name).value_or("");
    return text.substr(0, text.find('\n'));
  }

  void copy_to_stderr(std::string_view name) {
    if (auto text = state_.read_text(name); text && !text->empty()) console_.relay(*text + "\n");
  }

  // The merge into snapshot.ndjson. Deltas that fail cdc-merge's check (a crash, a disk, a
  // hand) are read again from FROM, once.
  Stop merge(RunProgress& progress) {
    std::vector<std::string> argv = merge_inputs({tool("cdc-merge")});
    argv.insert(argv.end(), {"--output", state_.path("snapshot.ndjson.tmp")});
    const int status = children_.run(command(argv, "", state_.path("merge.err")));
    if (status == kDataError && Children::stop_signal() == 0 && !deltas_pass_check()) {
      const std::string from = split_span(state_.read_text("span").value_or("")).first;
      if (progress.deltas_rejected++ == 0) {
        std::string reason = first_line_of("deltas.check");
        if (reason.starts_with("cdc-merge: error: ")) reason.erase(0, 18);
        console_.note(fmt::format("notice: {} fails cdc-merge's check ({}); reading the deltas again from {}",
                                  state_.path("deltas.ndjson"), reason, from));
        state_.remove({"deltas.done", "deltas.state", "deltas.ndjson"});
        return std::nullopt;  // next_action: read_deltas, then merge again
      }
      copy_to_stderr("merge.err");
      return die(kDataError, fmt::format("the deltas read again from {} still fail cdc-merge's check: see the error "
                                         "above",
                                         from));
    }
    copy_to_stderr("merge.err");
    state_.remove({"merge.err", "deltas.check"});
    if (const Stop stop = after_step(status)) return stop;
    const std::string temporary = state_.path("snapshot.ndjson.tmp");
    if (auto high = read_merged_high(temporary); !high)
      return die(kInternal, fmt::format("cdc-merge's output does not end with its high line: {}", high.error().message));
    if (auto published = state_.publish(temporary, "snapshot.ndjson"); !published)
      return die(kIoError, published.error().message);
    return std::nullopt;
  }

  // ---- step 6: the snapshot out ----

  // The whole snapshot to stdout (again after a crash before snapshot.emitted: r lines are
  // upserts, so a consumer that applies them twice ends the same), or, initial_only with
  // --output, copied to the file whole.
  Stop emit_snapshot() {
    auto [high, failed] = read_high();
    if (failed) return failed;
    const std::string source = state_.path("snapshot.ndjson");
    const bool to_file = !options_.output.empty();
    const std::string temporary = options_.output + ".tmp";
    const int in = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0) return die(kIoError, fmt::format("cannot read {}: {}", source, std::strerror(errno)));
    int out = STDOUT_FILENO;
    if (to_file) {
      out = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);  // NOLINT
      if (out < 0) {
        ::close(in);
        return die(kIoError, fmt::format("cannot write {}: {}", temporary, std::strerror(errno)));
      }
    }
    Result<void> copied = copy_snapshot(in, source, out, to_file ? temporary : "stdout");
    ::close(in);
    if (to_file && ::close(out) != 0 && copied) copied = fail(Errc::io, fmt::format("cannot write {}", temporary));
    // The reader went away (EPIPE): a quiet stop, as the tools make it.
    if (!copied && is_broken_pipe(copied.error())) return 0;
    if (!copied) return die(exit_code_for(copied.error().code), copied.error().message);
    if (const Stop stop = after_step(Children::stop_signal() != 0 ? 128 + Children::stop_signal() : 0)) return stop;
    if (to_file) {
      auto published = SyncState::at(std::filesystem::path(options_.output).parent_path().string())
                           .publish(temporary, std::filesystem::path(options_.output).filename().string());
      if (!published) return die(kIoError, published.error().message);
    }
    if (auto marked = state_.mark("snapshot.emitted", high); !marked) return die(kIoError, marked.error().message);
    return std::nullopt;
  }

  // snapshot.ndjson's bytes to out, through the output stage when --format asks for one.
  // Blocks of a pipe's size: a stop signal is seen after each, even with a slow reader.
  Result<void> copy_snapshot(int in, std::string_view source, int out, std::string_view out_name) const {
    auto converter = output::make_converter(options_.format);
    if (!converter) return fail(converter.error());
    ndjson::Writer converted;
    std::string pending;  // the start of a line the block ended in
    std::vector<char> buffer(std::size_t{64} << 10);
    while (Children::stop_signal() == 0) {
      auto got = read_some(in, buffer.data(), buffer.size(), source);
      if (!got) return fail(got.error());
      if (*got == 0) break;
      const std::string_view block(buffer.data(), *got);
      if (!*converter) {
        if (auto wrote = write_all(out, block, out_name); !wrote) return wrote;
        continue;
      }
      pending.append(block);
      const std::size_t whole = pending.rfind('\n') + 1;  // 0 without a newline
      if (auto done = output::convert_lines(**converter, std::string_view(pending).substr(0, whole), converted); !done)
        return fail(done.error().with_context(std::string(source)));
      pending.erase(0, whole);
      if (auto wrote = converted.flush_to(out, out_name); !wrote) return wrote;
    }
    if (!*converter || Children::stop_signal() != 0) return {};
    if (!pending.empty()) return fail(Errc::corrupt_input, fmt::format("{}: the last line has no newline", source));
    if (auto finished = (*converter)->finish(converted); !finished) return finished;
    return converted.flush_to(out, out_name);
  }

  // ---- the stream ----

  // The output file of a stream that started but saved no state is emptied: its lines come
  // again. Then stream.started names the output.
  Stop mark_stream_started() {
    const auto started = state_.read_text("stream.started");
    if (must_empty_output(started, options_.output, file_size(options_.output)) &&
        ::truncate(options_.output.c_str(), 0) != 0)
      return die(kIoError, fmt::format("cannot empty {}", options_.output));
    if (auto marked = state_.mark("stream.started", options_.output.empty() ? "-" : options_.output); !marked)
      return die(kIoError, marked.error().message);
    return std::nullopt;
  }

  // no_data's first run: "now" pinned by a bounded run that saves the server's end in
  // stream.state at once, so that a crash before the first transaction cannot move the start.
  Stop pin_stream_start() {
    if (const Stop stop = mark_stream_started()) return stop;
    std::vector<std::string> argv = streaming("stream.state");
    argv.insert(argv.end(), options_.format_arguments.begin(), options_.format_arguments.end());
    argv.insert(argv.end(), {"--from=now", "--until=now"});
    if (!options_.output.empty()) argv.push_back("--output=" + options_.output);
    ChildSpec spec = command(argv);
    spec.relay_stderr = [](std::string_view line) {
      return !line.starts_with("cdc-stream: notice: reached --until") &&
             !line.starts_with("cdc-stream: notice: nothing to do");
    };
    // A run that lost the server after saving its state has pinned the start: not again.
    const int status = retrying("cdc-stream", [&] { return state_.has("stream.state") ? 0 : children_.run(spec); });
    if (const Stop stop = after_step(status)) return stop;
    if (!state_.has("stream.state"))
      return die(kInternal, fmt::format("cdc-stream --from now --until now ended without saving {}",
                                        state_.path("stream.state")));
    return std::nullopt;
  }

  // The final stream: from H* the first time, from stream.state after. Its status is
  // cdc-sync's, also after a signal (0: stopped cleanly, saved).
  int stream() {
    std::vector<std::string> argv = streaming("stream.state");
    argv.insert(argv.end(), options_.format_arguments.begin(), options_.format_arguments.end());
    if (options_.until) argv.push_back("--until=" + *options_.until);
    if (!options_.output.empty() && options_.mode != Mode::initial_only) argv.push_back("--output=" + options_.output);
    std::string from;
    if (state_.has("stream.state")) {
      const std::string file = state_.path("stream.state");
      auto state = records::parse_state(state_.read_text("stream.state").value_or(""), file);
      if (!state) return *die(kDataError, state.error().message);
      from = state->position;
    } else {
      auto [high, failed] = read_high();
      if (failed) return *failed;
      from = high;
      if (const Stop stop = mark_stream_started()) return *stop;
      argv.push_back("--from=" + from);
    }
    if (const Stop stop = phase("stream_start", from)) return *stop;
    // A stop signal in the final stream is a clean stop (exit 0): cdc-stream saves its state
    // and ends. One that comes before cdc-stream has set up its handler (here, or while it
    // starts) ends it by the signal, its state as last saved: the same clean stop.
    const auto stopped = [this] {
      console_.note(fmt::format("stopped by {}; run the same command again to resume",
                                signal_name(Children::stop_signal())));
      return 0;
    };
    if (Children::stop_signal() != 0) return stopped();
    // cdc-stream reconnects by itself once it runs; a server that is down when it starts
    // (its first connection, exit 69) is waited for here, as for the other steps.
    const int status = retrying("cdc-stream", [&] { return children_.run(command(argv)); });
    if (Children::stop_signal() != 0 && status == 128 + SIGTERM) return stopped();
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

  // cdc-sync's file (cdc-sync(1), METRICS): the phase, one-hot, and the snapshot's chunks.
  void write_metrics(std::string_view phase) {
    if (!metrics_file_.enabled()) return;
    metrics::TextWriter out;
    out.family("cdc_sync_start_time_seconds", "gauge", "When this cdc-sync started, seconds since the epoch");
    out.sample("cdc_sync_start_time_seconds", static_cast<std::uint64_t>(start_time_));
    out.family("cdc_sync_phase", "gauge", "1 for the step cdc-sync is at, 0 for the others");
    for (const std::string_view name : {"plan", "snapshot", "deltas", "merge", "emit", "stream", "done"})
      out.sample("cdc_sync_phase", std::uint64_t{name == phase ? 1U : 0U}, {{"phase", name}});
    if (chunks_total_) {
      out.family("cdc_sync_snapshot_chunks", "gauge", "Chunks in the plan");
      out.sample("cdc_sync_snapshot_chunks", *chunks_total_);
    }
    out.family("cdc_sync_snapshot_chunks_done", "gauge", "Chunk files finished in DIR/chunks");
    out.sample("cdc_sync_snapshot_chunks_done", chunks_done_);
    out.family("cdc_sync_snapshot_rows", "gauge", "Rows in the finished chunk files");
    out.sample("cdc_sync_snapshot_rows", rows_done_);
    metrics_file_.publish(out.text());
  }

  Options options_;
  SyncState state_;
  std::string tools_;
  Console console_;
  Children children_;
  std::map<std::string, std::uint64_t> chunk_rows_;
  std::uint64_t chunks_done_ = 0;
  std::uint64_t rows_done_ = 0;
  std::optional<std::uint64_t> chunks_total_;
  const std::time_t start_time_ = std::time(nullptr);
  metrics::MetricsFile metrics_file_{options_.metrics_path,
                                     [this](std::string_view message) { console_.note(fmt::format("warning: {}", message)); },
                                     "cdc-sync goes on"};
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
  auto state = SyncState::open(options.dir);
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
