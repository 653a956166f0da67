#include "filter/expression.h"

#include <fmt/format.h>

#include <cctype>

namespace cdc::filter {

namespace {

// Deeper nesting than any hand-written filter needs; bounds the recursion on hostile input.
constexpr int kMaxDepth = 64;

enum class Token : std::uint8_t { end, name, quoted_name, number, string, symbol, bad };

bool is_name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$' ||
         static_cast<unsigned char>(c) >= 0x80;  // identifiers may hold any non-ASCII character
}
bool is_name_char(char c) { return is_name_start(c) || std::isdigit(static_cast<unsigned char>(c)) != 0; }

bool equals_keyword(std::string_view word, std::string_view keyword) {
  if (word.size() != keyword.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(word[i])) != keyword[i]) return false;
  return true;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) { next(); }

  Result<Expression> run() {
    const auto root = parse_or(0);
    if (!root) return fail(root.error());
    if (token_ != Token::end) return error_here("an operator (AND, OR, =, <, BETWEEN, IN, IS ...) or the end");
    out_.root = *root;
    out_.source.assign(text_);
    return std::move(out_);
  }

 private:
  // ---- tokens ----

  void next() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_])) != 0) ++at_;
    start_ = at_;
    value_.clear();
    if (at_ >= text_.size()) {
      token_ = Token::end;
      return;
    }
    const char c = text_[at_];
    if (is_name_start(c)) {
      while (at_ < text_.size() && is_name_char(text_[at_])) ++at_;
      value_.assign(text_.substr(start_, at_ - start_));
      token_ = Token::name;
    } else if (c == '`') {
      scan_quoted_name();
    } else if (std::isdigit(static_cast<unsigned char>(c)) != 0 || (c == '.' && digit_at(at_ + 1))) {
      scan_number();
    } else if (c == '\'' || c == '"') {
      scan_string(c);
    } else {
      scan_symbol();
    }
  }

  bool digit_at(std::size_t i) const {
    return i < text_.size() && std::isdigit(static_cast<unsigned char>(text_[i])) != 0;
  }

  void scan_quoted_name() {
    ++at_;
    for (;;) {
      if (at_ >= text_.size()) {
        token_ = Token::bad;
        bad_ = "a `quoted name` without its closing `";
        return;
      }
      if (text_[at_] == '`') {
        if (at_ + 1 < text_.size() && text_[at_ + 1] == '`') {
          value_.push_back('`');
          at_ += 2;
          continue;
        }
        ++at_;
        break;
      }
      value_.push_back(text_[at_++]);
    }
    token_ = value_.empty() ? Token::bad : Token::quoted_name;
    if (value_.empty()) bad_ = "an empty `quoted name`";
  }

  void scan_number() {
    while (digit_at(at_)) ++at_;
    if (at_ < text_.size() && text_[at_] == '.') {
      ++at_;
      while (digit_at(at_)) ++at_;
    }
    if (at_ < text_.size() && (is_name_char(text_[at_]) || text_[at_] == '.')) {
      // 1e5, 0x1F, 12abc, 1.2.3: not in the subset
      while (at_ < text_.size() && (is_name_char(text_[at_]) || text_[at_] == '.')) ++at_;
      token_ = Token::bad;
      bad_ = fmt::format("the number '{}' (the subset takes digits with an optional . and digits)",
                         text_.substr(start_, at_ - start_));
      return;
    }
    value_.assign(text_.substr(start_, at_ - start_));
    token_ = Token::number;
  }

  void scan_string(char quote) {
    ++at_;
    for (;;) {
      if (at_ >= text_.size()) {
        token_ = Token::bad;
        bad_ = fmt::format("a string without its closing {}", quote);
        return;
      }
      const char c = text_[at_];
      if (c == quote) {
        if (at_ + 1 < text_.size() && text_[at_ + 1] == quote) {
          value_.push_back(quote);
          at_ += 2;
          continue;
        }
        ++at_;
        break;
      }
      if (c == '\\' && at_ + 1 < text_.size()) {
        const char e = text_[at_ + 1];
        // MariaDB's escapes (sql_mode without NO_BACKSLASH_ESCAPES); any other \c is c.
        switch (e) {
          case 'n': value_.push_back('\n'); break;
          case 't': value_.push_back('\t'); break;
          case 'r': value_.push_back('\r'); break;
          case '0': value_.push_back('\0'); break;
          case 'b': value_.push_back('\b'); break;
          case 'Z': value_.push_back('\x1a'); break;
          default: value_.push_back(e); break;
        }
        at_ += 2;
        continue;
      }
      value_.push_back(c);
      ++at_;
    }
    token_ = Token::string;
  }

  void scan_symbol() {
    const std::string_view rest = text_.substr(at_);
    for (const std::string_view symbol : {"<=", ">=", "<>", "!=", "=", "<", ">", "(", ")", ",", "-", "+"}) {
      if (rest.starts_with(symbol)) {
        at_ += symbol.size();
        value_.assign(symbol);
        token_ = Token::symbol;
        return;
      }
    }
    token_ = Token::bad;
    bad_ = fmt::format("the character '{}'", text_[at_]);
    ++at_;
  }

  bool is_symbol(std::string_view symbol) const { return token_ == Token::symbol && value_ == symbol; }
  bool is_keyword(std::string_view keyword) const { return token_ == Token::name && equals_keyword(value_, keyword); }

  std::string describe_token() const {
    switch (token_) {
      case Token::end: return "the end of the expression";
      case Token::bad: return bad_;
      case Token::string: return "a string";
      case Token::number: return fmt::format("the number {}", value_);
      default: return fmt::format("'{}'", value_);
    }
  }

  Unexpected error_here(std::string_view expected) const {
    return fail(Errc::usage, fmt::format("at character {}: expected {}, found {}", start_ + 1, expected,
                                         describe_token()));
  }

  std::uint32_t position() const { return static_cast<std::uint32_t>(start_ + 1); }

  std::uint32_t add(Node node) {
    out_.nodes.push_back(std::move(node));
    return static_cast<std::uint32_t>(out_.nodes.size() - 1);
  }

  // ---- grammar ----

  Result<std::uint32_t> parse_or(int depth) {
    auto left = parse_and(depth);
    if (!left) return left;
    while (is_keyword("OR")) {
      const std::uint32_t at = position();
      next();
      auto right = parse_and(depth);
      if (!right) return right;
      left = add(Node{Node::Kind::logical_or, Compare::eq, false, at, {}, {*left, *right}});
    }
    return left;
  }

  Result<std::uint32_t> parse_and(int depth) {
    auto left = parse_not(depth);
    if (!left) return left;
    while (is_keyword("AND")) {
      const std::uint32_t at = position();
      next();
      auto right = parse_not(depth);
      if (!right) return right;
      left = add(Node{Node::Kind::logical_and, Compare::eq, false, at, {}, {*left, *right}});
    }
    return left;
  }

  Result<std::uint32_t> parse_not(int depth) {
    if (depth > kMaxDepth) return error_here(fmt::format("fewer than {} levels of nesting", kMaxDepth));
    if (is_keyword("NOT")) {
      const std::uint32_t at = position();
      next();
      auto operand = parse_not(depth + 1);
      if (!operand) return operand;
      return add(Node{Node::Kind::logical_not, Compare::eq, false, at, {}, {*operand}});
    }
    return parse_predicate(depth);
  }

  Result<std::uint32_t> parse_predicate(int depth) {
    auto value = parse_primary(depth);
    if (!value) return value;
    const std::uint32_t at = out_.nodes[*value].at;
    if (token_ == Token::symbol) {
      static constexpr std::pair<std::string_view, Compare> kOperators[] = {
          {"=", Compare::eq}, {"<>", Compare::ne}, {"!=", Compare::ne}, {"<", Compare::lt},
          {"<=", Compare::le}, {">", Compare::gt}, {">=", Compare::ge}};
      for (const auto& [symbol, op] : kOperators) {
        if (value_ != symbol) continue;
        next();
        auto right = parse_primary(depth);
        if (!right) return right;
        return add(Node{Node::Kind::compare, op, false, at, {}, {*value, *right}});
      }
      return value;
    }
    bool negated = false;
    if (is_keyword("NOT")) {
      negated = true;
      next();
      if (!is_keyword("BETWEEN") && !is_keyword("IN")) return error_here("BETWEEN or IN after NOT");
    }
    if (is_keyword("BETWEEN")) {
      next();
      auto low = parse_primary(depth);
      if (!low) return low;
      if (!is_keyword("AND")) return error_here("AND (BETWEEN low AND high)");
      next();
      auto high = parse_primary(depth);
      if (!high) return high;
      return add(Node{Node::Kind::between, Compare::eq, negated, at, {}, {*value, *low, *high}});
    }
    if (is_keyword("IN")) {
      next();
      if (!is_symbol("(")) return error_here("( after IN");
      next();
      Node in{Node::Kind::in, Compare::eq, negated, at, {}, {*value}};
      for (;;) {
        auto member = parse_primary(depth);
        if (!member) return member;
        in.children.push_back(*member);
        if (is_symbol(")")) break;
        if (!is_symbol(",")) return error_here(", or ) in the IN list");
        next();
      }
      next();
      return add(std::move(in));
    }
    if (is_keyword("IS")) {
      next();
      bool is_not = false;
      if (is_keyword("NOT")) {
        is_not = true;
        next();
      }
      if (!is_keyword("NULL")) return error_here(is_not ? "NULL (IS NOT NULL)" : "NULL or NOT NULL after IS");
      next();
      return add(Node{Node::Kind::is_null, Compare::eq, is_not, at, {}, {*value}});
    }
    return value;
  }

  Result<std::uint32_t> parse_primary(int depth) {
    if (depth > kMaxDepth) return error_here(fmt::format("fewer than {} levels of nesting", kMaxDepth));
    const std::uint32_t at = position();
    if (is_symbol("(")) {
      next();
      auto inner = parse_or(depth + 1);
      if (!inner) return inner;
      if (!is_symbol(")")) return error_here(")");
      next();
      return inner;
    }
    if (is_symbol("-") || is_symbol("+")) {
      const bool minus = value_ == "-";
      next();
      if (token_ != Token::number) return error_here("a number after the sign");
      return number(at, minus);
    }
    switch (token_) {
      case Token::number: return number(at, false);
      case Token::string: {
        Node node{Node::Kind::string, Compare::eq, false, at, std::move(value_), {}};
        next();
        return add(std::move(node));
      }
      case Token::quoted_name: {
        Node node{Node::Kind::column, Compare::eq, false, at, std::move(value_), {}};
        next();
        return add(std::move(node));
      }
      case Token::name: {
        if (is_keyword("NULL")) {
          next();
          return add(Node{Node::Kind::null, Compare::eq, false, at, {}, {}});
        }
        for (const std::string_view reserved : {"AND", "OR", "NOT", "BETWEEN", "IN", "IS"})
          if (is_keyword(reserved)) return error_here("a column, a literal or (");
        Node node{Node::Kind::column, Compare::eq, false, at, std::move(value_), {}};
        next();
        return add(std::move(node));
      }
      default: return error_here("a column, a literal or (");
    }
  }

  Result<std::uint32_t> number(std::uint32_t at, bool minus) {
    std::string digits = value_;
    if (digits.front() == '.') digits.insert(0, "0");
    if (digits.back() == '.') digits.pop_back();
    const bool is_decimal = digits.find('.') != std::string::npos;
    // Leading zeros say nothing about the value; the sort keys of filter/evaluate.h want none.
    std::size_t zeros = 0;
    while (zeros + 1 < digits.size() && digits[zeros] == '0' && digits[zeros + 1] != '.') ++zeros;
    digits.erase(0, zeros);
    if (minus) digits.insert(0, "-");
    next();
    return add(Node{is_decimal ? Node::Kind::decimal : Node::Kind::integer, Compare::eq, false, at, std::move(digits), {}});
  }

  std::string_view text_;
  std::size_t at_ = 0;     // scanning position
  std::size_t start_ = 0;  // where the current token starts
  Token token_ = Token::end;
  std::string value_;
  std::string bad_;
  Expression out_;
};

void quote_name(std::string_view name, std::string& out) {
  out.push_back('`');
  for (const char c : name) {
    if (c == '`') out.push_back('`');
    out.push_back(c);
  }
  out.push_back('`');
}

// A string as SQL. With a backslash or a NUL in it, as _utf8mb4 X'...', which means the same
// text whatever the session's sql_mode says of backslashes; otherwise plainly quoted.
void quote_string(std::string_view bytes, std::string& out) {
  if (bytes.find_first_of(std::string_view("\\\0", 2)) != std::string_view::npos) {
    out.append("_utf8mb4 X'");
    for (const char c : bytes) fmt::format_to(std::back_inserter(out), "{:02X}", static_cast<unsigned char>(c));
    out.push_back('\'');
    return;
  }
  out.push_back('\'');
  for (const char c : bytes) {
    if (c == '\'') out.push_back('\'');
    out.push_back(c);
  }
  out.push_back('\'');
}

void write_sql(const Expression& e, std::uint32_t index, std::string& out) {
  const Node& n = e.node(index);
  switch (n.kind) {
    case Node::Kind::column: quote_name(n.text, out); return;
    case Node::Kind::integer:
    case Node::Kind::decimal: out.append(n.text); return;
    case Node::Kind::string: quote_string(n.text, out); return;
    case Node::Kind::null: out.append("NULL"); return;
    case Node::Kind::compare:
      out.push_back('(');
      write_sql(e, n.children[0], out);
      out.append(" ").append(compare_sql(n.op)).append(" ");
      write_sql(e, n.children[1], out);
      out.push_back(')');
      return;
    case Node::Kind::between:
      out.push_back('(');
      write_sql(e, n.children[0], out);
      out.append(n.negated ? " NOT BETWEEN " : " BETWEEN ");
      write_sql(e, n.children[1], out);
      out.append(" AND ");
      write_sql(e, n.children[2], out);
      out.push_back(')');
      return;
    case Node::Kind::in:
      out.push_back('(');
      write_sql(e, n.children[0], out);
      out.append(n.negated ? " NOT IN (" : " IN (");
      for (std::size_t i = 1; i < n.children.size(); ++i) {
        if (i > 1) out.append(", ");
        write_sql(e, n.children[i], out);
      }
      out.append("))");
      return;
    case Node::Kind::is_null:
      out.push_back('(');
      write_sql(e, n.children[0], out);
      out.append(n.negated ? " IS NOT NULL)" : " IS NULL)");
      return;
    case Node::Kind::logical_and:
    case Node::Kind::logical_or:
      out.push_back('(');
      write_sql(e, n.children[0], out);
      out.append(n.kind == Node::Kind::logical_and ? " AND " : " OR ");
      write_sql(e, n.children[1], out);
      out.push_back(')');
      return;
    case Node::Kind::logical_not:
      out.append("(NOT ");
      write_sql(e, n.children[0], out);
      out.push_back(')');
      return;
  }
}

}  // namespace

Result<Expression> parse_expression(std::string_view text) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return fail(Errc::usage, "the expression is empty");
  return Parser(text).run();
}

std::string_view compare_sql(Compare op) noexcept {
  switch (op) {
    case Compare::eq: return "=";
    case Compare::ne: return "<>";
    case Compare::lt: return "<";
    case Compare::le: return "<=";
    case Compare::gt: return ">";
    case Compare::ge: return ">=";
  }
  return "=";
}

std::string to_sql(const Expression& expression) {
  std::string out;
  write_sql(expression, expression.root, out);
  return out;
}

}  // namespace cdc::filter
