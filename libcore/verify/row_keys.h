#pragma once

// How cdc-apply --verify names a row it reports: its key, written as the chunk lines write key
// values ({"id":5}, {"k1":"x","k2":3}), and ordered as the server orders the key
// (order/key_order.h). A table without a key (one chunk, cdc-plan(1)) names its rows by every
// column, with NULL as null, ordered by that text: its equal rows are one key, counted.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ndjson/writer.h"
#include "order/key_order.h"
#include "plan/chunk.h"
#include "util/result.h"
#include "verify/column_text.h"
#include "verify/row_diff.h"

namespace cdc::verify {

class RowKeys {
 public:
  // The key columns of the table's split, with their kinds; or every column when it has none,
  // then written as the row text has them when the peer is PostgreSQL (column_text.h): the
  // numbers as numbers, anything else as text.
  [[nodiscard]] static RowKeys of(const plan::TableSplit& split, Peer peer = Peer::mariadb);

  // The columns the rows query lists before the hash.
  [[nodiscard]] const std::vector<std::string>& listed() const noexcept { return names_; }
  [[nodiscard]] bool keyless() const noexcept { return keyless_; }
  // The key columns and their orders; the orders are empty when not reproduced here.
  [[nodiscard]] const std::vector<plan::KeyColumn>& columns() const noexcept { return columns_; }
  [[nodiscard]] const std::vector<order::KeyColumnOrder>& orders() const noexcept { return orders_; }
  // A row of the rows query: the listed columns' values (the server's text; bytes for binary),
  // then the hash. Errc::corrupt_input for a row of another shape.
  [[nodiscard]] Result<RowHash> row(std::span<const std::optional<std::string>> values) const;
  // What sort_key() reuses from row to row, so a pass over a table allocates nothing per row.
  struct Scratch {
    ndjson::Writer json;
    std::vector<std::size_t> ends;
    std::vector<std::string_view> views;
  };
  // Only the sort key of a row of the rows query (the listed values, then the hash), in out;
  // for a key whose order is reproduced (orders() not empty). Errc::corrupt_input for a row
  // of another shape or a value the order cannot read.
  [[nodiscard]] Result<void> sort_key(std::span<const std::optional<std::string>> values, Scratch& scratch,
                                      std::string& out) const;
  // The condition that selects only the rows of these keys: (`k` IN (..)), or (`a` = .. AND
  // `b` = ..) OR ... for a composite key; "" when none are given or the table has no key (its
  // rows are then all read again).
  [[nodiscard]] Result<std::string> only_sql(std::span<const KeyDifference> keys) const;

 private:
  std::vector<plan::KeyColumn> columns_;
  std::vector<std::string> names_;
  // The server's order of each key column; empty when one of them has an order not reproduced
  // here, or for a table without a key: then the key's JSON text orders it (one order on both
  // sides, and equal exactly when the bytes are).
  std::vector<order::KeyColumnOrder> orders_;
  bool keyless_ = false;
};

}  // namespace cdc::verify
