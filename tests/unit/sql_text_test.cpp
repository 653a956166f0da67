#include <doctest/doctest.h>

#include <string>

#include "mysql/sql_text.h"

TEST_CASE("sql_text: literals are hex, so no byte needs escaping") {
  CHECK(cdc::mysql::text_literal("a'b\\") == "_utf8mb4 X'6127625C'");
  CHECK(cdc::mysql::text_literal("caf\xC3\xA9") == "_utf8mb4 X'636166C3A9'");
  CHECK(cdc::mysql::text_literal("") == "_utf8mb4 X''");  // the empty string, utf8mb4
  CHECK(cdc::mysql::bytes_literal(std::string("\x00\xFF", 2)) == "X'00FF'");
  CHECK(cdc::mysql::bytes_literal("") == "X''");  // the empty binary string
  CHECK(cdc::mysql::quote_identifier("or`ders") == "`or``ders`");
}

TEST_CASE("sql_text: a row comparison is written out, each column after the previous ones' equality") {
  CHECK(cdc::mysql::row_comparison({"`a`"}, {"5"}, ">=") == "(`a` >= 5)");
  CHECK(cdc::mysql::row_comparison({"`a`", "`b`", "`c`"}, {"1", "X'02'", "3"}, ">=") ==
        "((`a` > 1) OR (`a` = 1 AND `b` > X'02') OR (`a` = 1 AND `b` = X'02' AND `c` >= 3))");
  CHECK(cdc::mysql::row_comparison({"`a`", "`b`"}, {"1", "2"}, "<") == "((`a` < 1) OR (`a` = 1 AND `b` < 2))");
  CHECK(cdc::mysql::row_comparison({"`a`", "`b`"}, {"1", "2"}, "<=") == "((`a` < 1) OR (`a` = 1 AND `b` <= 2))");
}
