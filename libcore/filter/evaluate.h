#pragma once

// A --where expression (filter/expression.h) bound to one table's columns and evaluated on its
// rows as the server evaluates the same WHERE clause (issue 31):
//
// * three-valued logic: a comparison with NULL is unknown, NOT unknown is unknown, FALSE AND
//   unknown is FALSE, TRUE OR unknown is TRUE; a row matches only when the whole is TRUE;
// * each value compared in its column's order, as the server compares it: integers and
//   DECIMAL exactly (an integer column against a decimal literal by value, 2 < 2.5), FLOAT and
//   DOUBLE as doubles (a FLOAT's value as the float it is), text under the column's collation
//   (case, accents and trailing spaces as the collation says), binary strings byte by byte,
//   DATE, DATETIME, TIMESTAMP and TIME as instants (a TIMESTAMP literal is UTC, as
//   cdc-ndjson(5) writes the values), MariaDB's INET4, INET6 and UUID in the server's order of
//   them (a literal as the server writes the value). The orders are order::KeyColumnOrder's, the ones
//   cdc-merge already sorts keys by.
//
// Values are the raw JSON text cdc-snapshot and cdc-stream write for each column
// (cdc-ndjson(5), VALUES), so one evaluator serves the rows of a change line and of a snapshot
// line. Binding refuses, as a usage error naming the character: an unknown column; a literal
// that does not fit its column's type (a string for a number, a number for text, a text that is
// not a date for a DATE); a comparison that is not a column against literals; a column type
// with no order here (JSON, GEOMETRY, BIT, ...).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "filter/expression.h"
#include "order/key_order.h"
#include "records/table_line.h"
#include "util/result.h"

namespace cdc::filter {

enum class Truth : std::uint8_t { is_false, is_true, unknown };

class BoundFilter {
 public:
  // The expression against these columns (a table line's, cdc-ndjson(5)).
  [[nodiscard]] static Result<BoundFilter> bind(const Expression& expression,
                                                std::span<const records::TableColumn> columns);

  // Indexes into the table's columns of the values evaluate() wants, in the order it wants
  // them.
  [[nodiscard]] std::span<const std::size_t> columns() const noexcept { return columns_; }

  // values[i]: the raw JSON text of columns()[i]'s value ("null" for NULL). A value that does
  // not fit its column's type is Errc::corrupt_input, naming the column and the value. Not
  // thread-safe (scratch buffers): one BoundFilter per thread.
  [[nodiscard]] Result<Truth> evaluate(std::span<const std::string_view> values);

  // cdc-stream reads an integer column's value from the binlog's bytes instead of writing it
  // as text: whether slot takes one (give_integer) — a TINYINT..BIGINT column of this
  // signedness compared as an integer, not by DECIMAL value —, and the value (two's complement
  // bits when signed) given for the next evaluate(), which then ignores values[slot].
  [[nodiscard]] bool takes_integer(std::size_t slot, bool is_unsigned) const noexcept;
  void give_integer(std::size_t slot, std::uint64_t bits);

  // One way a column's values are compared, and the value turned into its comparable form.
  struct Order {
    enum class Kind : std::uint8_t { key, integer_as_decimal, float32, float64 };
    Kind kind = Kind::key;
    order::KeyColumnOrder key;  // Kind::key and integer_as_decimal (a DECIMAL order)
  };
  // A node of the bound tree, its children as indexes into nodes_.
  struct Bound {
    Node::Kind kind = Node::Kind::null;
    Compare op = Compare::eq;
    bool negated = false;
    std::uint32_t slot = 0;              // compare/between/in/is_null: the column's slot
    std::vector<std::string> literals;   // compare: 1; between: low, high; in: each member
    // An integer slot's literals as the numbers given values are compared with (give_integer).
    std::vector<std::uint64_t> numbers;
    std::vector<bool> literal_null;      // which of literals is NULL
    std::vector<std::uint32_t> children;  // and/or/not
  };

 private:
  Truth truth(std::uint32_t index);
  // The slot's sort key; nullptr for NULL, and for a value that does not fit (failure_ set).
  const std::string* sort_key(std::uint32_t slot);

  std::vector<std::size_t> columns_;
  std::vector<Order> orders_;       // per slot
  std::vector<std::string> names_;  // per slot, for messages
  std::vector<Bound> nodes_;
  std::uint32_t root_ = 0;
  // The row being evaluated: each slot's value, and its sort key once worked out.
  std::span<const std::string_view> values_;
  std::vector<std::string> keys_;
  std::vector<std::uint8_t> key_state_;  // 0: not yet, 1: worked out, 2: NULL, 3: given
  // Per slot: 0, or the integer order its values may be given in (1 signed, 2 unsigned); and
  // the value given, as a number in the order of the column's sort keys.
  std::vector<std::uint8_t> integer_kind_;
  std::vector<std::uint64_t> given_;
  std::optional<Error> failure_;  // the first value of this evaluation that did not fit
  std::string scratch_;
};

// A comparable form of a double: memcmp order is numeric order (-0 and 0 equal).
void append_double_key(double value, std::string& out);

}  // namespace cdc::filter
