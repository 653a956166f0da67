#pragma once

// The table lines of cdc-snapshot's chunks, read from information_schema once per table and
// process rather than once per chunk.
//
// Describing a table takes four information_schema queries, about 2 ms of server time: as
// much as reading a chunk's 8,096 rows. A table's chunks follow one another, so each chunk
// asks only SHOW CREATE TABLE (a tenth of that: the server has the definition cached) and
// describes the table again when that text changed. Every change a table line shows (a
// column, its type, charset, collation, ENUM labels, visibility, the primary key) changes
// that text; the AUTO_INCREMENT counter, which changes with every insert, is left out of it.

#include <map>
#include <string>
#include <string_view>

#include "mysql/connection.h"
#include "records/chunk.h"
#include "records/table_line.h"
#include "schema/table_schema.h"
#include "util/result.h"

namespace cdc::snapshot {

class TableDefinitions {
 public:
  // The statement whose answer describe() takes: SHOW CREATE TABLE of the chunk's table (sent
  // alone or first in a batch).
  [[nodiscard]] static std::string show_create(const records::Chunk& chunk);
  // An error of that statement as the user should see it: the table gone
  // (ER_NO_SUCH_TABLE) is Errc::corrupt_input, "plan again"; a name the server rejects (a
  // database or table name it finds wrong or too long, or in characters it cannot store) is
  // Errc::corrupt_input too, as no table has it (bad input, as check_table_name's); any other
  // error as it is.
  [[nodiscard]] static Error gone_when_missing(Error error, const records::Chunk& chunk);

  // The chunk's table as it is now, given show_create's answer; with its key columns checked
  // against what the plan saw: a key column gone or of another type is Errc::corrupt_input
  // ("plan again"). Reads information_schema on connection when the definition is new.
  [[nodiscard]] Result<records::TableLine> describe(mysql::Connection& connection, const records::Chunk& chunk,
                                                    const mysql::QueryResult& shown);

  // How many times describe() read information_schema, for the tests.
  [[nodiscard]] std::uint64_t reads() const noexcept { return reads_; }

 private:
  struct Known {
    std::string definition;  // SHOW CREATE TABLE, AUTO_INCREMENT=N left out
    schema::TableSchema schema;
  };
  // Key: database '\0' table (identifiers cannot contain U+0000).
  std::map<std::string, Known, std::less<>> known_;
  std::uint64_t reads_ = 0;
};

// SHOW CREATE TABLE's text without the table option AUTO_INCREMENT=N (the counter, not the
// definition). Exposed for the unit tests.
[[nodiscard]] std::string definition_without_counter(std::string_view create_table);

}  // namespace cdc::snapshot
