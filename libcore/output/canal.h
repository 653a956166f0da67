#pragma once

// Canal's flat messages (canal.mq.flatMessage=true). (Owned by the Canal work.)

namespace cdc::output {

struct CanalOptions {};

}  // namespace cdc::output
