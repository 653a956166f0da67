#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mysql/connection.h"
#include "util/table_filter.h"
#include "util/result.h"

namespace cdc::ndjson {
class Writer;
}

namespace cdc::check {

enum class Flavor { mysql, mariadb };
enum class Status { ok, warn, fail };

// What the check reads from the server. Kept separate from the verdicts so that every rule
// can be tested on hand-written facts, for server versions we do not have at hand.
struct ServerFacts {
  std::string version;                           // VERSION()
  std::string version_comment;                   // @@version_comment
  std::string current_user;                      // CURRENT_USER(), user@host
  std::map<std::string, std::string> variables;  // lower-case name -> value; absent: no such variable
  std::vector<std::string> grants;               // SHOW GRANTS, one statement per entry
  // cdc-plan --check --tables: what information_schema.TABLES says of the tables selected
  // (its row counts and sizes are InnoDB's estimates).
  struct Tables {
    std::uint64_t count = 0;
    std::uint64_t rows = 0;
    std::uint64_t bytes = 0;  // DATA_LENGTH
  };
  std::optional<Tables> tables;
};

// The rates the snapshot-length check assumes for one cdc-snapshot process, well under what
// bench/snapshot.sh measures on a table in memory (2M rows/s), for tables read from disk on a
// server that is busy with other work.
inline constexpr std::uint64_t kAssumedSnapshotRowsPerSecond = 100'000;
inline constexpr std::uint64_t kAssumedSnapshotBytesPerSecond = std::uint64_t{50} << 20;

// One line of the report. A failing or warning line always says what was found, what is
// wanted and the exact statement or config line that fixes it.
struct CheckLine {
  std::string name;
  Status status = Status::ok;
  std::string value;
  std::string want;
  std::string message;
  std::string fix;
};

struct Report {
  Flavor flavor = Flavor::mysql;
  std::vector<CheckLine> lines;

  [[nodiscard]] bool usable() const;  // no line failed
};

[[nodiscard]] Flavor flavor_of(const ServerFacts& facts);
[[nodiscard]] Result<ServerFacts> gather_facts(mysql::Connection& connection);
// facts.tables: the sum over the base tables `filter` selects.
[[nodiscard]] Result<void> gather_table_sizes(mysql::Connection& connection, const TableFilter& filter,
                                              ServerFacts& facts);
// What the run means to use beyond what every capture needs.
struct CheckWants {
  // --include-query: the statement behind each row change, which the server logs only when
  // told to; without it, a server that does not log them passes with a note.
  bool statements = false;
};
[[nodiscard]] Report evaluate(const ServerFacts& facts, const CheckWants& wants = {});

// NDJSON: one check line per CheckLine, then the check_summary line (records/check_lines.h).
void write_report(const Report& report, ndjson::Writer& out);
// One human line per warning or failure, for stderr.
[[nodiscard]] std::string describe_problem(const CheckLine& line);

[[nodiscard]] std::string_view status_name(Status status);

}  // namespace cdc::check
