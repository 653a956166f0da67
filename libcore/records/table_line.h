#pragma once

// The "table" line: what a table looks like, so that consumers (and libcore/output's formats)
// get column types, nullability, charsets, ENUM/SET members and the key columns without asking
// the server (cdc-ndjson(5), table). cdc-stream writes one before the first change of each
// table in a run, and again before the first change after the table's description changed (a
// DDL); cdc-snapshot writes one in each chunk output after the low line; cdc-merge writes one
// before each table's first "r" line. Readers that do not know the kind skip it.
//
//   {"op":"table","v":1,"db":..,"table":..,
//    "columns":[{"name":..,"type":..,"nullable":true|false[,"charset":..,"collation":..][,"values":[..]]},..],
//    "key":[..]|null,"pos":{"file":..,"offset":N,"gtid":..|null}|null,"ts_ms":N}

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "util/result.h"

namespace cdc::ndjson {
class Writer;
}

namespace cdc::records {

struct TableColumn {
  std::string name;  // "@1", "@2", ... when the binlog did not name the columns
  // The type as information_schema's COLUMN_TYPE (and SHOW CREATE TABLE) writes it, lower case:
  // "int(11) unsigned", "decimal(8,2)", "varchar(32)", "enum('a','b')", "datetime(3)",
  // "tinyint(1)". From a binary log alone (cdc-stream --file, no server) what the TABLE_MAP
  // event tells: no display widths ("int", "int unsigned" when signedness is logged),
  // "varchar(N)" in characters when the charset is known.
  std::string type;
  bool nullable = true;
  std::optional<std::string> charset;    // text, ENUM and SET columns, when known: "utf8mb4"
  std::optional<std::string> collation;  // "utf8mb4_general_ci"
  std::vector<std::string> values;       // ENUM/SET members in definition order, UTF-8; empty when not known
};

// Where the description holds from: the change (or, in a merged snapshot, the merged high
// watermark) that it precedes.
struct TablePos {
  std::string file;
  std::uint64_t offset = 0;
  std::string gtid;  // "" for null
};

struct TableLine {
  std::string db;
  std::string table;
  std::vector<TableColumn> columns;
  // The primary key's column names in key order; nullopt when the table has none, or when it
  // is not known (a binlog without binlog_row_metadata=FULL, read without a server).
  std::optional<std::vector<std::string>> key;
  std::optional<TablePos> pos;  // null in a chunk output (cdc-snapshot)
  std::int64_t ts_ms = 0;
};

void write_table_line(const TableLine& line, ndjson::Writer& out);
// Errc::corrupt_input naming the member that is missing or of the wrong type.
[[nodiscard]] Result<TableLine> parse_table_line(simdjson::dom::object record);

}  // namespace cdc::records
