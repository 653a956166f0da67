#include "verify/verify_lines.h"

#include "records/kinds.h"

namespace cdc::verify {

void write_verify_line(const records::Chunk& chunk, const Verdict& verdict, std::uint64_t max_keys,
                       ndjson::Writer& out) {
  out.begin_object();
  out.field("op", "verify");
  out.field("v", static_cast<std::uint64_t>(records::kVersion));
  out.field("db", chunk.db);
  out.field("table", chunk.table);
  out.field("index", chunk.index);
  out.field("count", chunk.count);
  out.key("start");
  records::write_bound(chunk.start, out);
  out.key("end");
  records::write_bound(chunk.end, out);
  out.field("status", status_name(verdict.status));
  out.field("rows_source", verdict.rows_source);
  out.field("rows_target", verdict.rows_target);
  out.field("source_position", verdict.source_position);
  out.field("target_position", verdict.target_position);
  out.field("rounds", static_cast<std::uint64_t>(verdict.rounds));
  if (verdict.status == Status::differs) {
    out.key("keys");
    out.begin_array();
    std::uint64_t listed = 0;
    for (const KeyDifference& difference : verdict.keys) {
      if (listed++ == max_keys) break;
      out.begin_object();
      out.key("key");
      out.raw_value(difference.key_json);
      out.field("source", difference.in_source);
      out.field("target", difference.in_target);
      out.end_object();
    }
    out.end_array();
    out.field("keys_total", static_cast<std::uint64_t>(verdict.keys.size()));
  }
  if (verdict.status == Status::unsettled) out.field("reason", verdict.reason);
  out.end_object();
  out.end_record();
}

void write_summary_line(const VerifySummary& summary, ndjson::Writer& out) {
  out.begin_object();
  out.field("op", "verify_summary");
  out.field("v", static_cast<std::uint64_t>(records::kVersion));
  out.field("tables", summary.tables);
  out.field("chunks", summary.chunks);
  out.field("equal", summary.equal);
  out.field("differs", summary.differs);
  out.field("unsettled", summary.unsettled);
  out.field("keys_total", summary.keys_total);
  out.field("seconds", summary.seconds);
  out.end_object();
  out.end_record();
}

}  // namespace cdc::verify
