#pragma once

// Column masking: --mask DB.TABLE.COL=hash:ALGO:SALT|redact:N|truncate:N|drop. (Owned by the
// masking work.)

#include <string>

namespace cdc::output {

struct MaskRule {
  std::string pattern;  // DB.TABLE.COL, with * and ? wildcards
  std::string action;   // as given after '='
};

}  // namespace cdc::output
