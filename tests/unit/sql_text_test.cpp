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
