#include "merge/deltas.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <sys/stat.h>

#include <thread>

#include "merge/deltas_applier.h"

namespace cdc::merge {

namespace deltas_inside {

PartEnds Applier::ends() const {
  PartEnds ends;
  ends.any = last_line_ != 0;
  ends.first_file = first_file_;
  ends.first_offset = first_offset_;
  ends.last_file = last_file_;
  ends.last_offset = last_offset_;
  ends.first_seqs = first_seqs_;
  ends.first_gtid = first_gtid_;
  ends.last_gtid = last_gtid_;
  for (const DomainSeq& seen : domains_) ends.last_seqs.emplace_back(seen.domain, seen.seq);
  return ends;
}

Result<DeltaSummary> Applier::run() {
  for (;;) {
    auto more = reader_.next();
    if (!more) return fail(more.error());
    if (!*more) break;
    if (auto done = line(reader_.line()); !done) return fail(done.error());
  }
  if (start_line_ == 0)
    return fail(Errc::corrupt_input,
                fmt::format("{}: {}: the deltas need the span_start and span_end lines of a bounded cdc-stream; {}",
                            reader_.name(), reader_.line_number() == 0 ? "empty" : "only blank lines", rerun()));
  if (part_ == Part::first) return summary_;  // the span_end line is in the second part
  if (end_line_ == 0)
    return fail(Errc::corrupt_input,
                fmt::format("{}:{}: the deltas end without their span_end line{}: cdc-stream stopped before "
                            "--until, or the file was cut; {}",
                            reader_.name(), reader_.line_number(),
                            last_line_ == 0 ? std::string()
                                            : fmt::format(" (the last pos is {}:{}, line {})", last_file_,
                                                          last_offset_, last_line_),
                            rerun()));
  return summary_;
}

std::string Applier::rerun() const {
  const std::string from = context_.lowest_low.to_string();
  return fmt::format("rerun cdc-stream --from {} --until {} to produce the deltas",
                     from.empty() ? std::string("FROM (cdc-merge --span)") : from, context_.high.to_string());
}

Result<void> Applier::line(std::string_view text) {
  if (!reader_.terminated()) {
    if (ndjson::trim_json_space(text).empty()) return {};
    return fail(reader_.error_here(fmt::format(
        "torn last line: it has no newline (the writer was interrupted mid-record, or the file was cut); {}",
        rerun())));
  }
  std::string_view op;
  if (text.substr(0, records::kOpLineStart.size()) == records::kOpLineStart) {
    const std::size_t end = text.find('"', records::kOpLineStart.size());
    if (end != std::string_view::npos) op = text.substr(records::kOpLineStart.size(), end - records::kOpLineStart.size());
  } else if (ndjson::trim_json_space(text).empty()) {
    return {};
  }
  if (op.empty()) return parsed_line(text);
  // A table line only describes the changes after it: nothing to apply. Read without parsing
  // unless it holds a second line's start (a torn line), as below.
  if (op == records::op::table) {
    if (text.find(records::kOpLineStart, 1) != std::string_view::npos) return parsed_line(text);
    return check_in_span(op);
  }
  const bool change = op == records::op::insert || op == records::op::update || op == records::op::erase;
  const bool commit = op == records::op::commit;
  if (!change && !commit && op != records::op::ddl && op != records::op::incident) {
    if (!is_deltas_kind(op)) return other_kind(op);
    return parsed_line(text);  // span_start, span_end
  }
  if (auto in_span = check_in_span(op); !in_span) return in_span;
  // The table, for a change: db and table come right after op and v, found without parsing.
  std::size_t table_index = SIZE_MAX;
  bool skipped = !change && op != records::op::ddl;  // commit, incident
  if (change && last_members_.size() > 0 &&
      ndjson::starts_with_bytes(text.substr(records::kOpLineStart.size() + op.size()), last_members_)) {
    // The members after "op" are the last table's, byte for byte.
    table_index = last_table_index_;
    skipped = table_index == SIZE_MAX;
  } else if (change) {
    ndjson::MemberScanner scanner(text);
    std::string_view key;
    std::string_view value;
    std::string_view db;
    std::string_view table;
    for (int i = 0; i < 6 && (db.empty() || table.empty()) && scanner.next(key, value); ++i) {
      if (key == "\"db\"") db = value;
      if (key == "\"table\"") table = value;
    }
    if (db.empty() || table.empty()) return parsed_line(text);
    table_index = table_index_of(db, table);
    skipped = table_index == SIZE_MAX;
  }
  // A line is read without parsing only when it holds no second line's start (a torn line
  // continued by the next one; a line that is parsed fails to parse then) and its "pos" is in
  // cdc-stream's exact form.
  if (skipped && text.find(records::kOpLineStart, 1) != std::string_view::npos) return parsed_line(text);
  records::LinePos pos;
  records::LineEnd end;
  if (!records::scan_line_pos(text, commit, pos, end)) return parsed_line(text);
  if (auto ordered = check_order(pos); !ordered) return ordered;
  if (skipped) return {};
  if (op == records::op::ddl || context_.check_only) {
    auto record = parse(text);
    if (!record) return fail(record.error());
    if (context_.check_only) return {};
    return ddl(*record);
  }
  return apply_change(op, text, table_index, pos, &end);
}

std::size_t Applier::table_index_of(std::string_view quoted_db, std::string_view quoted_table) {
  if (quoted_db == last_db_ && quoted_table == last_table_) return last_table_index_;
  scratch_ = table_key(quoted_db, quoted_table);
  const auto found = by_name_.find(scratch_);
  last_db_.assign(quoted_db);
  last_table_.assign(quoted_table);
  last_table_index_ = found == by_name_.end() ? SIZE_MAX : found->second;
  last_members_ = fmt::format(R"(","v":1,"db":{},"table":{},)", quoted_db, quoted_table);
  return last_table_index_;
}

Result<simdjson::dom::object> Applier::parse(std::string_view text) {
  simdjson::dom::object record;
  if (const auto error = parser_.parse(text.data(), text.size(), true).get_object().get(record); error)
    return fail(reader_.error_here(
        fmt::format("torn or malformed line ({}): the file was cut or written over; {}",
                    simdjson::error_message(error), rerun())));
  return record;
}

Result<void> Applier::parsed_line(std::string_view text) {
  auto parsed = parse(text);
  if (!parsed) return fail(parsed.error());
  const simdjson::dom::object record = *parsed;
  std::string_view op;
  if (record[records::field::op].get_string().get(op) != simdjson::SUCCESS)
    return fail(reader_.error_here(fmt::format("no \"op\" string: not a line of cdc-stream; {}", rerun())));
  if (!is_deltas_kind(op)) return other_kind(op);
  if (op == records::op::span_start) return span_start(record);
  if (auto in_span = check_in_span(op); !in_span) return in_span;
  if (op == records::op::span_end) return span_end(record);
  if (op == records::op::table) return {};
  auto pos = records::read_pos(record, op != records::op::commit);
  if (!pos) return fail(reader_.error_here(pos.error().message));
  if (auto ordered = check_order(*pos); !ordered) return ordered;
  if (op == records::op::commit || op == records::op::incident || context_.check_only) return {};
  if (op == records::op::ddl) return ddl(record);
  std::string_view db;
  std::string_view table;
  if (record["db"].get_string().get(db) != simdjson::SUCCESS ||
      record["table"].get_string().get(table) != simdjson::SUCCESS)
    return fail(reader_.error_here("a change without \"db\" and \"table\" strings"));
  const std::size_t table_index = table_index_of(ndjson::quoted(db), ndjson::quoted(table));
  if (table_index == SIZE_MAX) return {};
  return apply_change(op, text, table_index, *pos, nullptr);
}

Result<void> Applier::other_kind(std::string_view op) {
  return fail(reader_.error_here(fmt::format(
      "op \"{}\" is not a line of cdc-stream{}: --deltas takes the output of cdc-stream --from FROM --until UNTIL; "
      "{}",
      op, source_of(op), rerun())));
}

Result<void> Applier::check_in_span(std::string_view op) {
  if (start_line_ == 0)
    return fail(reader_.error_here(fmt::format(
        "the deltas do not start with a span_start line (the first line is op \"{}\"): they are not the whole "
        "output of a bounded cdc-stream --until; {}",
        op, rerun())));
  if (end_line_ != 0)
    return fail(reader_.error_here(fmt::format(
        "op \"{}\" after the span_end line (line {}): the deltas were appended to or pieced together; {}", op,
        end_line_, rerun())));
  return {};
}

Result<gtid::Position> Applier::span_position(simdjson::dom::object record, std::string_view op) {
  if (auto version = records::check_version(record); !version)
    return fail(reader_.error_here(fmt::format("{} {}", op, version.error().message)));
  auto position = records::read_position(record);
  if (!position) return fail(reader_.error_here(fmt::format("{} {}", op, position.error().message)));
  return position;
}

Result<void> Applier::span_start(simdjson::dom::object record) {
  if (start_line_ != 0 || part_ == Part::second)
    return fail(reader_.error_here(fmt::format(
        "a second span_start line (the first is at line {}): two cdc-stream outputs were put together; {}",
        start_line_, rerun())));
  start_line_ = reader_.line_number();
  auto start = span_position(record, records::op::span_start);
  if (!start) return fail(start.error());
  // At or before every chunk's low: in the watermarks' form, else by binlog coordinates.
  for (const ChunkInfo& chunk : context_.chunks) {
    bool covered = false;
    if (start->kind == chunk.low.kind) {
      covered = contains(chunk.low, *start);
    } else if (start->kind == Kind::file && !chunk.opened.mark.file.empty()) {
      covered = !file_before(chunk.opened.mark.file, chunk.opened.mark.offset, start->file.file, start->file.offset);
    } else {
      return fail(reader_.error_here(fmt::format(
          "the deltas start at {} (span_start), {}, and the low watermark of {} is {}, {}: they cannot be "
          "compared, so the deltas are not shown to cover the chunks; {}",
          start->to_string(), kind_name(start->kind), chunk.describe(), chunk.low.to_string(),
          kind_name(chunk.low.kind), rerun())));
    }
    if (!covered)
      return fail(reader_.error_here(fmt::format(
          "the deltas start at {} (span_start), after the low watermark {} of {}{}: the changes between them are "
          "missing; {}",
          start->to_string(), chunk.low.to_string(), chunk.describe(),
          chunk.low.kind == start->kind ? fmt::format(" (the lowest low is {})", context_.lowest_low.to_string())
                                        : fmt::format(" (binlog {}:{})", chunk.opened.mark.file, chunk.opened.mark.offset),
          rerun())));
  }
  return {};
}

Result<void> Applier::span_end(simdjson::dom::object record) {
  if (part_ == Part::first) return fail(reader_.error_here("span_end in the first part"));  // read whole instead
  end_line_ = reader_.line_number();
  auto end = span_position(record, records::op::span_end);
  if (!end) return fail(end.error());
  records::LinePos pos;
  simdjson::dom::object pos_object;
  const bool has_pos = record["pos"].get_object().get(pos_object) == simdjson::SUCCESS &&
                       pos_object["file"].get_string().get(pos.file) == simdjson::SUCCESS &&
                       pos_object["offset"].get_uint64().get(pos.offset) == simdjson::SUCCESS;
  if (has_pos)
    if (auto ordered = check_order(pos); !ordered) return ordered;
  const gtid::Position& high = context_.high;
  const std::string_view which = context_.high_is_until ? "--until" : "the highest high watermark";
  const auto cannot_compare = [&](std::string_view why) {
    return fail(reader_.error_here(fmt::format(
        "the deltas end at {} (span_end), {}, and H* ({}) is {}, {}: {}, so the deltas are not shown to reach "
        "H*; {}",
        end->to_string(), kind_name(end->kind), which, high.to_string(), kind_name(high.kind), why, rerun())));
  };
  const auto short_of = [&](const std::string& reached, const std::string& needed) {
    return fail(reader_.error_here(fmt::format(
        "the deltas end at {}, before H* = {} ({}): the changes up to H* are missing; {}", reached,
        needed, which, rerun())));
  };
  if (end->kind == high.kind) {
    if (!contains(*end, high)) return short_of(fmt::format("{} (span_end)", end->to_string()), high.to_string());
    return {};
  }
  if (!has_pos) return cannot_compare("the span_end line has no \"pos\"");
  const std::string reached = fmt::format("{} (span_end, at binlog {}:{})", end->to_string(), pos.file, pos.offset);
  if (high.kind == Kind::file) {
    if (file_before(pos.file, pos.offset, high.file.file, high.file.offset))
      return short_of(reached, high.to_string());
    return {};
  }
  // GTID H* and deltas without GTIDs: by the binlog coordinates of every chunk's high.
  if (context_.high_is_until) return cannot_compare("--until has no binlog coordinates");
  for (const ChunkInfo& chunk : context_.chunks) {
    if (chunk.closed.mark.file.empty()) return cannot_compare(fmt::format("the high line of {} has no \"file\"", chunk.describe()));
    if (file_before(pos.file, pos.offset, chunk.closed.mark.file, chunk.closed.mark.offset))
      return short_of(reached, fmt::format("{} (the high of {} is at binlog {}:{})", high.to_string(),
                                           chunk.describe(), chunk.closed.mark.file, chunk.closed.mark.offset));
  }
  return {};
}

Result<void> Applier::check_order(const records::LinePos& pos) {
  if (last_line_ != 0 && file_before(pos.file, pos.offset, last_file_, last_offset_))
    return fail(reader_.error_here(fmt::format(
        "out of log order: pos {}:{} comes after {}:{} (line {}): transactions are swapped, or the deltas were "
        "pieced together; {}",
        pos.file, pos.offset, last_file_, last_offset_, last_line_, rerun())));
  if (last_line_ == 0) {
    first_file_.assign(pos.file);
    first_offset_ = pos.offset;
  }
  if (pos.file != last_file_) last_file_.assign(pos.file);
  last_offset_ = pos.offset;
  last_line_ = reader_.line_number();
  // MariaDB GTIDs (D-S-N; MySQL's hold a ':'): a new transaction's seq_no is above its
  // domain's last one.
  if (pos.gtid.empty() || pos.gtid == last_gtid_ || pos.gtid.find(':') != std::string_view::npos) return {};
  auto parsed = gtid::MariadbGtid::parse(pos.gtid);
  if (!parsed) return fail(reader_.error_here(fmt::format("GTID '{}': {}", pos.gtid, parsed.error().message)));
  last_gtid_.assign(pos.gtid);
  if (first_gtid_.empty()) first_gtid_.assign(pos.gtid);
  for (DomainSeq& seen : domains_) {
    if (seen.domain != parsed->domain_id) continue;
    if (parsed->seq_no <= seen.seq)
      return fail(reader_.error_here(fmt::format(
          "out of log order: GTID {} comes after {} (line {}) in domain {}: transactions are swapped, or the "
          "deltas were pieced together; {}",
          pos.gtid, seen.gtid, seen.line, seen.domain, rerun())));
    seen.seq = parsed->seq_no;
    seen.gtid.assign(pos.gtid);
    seen.line = last_line_;
    return {};
  }
  domains_.push_back(DomainSeq{parsed->domain_id, parsed->seq_no, std::string(pos.gtid), last_line_});
  first_seqs_.emplace_back(parsed->domain_id, parsed->seq_no);
  return {};
}

Result<records::LinePos> Applier::event_position(simdjson::dom::object record) {
  auto position = records::read_pos(record, true);
  if (!position) return fail(reader_.error_here(position.error().message));
  if (context_.high.kind != gtid::Position::Kind::file)
    if (auto set = gtids_.set(context_.high.kind, position->gtid); !set)
      return fail(reader_.error_here(set.error().message));
  return position;
}

Result<void> Applier::ddl(simdjson::dom::object record) {
  std::string_view db;
  std::string_view sql;
  if (record["db"].get_string().get(db) != simdjson::SUCCESS ||
      record["sql"].get_string().get(sql) != simdjson::SUCCESS)
    return fail(reader_.error_here("a ddl line without \"db\" and \"sql\" strings"));
  const binlog::DdlTarget target = binlog::ddl_target(sql, db);
  std::vector<const TableInfo*> hit;
  for (const TableInfo& table : context_.tables) {
    bool names = false;
    for (const auto& changed : target.tables)
      if (changed.database == table.db && changed.table == table.table) names = true;
    if (target.parsed && target.tables.empty() && target.database == table.db) names = true;
    if (names) hit.push_back(&table);
  }
  if (hit.empty()) return {};
  auto position = event_position(record);
  if (!position) return fail(position.error());
  if (is_after(*position, gtids_, context_.high)) return {};
  for (const TableInfo* table : hit) {
    if (!is_after(*position, gtids_, table->min_low)) continue;
    std::string shown(sql.substr(0, 200));
    if (sql.size() > 200) shown += "...";
    return fail(reader_.error_here(fmt::format("DDL on {}.{} during the snapshot ({}): snapshot the table again",
                                               table->db, table->table, shown)));
  }
  return {};
}

}  // namespace deltas_inside

namespace {

using deltas_inside::Applier;
using deltas_inside::Part;
using deltas_inside::PartEnds;
using deltas_inside::file_before;
// The second part's first lines come after the first part's last ones, as check_order would
// have found reading them in one part.
bool parts_in_order(const PartEnds& first, const PartEnds& second) {
  if (!first.any || !second.any) return true;
  if (file_before(second.first_file, second.first_offset, first.last_file, first.last_offset)) return false;
  // The split may fall inside a transaction: then the second part's first GTID is the first
  // part's last one, which check_order lets through.
  for (std::size_t i = 0; i < second.first_seqs.size(); ++i)
    for (const auto& [last_domain, last_seq] : first.last_seqs) {
      const auto [domain, seq] = second.first_seqs[i];
      if (domain != last_domain || seq > last_seq) continue;
      if (seq < last_seq || i > 0 || second.first_gtid != first.last_gtid) return false;
    }
  return true;
}

}  // namespace

void append_object(std::span<const std::string> quoted_names, std::span<const std::string_view> values,
                   std::string& out) {
  out.push_back('{');
  for (std::size_t i = 0; i < quoted_names.size(); ++i) {
    if (i > 0) out.push_back(',');
    out.append(quoted_names[i]).push_back(':');
    out.append(values[i]);
  }
  out.push_back('}');
}

Result<DeltaSummary> read_deltas(ndjson::LineReader& reader, const DeltaContext& context, EffectStore& effects) {
  Applier applier(reader, context, effects);
  return applier.run();
}

std::optional<DeltaSummary> read_deltas_in_parts(int fd, const std::string& name, std::uint64_t begin,
                                                 const DeltaContext& context, EffectStore& first,
                                                 EffectStore& second) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < begin || size - begin < kMinPartedDeltas) return std::nullopt;
  // The second part starts at the line after the middle.
  std::uint64_t split = 0;
  {
    ndjson::LineReader middle(fd, name, begin + (size - begin) / 2);
    auto more = middle.next();
    if (!more || !*more || !middle.terminated()) return std::nullopt;
    split = middle.next_offset();
  }
  if (split >= size) return std::nullopt;
  Result<DeltaSummary> second_read = DeltaSummary{};
  PartEnds second_ends;
  std::thread worker([&] {
    ndjson::LineReader reader(fd, name, split);
    Applier applier(reader, context, second, Part::second);
    second_read = applier.run();
    second_ends = applier.ends();
  });
  ndjson::LineReader reader(fd, name, begin, split);
  Applier applier(reader, context, first, Part::first);
  const Result<DeltaSummary> first_read = applier.run();
  worker.join();
  if (!first_read || !second_read || !parts_in_order(applier.ends(), second_ends)) return std::nullopt;
  return DeltaSummary{first_read->changes_applied + second_read->changes_applied,
                      first_read->changes_after_high + second_read->changes_after_high};
}

}  // namespace cdc::merge
