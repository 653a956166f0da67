#pragma once

// The row filter of --where 'DB.TABLE:EXPR' (issue 31): a small subset of SQL's WHERE clause,
// parsed here into a tree that filter/evaluate.h binds to a table and evaluates on rows, and
// that to_sql() writes back for the server (cdc-snapshot's SELECT), so that both mean the same.
//
//   EXPR      := or
//   or        := and { OR and }
//   and       := not { AND not }
//   not       := NOT not | predicate
//   predicate := primary [ CMP primary
//                        | [NOT] BETWEEN primary AND primary
//                        | [NOT] IN ( primary {, primary} )
//                        | IS [NOT] NULL ]
//   primary   := ( or ) | COLUMN | LITERAL
//   CMP       := = | <> | != | < | <= | > | >=
//   COLUMN    := a name ([A-Za-z_$][A-Za-z0-9_$]*, or `quoted`, `` for a `)
//   LITERAL   := NULL | [+|-]DIGITS[.DIGITS] | 'text' ('' and \' for a quote; \\ \n \t \r \0
//                \b \Z as MariaDB reads them; any other \c is c)
//
// Keywords are case-insensitive. Whether a column may be compared with a literal (the types)
// is the binding's business; the parser only checks the shape. Errors name the character
// (1-based) where the expression stops making sense.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace cdc::filter {

enum class Compare : std::uint8_t { eq, ne, lt, le, gt, ge };

struct Node {
  enum class Kind : std::uint8_t {
    column,    // text: the column's name
    integer,   // text: [-]digits, as written (a leading + dropped)
    decimal,   // text: [-]digits.digits
    string,    // text: the string's bytes, escapes resolved
    null,      // NULL
    compare,   // children: left, right; op
    between,   // children: value, low, high; negated
    in,        // children: value, then each member; negated
    is_null,   // children: value; negated
    logical_and,
    logical_or,
    logical_not,
  };
  Kind kind = Kind::null;
  Compare op = Compare::eq;
  bool negated = false;
  std::uint32_t at = 0;  // 1-based character of the expression where it starts, for messages
  std::string text;
  std::vector<std::uint32_t> children;  // indexes into Expression::nodes
};

struct Expression {
  std::vector<Node> nodes;  // the root is nodes[root]
  std::uint32_t root = 0;
  std::string source;       // the text as given

  [[nodiscard]] const Node& node(std::uint32_t index) const { return nodes[index]; }
};

// Parses EXPR; Errc::usage naming the character and what was expected there.
[[nodiscard]] Result<Expression> parse_expression(std::string_view text);

// The expression as SQL the server reads as the parser did: names `quoted`, strings quoted
// with their bytes escaped, every operation parenthesised.
[[nodiscard]] std::string to_sql(const Expression& expression);

[[nodiscard]] std::string_view compare_sql(Compare op) noexcept;

}  // namespace cdc::filter
