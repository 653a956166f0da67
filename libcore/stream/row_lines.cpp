#include "stream/row_lines.h"

#include <fmt/format.h>

namespace cdc::stream {

Error row_failure(const RowsSource& source, std::uint64_t row, std::string_view why) {
  const std::string_view kind = source.kind == binlog::RowsKind::write   ? "WRITE_ROWS"
                                : source.kind == binlog::RowsKind::erase ? "DELETE_ROWS"
                                                                         : "UPDATE_ROWS";
  return Error{Errc::corrupt_input, fmt::format("{}:{}: {} row {} of {}.{}: {}", source.file, source.offset, kind, row,
                                                source.database, source.table, why)};
}

}  // namespace cdc::stream
