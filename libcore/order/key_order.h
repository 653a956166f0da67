#pragma once

// The server's order of values, reproduced without the server (libcore/order, the module of
// its own that cdc-merge and --where share): cdc-merge must tell which chunk's key range a
// changed row falls in, exactly as the SELECT of cdc-snapshot (compared by the server under the
// column's type and collation) would have; --where (filter/evaluate.h) compares values as the
// server's WHERE does.
//
// Values are the raw JSON text that cdc-stream and cdc-snapshot write for a column (man/cdc-ndjson.5,
// VALUES): 42, "12.50", "AQ==" (base64 for binary strings), "2024-09-04 10:52:12.189",
// "2024-09-04 10:52:12.189Z" (TIMESTAMP), "-838:59:59", "text", "::1" (INET6). Each is turned
// into a sort key: bytes whose memcmp order is the server's order, and which are equal exactly
// when the server finds the values equal (so 'a' and 'A ' give the same sort key under
// utf8mb4_general_ci).
// Sort keys are prefix-free, so a row's key is the concatenation of its columns' sort keys and
// memcmp on those compares rows column by column, as (a,b) < (c,d) does in SQL.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "column/column_type.h"
#include "util/result.h"

namespace cdc::order {

class KeyColumnOrder {
 public:
  // key_type: information_schema COLUMN_TYPE as the chunk line's key_types has it
  // ("int(10) unsigned", "decimal(10,2)", "varbinary(16)", "varchar(20)", "datetime(3)",
  // "timestamp(6)", "date", "time(2)", "year(4)", "char(8)", "text", "uuid"); collation_id as
  // the low line's key_collations has it (0: not a string, 63: binary). A type or collation whose
  // order is not reproduced here is Errc::unsupported, naming it and what to do instead.
  [[nodiscard]] static Result<KeyColumnOrder> make(std::string_view key_type, std::uint32_t collation_id);

  // Appends the sort key of one value (raw JSON text, never null: key columns are NOT NULL).
  // A value that does not fit the type is Errc::corrupt_input, naming the value.
  [[nodiscard]] Result<void> append_sort_key(std::string_view json_value, std::string& out) const;

  // Whether the order is an integer one (TINYINT..BIGINT, YEAR) of this signedness: its sort
  // keys are 8 bytes big-endian, a signed value's sign bit flipped.
  [[nodiscard]] bool is_integer(bool is_unsigned) const noexcept;

  // Implementation details are the .cpp's; kept as data so KeyColumnOrder is cheap to copy.
  enum class Kind : std::uint8_t;
  Kind kind{};
  std::uint32_t collation_id = 0;
  bool pad_space = false;  // trailing spaces do not count (PAD SPACE collations)
  std::uint8_t uca_version = 0;  // text_uca: the order::detail::UcaVersion of the collation
  std::uint8_t uca_levels = 0;   // text_uca: bit n set = level n compared (0 primary, 1 accents, 2 case)
  FixedBinaryType fixed_binary = FixedBinaryType::none;  // MariaDB INET4/INET6/UUID columns
};

// A row's sort key: the concatenation of each key column's sort key, in key order.
// values holds the raw JSON text of each key column's value.
[[nodiscard]] Result<void> append_row_sort_key(std::span<const KeyColumnOrder> columns,
                                               std::span<const std::string_view> values, std::string& out);

// A chunk's range [start, end) over the row sort keys; nullopt = open.
struct KeyRange {
  std::optional<std::string> start;
  std::optional<std::string> end;
  [[nodiscard]] bool contains(std::string_view row_sort_key) const noexcept {
    return (!start || row_sort_key >= *start) && (!end || row_sort_key < *end);
  }
};

}  // namespace cdc::order
