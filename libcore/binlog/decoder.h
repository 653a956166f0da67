#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "binlog/event_header.h"
#include "binlog/events/gtid_events.h"
#include "binlog/events/rows_event.h"
#include "binlog/events/simple_events.h"
#include "binlog/events/table_map_event.h"
#include "binlog/format_description.h"
#include "binlog/transaction_payload.h"
#include "util/result.h"

namespace cdc::binlog {

struct FormatDescriptionEvent {
  const FormatDescription* format = nullptr;
};
struct StopEvent {};
struct TableMapEvent {
  const TableMap* map = nullptr;
};
// Events a CDC reader has no use for but that are legitimately in a binlog (statement-based
// replication helpers, transaction context, view changes...): named, counted, not decoded.
struct IgnoredEvent {
  std::uint8_t type_code = 0;
};
// A type code no server we know of writes. The caller decides whether that is fatal: an event
// flagged LOG_EVENT_IGNORABLE_F may be skipped by definition.
struct UnknownEvent {
  std::uint8_t type_code = 0;
  std::span<const std::uint8_t> body;
};

using EventBody = std::variant<UnknownEvent, IgnoredEvent, FormatDescriptionEvent, StopEvent, RotateEvent, QueryEvent,
                               XidEvent, TableMapEvent, RowsEvent, MysqlGtidEvent, MariadbGtidEvent,
                               MariadbGtidListEvent, PreviousGtidsEvent, RowsQueryEvent, IncidentEvent,
                               BinlogCheckpointEvent, HeartbeatEvent, TransactionPayloadEvent>;

struct Event {
  EventHeader header;
  std::uint64_t offset = 0;  // where the event starts in its file (or payload, for inner events)
  EventBody body;
};

// Turns one event's bytes into an Event. Stateful: it keeps the format description and the
// table maps that later events refer to, exactly as a replica's SQL thread does. It never
// touches files or sockets, so the file reader and the replication client share it.
class Decoder {
 public:
  explicit Decoder(std::string source_name = "binlog");

  // `event` is one whole event (header, body, checksum); `offset` its position in the source.
  // Everything the result points to stays valid until the next call.
  Result<Event> decode(std::span<const std::uint8_t> event, std::uint64_t offset);
  // For the inner events of a TRANSACTION_PAYLOAD: no checksums, offsets inside the payload.
  Result<Event> decode_inner(std::span<const std::uint8_t> event, std::uint64_t outer_offset);

  [[nodiscard]] const FormatDescription& format() const noexcept { return format_; }
  // A replication stream opens with a fake ROTATE before any format description; it carries
  // a checksum when the replica asked for them, which only the replica knows.
  void expect_checksums(ChecksumAlgorithm algorithm) noexcept { format_.checksum = algorithm; }
  [[nodiscard]] const TableMap* table(std::uint64_t table_id) const noexcept;
  // For completing a map's optional metadata from elsewhere (the catalog) before its rows.
  [[nodiscard]] TableMap* table_for_update(std::uint64_t table_id) noexcept;
  void set_source_name(std::string name) { source_name_ = std::move(name); }
  [[nodiscard]] const std::string& source_name() const noexcept { return source_name_; }
  // Table ids are only valid within a file: a ROTATE or new FDE drops the cache.
  void forget_tables() { tables_.clear(); }
  // The inflated rows of the last MariaDB compressed rows event (RowsEvent::rows points here).
  [[nodiscard]] std::span<const std::uint8_t> inflated() const noexcept { return inflated_; }

  // "binlog.000042:1234: WRITE_ROWS_EVENT: <what>": the one format of every decode error.
  [[nodiscard]] Error error_at(std::uint64_t offset, std::uint8_t type_code, std::string_view what) const;

 private:
  Result<Event> decode_body(const EventHeader& header, ByteReader& body, std::span<const std::uint8_t> whole,
                            std::uint64_t offset);

  std::string source_name_;
  FormatDescription format_;
  bool have_format_ = false;
  std::unordered_map<std::uint64_t, TableMap> tables_;
  std::vector<std::uint8_t> inflated_;
};

}  // namespace cdc::binlog
