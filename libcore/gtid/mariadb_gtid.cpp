#include "gtid/mariadb_gtid.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <tuple>

#include <fmt/format.h>

#include "gtid/text_helpers.h"

namespace cdc::gtid {

namespace {

class Parser : public detail::TextCursor {
 public:
  using TextCursor::TextCursor;

  // Decimal digits up to max (leading zeros are fine: the server reads base 10). noun names
  // the field in messages: "domain id".
  Result<std::uint64_t> number(std::string_view noun, std::uint64_t max) {
    const std::size_t start = pos_;
    std::size_t end = start;
    while (end < text_.size() && is_digit(text_[end])) ++end;
    const std::string_view digits = text_.substr(start, end - start);
    if (digits.empty()) return expected(fmt::format("a {} (decimal digits)", noun));
    std::uint64_t value = 0;
    for (const char c : digits) {
      const auto digit = static_cast<std::uint64_t>(c - '0');
      if (value > (max - digit) / 10) {
        return error_at(start, fmt::format("{} {} is larger than {}", noun, detail::excerpt(digits, 30), max));
      }
      value = value * 10 + digit;
    }
    pos_ = end;
    return value;
  }

  // domain-server-seq, no whitespace inside.
  Result<MariadbGtid> gtid() {
    constexpr std::uint64_t kU32 = std::numeric_limits<std::uint32_t>::max();
    auto domain = number("domain id", kU32);
    if (!domain) return fail(std::move(domain).error());
    if (!at('-')) return expected("'-' after the domain id (a GTID is domain-server-seq)");
    advance();
    auto server = number("server id", kU32);
    if (!server) return fail(std::move(server).error());
    if (!at('-')) return expected("'-' after the server id (a GTID is domain-server-seq)");
    advance();
    auto seq = number("sequence number", std::numeric_limits<std::uint64_t>::max());
    if (!seq) return fail(std::move(seq).error());
    return MariadbGtid{static_cast<std::uint32_t>(*domain), static_cast<std::uint32_t>(*server), *seq};
  }
};

bool by_domain(const MariadbGtid& a, const MariadbGtid& b) { return a.domain_id < b.domain_id; }

// The later of two GTIDs of one domain; see union_with for the tie rule.
bool is_before(const MariadbGtid& a, const MariadbGtid& b) {
  return std::tie(a.seq_no, a.server_id) < std::tie(b.seq_no, b.server_id);
}

}  // namespace

Result<MariadbGtid> MariadbGtid::parse(std::string_view text) {
  Parser in(text, "MariaDB GTID");
  in.skip_space();
  auto gtid = in.gtid();
  if (!gtid) return gtid;
  in.skip_space();
  if (!in.at_end()) return in.expected("the end of the GTID (one GTID is domain-server-seq)");
  return gtid;
}

std::string MariadbGtid::to_string() const { return fmt::format("{}-{}-{}", domain_id, server_id, seq_no); }

Result<MariadbGtidPos> MariadbGtidPos::parse(std::string_view text) {
  Parser in(text, "MariaDB GTID position");
  MariadbGtidPos pos;
  std::vector<std::size_t> offsets;  // where each GTID started, for the duplicate message
  in.skip_space();
  if (in.at_end()) return pos;
  while (true) {
    in.skip_space();
    const std::size_t start = in.pos();
    auto gtid = in.gtid();
    if (!gtid) return fail(std::move(gtid).error());
    pos.gtids_.push_back(*gtid);
    offsets.push_back(start);
    in.skip_space();
    if (in.at_end()) break;
    if (!in.at(',')) return in.expected("',' or the end of the position after a GTID");
    in.advance();
  }
  // Sort by domain, then report the first duplicate in text order.
  std::vector<std::size_t> order(pos.gtids_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return by_domain(pos.gtids_[a], pos.gtids_[b]); });
  std::optional<std::pair<std::size_t, std::size_t>> duplicate;  // (earlier, later) in text order
  for (std::size_t i = 1; i < order.size(); ++i) {
    const std::size_t earlier = order[i - 1];
    const std::size_t later = order[i];
    if (pos.gtids_[earlier].domain_id != pos.gtids_[later].domain_id) continue;
    if (!duplicate || later < duplicate->second) duplicate = std::pair{earlier, later};
  }
  if (duplicate) {
    const MariadbGtid& first = pos.gtids_[duplicate->first];
    const MariadbGtid& second = pos.gtids_[duplicate->second];
    return in.error_at(offsets[duplicate->second],
                       fmt::format("GTIDs {} and {} conflict (duplicate domain id {}; a position holds one GTID "
                                   "per domain)",
                                   first.to_string(), second.to_string(), second.domain_id));
  }
  std::vector<MariadbGtid> sorted;
  sorted.reserve(order.size());
  for (const std::size_t i : order) sorted.push_back(pos.gtids_[i]);
  pos.gtids_ = std::move(sorted);
  return pos;
}

std::string MariadbGtidPos::to_string() const {
  std::string out;
  for (const MariadbGtid& gtid : gtids_) {
    if (!out.empty()) out.push_back(',');
    fmt::format_to(std::back_inserter(out), "{}-{}-{}", gtid.domain_id, gtid.server_id, gtid.seq_no);
  }
  return out;
}

std::optional<MariadbGtid> MariadbGtidPos::find(std::uint32_t domain_id) const {
  const auto it = std::lower_bound(gtids_.begin(), gtids_.end(), MariadbGtid{domain_id, 0, 0}, by_domain);
  if (it == gtids_.end() || it->domain_id != domain_id) return std::nullopt;
  return *it;
}

bool MariadbGtidPos::contains(const MariadbGtid& gtid) const {
  const auto mine = find(gtid.domain_id);
  return mine && mine->seq_no >= gtid.seq_no;
}

bool MariadbGtidPos::contains(const MariadbGtidPos& other) const {
  return std::all_of(other.gtids_.begin(), other.gtids_.end(),
                     [&](const MariadbGtid& gtid) { return contains(gtid); });
}

void MariadbGtidPos::advance(const MariadbGtid& gtid) {
  const auto it = std::lower_bound(gtids_.begin(), gtids_.end(), gtid, by_domain);
  if (it != gtids_.end() && it->domain_id == gtid.domain_id) {
    *it = gtid;
  } else {
    gtids_.insert(it, gtid);
  }
}

MariadbGtidPos MariadbGtidPos::union_with(const MariadbGtidPos& other) const {
  MariadbGtidPos out;
  out.gtids_.reserve(gtids_.size() + other.gtids_.size());
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < gtids_.size() || j < other.gtids_.size()) {
    if (j == other.gtids_.size() || (i < gtids_.size() && gtids_[i].domain_id < other.gtids_[j].domain_id)) {
      out.gtids_.push_back(gtids_[i++]);
    } else if (i == gtids_.size() || other.gtids_[j].domain_id < gtids_[i].domain_id) {
      out.gtids_.push_back(other.gtids_[j++]);
    } else {
      out.gtids_.push_back(is_before(gtids_[i], other.gtids_[j]) ? other.gtids_[j] : gtids_[i]);
      ++i;
      ++j;
    }
  }
  return out;
}

MariadbGtidPos MariadbGtidPos::intersect(const MariadbGtidPos& other) const {
  MariadbGtidPos out;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < gtids_.size() && j < other.gtids_.size()) {
    if (gtids_[i].domain_id < other.gtids_[j].domain_id) {
      ++i;
    } else if (other.gtids_[j].domain_id < gtids_[i].domain_id) {
      ++j;
    } else {
      out.gtids_.push_back(is_before(other.gtids_[j], gtids_[i]) ? other.gtids_[j] : gtids_[i]);
      ++i;
      ++j;
    }
  }
  return out;
}

}  // namespace cdc::gtid
