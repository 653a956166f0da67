#include "sync/runner.h"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <memory>

#include "sync/resume.h"
#include "sync/state_dir.h"

namespace cdc::sync {

ChildSpec command(std::vector<std::string> argv, std::string stdout_file, std::string stderr_file) {
  ChildSpec spec;
  spec.argv = std::move(argv);
  spec.stdout_file = std::move(stdout_file);
  spec.stderr_file = std::move(stderr_file);
  return spec;
}

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

Runner::Runner(Options options, std::string tools, std::string dir)
    : options_(std::move(options)),
      tools_(std::move(tools)),
      dir_(std::move(dir)),
      children_(console_),
      metrics_file_(options_.metrics_path,
                    [this](std::string_view message) { console_.note(fmt::format("warning: {}", message)); },
                    "cdc-sync goes on") {}

Stop Runner::die(int status, std::string_view message) {
  console_.error(message);
  return status;
}

Stop Runner::after_step(int status) {
  if (const int signal = Children::stop_signal(); signal != 0) {
    if (status != 0 && status < 128) return status;
    console_.note(fmt::format("stopped by {}; run the same command again to resume", signal_name(signal)));
    return kInterrupted;
  }
  if (status != 0) return status;
  return std::nullopt;
}

UnavailableReruns::UnavailableReruns(Console& console, std::uint64_t retry_for, std::string what,
                                     std::function<std::string()> progress)
    : console_(console),
      retry_for_(retry_for),
      what_(std::move(what)),
      progress_(std::move(progress)),
      schedule_(retry_for) {}

void UnavailableReruns::before_run() {
  if (progress_) progress_before_ = progress_();
}

std::optional<std::uint64_t> UnavailableReruns::after_unavailable() {
  ++runs_;
  const auto now = std::chrono::steady_clock::now();
  if (first_failure_ && progress_ && progress_() != progress_before_) {
    // It got somewhere before it failed again: a new outage, with its own window.
    first_failure_.reset();
    schedule_ = RerunSchedule(retry_for_);
    runs_ = 1;
  }
  const bool first = !first_failure_;
  if (first) first_failure_ = now;
  waited_ = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(now - *first_failure_).count());
  const auto pause = schedule_.after_failure(waited_);
  if (pause && first)
    console_.note(fmt::format("notice: {} exited 69 (server unavailable); running it again in {}s, then with "
                              "longer pauses for up to {}s (--retry-for), without repeating its error",
                              what_, *pause, schedule_.retry_for()));
  return pause;
}

void UnavailableReruns::say_giving_up() {
  console_.note(fmt::format("notice: {} exited 69 (server unavailable) again after {}s of retrying ({} runs); "
                            "giving up (--retry-for {})",
                            what_, waited_, runs_, schedule_.retry_for()));
}

int Runner::retrying(std::string_view what, const std::function<int()>& attempt,
                     std::function<std::string()> progress) {
  UnavailableReruns reruns(console_, options_.rerun_for_seconds, std::string(what), std::move(progress));
  // The first run says why it failed itself; the reruns' error lines are held back, and shown
  // for the last run when cdc-sync gives up, or for a rerun that ends otherwise.
  const auto relay = [this](const std::vector<std::string>& lines) {
    std::string text;
    for (const std::string& line : lines) text.append(line).append(1, '\n');
    if (!text.empty()) console_.relay(text);
  };
  for (;;) {
    children_.hold_errors(reruns.rerunning());
    reruns.before_run();
    const int status = attempt();
    const std::vector<std::string> errors = children_.take_held_errors();
    children_.hold_errors(false);
    if (status != kUnavailable || Children::stop_signal() != 0) {
      relay(errors);  // another end than the one held back: its reason
      return status;
    }
    const auto pause = reruns.after_unavailable();
    if (!pause) {
      relay(errors);
      reruns.say_giving_up();
      return status;
    }
    // A stop while it waits ends the step as a stop, not as the server's failure: exit 75
    // (Runner::after_step), and the final stream's clean stop.
    if (!children_.sleep(std::chrono::seconds(*pause))) return 128 + Children::stop_signal();
  }
}

Children::BackgroundRerun Runner::rerunning_background(std::string what, std::function<std::string()> progress) {
  auto reruns = std::make_shared<UnavailableReruns>(console_, options_.rerun_for_seconds, std::move(what),
                                                    std::move(progress));
  reruns->before_run();
  return [reruns](int status) -> std::optional<std::chrono::milliseconds> {
    if (status != kUnavailable) return std::nullopt;
    const auto pause = reruns->after_unavailable();
    if (!pause) {
      reruns->say_giving_up();
      return std::nullopt;
    }
    reruns->before_run();  // the state as the next run finds it
    return std::chrono::seconds(*pause);
  };
}

std::string Runner::tool(std::string_view name) const { return fmt::format("{}/{}", tools_, name); }

std::vector<std::string> Runner::connecting(std::string_view name, const TableSelection* filter) const {
  std::vector<std::string> argv{tool(name)};
  argv.insert(argv.end(), options_.connection.begin(), options_.connection.end());
  if (filter != nullptr) {
    argv.push_back("--tables=" + filter->tables);
    if (!filter->exclude.empty()) argv.push_back("--exclude=" + filter->exclude);
  }
  return argv;
}

std::vector<std::string> Runner::streaming(const TableSelection& filter, const std::string& state_path,
                                           bool beside_stream) const {
  std::vector<std::string> argv = connecting("cdc-stream", &filter);
  for (const std::string& option : options_.stream_options)
    if (!beside_stream || !option.starts_with("--server-id=")) argv.push_back(option);
  if (options_.metrics_path && !beside_stream)
    argv.push_back("--metrics=" + stream_metrics_path(*options_.metrics_path));
  argv.push_back(fmt::format("--state={}", state_path));
  return argv;
}

Stop Runner::mark_stream_started(const SyncState& dir) {
  const std::string& output = options_.output;
  struct stat status {};
  const std::uint64_t size = ::stat(output.c_str(), &status) == 0 ? static_cast<std::uint64_t>(status.st_size) : 0;
  if (must_empty_output(dir.read_text("stream.started"), output, size) && ::truncate(output.c_str(), 0) != 0)
    return die(kIoError, fmt::format("cannot empty {}", output));
  if (auto marked = dir.mark("stream.started", output.empty() ? "-" : output); !marked)
    return die(kIoError, marked.error().message);
  return std::nullopt;
}

Stop Runner::phase(std::string_view name, std::string_view position) {
  console_.note(fmt::format("phase {} position{}{}", name, position.empty() ? "" : " ", position));
  if (options_.on_phase.empty()) return std::nullopt;
  ChildSpec hook;
  hook.argv = {"bash", "-c", options_.on_phase + " \"$@\"", "cdc-sync", std::string(name), std::string(position)};
  hook.stdout_to_stderr = true;
  hook.ends_with_cdc_sync = false;
  hook.environment = {fmt::format("CDC_SYNC_PHASE={}", name), fmt::format("CDC_SYNC_POSITION={}", position),
                      fmt::format("CDC_SYNC_DIR={}", dir_)};
  const int status = children_.run(hook);
  if (Children::stop_signal() != 0)
    if (const Stop stop = after_step(status)) return stop;
  if (status != 0)
    return die(status, fmt::format("--on-phase command failed at phase {} (exit {}): {}", name, status,
                                   options_.on_phase));
  return std::nullopt;
}

void Runner::write_metrics(std::string_view phase) {
  if (!metrics_file_.enabled()) return;
  metrics::TextWriter out;
  out.family("cdc_sync_start_time_seconds", "gauge", "When this cdc-sync started, seconds since the epoch");
  out.sample("cdc_sync_start_time_seconds", static_cast<std::uint64_t>(start_time_));
  out.family("cdc_sync_phase", "gauge", "1 for the step cdc-sync is at, 0 for the others");
  for (const std::string_view name : kMetricsPhases)
    out.sample("cdc_sync_phase", std::uint64_t{name == phase ? 1U : 0U}, {{"phase", name}});
  if (counts_.chunks_total) {
    out.family("cdc_sync_snapshot_chunks", "gauge", "Chunks in the plan");
    out.sample("cdc_sync_snapshot_chunks", *counts_.chunks_total);
  }
  out.family("cdc_sync_snapshot_chunks_done", "gauge", "Chunk files finished in DIR/chunks");
  out.sample("cdc_sync_snapshot_chunks_done", counts_.chunks_done);
  out.family("cdc_sync_snapshot_rows", "gauge", "Rows in the finished chunk files");
  out.sample("cdc_sync_snapshot_rows", counts_.rows_done);
  metrics_file_.publish(out.text());
}

}  // namespace cdc::sync
