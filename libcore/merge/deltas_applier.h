#pragma once

// The inside of merge/deltas.cpp, shared by the two files that implement it: the Applier that
// reads a cdc-stream output line by line (deltas.cpp: the line kinds, the span and order
// checks, DDL) and places each change of a merged table in its chunk's group (delta_images.cpp:
// the row images, their identity, --where). Not an interface: merge/deltas.h is.

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


namespace cdc::merge::deltas_inside {

using Kind = gtid::Position::Kind;

// Which table a line is for, by the raw quoted names: quoted db, '.', quoted table.
inline std::string table_key(std::string_view quoted_db, std::string_view quoted_table) {
  std::string key;
  key.reserve(quoted_db.size() + 1 + quoted_table.size());
  key.append(quoted_db).push_back('.');
  key.append(quoted_table);
  return key;
}



// A line of a cdc-stream output's kinds (man/cdc-stream.1, STDOUT).
inline bool is_deltas_kind(std::string_view op) noexcept {
  namespace o = records::op;
  return op == o::insert || op == o::update || op == o::erase || op == o::ddl || op == o::commit || op == o::incident ||
         op == o::span_start || op == o::span_end || op == o::table;
}

// What a line of another kind most likely comes from.
inline std::string_view source_of(std::string_view op) noexcept {
  if (op == records::op::chunk) return " (a line of a cdc-plan plan)";
  if (op == records::op::low || op == records::op::row || op == records::op::high) return " (a line of a cdc-snapshot chunk output or of a merged snapshot)";
  return "";
}

// (file, offset) is before (other_file, other_offset), in gtid::FilePosition's order (a longer
// name is a later file), without building one: this runs for every line.
inline bool file_before(std::string_view file, std::uint64_t offset, std::string_view other_file,
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
  [[nodiscard]] PartEnds ends() const;

  Result<DeltaSummary> run();

 private:
  // "rerun cdc-stream --from LOW --until HIGH to produce the deltas".
  [[nodiscard]] std::string rerun() const;

  Result<void> line(std::string_view text);

  // The merged table with these raw quoted names, SIZE_MAX for another. A line is most often of
  // the same table as the line before it: that answer is kept, with the bytes cdc-stream writes
  // after "op" for that table (line() compares them first).
  std::size_t table_index_of(std::string_view quoted_db, std::string_view quoted_table);

  Result<simdjson::dom::object> parse(std::string_view text);

  // A line that is not in cdc-stream's exact bytes (or a span line): parsed whole.
  Result<void> parsed_line(std::string_view text);

  Result<void> other_kind(std::string_view op);

  // Every line but span_start comes after span_start and before span_end.
  Result<void> check_in_span(std::string_view op);

  Result<gtid::Position> span_position(simdjson::dom::object record, std::string_view op);

  Result<void> span_start(simdjson::dom::object record);

  Result<void> span_end(simdjson::dom::object record);

  // Lines in log order: "pos" never goes back, and MariaDB GTIDs grow per domain. Cheap for the
  // lines of one transaction, which share their file and GTID.
  Result<void> check_order(const records::LinePos& pos);

  // A change of a merged table (table_index) at pos, read from its raw text. end: what
  // scan_line_pos read of the line's end, when the line is in cdc-stream's exact form and was
  // not parsed (the scan proves it well formed, else it is parsed); nullptr for a parsed line.
  Result<void> apply_change(std::string_view op, std::string_view text, std::size_t table_index,
                            const records::LinePos& pos, const records::LineEnd* end);

  Result<records::LinePos> event_position(simdjson::dom::object record);

  // Error when an image lacks a key or identity column.
  Result<void> check_values(const ImageValues& values, std::string_view which, const TableInfo& table);

  // The group the row belongs to, when the change is after that chunk's low.
  Result<std::optional<std::uint32_t>> group_for(const TableInfo& table, const ImageValues& values,
                                                 const records::LinePos& position);

  void identity_text(const TableInfo& table, const ImageValues& values, std::string_view image);

  // Whether the image is one the chunks' --where keeps (always, without one). The chunks hold
  // the rows it was true on at their lows; a change after a low moves its row into or out of
  // that set by its images, as the server's WHERE would have seen them.
  Result<bool> kept_by_filter(const TableInfo& table, const ImageValues& values, std::string_view which);

  // checked_only: the image is checked, and nothing more.
  Result<bool> remove_side(std::string_view image, const TableInfo& table, const records::LinePos& position,
                           bool checked_only);

  Result<bool> put_side(std::string_view image, const TableInfo& table, const records::LinePos& position,
                        std::string_view ts_ms);

  Result<void> ddl(simdjson::dom::object record);

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

}  // namespace cdc::merge::deltas_inside
