#include "records/check_lines.h"

#include "ndjson/writer.h"
#include "records/kinds.h"

namespace cdc::records {

namespace {

void write_names(std::string_view name, std::span<const std::string_view> names, ndjson::Writer& out) {
  out.key(name);
  out.begin_array();
  for (const std::string_view value : names) out.string(value);
  out.end_array();
}

}  // namespace

void write_check(const Check& check, ndjson::Writer& out) {
  out.begin_object();
  out.field(field::op, op::check);
  out.field(field::v, kVersion);
  out.field(field::name, check.name);
  out.field(field::status, check.status);
  out.field(field::value, check.value);
  out.field(field::want, check.want);
  if (!check.message.empty()) out.field(field::message, check.message);
  if (!check.fix.empty()) out.field(field::fix, check.fix);
  out.end_object();
  out.end_record();
}

void write_check_summary(const CheckSummary& summary, ndjson::Writer& out) {
  out.begin_object();
  out.field(field::op, op::check_summary);
  out.field(field::v, kVersion);
  out.field(field::flavor, summary.flavor);
  out.field(field::usable, summary.usable);
  write_names(field::failed, summary.failed, out);
  write_names(field::warnings, summary.warnings, out);
  out.end_object();
  out.end_record();
}

}  // namespace cdc::records
