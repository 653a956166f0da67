#include <doctest/doctest.h>

#include <cerrno>
#include <string>

#include "util/fd_io.h"
#include "util/text.h"

TEST_CASE("util/text: case folding touches only ASCII letters") {
  CHECK(cdc::to_lower("VARCHAR(10) Unsigned") == "varchar(10) unsigned");
  CHECK(cdc::to_upper("grant select on `db`.*") == "GRANT SELECT ON `DB`.*");
  // Bytes above 0x7F (a latin1 'Ä', UTF-8 'é') stay as they are, whatever the locale.
  CHECK(cdc::to_lower("\xC4\xC3\xA9Z@[") == "\xC4\xC3\xA9z@[");
  CHECK(cdc::to_upper("`{z}") == "`{Z}");
}

TEST_CASE("util/text: iequals ignores only ASCII case") {
  CHECK(cdc::iequals("ROW START", "row start"));
  CHECK(cdc::iequals("", ""));
  CHECK_FALSE(cdc::iequals("abc", "abcd"));
  CHECK_FALSE(cdc::iequals("a", "b"));
  CHECK_FALSE(cdc::iequals("@", "`"));  // 0x40 and 0x60 differ by the case bit but are not letters
  CHECK_FALSE(cdc::iequals("\xC4", "\xE4"));
}

TEST_CASE("util/text: trim removes C isspace at both ends only") {
  CHECK(cdc::trim(" \t\n\v\f\rSELECT a\tb \r\n") == "SELECT a\tb");
  CHECK(cdc::trim("   ").empty());
  CHECK(cdc::trim("").empty());
  CHECK(cdc::trim("x") == "x");
  CHECK(cdc::trim("\xA0x\xA0") == "\xA0x\xA0");  // a latin1 no-break space is not space
}

TEST_CASE("util/text: is_ascii finds a high byte anywhere, in the 8-byte steps and the tail") {
  CHECK(cdc::is_ascii(""));
  const std::string plain(23, 'a');
  CHECK(cdc::is_ascii(plain));
  for (std::size_t at = 0; at < plain.size(); ++at) {
    std::string text = plain;
    text[at] = '\x80';
    CHECK_MESSAGE(!cdc::is_ascii(text), "high byte at ", at);
  }
  CHECK(cdc::is_ascii(std::string(1, '\x7F')));
}

TEST_CASE("util/fd_io: errno_error says what failed, where and why") {
  errno = ENOENT;
  const cdc::Error error = cdc::errno_error("cannot open", "/no/such/file").error;
  CHECK(error.code == cdc::Errc::io);
  CHECK(error.message == "cannot open /no/such/file: No such file or directory");
}
