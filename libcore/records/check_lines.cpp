#include "records/check_lines.h"

#include "ndjson/writer.h"
#include "records/kinds.h"
#include "records/members.h"

namespace cdc::records {

void write_check(const Check& check, ndjson::Writer& out) {
  begin_line(op::check, out);
  out.field(field::name, check.name);
  out.field(field::status, check.status);
  out.field(field::value, check.value);
  out.field(field::want, check.want);
  if (!check.message.empty()) out.field(field::message, check.message);
  if (!check.fix.empty()) out.field(field::fix, check.fix);
  end_line(out);
}

void write_check_summary(const CheckSummary& summary, ndjson::Writer& out) {
  begin_line(op::check_summary, out);
  out.field(field::flavor, summary.flavor);
  out.field(field::usable, summary.usable);
  write_strings(field::failed, summary.failed, out);
  write_strings(field::warnings, summary.warnings, out);
  end_line(out);
}

}  // namespace cdc::records
