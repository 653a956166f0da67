#include "merge/deltas.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <thread>
#include <unordered_map>

#include "binlog/ddl_target.h"
#include "merge/change_scan.h"
#include "merge/positions.h"
#include "ndjson/json_scan.h"
#include "ndjson/writer.h"
#include "records/kinds.h"
#include "records/members.h"
#include "records/position.h"
#include "records/row.h"
#include "records/stream_lines.h"

namespace cdc::merge {

namespace {


using Kind = gtid::Position::Kind;

// Which table a line is for, by the raw quoted names: quoted db, '.', quoted table.
std::string table_key(std::string_view quoted_db, std::string_view quoted_table) {
  std::string key;
  key.reserve(quoted_db.size() + 1 + quoted_table.size());
  key.append(quoted_db).push_back('.');
  key.append(quoted_table);
  return key;
}



// A line of a cdc-stream output's kinds (man/cdc-stream.1, STDOUT).
bool is_deltas_kind(std::string_view op) noexcept {
  namespace o = records::op;
  return op == o::insert || op == o::update || op == o::erase || op == o::ddl || op == o::commit || op == o::incident ||
         op == o::span_start || op == o::span_end || op == o::table;
}

// What a line of another kind most likely comes from.
std::string_view source_of(std::string_view op) noexcept {
  if (op == records::op::chunk) return " (a line of a cdc-plan plan)";
  if (op == records::op::low || op == records::op::row || op == records::op::high) return " (a line of a cdc-snapshot chunk output or of a merged snapshot)";
  return "";
}

// (file, offset) is before (other_file, other_offset), in gtid::FilePosition's order (a longer
// name is a later file), without building one: this runs for every line.
bool file_before(std::string_view file, std::uint64_t offset, std::string_view other_file,
                 std::uint64_t other_offset) noexcept {
  if (file.size() != other_file.size()) return file.size() < other_file.size();
  if (const int order = file.compare(other_file); order != 0) return order < 0;
  return offset < other_offset;
}

// Where the deltas are read from: the whole of them, or one of two consecutive parts read at
// once (see read_deltas_in_parts).
enum class Part : std::uint8_t { whole, first, second };

// The log order at the ends of a part, for the check that a second part follows the first.
struct PartEnds {
  bool any = false;  // a line in log order was seen
  std::string first_file;
  std::uint64_t first_offset = 0;
  std::string last_file;
  std::uint64_t last_offset = 0;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> first_seqs;  // per MariaDB domain
  std::vector<std::pair<std::uint32_t, std::uint64_t>> last_seqs;
  std::string first_gtid;  // the first and last MariaDB GTIDs
  std::string last_gtid;
};

class Applier {
 public:
  Applier(ndjson::LineReader& reader, const DeltaContext& context, EffectStore& effects, Part part = Part::whole)
      : reader_(reader), context_(context), effects_(effects), part_(part) {
    for (std::size_t t = 0; t < context.tables.size(); ++t)
      by_name_.emplace(table_key(context.tables[t].quoted_db, context.tables[t].quoted_table), t);
    if (part_ == Part::second) start_line_ = 1;  // the span_start line is in the first part
  }

  // After run(): the log order at this part's ends.
  [[nodiscard]] PartEnds ends() const {
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

  Result<DeltaSummary> run() {
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

 private:
  // "rerun cdc-stream --from LOW --until HIGH to produce the deltas".
  [[nodiscard]] std::string rerun() const {
    const std::string from = context_.lowest_low.to_string();
    return fmt::format("rerun cdc-stream --from {} --until {} to produce the deltas",
                       from.empty() ? std::string("FROM (cdc-merge --span)") : from, context_.high.to_string());
  }

  Result<void> line(std::string_view text) {
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

  // The merged table with these raw quoted names, SIZE_MAX for another. A line is most often of
  // the same table as the line before it: that answer is kept, with the bytes cdc-stream writes
  // after "op" for that table (line() compares them first).
  std::size_t table_index_of(std::string_view quoted_db, std::string_view quoted_table) {
    if (quoted_db == last_db_ && quoted_table == last_table_) return last_table_index_;
    scratch_ = table_key(quoted_db, quoted_table);
    const auto found = by_name_.find(scratch_);
    last_db_.assign(quoted_db);
    last_table_.assign(quoted_table);
    last_table_index_ = found == by_name_.end() ? SIZE_MAX : found->second;
    last_members_ = fmt::format(R"(","v":1,"db":{},"table":{},)", quoted_db, quoted_table);
    return last_table_index_;
  }

  Result<simdjson::dom::object> parse(std::string_view text) {
    simdjson::dom::object record;
    if (const auto error = parser_.parse(text.data(), text.size(), true).get_object().get(record); error)
      return fail(reader_.error_here(
          fmt::format("torn or malformed line ({}): the file was cut or written over; {}",
                      simdjson::error_message(error), rerun())));
    return record;
  }

  // A line that is not in cdc-stream's exact bytes (or a span line): parsed whole.
  Result<void> parsed_line(std::string_view text) {
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

  Result<void> other_kind(std::string_view op) {
    return fail(reader_.error_here(fmt::format(
        "op \"{}\" is not a line of cdc-stream{}: --deltas takes the output of cdc-stream --from FROM --until UNTIL; "
        "{}",
        op, source_of(op), rerun())));
  }

  // Every line but span_start comes after span_start and before span_end.
  Result<void> check_in_span(std::string_view op) {
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

  Result<gtid::Position> span_position(simdjson::dom::object record, std::string_view op) {
    if (auto version = records::check_version(record); !version)
      return fail(reader_.error_here(fmt::format("{} {}", op, version.error().message)));
    auto position = records::read_position(record);
    if (!position) return fail(reader_.error_here(fmt::format("{} {}", op, position.error().message)));
    return position;
  }

  Result<void> span_start(simdjson::dom::object record) {
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

  Result<void> span_end(simdjson::dom::object record) {
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

  // Lines in log order: "pos" never goes back, and MariaDB GTIDs grow per domain. Cheap for the
  // lines of one transaction, which share their file and GTID.
  Result<void> check_order(const records::LinePos& pos) {
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

  // A change of a merged table (table_index) at pos, read from its raw text. end: what
  // scan_line_pos read of the line's end, when the line is in cdc-stream's exact form and was
  // not parsed (the scan proves it well formed, else it is parsed); nullptr for a parsed line.
  Result<void> apply_change(std::string_view op, std::string_view text, std::size_t table_index,
                            const records::LinePos& pos, const records::LineEnd* end) {
    const TableInfo& table = context_.tables[table_index];
    // One scan of the line (merge/change_scan.h). Unchecked, it stops at "pos": the members
    // from there to the end were read by scan_line_pos, in their exact form (ts_ms is the last).
    const std::size_t stop = end != nullptr ? end->pos_member - 1 : text.size();
    ChangeScan scanned = scan_change(text, table, stop, end != nullptr, end != nullptr && end->strict_json, change_);
    if (scanned == ChangeScan::unproven) {
      if (auto record = parse(text); !record) return fail(record.error());
      scanned = scan_change(text, table, stop, false, false, change_);
    }
    if (scanned == ChangeScan::malformed_image) return fail(reader_.error_here("a row image is not a JSON object"));
    if (scanned == ChangeScan::malformed_line) return fail(reader_.error_here("not a JSON object"));
    const std::string_view before = change_.before;
    const std::string_view after = change_.after;
    const std::string_view ts_ms = end != nullptr ? end->ts_ms : change_.ts_ms;
    const std::optional<std::string_view> partial = change_.partial;
    if (partial == "true")
      return fail(reader_.error_here(fmt::format(
          "{}.{}: the change has a partial row image: cdc-merge needs full images (binlog_row_image=FULL)", table.db,
          table.table)));
    if (context_.high.kind != gtid::Position::Kind::file)
      if (auto set = gtids_.set(context_.high.kind, pos.gtid); !set)
        return fail(reader_.error_here(set.error().message));
    if (is_after(pos, gtids_, context_.high)) {
      ++summary_.changes_after_high;
      return {};
    }
    if (!is_after(pos, gtids_, table.min_low)) return {};
    if (ts_ms.empty()) return fail(reader_.error_here("a change without \"ts_ms\""));
    bool applied = false;
    if (op != records::op::insert) {
      // An update that keeps the row's key and identity values (most do) ends on the entry its
      // after side sets, present: its before side is only checked.
      const bool kept = op == records::op::update && table.identity && change_.before_values.key == change_.after_values.key &&
                        change_.before_values.identity == change_.after_values.identity;
      auto side = remove_side(before, table, pos, kept);
      if (!side) return fail(side.error());
      applied = applied || *side;
    }
    if (op != records::op::erase) {
      auto side = put_side(after, table, pos, ts_ms);
      if (!side) return fail(side.error());
      applied = applied || *side;
    }
    if (applied) ++summary_.changes_applied;
    return {};
  }

  Result<records::LinePos> event_position(simdjson::dom::object record) {
    auto position = records::read_pos(record, true);
    if (!position) return fail(reader_.error_here(position.error().message));
    if (context_.high.kind != gtid::Position::Kind::file)
      if (auto set = gtids_.set(context_.high.kind, position->gtid); !set)
        return fail(reader_.error_here(set.error().message));
    return position;
  }

  // Error when an image lacks a key or identity column.
  Result<void> check_values(const ImageValues& values, std::string_view which, const TableInfo& table) {
    const auto missing = [&](const std::vector<std::string_view>& got, const std::vector<std::string>& names,
                             std::string_view role) -> Result<void> {
      for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i].empty())
          return fail(reader_.error_here(fmt::format(
              "{}.{}: the {} image has no column \"{}\" ({}): cdc-merge needs full row images "
              "(binlog_row_image=FULL) with column names (binlog_row_metadata=FULL)",
              table.db, table.table, which, names[i], role)));
      return {};
    };
    if (auto checked = missing(values.key, table.key, "a chunk key column"); !checked) return checked;
    if (table.identity)
      if (auto checked = missing(values.identity, *table.identity, "an identity column"); !checked) return checked;
    return {};
  }

  // The group the row belongs to, when the change is after that chunk's low.
  Result<std::optional<std::uint32_t>> group_for(const TableInfo& table, const ImageValues& values,
                                                 const records::LinePos& position) {
    auto chunk = find_chunk(table, values.key, sort_key_, near_chunk_);
    if (!chunk) return fail(reader_.error_here(chunk.error().message));
    if (!*chunk) return std::optional<std::uint32_t>{};
    if (!is_after(position, gtids_, context_.chunks[**chunk].low)) return std::optional<std::uint32_t>{};
    return std::optional<std::uint32_t>{context_.chunk_group[**chunk]};
  }

  void identity_text(const TableInfo& table, const ImageValues& values, std::string_view image) {
    identity_.clear();
    if (!table.identity)
      identity_.append(image);
    else
      append_object(table.quoted_identity, values.identity, identity_);
  }

  // Whether the image is one the chunks' --where keeps (always, without one). The chunks hold
  // the rows it was true on at their lows; a change after a low moves its row into or out of
  // that set by its images, as the server's WHERE would have seen them.
  Result<bool> kept_by_filter(const TableInfo& table, const ImageValues& values, std::string_view which) {
    if (!table.filter) return true;
    for (std::size_t i = 0; i < values.filtered.size(); ++i)
      if (values.filtered[i].empty())
        return fail(reader_.error_here(fmt::format(
            "{}.{}: the {} image has no column {} (a column of --where '{}'): cdc-merge needs full row images "
            "(binlog_row_image=FULL) with column names (binlog_row_metadata=FULL)",
            table.db, table.table, which, table.quoted_filter_columns[i], *context_.chunks[table.chunks.front()].opened.where)));
    auto truth = table.filter->evaluate(values.filtered);
    if (!truth) return fail(reader_.error_here(fmt::format("{}.{}: {}", table.db, table.table, truth.error().message)));
    return *truth == filter::Truth::is_true;
  }

  // checked_only: the image is checked, and nothing more.
  Result<bool> remove_side(std::string_view image, const TableInfo& table, const records::LinePos& position,
                           bool checked_only) {
    if (image.empty() || image.front() != '{')
      return fail(reader_.error_here("the before image is missing or not an object"));
    if (auto got = check_values(change_.before_values, "before", table); !got) return fail(got.error());
    if (checked_only) return false;
    auto group = group_for(table, change_.before_values, position);
    if (!group) return fail(group.error());
    if (!*group) return false;
    identity_text(table, change_.before_values, image);
    if (table.identity) {
      if (auto set = effects_.set_absent(**group, identity_); !set) return fail(set.error());
    } else {
      // A row counted only when the filter kept it: one it did not was never in the chunk.
      auto kept = kept_by_filter(table, change_.before_values, "before");
      if (!kept) return fail(kept.error());
      if (!*kept) return false;
      if (auto set = effects_.add_count(**group, identity_, -1, {}); !set) return fail(set.error());
    }
    return true;
  }

  Result<bool> put_side(std::string_view image, const TableInfo& table, const records::LinePos& position,
                        std::string_view ts_ms) {
    if (image.empty() || image.front() != '{')
      return fail(reader_.error_here("the after image is missing or not an object"));
    if (auto got = check_values(change_.after_values, "after", table); !got) return fail(got.error());
    auto group = group_for(table, change_.after_values, position);
    if (!group) return fail(group.error());
    if (!*group) return false;
    identity_text(table, change_.after_values, image);
    auto kept = kept_by_filter(table, change_.after_values, "after");
    if (!kept) return fail(kept.error());
    if (!*kept) {
      // The row leaves the filter (or never entered it): absent, as the filtered SELECT at H*
      // would not return it; a keyless table's row is simply not counted.
      if (!table.identity) return false;
      if (auto set = effects_.set_absent(**group, identity_); !set) return fail(set.error());
      return true;
    }
    // The row as cdc-snapshot would have written it.
    line_.clear();
    line_.append(table.row_prefix);
    if (table.quoted_key.empty())
      line_.append("null");  // a table read whole, as cdc-snapshot writes its rows
    else
      append_object(table.quoted_key, change_.after_values.key, line_);
    line_.append(records::kRowBeforeAfter);
    if (table.identity) {
      // The image, most of the line, is read back from the mapped deltas when they are a file.
      const std::uint64_t image_offset =
          reader_.line_offset() + static_cast<std::uint64_t>(image.data() - reader_.line().data());
      if (effects_.has_source(image_offset, image.size())) {
        tail_.assign(records::comma_key::ts_ms).append(ts_ms).append("}\n");
        if (auto set = effects_.set_present_split(**group, identity_, line_, image_offset, image.size(), tail_); !set)
          return fail(set.error());
        return true;
      }
    }
    line_.append(image);
    line_.append(records::comma_key::ts_ms).append(ts_ms).append("}\n");
    if (table.identity) {
      if (auto set = effects_.set_present(**group, identity_, line_); !set) return fail(set.error());
    } else if (auto set = effects_.add_count(**group, identity_, 1, line_); !set) {
      return fail(set.error());
    }
    return true;
  }

  Result<void> ddl(simdjson::dom::object record) {
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

  ndjson::LineReader& reader_;
  const DeltaContext& context_;
  EffectStore& effects_;
  Part part_;
  std::unordered_map<std::string, std::size_t> by_name_;
  simdjson::dom::parser parser_;
  EventGtidCache gtids_;
  DeltaSummary summary_;
  ChangeText change_;  // the change line being applied
  std::string scratch_;
  std::string last_db_;  // table_index_of's last answer
  std::string last_table_;
  std::size_t last_table_index_ = SIZE_MAX;
  std::string last_members_;  // ","v":1,"db":DB,"table":TABLE, of it
  std::string sort_key_;
  std::size_t near_chunk_ = 0;  // find_chunk's
  std::string identity_;
  std::string line_;
  std::string tail_;
  // The span lines' line numbers (0: not seen), and the last line in log order.
  std::uint64_t start_line_ = 0;
  std::uint64_t end_line_ = 0;
  std::string last_file_;
  std::uint64_t last_offset_ = 0;
  std::uint64_t last_line_ = 0;
  std::string last_gtid_;
  struct DomainSeq {
    std::uint32_t domain;
    std::uint64_t seq;
    std::string gtid;
    std::uint64_t line;
  };
  std::vector<DomainSeq> domains_;  // MariaDB: each domain's last GTID
  // The first line in log order, and each domain's first seq_no.
  std::string first_file_;
  std::uint64_t first_offset_ = 0;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> first_seqs_;
  std::string first_gtid_;
};

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
