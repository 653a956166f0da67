#pragma once

// Watermarks and event positions for cdc-merge (man/cdc-merge.1, "The merge"; man/cdc-ndjson.5,
// POSITIONS):
// "event e is after watermark W" in the three position forms, and the lowest low / highest
// high over many chunks. Built on gtid::Position; nothing here is specific to chunk files.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "gtid/position.h"
#include "records/position.h"
#include "util/result.h"

namespace cdc::merge {


// The transaction of an event, parsed once for all the lines of that transaction.
class EventGtidCache {
 public:
  // Parses gtid as a MariaDB GTID or a MySQL GTID, as kind asks; reuses the last parse when
  // the text repeats. Errc::corrupt_input when it does not parse.
  [[nodiscard]] Result<void> set(gtid::Position::Kind kind, std::string_view gtid);
  [[nodiscard]] const gtid::MariadbGtid& mariadb() const noexcept { return mariadb_; }
  [[nodiscard]] const gtid::Gtid& mysql() const noexcept { return mysql_; }

 private:
  std::string text_;
  bool valid_ = false;
  gtid::MariadbGtid mariadb_;
  gtid::Gtid mysql_;
};

// True when the event is after the watermark: GTID positions, its GTID is not contained in
// the watermark; FILE:OFFSET, (file, offset) >= the watermark's (the watermark names the next
// event to read). For GTID watermarks, gtids must have been set() for this event.
[[nodiscard]] bool is_after(const records::LinePos& event, const EventGtidCache& gtids,
                            const gtid::Position& watermark) noexcept;

// The highest of the positions: per-domain maximum (MariaDB), union (MySQL), maximum
// (FILE:OFFSET). All must be of one kind (checked by the caller). Not empty.
[[nodiscard]] gtid::Position highest(std::span<const gtid::Position> positions);
// The lowest: per-domain minimum over the domains every position has (MariaDB), intersection
// (MySQL), minimum (FILE:OFFSET).
[[nodiscard]] gtid::Position lowest(std::span<const gtid::Position> positions);
// a is at or past b.
[[nodiscard]] bool contains(const gtid::Position& a, const gtid::Position& b) noexcept;

[[nodiscard]] std::string_view kind_name(gtid::Position::Kind kind) noexcept;

}  // namespace cdc::merge
