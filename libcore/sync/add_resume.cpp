#include "sync/add_resume.h"

#include <fmt/format.h>

#include <algorithm>

#include "gtid/position.h"
#include "records/chunk.h"
#include "sync/state_dir.h"

namespace cdc::sync {

namespace {

// Decimal digits only, 1 to 18 of them.
std::optional<std::uint64_t> decimal(std::string_view text) noexcept {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  std::uint64_t value = 0;
  for (const char digit : text) value = value * 10 + static_cast<std::uint64_t>(digit - '0');
  return value;
}

void add_once(std::vector<TableName>& tables, TableName name) {
  if (std::find(tables.begin(), tables.end(), name) == tables.end()) tables.push_back(std::move(name));
}

// One name with the characters TableFilter reads as syntax escaped.
std::string escaped(std::string_view name) {
  std::string out;
  for (const char c : name) {
    if (c == '\\' || c == '*' || c == '?' || c == '.' || c == ',') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

// ---- settings ------------------------------------------------------------------------------

std::optional<Settings> parse_settings(std::string_view text) {
  Settings settings;
  bool family = false;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    const std::size_t equals = line.find('=');
    if (equals == std::string_view::npos) return std::nullopt;
    const std::string_view name = line.substr(0, equals);
    const std::string_view value = line.substr(equals + 1);
    if (name == "family") {
      if (value != "snapshot" && value != "stream") return std::nullopt;
      settings.mode = value == "stream" ? Mode::no_data : Mode::initial;
      family = true;
    } else if (name == "tables") {
      settings.tables = std::string(value);
    } else if (name == "exclude") {
      settings.exclude = std::string(value);
    } else if (name == "chunk-size") {
      if (!value.empty()) {
        settings.chunk_size = decimal(value);
        if (!settings.chunk_size) return std::nullopt;
      }
    } else if (name == "chunk-key") {
      settings.chunk_keys.emplace_back(value);
    } else if (name == "where") {
      settings.wheres.emplace_back(value);
    } else if (name == "columns") {
      settings.columns.emplace_back(value);
    } else {
      return std::nullopt;
    }
  }
  if (!family) return std::nullopt;
  return settings;
}

bool only_tables_differ(const Settings& was, const Settings& now) {
  if ((was.mode == Mode::no_data) != (now.mode == Mode::no_data)) return false;
  if (was.chunk_size != now.chunk_size) return false;
  if (was.wheres != now.wheres || was.columns != now.columns) return false;
  return std::all_of(was.chunk_keys.begin(), was.chunk_keys.end(), [&](const std::string& key) {
    return std::find(now.chunk_keys.begin(), now.chunk_keys.end(), key) != now.chunk_keys.end();
  });
}

namespace {

// The name a pattern matches when it has no unescaped * or ?; nullopt for a glob.
std::optional<std::string> literal_name(std::string_view pattern) {
  std::string name;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '*' || pattern[i] == '?') return std::nullopt;
    if (pattern[i] == '\\' && i + 1 < pattern.size()) ++i;
    name += pattern[i];
  }
  return name;
}

}  // namespace

bool surely_no_new_tables(const Settings& was, const Settings& now) {
  auto old_filter = TableFilter::parse(was.tables, was.exclude);
  auto old_includes = TableFilter::parse_list(was.tables, "--tables");
  auto old_excludes = TableFilter::parse_list(was.exclude, "--exclude");
  auto new_includes = TableFilter::parse_list(now.tables, "--tables");
  auto new_excludes = TableFilter::parse_list(now.exclude, "--exclude");
  if (!old_filter || !old_includes || !old_excludes || !new_includes || !new_excludes || new_includes->empty())
    return false;
  const auto listed = [](const std::vector<TableFilter::Pattern>& list, const TableFilter::Pattern& pattern) {
    return std::find(list.begin(), list.end(), pattern) != list.end();
  };
  const bool excludes_kept = std::all_of(old_excludes->begin(), old_excludes->end(),
                                         [&](const TableFilter::Pattern& pattern) { return listed(*new_excludes, pattern); });
  return std::all_of(new_includes->begin(), new_includes->end(), [&](const TableFilter::Pattern& pattern) {
    const auto db = literal_name(pattern.database);
    const auto table = literal_name(pattern.table);
    if (db && table && old_filter->selects(*db, *table)) return true;
    return excludes_kept && listed(*old_includes, pattern);
  });
}

Rerun decide_rerun(const RerunFacts& facts, std::string_view wanted, Mode mode) {
  if (facts.addition)
    return *facts.addition == wanted && mode == Mode::initial ? Rerun::continue_addition
                                                              : Rerun::refuse_addition_in_progress;
  if (facts.existing && *facts.existing == wanted) return Rerun::keep;
  if (!facts.existing || !facts.bound) return Rerun::write;
  const auto was = parse_settings(*facts.existing);
  const auto now = parse_settings(wanted);
  if (!was || !now || !facts.stream_started || !only_tables_differ(*was, *now)) return Rerun::refuse;
  if (mode == Mode::initial) return surely_no_new_tables(*was, *now) ? Rerun::switch_tables : Rerun::add_tables;
  if (mode == Mode::no_data) return Rerun::switch_tables;
  return Rerun::refuse;  // initial_only has no stream to add to
}

// ---- which tables are new ------------------------------------------------------------------

Result<NewTables> new_tables(std::string_view plan_text, const TableFilter& old_filter) {
  NewTables found;
  auto read = each_plan_chunk(plan_text, [&](std::string_view line, const records::Chunk& chunk) {
    if (old_filter.selects(chunk.db, chunk.table)) return;
    found.plan.append(line);
    found.plan += '\n';
    add_once(found.tables, TableName{chunk.db, chunk.table});
  });
  if (!read) return fail(std::move(read).error());
  return found;
}

Result<std::vector<TableName>> plan_tables(std::string_view plan_text) {
  std::vector<TableName> tables;
  auto read = each_plan_chunk(plan_text, [&](std::string_view, const records::Chunk& chunk) {
    add_once(tables, TableName{chunk.db, chunk.table});
  });
  if (!read) return fail(std::move(read).error());
  return tables;
}

std::string exact_tables(const std::vector<TableName>& tables) {
  std::string text;
  for (const TableName& name : tables) {
    if (!text.empty()) text += ',';
    text += escaped(name.db) + "." + escaped(name.table);
  }
  return text;
}

std::vector<std::string> chunk_keys_for(const std::vector<std::string>& keys, const TableFilter& filter) {
  std::vector<std::string> kept;
  for (const std::string& key : keys) {
    // cdc-plan's form: the names as they are, the first '.' before the first '=' splits them.
    const std::string_view name = std::string_view(key).substr(0, key.find('='));
    const std::size_t dot = name.find('.');
    if (dot == std::string_view::npos || filter.selects(name.substr(0, dot), name.substr(dot + 1))) kept.push_back(key);
  }
  return kept;
}

// ---- the switch-over -----------------------------------------------------------------------

Result<PositionOrder> order_of(std::string_view stream_position, std::string_view high) {
  auto p = gtid::Position::parse(stream_position);
  if (!p) return fail(Errc::corrupt_input, fmt::format("the stream's position {}: {}", stream_position, p.error().message));
  auto h = gtid::Position::parse(high);
  if (!h) return fail(Errc::corrupt_input, fmt::format("the high watermark {}: {}", high, h.error().message));
  if (p->kind != h->kind)
    return fail(Errc::corrupt_input, fmt::format("the stream's position {} and the new tables' high watermark {} are "
                                                 "not of one kind: they cannot be compared",
                                                 stream_position, high));
  switch (p->kind) {
    case gtid::Position::Kind::mysql_gtids:
      if (p->mysql_gtids == h->mysql_gtids) return PositionOrder::same;
      return p->mysql_gtids.contains(h->mysql_gtids) ? PositionOrder::after : PositionOrder::before;
    case gtid::Position::Kind::mariadb_gtids:
      if (p->mariadb_gtids == h->mariadb_gtids) return PositionOrder::same;
      return p->mariadb_gtids.contains(h->mariadb_gtids) ? PositionOrder::after : PositionOrder::before;
    case gtid::Position::Kind::file:
      if (p->file == h->file) return PositionOrder::same;
      return h->file < p->file ? PositionOrder::after : PositionOrder::before;
  }
  return PositionOrder::before;
}

std::string_view add_action_name(AddAction action) noexcept {
  switch (action) {
    case AddAction::resume_stream: return "resume_stream";
    case AddAction::plan: return "plan";
    case AddAction::announce_add_snapshot_start: return "announce_add_snapshot_start";
    case AddAction::read_chunks: return "read_chunks";
    case AddAction::span: return "span";
    case AddAction::read_deltas: return "read_deltas";
    case AddAction::merge: return "merge";
    case AddAction::stop_stream: return "stop_stream";
    case AddAction::catch_up_stream: return "catch_up_stream";
    case AddAction::emit_snapshot: return "emit_snapshot";
    case AddAction::skip_emit: return "skip_emit";
    case AddAction::announce_add_snapshot_end: return "announce_add_snapshot_end";
    case AddAction::catch_up_new_tables: return "catch_up_new_tables";
    case AddAction::replace_settings: return "replace_settings";
    case AddAction::finish: return "finish";
  }
  return "?";
}

AddAction next_add_action(bool with_output, const AddFacts& facts, const AddProgress& progress) noexcept {
  const DirFacts& files = facts.snapshot;
  // While the new tables' snapshot is to be made, the old tables' stream runs beside it.
  const bool snapshot_to_make = !files.snapshot && !(files.plan && facts.no_new_tables);
  if (snapshot_to_make) {
    if (!progress.stream_resumed) return AddAction::resume_stream;
    if (!files.plan) return AddAction::plan;
    if (!progress.snapshot_start_announced) return AddAction::announce_add_snapshot_start;
    if (!files.span) return progress.chunks_read ? AddAction::span : AddAction::read_chunks;
    if (!files.deltas_done || !files.deltas) return AddAction::read_deltas;
    return AddAction::merge;
  }
  // The switch-over: nothing else writes the stream's output from here on.
  if (progress.stream_running) return AddAction::stop_stream;
  if (facts.settings_replaced) return AddAction::finish;
  if (!facts.no_new_tables) {
    if (!progress.snapshot_start_announced) return AddAction::announce_add_snapshot_start;
    // The old tables' changes up to H come before the new tables' snapshot at H.
    if (facts.stream_vs_high == PositionOrder::before) return AddAction::catch_up_stream;
    if (!progress.emit_settled)
      return !with_output && !files.snapshot_emitted ? AddAction::emit_snapshot : AddAction::skip_emit;
    if (!progress.snapshot_end_announced) return AddAction::announce_add_snapshot_end;
    if (facts.stream_vs_high == PositionOrder::after && !facts.catchup_done) return AddAction::catch_up_new_tables;
  }
  return AddAction::replace_settings;
}

std::optional<std::uint64_t> add_dir_number(std::string_view name) noexcept {
  if (!name.starts_with("add.")) return std::nullopt;
  const std::string_view digits = name.substr(4);
  if (digits.size() > 1 && digits.front() == '0') return std::nullopt;
  return decimal(digits);
}

}  // namespace cdc::sync
