#pragma once

// The lines of cdc-plan --check: one op "check" line per requirement of the server, then one
// op "check_summary" line with the verdict.
//
//   {"op":"check","v":1,"name":..,"status":"ok"|"warn"|"fail","value":..,"want":..,
//    ["message":..,]["fix":..]}
//   {"op":"check_summary","v":1,"flavor":"mariadb"|"mysql","usable":BOOL,"failed":[..],
//    "warnings":[..]}

#include <span>
#include <string_view>

namespace cdc::ndjson {
class Writer;
}

namespace cdc::records {

struct Check {
  std::string_view name;
  std::string_view status;
  std::string_view value;
  std::string_view want;
  std::string_view message;  // "" when there is nothing to say: not written
  std::string_view fix;      // "" when there is nothing to do: not written
};

struct CheckSummary {
  std::string_view flavor;
  bool usable = false;
  std::span<const std::string_view> failed;    // the names of the failed checks
  std::span<const std::string_view> warnings;  // and of those with a warning
};

// Each writes one line, ending the record.
void write_check(const Check& check, ndjson::Writer& out);
void write_check_summary(const CheckSummary& summary, ndjson::Writer& out);

}  // namespace cdc::records
