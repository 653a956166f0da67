#include "filter/evaluate.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cstring>
#include <optional>
#include <utility>

#include "ndjson/json_scan.h"
#include "ndjson/writer.h"
#include "rowimage/charset.h"

namespace cdc::filter {

namespace {

enum class TypeClass : std::uint8_t { integer, decimal, float32, float64, text, binary, temporal, fixed_binary, unsupported };

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string base_type(std::string_view type) {
  const std::string low = lower(type);
  return low.substr(0, low.find_first_of("( "));
}

TypeClass classify(std::string_view type) {
  const std::string base = base_type(type);
  for (const std::string_view name : {"tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year"})
    if (base == name) return TypeClass::integer;
  for (const std::string_view name : {"decimal", "numeric", "dec", "fixed"})
    if (base == name) return TypeClass::decimal;
  if (base == "float") return TypeClass::float32;
  if (base == "double" || base == "real") return TypeClass::float64;
  for (const std::string_view name : {"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set"})
    if (base == name) return TypeClass::text;
  for (const std::string_view name : {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})
    if (base == name) return TypeClass::binary;
  for (const std::string_view name : {"date", "datetime", "timestamp", "time"})
    if (base == name) return TypeClass::temporal;
  // MariaDB's INET4, INET6 and UUID, written and ordered as the server writes and orders them.
  for (const std::string_view name : {"inet4", "inet6", "uuid"})
    if (base == name) return TypeClass::fixed_binary;
  return TypeClass::unsupported;
}

std::optional<std::uint16_t> collation_id(std::string_view name) {
  for (const auto& row : rowimage::detail::collation_rows())
    if (row.name == name) return row.id;
  return std::nullopt;
}

bool is_literal(const Node& node) {
  return node.kind == Node::Kind::integer || node.kind == Node::Kind::decimal || node.kind == Node::Kind::string ||
         node.kind == Node::Kind::null;
}

Compare flipped(Compare op) {
  switch (op) {
    case Compare::lt: return Compare::gt;
    case Compare::le: return Compare::ge;
    case Compare::gt: return Compare::lt;
    case Compare::ge: return Compare::le;
    default: return op;
  }
}

Truth negate(Truth t) {
  if (t == Truth::unknown) return t;
  return t == Truth::is_true ? Truth::is_false : Truth::is_true;
}

Truth holds(Compare op, int order) {
  bool result = false;
  switch (op) {
    case Compare::eq: result = order == 0; break;
    case Compare::ne: result = order != 0; break;
    case Compare::lt: result = order < 0; break;
    case Compare::le: result = order <= 0; break;
    case Compare::gt: result = order > 0; break;
    case Compare::ge: result = order >= 0; break;
  }
  return result ? Truth::is_true : Truth::is_false;
}

int compare_keys(const std::string& a, const std::string& b) {
  const int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

Truth both(Truth a, Truth b) {
  if (a == Truth::is_false || b == Truth::is_false) return Truth::is_false;
  if (a == Truth::unknown || b == Truth::unknown) return Truth::unknown;
  return Truth::is_true;
}

std::optional<double> parse_double(std::string_view text, bool as_float) {
  text = ndjson::trim_json_space(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (as_float) {
    float value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return static_cast<double>(value);
  }
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string_view type_class_name(TypeClass type) {
  switch (type) {
    case TypeClass::integer:
    case TypeClass::decimal:
    case TypeClass::float32:
    case TypeClass::float64: return "a number, without quotes";
    case TypeClass::text:
    case TypeClass::binary: return "a string in quotes";
    case TypeClass::temporal: return "a date or time in quotes ('2024-01-31', '2024-01-31 12:00:00.5', '-12:30:00')";
    case TypeClass::fixed_binary: return "an address or a UUID in quotes, as the server writes it ('10.0.0.1', '2001:db8::1')";
    case TypeClass::unsupported: break;
  }
  return "nothing";
}

bool fits(TypeClass type, Node::Kind literal) {
  if (literal == Node::Kind::null) return true;
  switch (type) {
    case TypeClass::integer:
    case TypeClass::decimal:
    case TypeClass::float32:
    case TypeClass::float64: return literal == Node::Kind::integer || literal == Node::Kind::decimal;
    case TypeClass::text:
    case TypeClass::binary:
    case TypeClass::temporal:
    case TypeClass::fixed_binary: return literal == Node::Kind::string;
    case TypeClass::unsupported: break;
  }
  return false;
}

}  // namespace

void append_double_key(double value, std::string& out) {
  if (value == 0) value = 0;  // -0 as 0: the server finds them equal
  auto bits = std::bit_cast<std::uint64_t>(value);
  // Positive numbers: the sign bit set above every negative; negative ones: all bits flipped,
  // so that a larger magnitude sorts lower.
  bits = (bits & (std::uint64_t{1} << 63)) != 0 ? ~bits : bits | (std::uint64_t{1} << 63);
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>((bits >> shift) & 0xFF));
}

Result<BoundFilter> BoundFilter::bind(const Expression& e, std::span<const records::TableColumn> columns) {
  BoundFilter f;
  std::vector<TypeClass> types;
  std::vector<bool> needs_decimal;
  const auto where = [&](const Node& node) { return fmt::format("at character {}: ", node.at); };

  // The slot of a column node, added on first sight.
  const auto slot_of = [&](const Node& node) -> Result<std::uint32_t> {
    const auto found = std::find_if(columns.begin(), columns.end(), [&](const records::TableColumn& column) {
      return lower(column.name) == lower(node.text);  // column names are case-insensitive
    });
    if (found == columns.end()) {
      std::string names;
      for (const auto& column : columns) names += fmt::format("{}{}", names.empty() ? "" : ", ", column.name);
      return fail(Errc::usage, fmt::format("{}no column `{}` in the table (its columns: {})", where(node), node.text, names));
    }
    const auto column = static_cast<std::size_t>(found - columns.begin());
    for (std::size_t slot = 0; slot < f.columns_.size(); ++slot)
      if (f.columns_[slot] == column) return static_cast<std::uint32_t>(slot);
    const TypeClass type = classify(found->type);
    if (type == TypeClass::unsupported)
      return fail(Errc::usage, fmt::format("{}column `{}` is {}, which --where cannot compare (it compares numbers, "
                                           "strings, binary strings, dates and times, INET4, INET6 and UUID)",
                                           where(node), found->name, found->type));
    f.columns_.push_back(column);
    f.names_.push_back(found->name);
    types.push_back(type);
    needs_decimal.push_back(false);
    return static_cast<std::uint32_t>(f.columns_.size() - 1);
  };

  // A predicate's column and literals: the column node, then each literal node; the compare's
  // operator as seen from the column.
  struct Shape {
    std::uint32_t slot = 0;
    std::vector<std::uint32_t> literals;
    Compare op = Compare::eq;
  };
  const auto shape_of = [&](const Node& node) -> Result<Shape> {
    Shape shape;
    std::uint32_t column_node = node.children[0];
    std::vector<std::uint32_t> others(node.children.begin() + 1, node.children.end());
    shape.op = node.op;
    if (node.kind == Node::Kind::compare && e.node(column_node).kind != Node::Kind::column &&
        e.node(node.children[1]).kind == Node::Kind::column) {
      column_node = node.children[1];  // 5 < a: a > 5
      others = {node.children[0]};
      shape.op = flipped(node.op);
    }
    const Node& column = e.node(column_node);
    if (column.kind != Node::Kind::column)
      return fail(Errc::usage, fmt::format("{}a condition compares a column with literals; this one has no column "
                                           "where one is needed",
                                           where(column)));
    auto slot = slot_of(column);
    if (!slot) return fail(slot.error());
    shape.slot = *slot;
    for (const std::uint32_t other : others) {
      const Node& literal = e.node(other);
      if (!is_literal(literal))
        return fail(Errc::usage, fmt::format("{}expected a literal (a number, a string or NULL): --where compares "
                                             "columns with literals, not with other columns or conditions",
                                             where(literal)));
      const TypeClass type = types[*slot];
      if (!fits(type, literal.kind))
        return fail(Errc::usage, fmt::format("{}column `{}` is {}: compare it with {}", where(literal),
                                             f.names_[*slot], columns[f.columns_[*slot]].type, type_class_name(type)));
      shape.literals.push_back(other);
    }
    return shape;
  };

  // First pass: the slots, and which integer columns meet a literal only DECIMAL can order (a
  // decimal, or one beyond 64 bits): those compare by value.
  std::vector<std::uint32_t> pending{e.root};
  while (!pending.empty()) {
    const Node& node = e.node(pending.back());
    pending.pop_back();
    switch (node.kind) {
      case Node::Kind::logical_and:
      case Node::Kind::logical_or:
      case Node::Kind::logical_not:
        for (const std::uint32_t child : node.children) pending.push_back(child);
        break;
      case Node::Kind::compare:
      case Node::Kind::between:
      case Node::Kind::in:
      case Node::Kind::is_null: {
        auto shape = shape_of(node);
        if (!shape) return fail(shape.error());
        if (types[shape->slot] != TypeClass::integer) break;
        auto order = order::KeyColumnOrder::make(columns[f.columns_[shape->slot]].type, 0);
        if (!order) return fail(Errc::usage, fmt::format("{}{}", where(node), order.error().message));
        for (const std::uint32_t literal : shape->literals) {
          const Node& value = e.node(literal);
          std::string probe;
          if (value.kind == Node::Kind::decimal || (value.kind == Node::Kind::integer && !order->append_sort_key(value.text, probe)))
            needs_decimal[shape->slot] = true;
        }
        break;
      }
      default:
        return fail(Errc::usage, fmt::format("{}expected a condition (a comparison, BETWEEN, IN or IS NULL), found "
                                             "a {} alone",
                                             where(node), node.kind == Node::Kind::column ? "column" : "literal"));
    }
  }

  // The order of each slot.
  for (std::size_t slot = 0; slot < f.columns_.size(); ++slot) {
    const records::TableColumn& column = columns[f.columns_[slot]];
    Order order;
    std::string type = column.type;
    std::uint32_t collation = 0;
    switch (types[slot]) {
      case TypeClass::float32: order.kind = Order::Kind::float32; break;
      case TypeClass::float64: order.kind = Order::Kind::float64; break;
      case TypeClass::integer:
        if (needs_decimal[slot]) {
          type = "decimal(65,30)";
          order.kind = Order::Kind::integer_as_decimal;
        }
        break;
      case TypeClass::binary: collation = rowimage::kBinaryCollationId; break;
      case TypeClass::text: {
        // ENUM and SET compare with strings as their labels' text, under the column's collation.
        if (const std::string base = base_type(column.type); base == "enum" || base == "set") type = "varchar(255)";
        if (!column.collation)
          return fail(Errc::usage, fmt::format("column `{}` ({}) has no known collation, which --where needs to compare "
                                               "its text as the server does (read with binlog_row_metadata=FULL, or "
                                               "from the server)",
                                               column.name, column.type));
        const auto id = collation_id(*column.collation);
        if (!id)
          return fail(Errc::usage, fmt::format("column `{}` has collation {}, whose order --where does not know",
                                               column.name, *column.collation));
        collation = *id;
        break;
      }
      default: break;
    }
    if (order.kind == Order::Kind::key || order.kind == Order::Kind::integer_as_decimal) {
      auto key = order::KeyColumnOrder::make(type, collation);
      if (!key) return fail(Errc::usage, fmt::format("column `{}`: {}", column.name, key.error().message));
      order.key = *key;
    }
    f.orders_.push_back(order);
    const bool integer = order.kind == Order::Kind::key && order.key.is_integer(false);
    const bool unsigned_integer = order.kind == Order::Kind::key && order.key.is_integer(true);
    f.integer_kind_.push_back(integer ? 1 : (unsigned_integer ? 2 : 0));
  }

  // Second pass: the bound tree, each literal as a key in its column's order.
  ndjson::Writer json;
  const auto literal_key = [&](std::uint32_t slot, const Node& literal, std::string& key) -> Result<void> {
    const Order& order = f.orders_[slot];
    if (order.kind == Order::Kind::float32 || order.kind == Order::Kind::float64) {
      const auto value = parse_double(literal.text, false);
      if (!value) return fail(Errc::usage, fmt::format("{}the number {} does not fit a double", where(literal), literal.text));
      append_double_key(*value, key);
      return {};
    }
    std::string_view text = literal.text;
    if (literal.kind == Node::Kind::string) {
      json.clear();
      if (types[slot] == TypeClass::binary)
        json.string_base64(literal.text);
      else
        json.string(literal.text);
      text = json.buffered();
    }
    if (auto made = order.key.append_sort_key(text, key); !made)
      return fail(Errc::usage, fmt::format("{}{} is not a value of column `{}` ({}): compare it with {}", where(literal),
                                           literal.kind == Node::Kind::string ? fmt::format("'{}'", literal.text) : literal.text,
                                           f.names_[slot], columns[f.columns_[slot]].type, type_class_name(types[slot])));
    return {};
  };
  const auto build = [&](auto& self, std::uint32_t index) -> Result<std::uint32_t> {
    const Node& node = e.node(index);
    Bound bound;
    bound.kind = node.kind;
    bound.negated = node.negated;
    if (node.kind == Node::Kind::logical_and || node.kind == Node::Kind::logical_or ||
        node.kind == Node::Kind::logical_not) {
      for (const std::uint32_t child : node.children) {
        auto built = self(self, child);
        if (!built) return built;
        bound.children.push_back(*built);
      }
    } else {
      auto shape = shape_of(node);
      if (!shape) return fail(shape.error());
      bound.slot = shape->slot;
      bound.op = shape->op;
      for (const std::uint32_t literal : shape->literals) {
        const Node& value = e.node(literal);
        bound.literal_null.push_back(value.kind == Node::Kind::null);
        std::string key;
        if (value.kind != Node::Kind::null)
          if (auto made = literal_key(shape->slot, value, key); !made) return fail(made.error());
        if (f.integer_kind_[shape->slot] != 0) {
          std::uint64_t number = 0;
          for (const char byte : key) number = (number << 8) | static_cast<unsigned char>(byte);
          bound.numbers.push_back(number);
        }
        bound.literals.push_back(std::move(key));
      }
    }
    f.nodes_.push_back(std::move(bound));
    return static_cast<std::uint32_t>(f.nodes_.size() - 1);
  };
  auto root = build(build, e.root);
  if (!root) return fail(root.error());
  f.root_ = *root;
  f.keys_.resize(f.columns_.size());
  f.key_state_.resize(f.columns_.size());
  f.given_.resize(f.columns_.size());
  return f;
}

bool BoundFilter::takes_integer(std::size_t slot, bool is_unsigned) const noexcept {
  return integer_kind_[slot] == (is_unsigned ? 2 : 1);
}

void BoundFilter::give_integer(std::size_t slot, std::uint64_t bits) {
  // The sort key's 8 bytes as one number: a signed value with its sign bit flipped.
  given_[slot] = integer_kind_[slot] == 1 ? bits ^ (std::uint64_t{1} << 63) : bits;
  key_state_[slot] = 3;
}

const std::string* BoundFilter::sort_key(std::uint32_t slot) {
  if (key_state_[slot] == 1 || key_state_[slot] == 3) return &keys_[slot];
  if (key_state_[slot] == 2) return nullptr;
  const std::string_view value = ndjson::trim_json_space(values_[slot]);
  key_state_[slot] = 2;  // NULL, or a value that fails: unknown, the failure kept
  if (value == "null") return nullptr;
  std::string& key = keys_[slot];
  key.clear();
  const Order& order = orders_[slot];
  if (order.kind == Order::Kind::float32 || order.kind == Order::Kind::float64) {
    const auto number = parse_double(value, order.kind == Order::Kind::float32);
    if (!number) {
      if (!failure_)
        failure_ = Error{Errc::corrupt_input,
                         fmt::format("column `{}`: {} is not a number", names_[slot], value.substr(0, 80))};
      return nullptr;
    }
    append_double_key(*number, key);
  } else if (auto made = order.key.append_sort_key(value, key); !made) {
    if (!failure_)
      failure_ = Error{Errc::corrupt_input, fmt::format("column `{}`: {}", names_[slot], made.error().message)};
    return nullptr;
  }
  key_state_[slot] = 1;
  return &key;
}

Result<Truth> BoundFilter::evaluate(std::span<const std::string_view> values) {
  if (values.size() != columns_.size())
    return fail(Errc::internal, fmt::format("--where wants {} values, was given {}", columns_.size(), values.size()));
  values_ = values;
  for (std::uint8_t& state : key_state_)
    if (state != 3) state = 0;
  const Truth result = truth(root_);
  // What was given holds for this evaluation only.
  std::fill(key_state_.begin(), key_state_.end(), std::uint8_t{0});
  if (failure_) return fail(*std::exchange(failure_, std::nullopt));
  return result;
}

// The truth of one node; a value that does not fit its column counts as unknown here, and
// evaluate() fails with failure_.
Truth BoundFilter::truth(std::uint32_t index) {
  const Bound& node = nodes_[index];
  switch (node.kind) {
    case Node::Kind::logical_not: return negate(truth(node.children[0]));
    case Node::Kind::logical_and:
    case Node::Kind::logical_or: {
      const bool is_and = node.kind == Node::Kind::logical_and;
      const Truth left = truth(node.children[0]);
      // FALSE AND x, TRUE OR x: x cannot change the outcome.
      if (left == (is_and ? Truth::is_false : Truth::is_true)) return left;
      const Truth right = truth(node.children[1]);
      if (is_and) return both(left, right);
      return negate(both(negate(left), negate(right)));
    }
    case Node::Kind::is_null: {
      const bool is_null = sort_key(node.slot) == nullptr && !failure_;
      return (is_null != node.negated) ? Truth::is_true : Truth::is_false;
    }
    default: break;
  }
  const std::string* value = sort_key(node.slot);
  const bool given = key_state_[node.slot] == 3;
  const std::uint64_t number = given_[node.slot];
  const auto compare = [&](Compare op, std::size_t literal) {
    if (value == nullptr || node.literal_null[literal]) return Truth::unknown;
    if (given) {
      const std::uint64_t other = node.numbers[literal];
      return holds(op, number < other ? -1 : (number > other ? 1 : 0));
    }
    return holds(op, compare_keys(*value, node.literals[literal]));
  };
  switch (node.kind) {
    case Node::Kind::compare: return compare(node.op, 0);
    case Node::Kind::between: {
      const Truth inside = both(compare(Compare::ge, 0), compare(Compare::le, 1));
      return node.negated ? negate(inside) : inside;
    }
    case Node::Kind::in: {
      Truth found = Truth::is_false;
      for (std::size_t i = 0; i < node.literals.size(); ++i) {
        const Truth equal = compare(Compare::eq, i);
        if (equal == Truth::is_true) {
          found = Truth::is_true;
          break;
        }
        if (equal == Truth::unknown) found = Truth::unknown;
      }
      return node.negated ? negate(found) : found;
    }
    default: break;
  }
  return Truth::unknown;  // bind() makes no other kind
}

}  // namespace cdc::filter
