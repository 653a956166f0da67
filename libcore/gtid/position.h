#pragma once

// A point in a server's binlog history, in the three forms --from, --until and state files
// accept: a MySQL GTID set (the transactions already seen), a MariaDB GTID position (the last
// transaction seen per domain), or FILE:OFFSET (the event boundary to start at).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gtid/mariadb_gtid.h"
#include "gtid/mysql_gtid_set.h"
#include "util/result.h"

namespace cdc::gtid {

struct FilePosition {
  std::string file;
  std::uint64_t offset = 4;

  // Binlog files of one server share a base name and differ in a zero-padded number, so
  // names of equal length compare as their numbers do; a longer name is a later file (the
  // counter grew a digit).
  friend bool operator<(const FilePosition& a, const FilePosition& b) noexcept {
    if (a.file.size() != b.file.size()) return a.file.size() < b.file.size();
    if (a.file != b.file) return a.file < b.file;
    return a.offset < b.offset;
  }
  friend bool operator==(const FilePosition&, const FilePosition&) = default;
};

struct Position {
  enum class Kind { mysql_gtids, mariadb_gtids, file };
  Kind kind = Kind::file;
  MysqlGtidSet mysql_gtids;
  MariadbGtidPos mariadb_gtids;
  FilePosition file;

  // Tells the forms apart by their shape: "uuid:..." is a MySQL GTID set, "D-S-N[,...]" a
  // MariaDB GTID position, anything else with a ':' FILE:OFFSET. Errc::usage naming the
  // accepted forms otherwise.
  static Result<Position> parse(std::string_view text);
  // The canonical text parse() reads back.
  [[nodiscard]] std::string to_string() const;
};

// Whether resuming from `later` skips everything `earlier` covers: its GTID set or position
// contains earlier's, or its FILE:OFFSET is not before earlier's. nullopt when the two are of
// different kinds and cannot be compared.
[[nodiscard]] std::optional<bool> includes(const Position& later, const Position& earlier);

}  // namespace cdc::gtid
