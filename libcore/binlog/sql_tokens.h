#pragma once

// The one reader of SQL keywords in a statement's text (QUERY events): classify_query() tells
// a BEGIN from a COMMIT or a DDL, ddl_target() reads which tables a DDL names. Keywords
// case-insensitively and as whole words, `quoted` and plain identifiers, dots and commas;
// comments are skipped, and versioned comments (/*!50100 ... */) are read as the SQL they hold,
// as the server does. Reading keywords allocates nothing (classify_query runs on every QUERY
// event); identifier() returns a string.

#include <cstddef>
#include <string>
#include <string_view>

namespace cdc::binlog {

class SqlTokens {
 public:
  explicit SqlTokens(std::string_view sql) noexcept : text_(sql) {}

  // Moves past spaces and comments.
  void skip_space() noexcept;
  // Consumes the keyword (upper case here; case-insensitive in the text, a whole word) if it
  // is next.
  bool keyword(std::string_view word) noexcept;
  // Consumes IF EXISTS or IF NOT EXISTS when next (NOT and EXISTS are reserved words: no table
  // is called that without quotes).
  void if_exists() noexcept;
  // Consumes the character if it is next.
  bool symbol(char c) noexcept;
  // An identifier, `quoted` (with `` for a backquote) or plain; empty when none is next.
  std::string identifier();

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace cdc::binlog
