#include "binlog/event_header.h"

namespace cdc::binlog {

EventHeader read_event_header(ByteReader& in) noexcept {
  EventHeader header;
  header.timestamp = in.u32();
  header.type_code = in.u8();
  header.server_id = in.u32();
  header.event_size = in.u32();
  header.next_position = in.u32();
  header.flags = in.u16();
  return header;
}

}  // namespace cdc::binlog
