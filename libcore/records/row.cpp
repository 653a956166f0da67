#include "records/row.h"

#include <fmt/format.h>

#include "ndjson/writer.h"
#include "records/kinds.h"

namespace cdc::records {

std::string table_members(std::string_view db, std::string_view table) {
  return fmt::format(R"("v":{},"db":{},"table":{})", kVersion, ndjson::quoted(db), ndjson::quoted(table));
}

std::string row_head_members(std::string_view db, std::string_view table) {
  return fmt::format(R"("op":"{}",{})", op::row, table_members(db, table));
}

std::string row_line_prefix(std::string_view quoted_db, std::string_view quoted_table) {
  return fmt::format(R"({{"op":"{}","v":{},"db":{},"table":{},"key":)", op::row, kVersion, quoted_db, quoted_table);
}

std::string ts_member(std::int64_t ts_ms) { return fmt::format(R"("ts_ms":{})", ts_ms); }

}  // namespace cdc::records
