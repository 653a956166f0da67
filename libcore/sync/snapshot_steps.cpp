#include "sync/snapshot_steps.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "ndjson/writer.h"
#include "output/converter.h"
#include "sync/snapshot_command.h"
#include "util/fd_io.h"
#include "util/progress.h"

namespace cdc::sync {

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

Result<void> write_all_to(const std::string& path, std::string_view text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);  // NOLINT
  if (fd < 0) return fail(Errc::io, std::strerror(errno));
  auto written = write_all(fd, text, path);
  ::close(fd);
  return written;
}

}  // namespace

std::pair<std::string, Stop> SnapshotSteps::read_high() {
  auto high = read_merged_high(dir_.path("snapshot.ndjson"));
  if (!high) return {"", runner_.die(kDataError, high.error().message)};
  return {high->position, std::nullopt};
}

std::string SnapshotSteps::lowest_low() const {
  if (auto span = dir_.read_text("span")) return split_span(*span).first;
  return "";
}

// ---- step 1: the plan ----

Stop SnapshotSteps::plan(const TableSelection& tables, const std::vector<std::string>& chunk_keys,
                         std::string_view name) {
  const Options& options = runner_.options();
  std::vector<std::string> argv = runner_.connecting("cdc-plan", &tables);
  argv.insert(argv.end(), options.retry_options.begin(), options.retry_options.end());
  if (options.chunk_size) argv.push_back(fmt::format("--chunk-size={}", *options.chunk_size));
  for (const std::string& key : chunk_keys) argv.push_back("--chunk-key=" + key);
  for (const std::string& where : options.wheres) argv.push_back("--where=" + where);
  for (const std::string& columns : options.columns) argv.push_back("--columns=" + columns);
  const std::string temporary = dir_.path(fmt::format("{}.tmp", name));
  const ChildSpec spec = command(argv, temporary);
  const int status = runner_.retrying("cdc-plan", [&] { return runner_.children().run(spec); });
  if (status != 0) ::unlink(temporary.c_str());
  if (const Stop stop = runner_.after_step(status)) return stop;
  if (auto published = dir_.publish(temporary, name); !published)
    return runner_.die(kIoError, published.error().message);
  return std::nullopt;
}

// ---- step 2: the chunks ----

// Finished chunk files and their rows (the high line's "rows"), each file read once.
void SnapshotSteps::count_chunks() {
  SnapshotCounts& counts = runner_.counts();
  counts.chunks_done = 0;
  for (const std::string& file : dir_.chunk_files()) {
    ++counts.chunks_done;
    if (counts.chunk_rows.contains(file)) continue;
    const std::uint64_t rows = chunk_file_rows(file);
    counts.chunk_rows.emplace(file, rows);
    counts.rows_done += rows;
  }
}

void SnapshotSteps::remove_parts() {
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.dir(), ignored))
    if (entry.path().filename().string().starts_with("plan.part.")) std::filesystem::remove(entry.path(), ignored);
}

// The -j local cdc-snapshot processes over the plan, dealt round-robin to plan.part.* files;
// 0, or the status to stop with when one cannot be written or started.
int SnapshotSteps::start_local_workers(std::uint64_t total) {
  const Options& options = runner_.options();
  const std::uint64_t parts = std::max<std::uint64_t>(1, std::min(options.jobs, total));
  std::vector<std::string> dealt(parts);
  {
    const int fd = ::open(dir_.path("plan.ndjson").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return *runner_.die(kIoError, fmt::format("cannot split {}", dir_.path("plan.ndjson")));
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
  for (std::size_t part = 0; part < parts; ++part) {
    if (dealt[part].empty()) continue;
    const std::string name = "plan.part." + part_suffix(part);
    if (auto written = write_all_to(dir_.path(name), dealt[part]); !written)
      return *runner_.die(kIoError,
                          fmt::format("cannot split {}: {}", dir_.path("plan.ndjson"), written.error().message));
    std::vector<std::string> argv = runner_.connecting("cdc-snapshot", nullptr);
    argv.insert(argv.end(), options.retry_options.begin(), options.retry_options.end());
    argv.insert(argv.end(), {"--output-dir", dir_.path("chunks"), dir_.path(name)});
    if (const int failed = start_worker(command(argv), false)) return failed;
  }
  return 0;
}

// The --snapshot-command: once per worker, each with its shard of the one plan file, when it
// names {index} or {shard} (-j workers, or fewer when the plan has fewer chunks); else once.
// Each command's text goes to commands, in start order; 0, or the status to stop with.
int SnapshotSteps::start_command_workers(std::uint64_t total, std::vector<std::string>& commands) {
  const Options& options = runner_.options();
  const bool per_worker = runs_per_worker(options.snapshot_command);
  WorkerPlaceholders values;
  values.count = per_worker ? std::max<std::uint64_t>(1, std::min(options.jobs, total)) : options.jobs;
  values.plan = dir_.path("plan.ndjson");
  values.chunks_dir = dir_.path("chunks");
  values.cdc_snapshot = runner_.tool("cdc-snapshot");
  for (std::uint64_t index = 0; index < (per_worker ? values.count : 1); ++index) {
    values.index = index;
    // A local worker's arguments (the password is in MYSQL_PWD, never among them).
    const std::vector<std::string> argv = runner_.connecting("cdc-snapshot", nullptr);
    values.args.assign(argv.begin() + 1, argv.end());
    values.args.insert(values.args.end(), options.retry_options.begin(), options.retry_options.end());
    if (per_worker) values.args.push_back(fmt::format("--shard={}/{}", index, values.count));
    values.args.push_back("--output-dir=" + values.chunks_dir);
    values.args.push_back(values.plan);
    commands.push_back(expand_worker_command(options.snapshot_command, values));
    // Its stdout is not the NDJSON's: it goes to stderr.
    ChildSpec spec = command({"/bin/sh", "-c", commands.back()});
    spec.stdout_to_stderr = true;
    spec.ends_with_cdc_sync = false;  // as a remote worker would: cdc-sync(1), --snapshot-command
    if (const int failed = start_worker(std::move(spec), true)) return failed;
  }
  return 0;
}

// 0, or 127 when it cannot be started (with the message).
int SnapshotSteps::start_worker(ChildSpec spec, bool own_process_group) {
  // cdc-snapshot draws its own progress line when stderr is a terminal; cdc-sync draws one
  // for all of them, so theirs go through a pipe.
  if (::isatty(STDERR_FILENO) == 1) spec.relay_stderr = [](std::string_view) { return true; };
  spec.own_process_group = own_process_group;
  if (auto started = runner_.children().start(spec); !started) {
    runner_.console().error(started.error().message);
    return 127;
  }
  return 0;
}

// One run of the workers over the plan: the first failure's status (the others are stopped
// then).
int SnapshotSteps::read_chunks_once(std::uint64_t total) {
  const Options& options = runner_.options();
  Console& console = runner_.console();
  Children& children = runner_.children();
  SnapshotCounts& counts = runner_.counts();
  const bool show = options.progress == ProgressMode::always ||
                    (options.progress == ProgressMode::automatic && ::isatty(STDERR_FILENO) == 1);
  counts.chunks_total = total;
  std::error_code error;
  std::filesystem::create_directories(dir_.path("chunks"), error);
  if (error) return *runner_.die(kIoError, fmt::format("cannot create {}", dir_.path("chunks")));
  remove_parts();
  std::vector<std::string> commands;  // --snapshot-command's, as run
  int first_failure =
      options.snapshot_command.empty() ? start_local_workers(total) : start_command_workers(total, commands);
  if (first_failure != 0) children.terminate_all();
  count_chunks();
  const std::uint64_t start_chunks = counts.chunks_done;
  const std::uint64_t start_rows = counts.rows_done;
  const auto start = std::chrono::steady_clock::now();
  const auto draw = [&] {
    count_chunks();
    if (!show) return;
    const auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
    console.progress(progress_text(addition_ ? "cdc-sync: new tables' snapshot" : "cdc-sync: snapshot",
                                   {counts.chunks_done, total, counts.rows_done, counts.chunks_done - start_chunks,
                                    counts.rows_done - start_rows, static_cast<std::uint64_t>(elapsed.count())}));
  };
  children.wait_all(
      [&](std::size_t index, int status) {
        if (status != 0 && first_failure == 0) {
          first_failure = status;
          // A tool says why it failed; a command (ssh, kubectl) may not. Not again on each
          // rerun after a 69 (Runner::retrying).
          if (index < commands.size() && Children::stop_signal() == 0 &&
              !(status == kUnavailable && children.holding_errors()))
            console.error(fmt::format("the --snapshot-command{} exited {}: {}",
                                      commands.size() > 1 ? fmt::format(" of worker {}", index) : "", status,
                                      commands[index]));
          children.terminate_all();
        }
      },
      show || runner_.metrics_enabled() ? std::function<void()>([&] {
        draw();
        if (runner_.metrics_due()) runner_.write_metrics(addition_ ? "add_snapshot" : "snapshot");
      })
                                        : std::function<void()>());
  if (show) {
    draw();
    console.end_progress();  // the last line stays
  }
  remove_parts();
  return first_failure;
}

Stop SnapshotSteps::read_chunks() {
  auto total = count_lines(dir_.path("plan.ndjson"));
  if (!total) return runner_.die(kIoError, total.error().message);
  const bool by_command = !runner_.options().snapshot_command.empty();
  // A command (an ssh to each worker) is not run again for nothing: local workers skip the
  // published chunks at no cost.
  auto missing = missing_chunks();
  if (!missing) return runner_.die(kDataError, missing.error().message);
  if (!by_command || !missing->empty()) {
    const int status = runner_.retrying(by_command ? "the --snapshot-command" : "cdc-snapshot",
                                        [&] { return read_chunks_once(*total); });
    if (const Stop stop = runner_.after_step(status)) return stop;
    missing = missing_chunks();
    if (!missing) return runner_.die(kDataError, missing.error().message);
  }
  // Never merged without them: a worker that wrote elsewhere, a command that read a part.
  if (!missing->empty())
    return runner_.die(kFailure,
                       fmt::format("{}{} of the plan's {} chunks are not in {}: {}{}",
                                   by_command ? "the --snapshot-command exited 0, but " : "", missing->size(), *total,
                                   dir_.path("chunks"), some_names(*missing, 10),
                                   by_command ? "; the workers must write them there, a directory they share with "
                                                "cdc-sync; run the same command again to read the missing chunks"
                                              : ""));
  runner_.counts().chunks_total = *total;
  count_chunks();
  if (runner_.counts().chunks_done != *total)
    return runner_.die(kFailure, fmt::format("{} has {} chunk files, and the plan has {} chunks: remove {} and {} to "
                                             "read them again",
                                             dir_.path("chunks"), runner_.counts().chunks_done, *total,
                                             dir_.path("chunks"), dir_.path("span")));
  return std::nullopt;
}

Result<std::vector<std::string>> SnapshotSteps::missing_chunks() const {
  auto plan = dir_.read_text("plan.ndjson");
  if (!plan) return fail(Errc::io, fmt::format("cannot read {}", dir_.path("plan.ndjson")));
  auto missing = missing_chunk_files(*plan, dir_.path("chunks"));
  if (!missing) return fail(missing.error().with_context(dir_.path("plan.ndjson")));
  return missing;
}

// ---- step 3: the span ----

Stop SnapshotSteps::span() {
  std::vector<std::string> argv{runner_.tool("cdc-merge"), "--span"};
  for (std::string& file : dir_.chunk_files()) argv.push_back(std::move(file));
  const std::string temporary = dir_.path("span.tmp");
  const int status = runner_.children().run(command(argv, temporary));
  if (status != 0) dir_.remove({"span.tmp"});
  if (const Stop stop = runner_.after_step(status)) return stop;
  const auto [from, until] = split_span(dir_.read_text("span.tmp").value_or(""));
  if (from.empty() || until.empty())
    return runner_.die(kInternal, fmt::format("cdc-merge --span printed '{}', not FROM UNTIL",
                                              dir_.read_text("span.tmp").value_or("").substr(0, 200)));
  if (auto published = dir_.publish(temporary, "span"); !published)
    return runner_.die(kIoError, published.error().message);
  return std::nullopt;
}

// ---- step 4: the deltas ----

// cdc-stream from FROM to UNTIL into deltas.ndjson, even for an empty span (then just its
// span lines). A rerun resumes from deltas.state; without it nothing of deltas.ndjson is
// known to be whole, and it starts over. deltas.done marks that cdc-stream reached UNTIL;
// what the deltas hold is trusted only through cdc-merge's check.
Stop SnapshotSteps::read_deltas() {
  const auto [from, until] = split_span(dir_.read_text("span").value_or(""));
  const int status = runner_.retrying("cdc-stream", [&, &from = from, &until = until] {
    const bool start_over = deltas_start_over(dir_.facts());
    if (start_over) dir_.remove({"deltas.ndjson", "deltas.done", "deltas.state"});
    std::vector<std::string> argv = runner_.streaming(filter_, dir_.path("deltas.state"), addition_);
    argv.push_back(fmt::format("--output={}", dir_.path("deltas.ndjson")));
    argv.push_back(fmt::format("--until={}", until));
    if (start_over) argv.push_back(fmt::format("--from={}", from));
    return runner_.children().run(command(argv));
  });
  if (const Stop stop = runner_.after_step(status)) return stop;
  if (auto marked = dir_.mark("deltas.done", until); !marked) return runner_.die(kIoError, marked.error().message);
  return std::nullopt;
}

// ---- step 5: the merge ----

std::vector<std::string> SnapshotSteps::merge_inputs(std::vector<std::string> argv) const {
  for (std::string& file : dir_.chunk_files()) argv.push_back(std::move(file));
  argv.insert(argv.end(), {"--deltas", dir_.path("deltas.ndjson")});
  return argv;
}

// False when cdc-merge --check-deltas refuses deltas.ndjson (its message, in deltas.check,
// names the file: a chunk it refuses is not the deltas' fault).
bool SnapshotSteps::deltas_pass_check() {
  const int status = runner_.children().run(
      command(merge_inputs({runner_.tool("cdc-merge"), "--check-deltas"}), "", dir_.path("deltas.check")));
  const std::string first = first_line_of("deltas.check");
  return !(status == kDataError && first.starts_with(fmt::format("cdc-merge: error: {}", dir_.path("deltas.ndjson"))));
}

std::string SnapshotSteps::first_line_of(std::string_view name) const {
  const std::string text = dir_.read_text(name).value_or("");
  return text.substr(0, text.find('\n'));
}

void SnapshotSteps::copy_to_stderr(std::string_view name) {
  if (auto text = dir_.read_text(name); text && !text->empty()) runner_.console().relay(*text + "\n");
}

// The merge into snapshot.ndjson. Deltas that fail cdc-merge's check (a crash, a disk, a
// hand) are read again from FROM, once.
Stop SnapshotSteps::merge(int& deltas_rejected) {
  std::vector<std::string> argv = merge_inputs({runner_.tool("cdc-merge")});
  argv.insert(argv.end(), {"--output", dir_.path("snapshot.ndjson.tmp")});
  const int status = runner_.children().run(command(argv, "", dir_.path("merge.err")));
  if (status == kDataError && Children::stop_signal() == 0 && !deltas_pass_check()) {
    const std::string from = lowest_low();
    if (deltas_rejected++ == 0) {
      std::string reason = first_line_of("deltas.check");
      if (reason.starts_with("cdc-merge: error: ")) reason.erase(0, 18);
      runner_.console().note(fmt::format("notice: {} fails cdc-merge's check ({}); reading the deltas again from {}",
                                         dir_.path("deltas.ndjson"), reason, from));
      dir_.remove({"deltas.done", "deltas.state", "deltas.ndjson"});
      return std::nullopt;  // next action: read_deltas, then merge again
    }
    copy_to_stderr("merge.err");
    return runner_.die(kDataError, fmt::format("the deltas read again from {} still fail cdc-merge's check: see the "
                                               "error above",
                                               from));
  }
  copy_to_stderr("merge.err");
  dir_.remove({"merge.err", "deltas.check"});
  if (const Stop stop = runner_.after_step(status)) return stop;
  const std::string temporary = dir_.path("snapshot.ndjson.tmp");
  if (auto high = read_merged_high(temporary); !high)
    return runner_.die(kInternal,
                       fmt::format("cdc-merge's output does not end with its high line: {}", high.error().message));
  if (auto published = dir_.publish(temporary, "snapshot.ndjson"); !published)
    return runner_.die(kIoError, published.error().message);
  return std::nullopt;
}

// ---- step 6: the snapshot out ----

// The whole snapshot to stdout (again after a crash before snapshot.emitted: r lines are
// upserts, so a consumer that applies them twice ends the same), or copied to a file whole.
Stop SnapshotSteps::emit(const std::string& output) {
  auto [high, failed] = read_high();
  if (failed) return failed;
  const std::string source = dir_.path("snapshot.ndjson");
  const bool to_file = !output.empty();
  const std::string temporary = output + ".tmp";
  const int in = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return runner_.die(kIoError, fmt::format("cannot read {}: {}", source, std::strerror(errno)));
  int out = STDOUT_FILENO;
  if (to_file) {
    out = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);  // NOLINT
    if (out < 0) {
      ::close(in);
      return runner_.die(kIoError, fmt::format("cannot write {}: {}", temporary, std::strerror(errno)));
    }
  }
  Result<void> copied = copy_snapshot(in, source, out, to_file ? temporary : "stdout");
  ::close(in);
  if (to_file && ::close(out) != 0 && copied) copied = fail(Errc::io, fmt::format("cannot write {}", temporary));
  // The reader went away (EPIPE): a quiet stop, as the tools make it.
  if (!copied && is_broken_pipe(copied.error())) return 0;
  if (!copied) return runner_.die(exit_code_for(copied.error().code), copied.error().message);
  if (const Stop stop = runner_.after_step(Children::stop_signal() != 0 ? 128 + Children::stop_signal() : 0))
    return stop;
  if (to_file) {
    auto published = SyncState::at(std::filesystem::path(output).parent_path().string())
                         .publish(temporary, std::filesystem::path(output).filename().string());
    if (!published) return runner_.die(kIoError, published.error().message);
  }
  if (auto marked = dir_.mark("snapshot.emitted", high); !marked) return runner_.die(kIoError, marked.error().message);
  return std::nullopt;
}

// snapshot.ndjson's bytes to out, through the output stage when --format asks for one.
// Blocks of a pipe's size: a stop signal is seen after each, even with a slow reader.
Result<void> SnapshotSteps::copy_snapshot(int in, std::string_view source, int out, std::string_view out_name) const {
  auto converter = output::make_converter(runner_.options().format);
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

}  // namespace cdc::sync
