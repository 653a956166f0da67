#include "sync/resume.h"

#include <fmt/format.h>

#include <algorithm>

namespace cdc::sync {

std::optional<Mode> parse_mode(std::string_view text) noexcept {
  if (text == "initial") return Mode::initial;
  if (text == "initial_only") return Mode::initial_only;
  if (text == "no_data") return Mode::no_data;
  return std::nullopt;
}

std::string_view action_name(Action action) noexcept {
  switch (action) {
    case Action::pin_stream_start: return "pin_stream_start";
    case Action::plan: return "plan";
    case Action::announce_snapshot_start: return "announce_snapshot_start";
    case Action::read_chunks: return "read_chunks";
    case Action::span: return "span";
    case Action::read_deltas: return "read_deltas";
    case Action::merge: return "merge";
    case Action::emit_snapshot: return "emit_snapshot";
    case Action::skip_emit: return "skip_emit";
    case Action::announce_snapshot_end: return "announce_snapshot_end";
    case Action::finish: return "finish";
    case Action::stream: return "stream";
  }
  return "?";
}

Action next_action(Mode mode, bool with_output, const DirFacts& facts, const RunProgress& progress) noexcept {
  if (mode == Mode::no_data) return facts.stream_state ? Action::stream : Action::pin_stream_start;
  // Once the stream has saved a position it only resumes: the snapshot went out before it.
  if (mode == Mode::initial && facts.stream_state) return Action::stream;
  if (!facts.snapshot && !facts.plan) return Action::plan;
  if (!progress.snapshot_start_announced) return Action::announce_snapshot_start;
  if (!facts.snapshot) {
    // The chunks are read (again) until their span is known: a rerun skips the chunk files
    // that are there and reads the others.
    if (!facts.span) return progress.chunks_read ? Action::span : Action::read_chunks;
    // deltas.done without deltas.ndjson (removed by hand) does not count.
    if (!facts.deltas_done || !facts.deltas) return Action::read_deltas;
    return Action::merge;
  }
  if (!progress.emit_settled) {
    // initial_only writes the snapshot on every run; initial once, and not at all with
    // --output (the snapshot stays in DIR/snapshot.ndjson).
    const bool emit = mode == Mode::initial_only || (!with_output && !facts.snapshot_emitted);
    return emit ? Action::emit_snapshot : Action::skip_emit;
  }
  if (!progress.snapshot_end_announced) return Action::announce_snapshot_end;
  return mode == Mode::initial_only ? Action::finish : Action::stream;
}

bool deltas_start_over(const DirFacts& facts) noexcept { return !facts.deltas_state || !facts.deltas; }

std::string settings_text(const Settings& settings) {
  std::string text = fmt::format("family={}\ntables={}\nexclude={}\nchunk-size={}",
                                 settings.mode == Mode::no_data ? "stream" : "snapshot", settings.tables,
                                 settings.exclude,
                                 settings.chunk_size ? fmt::format("{}", *settings.chunk_size) : std::string());
  for (const std::string& key : settings.chunk_keys) text += fmt::format("\nchunk-key={}", key);
  // A line each; an option's text cannot hold a newline (the command line's, one argument).
  for (const std::string& where : settings.wheres) text += fmt::format("\nwhere={}", where);
  for (const std::string& columns : settings.columns) text += fmt::format("\ncolumns={}", columns);
  return text;
}

SettingsDecision decide_settings(const std::optional<std::string>& existing, bool bound,
                                 std::string_view wanted) noexcept {
  if (existing && *existing == wanted) return SettingsDecision::keep;
  if (existing && bound) return SettingsDecision::refuse;
  return SettingsDecision::write;
}

namespace {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

}  // namespace

std::vector<std::string> settings_difference(std::string_view was, std::string_view now) {
  // A longest common subsequence over a handful of lines; what is outside it differs.
  const auto a = split_lines(was);
  const auto b = split_lines(now);
  std::vector<std::vector<std::size_t>> common(a.size() + 1, std::vector<std::size_t>(b.size() + 1, 0));
  for (std::size_t i = a.size(); i-- > 0;)
    for (std::size_t j = b.size(); j-- > 0;)
      common[i][j] = a[i] == b[j] ? common[i + 1][j + 1] + 1 : std::max(common[i + 1][j], common[i][j + 1]);
  std::vector<std::string> out;
  std::vector<std::string> added;
  const auto flush_added = [&] {
    for (std::string& line : added) out.push_back(std::move(line));
    added.clear();
  };
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      flush_added();
      ++i, ++j;
    } else if (j == b.size() || (i < a.size() && common[i + 1][j] >= common[i][j + 1])) {
      out.push_back(fmt::format("  was: {}", a[i++]));
    } else {
      added.push_back(fmt::format("  now: {}", b[j++]));
    }
  }
  flush_added();
  return out;
}

bool must_empty_output(const std::optional<std::string>& started, std::string_view output,
                       std::uint64_t output_size) noexcept {
  return started && !output.empty() && output_size > 0 && *started == output;
}

std::optional<std::uint64_t> RerunSchedule::after_failure(std::uint64_t waited) noexcept {
  if (waited + pause_ > retry_for_) return std::nullopt;
  const std::uint64_t pause = pause_;
  pause_ = std::min<std::uint64_t>(pause_ * 2, 30);
  return pause;
}

}  // namespace cdc::sync
