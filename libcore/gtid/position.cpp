#include "gtid/position.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

namespace cdc::gtid {

namespace {

bool looks_like_uuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? c != '-' : !std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

bool looks_like_mariadb(std::string_view text) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text.front()))) return false;
  for (const char c : text)
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '-' && c != ',' && c != ' ') return false;
  return text.find('-') != std::string_view::npos;
}

Unexpected not_a_position(std::string_view text, std::string_view why) {
  return fail(Errc::usage, fmt::format("'{}' is not a position{}{}: give a MySQL GTID set (uuid:1-5), a MariaDB GTID "
                                       "position (0-1-100), FILE:OFFSET (binlog.000042:4711), now or earliest",
                                       text, why.empty() ? "" : " (", why.empty() ? "" : fmt::format("{})", why)));
}

}  // namespace

Result<Position> Position::parse(std::string_view text) {
  Position position;
  const std::size_t colon = text.find(':');
  if (colon != std::string_view::npos && looks_like_uuid(text.substr(0, colon))) {
    auto set = MysqlGtidSet::parse(text);
    if (!set) return fail(std::move(set).error());
    // "uuid" and "uuid:tag" are valid, empty sets, but as a position they would mean "from the
    // first transaction" and print as "", which reads back as no position at all.
    if (set->empty()) return not_a_position(text, "the GTID set names no transaction");
    position.kind = Kind::mysql_gtids;
    position.mysql_gtids = std::move(*set);
    return position;
  }
  if (looks_like_mariadb(text)) {
    auto pos = MariadbGtidPos::parse(text);
    if (!pos) return fail(std::move(pos).error());
    position.kind = Kind::mariadb_gtids;
    position.mariadb_gtids = std::move(*pos);
    return position;
  }
  const std::size_t last_colon = text.rfind(':');
  if (last_colon == std::string_view::npos || last_colon == 0) return not_a_position(text, "");
  const std::string_view number = text.substr(last_colon + 1);
  std::uint64_t offset = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), offset);
  if (number.empty() || ec != std::errc{} || end != number.data() + number.size())
    return not_a_position(text, "the offset after the last ':' is not a number");
  if (offset < 4) return not_a_position(text, "binlog offsets start at 4");
  const std::string_view file = text.substr(0, last_colon);
  if (file.find('/') != std::string_view::npos)
    return not_a_position(text, "give the binlog's name as SHOW BINARY LOGS lists it, without a directory");
  position.kind = Kind::file;
  position.file = FilePosition{std::string(file), offset};
  return position;
}

std::string Position::to_string() const {
  switch (kind) {
    case Kind::mysql_gtids:
      return mysql_gtids.to_string();
    case Kind::mariadb_gtids:
      return mariadb_gtids.to_string();
    case Kind::file:
      break;
  }
  return fmt::format("{}:{}", file.file, file.offset);
}

std::optional<bool> includes(const Position& later, const Position& earlier) {
  if (later.kind != earlier.kind) return std::nullopt;
  switch (later.kind) {
    case Position::Kind::mysql_gtids: return later.mysql_gtids.contains(earlier.mysql_gtids);
    case Position::Kind::mariadb_gtids: return later.mariadb_gtids.contains(earlier.mariadb_gtids);
    case Position::Kind::file: return !(later.file < earlier.file);
  }
  return std::nullopt;
}

}  // namespace cdc::gtid
