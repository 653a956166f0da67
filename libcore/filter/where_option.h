#pragma once

// --where 'DB.TABLE:EXPR' (issue 31): which tables a filter is for (the --tables patterns:
// globs, comma lists), and the expression (filter/expression.h). The table part ends at the
// first ':'. cdc-plan binds each filter to the tables it selects and writes it into their chunk
// lines ("where"), so that every cdc-snapshot that reads them, on any host, reads the same rows.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "filter/expression.h"
#include "records/chunk.h"
#include "records/table_line.h"
#include "util/result.h"
#include "util/table_filter.h"

namespace cdc::filter {

struct WhereOption {
  std::string text;        // as given, for messages
  std::string tables;      // the table part
  TableFilter filter;      // the tables it is for
  Expression expression;   // the expression part, parsed
};

// One --where; Errc::usage naming the option and, for the expression, the character.
[[nodiscard]] Result<WhereOption> parse_where_option(std::string_view text);

// The --where for this table, or nullptr; Errc::usage when two select it.
[[nodiscard]] Result<const WhereOption*> where_for(std::span<const WhereOption> options, std::string_view db,
                                                   std::string_view table);

// A chunk line's columns as a table line's, for BoundFilter::bind (collations by name).
[[nodiscard]] std::vector<records::TableColumn> table_columns(std::span<const records::ChunkColumn> columns);

// The expression of a chunk line's "where" as the server's SQL, after checking it against the
// chunk's columns as cdc-plan did: Errc::corrupt_input naming the chunk when it does not parse
// or bind.
[[nodiscard]] Result<std::string> chunk_where_sql(const records::Chunk& chunk);

}  // namespace cdc::filter
