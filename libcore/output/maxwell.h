#pragma once

// Maxwell's JSON rows. (Owned by the Maxwell work.)

namespace cdc::output {

struct MaxwellOptions {};

}  // namespace cdc::output
