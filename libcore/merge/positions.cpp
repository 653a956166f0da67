#include "merge/positions.h"

#include <fmt/format.h>

#include <algorithm>

namespace cdc::merge {

using Kind = gtid::Position::Kind;

Result<void> EventGtidCache::set(Kind kind, std::string_view gtid) {
  if (valid_ && gtid == text_) return {};
  valid_ = false;
  if (gtid.empty())
    return fail(Errc::corrupt_input,
                "a change without a GTID (\"gtid\":null), but the chunks' watermarks are GTID positions");
  if (kind == Kind::mariadb_gtids) {
    auto parsed = gtid::MariadbGtid::parse(gtid);
    if (!parsed) return fail(Errc::corrupt_input, fmt::format("GTID '{}': {}", gtid, parsed.error().message));
    mariadb_ = *parsed;
  } else {
    auto parsed = gtid::Gtid::parse(gtid);
    if (!parsed) return fail(Errc::corrupt_input, fmt::format("GTID '{}': {}", gtid, parsed.error().message));
    mysql_ = std::move(*parsed);
  }
  text_.assign(gtid);
  valid_ = true;
  return {};
}

bool is_after(const records::LinePos& event, const EventGtidCache& gtids, const gtid::Position& watermark) noexcept {
  switch (watermark.kind) {
    case Kind::mariadb_gtids:
      return !watermark.mariadb_gtids.contains(gtids.mariadb());
    case Kind::mysql_gtids:
      return !watermark.mysql_gtids.contains(gtids.mysql());
    case Kind::file:
      break;
  }
  // (file, offset) >= watermark, in gtid::FilePosition's order, without building one.
  const std::string& file = watermark.file.file;
  if (event.file.size() != file.size()) return event.file.size() > file.size();
  if (const int order = event.file.compare(file); order != 0) return order > 0;
  return event.offset >= watermark.file.offset;
}

bool contains(const gtid::Position& a, const gtid::Position& b) noexcept {
  switch (a.kind) {
    case Kind::mariadb_gtids:
      return a.mariadb_gtids.contains(b.mariadb_gtids);
    case Kind::mysql_gtids:
      return a.mysql_gtids.contains(b.mysql_gtids);
    case Kind::file:
      break;
  }
  return !(a.file < b.file);
}

gtid::Position highest(std::span<const gtid::Position> positions) {
  gtid::Position result = positions.front();
  for (const gtid::Position& p : positions.subspan(1)) {
    switch (result.kind) {
      case Kind::mariadb_gtids:
        result.mariadb_gtids = result.mariadb_gtids.union_with(p.mariadb_gtids);
        break;
      case Kind::mysql_gtids:
        result.mysql_gtids = result.mysql_gtids.union_with(p.mysql_gtids);
        break;
      case Kind::file:
        if (result.file < p.file) result.file = p.file;
        break;
    }
  }
  return result;
}

gtid::Position lowest(std::span<const gtid::Position> positions) {
  gtid::Position result = positions.front();
  for (const gtid::Position& p : positions.subspan(1)) {
    switch (result.kind) {
      case Kind::mariadb_gtids:
        result.mariadb_gtids = result.mariadb_gtids.intersect(p.mariadb_gtids);
        break;
      case Kind::mysql_gtids:
        result.mysql_gtids = result.mysql_gtids.intersect(p.mysql_gtids);
        break;
      case Kind::file:
        if (p.file < result.file) result.file = p.file;
        break;
    }
  }
  return result;
}

std::string_view kind_name(Kind kind) noexcept {
  switch (kind) {
    case Kind::mariadb_gtids: return "a MariaDB GTID position";
    case Kind::mysql_gtids: return "a MySQL GTID set";
    case Kind::file: return "FILE:OFFSET";
  }
  return "?";
}

}  // namespace cdc::merge
