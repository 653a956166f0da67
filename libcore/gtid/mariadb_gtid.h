#pragma once

// MariaDB GTIDs ("domain-server-seq", e.g. 0-1-100) and GTID positions
// ("0-1-100,1-2-7": @@gtid_binlog_pos, @@gtid_slave_pos, @@gtid_current_pos, and what a
// replica sends as @slave_connect_state).
//
// A position is not a set of transactions but one high-water mark per replication domain:
// the last GTID applied in that domain. Facts from the server source (MariaDB sql/rpl_gtid.cc):
// - the text is GTIDs joined by ',' (rpl_slave_state_tostring_helper), printed sorted by
//   domain id (rpl_gtid_cmp_cb);
// - a position holds at most one GTID per domain: slave_connection_state::load rejects a
//   second one with ER_DUPLICATE_GTID_DOMAIN ("GTID 0-1-5 and 0-2-7 conflict (duplicate
//   domain id 0)");
// - domain id and server id are 32-bit, seq_no 64-bit (gtid_parser_helper);
// - server_id takes no part in ordering: within a domain, seq_no orders the transactions, and
//   with gtid_strict_mode=1 the server refuses to binlog a seq_no that is not larger than the
//   domain's last one (rpl_binlog_state::update_nolock, ER_GTID_STRICT_OUT_OF_ORDER).
//
// The comparisons below (contains, union, intersect) rely on that per-domain monotonic
// seq_no. Without strict mode a domain can hold out-of-order seq_nos (e.g. after a failover
// to a server that was behind), and a position then does not tell exactly which
// transactions it covers; the same limit applies to MariaDB's own replication.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gtid/format.h"
#include "util/result.h"

namespace cdc::gtid {

struct MariadbGtid {
  std::uint32_t domain_id = 0;
  std::uint32_t server_id = 0;
  std::uint64_t seq_no = 0;

  // "0-1-100": three decimal numbers joined by '-' (no spaces inside; surrounding whitespace
  // is allowed). Errc::usage with the offset on anything else.
  static Result<MariadbGtid> parse(std::string_view text);
  [[nodiscard]] std::string to_string() const;
  friend bool operator==(const MariadbGtid&, const MariadbGtid&) = default;
};

class MariadbGtidPos {
 public:
  MariadbGtidPos() = default;

  // "0-1-100,1-2-7": GTIDs separated by ',', whitespace (newlines too) allowed around each
  // GTID; "" or only whitespace is the empty position. Unlike MySQL GTID sets, an empty entry
  // (",," or a trailing ',') is an error, as on the server. A second GTID for a domain is an
  // error naming both GTIDs.
  static Result<MariadbGtidPos> parse(std::string_view text);

  // Canonical: sorted by domain id, joined with ",", "" when empty.
  [[nodiscard]] std::string to_string() const;

  [[nodiscard]] bool empty() const noexcept { return gtids_.empty(); }
  // Sorted by domain id, one per domain.
  [[nodiscard]] const std::vector<MariadbGtid>& gtids() const noexcept { return gtids_; }
  [[nodiscard]] std::optional<MariadbGtid> find(std::uint32_t domain_id) const;

  // True when the position has already passed gtid: it holds gtid's domain with a seq_no
  // >= gtid.seq_no. server_id is ignored. A domain the position does not hold has not been
  // passed at all (a replica connecting with this position gets that domain from the start).
  [[nodiscard]] bool contains(const MariadbGtid& gtid) const;
  // True when this position is at or past other in every domain other holds.
  [[nodiscard]] bool contains(const MariadbGtidPos& other) const;

  // Records gtid as the domain's last GTID (replacing whatever the domain held, even a
  // larger seq_no: this is what applying an event does, not a max).
  void advance(const MariadbGtid& gtid);

  // Per domain, the later of the two GTIDs (larger seq_no; on equal seq_no with different
  // server ids the larger server id, so that the result does not depend on operand order).
  // Domains of either side are kept.
  [[nodiscard]] MariadbGtidPos union_with(const MariadbGtidPos& other) const;
  // Domains present in both, each with the earlier GTID (same tie rule, smaller server id).
  [[nodiscard]] MariadbGtidPos intersect(const MariadbGtidPos& other) const;
  // No subtract: a position is one high-water mark per domain with an implicit lower bound
  // at the start of the domain's history, so "a - b" (the transactions after b up to a) is a
  // range with a lower bound, which a position cannot express. Code that needs "what is
  // after b" compares positions with contains() instead.

  friend bool operator==(const MariadbGtidPos&, const MariadbGtidPos&) = default;

 private:
  std::vector<MariadbGtid> gtids_;
};

}  // namespace cdc::gtid

template <>
struct fmt::formatter<cdc::gtid::MariadbGtid> : cdc::gtid::detail::ToStringFormatter {};
template <>
struct fmt::formatter<cdc::gtid::MariadbGtidPos> : cdc::gtid::detail::ToStringFormatter {};
