// order/key_order.h under MySQL 8's utf8mb4_0900_ai_ci (id 255), _as_ci (305) and _as_cs (278),
// whose weights scripts/gen_uca0900_weights.py derives without a server (no MySQL here): the
// cases are the rules MySQL documents for them and what its own table generator
// (strings/uca9-dump.cc) and scanner (strings/ctype-uca.cc) do, not a server's answers.

#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "order/key_order.h"
#include "order/uca_table.h"
#include "merge_support.h"

namespace {

using cdc::order::KeyColumnOrder;
using cdc::order::detail::UcaTable;
using cdc::order::detail::UcaVersion;

constexpr std::uint32_t kAiCi = 255, kAsCi = 305, kAsCs = 278;

KeyColumnOrder order_of(std::uint32_t collation) {
  auto order = KeyColumnOrder::make("varchar(20)", collation);
  REQUIRE_MESSAGE(order.has_value(), order.error().message);
  return *order;
}

using merge_test::key;

void check_ascending(std::uint32_t collation, const std::vector<std::string_view>& values) {
  const auto order = order_of(collation);
  for (std::size_t i = 1; i < values.size(); ++i) {
    CAPTURE(collation);
    CAPTURE(values[i - 1]);
    CAPTURE(values[i]);
    CHECK(key(order, values[i - 1]) < key(order, values[i]));
  }
}

void check_equal(std::uint32_t collation, std::string_view a, std::string_view b) {
  CAPTURE(collation);
  CAPTURE(a);
  CAPTURE(b);
  const auto order = order_of(collation);
  CHECK(key(order, a) == key(order, b));
}

std::uint32_t hex(const std::string& text) { return static_cast<std::uint32_t>(std::stoul(text, nullptr, 16)); }

}  // namespace

TEST_CASE("merge key order 0900: accents and case by level, ignorables, expansions") {
  REQUIRE(UcaTable::get(UcaVersion::mysql0900).ok());
  // ai_ci: level 1 only.
  check_equal(kAiCi, "\"a\"", "\"A\"");
  check_equal(kAiCi, "\"a\"", "\"\\u00e1\"");
  check_equal(kAiCi, "\"\\u00c1\"", "\"a\\u0301\"");
  for (const std::uint32_t id : {kAiCi, kAsCi, kAsCs})
    check_equal(id, "\"a\\u00adb\"", "\"ab\"");  // the soft hyphen weighs nothing at any level
  check_equal(kAiCi, "\"\\u00df\"", "\"ss\"");     // an expansion: sharp s is s s
  check_ascending(kAiCi, {"\"a\"", "\"b\"", "\"\\u00df\"", "\"st\""});
  // as_ci: + accents, case still ignored.
  check_equal(kAsCi, "\"a\"", "\"A\"");
  check_equal(kAsCi, "\"\\u00e1\"", "\"a\\u0301\"");
  check_ascending(kAsCi, {"\"a\"", "\"\\u00e1\"", "\"b\""});
  // as_cs: + case, lower before upper (DUCET tertiary 0002 < 0008).
  check_ascending(kAsCs, {"\"a\"", "\"A\"", "\"\\u00e1\"", "\"\\u00c1\"", "\"b\""});
  check_equal(kAsCs, "\"\\u00c1\"", "\"A\\u0301\"");
}

TEST_CASE("merge key order 0900: NO PAD and non-ignorable punctuation") {
  // All three are NO PAD: a trailing space counts ('a' < 'a '), unlike utf8mb4_uca1400_ai_ci.
  for (const std::uint32_t id : {kAiCi, kAsCi, kAsCs}) {
    check_ascending(id, {"\"\"", "\" \"", "\"a\"", "\"a \"", "\"a  \"", "\"ab\""});
    // Variable weighting is non-ignorable: the space and punctuation weigh at level 1, below
    // letters and digits.
    check_ascending(id, {"\"a b\"", "\"a-b\"", "\"a1\"", "\"ab\""});
  }
  check_equal(2304, "\"a\"", "\"a \"");  // MariaDB's uca1400_ai_ci pads
}

TEST_CASE("merge key order 0900: no DUCET contractions, unlike MariaDB's uca1400") {
  // MySQL's generator skips allkeys.txt's contractions ("Contractions we don't support") and the
  // untailored 0900 collations add none, so Cyrillic i + combining breve is i with an accent, not
  // the letter short i (U+0439), which DUCET weighs as a letter of its own...
  check_equal(kAiCi, "\"\\u0438\"", "\"\\u0438\\u0306\"");
  check_ascending(kAiCi, {"\"\\u0438\\u0306\"", "\"\\u0439\""});
  check_ascending(kAsCi, {"\"\\u0438\"", "\"\\u0438\\u0306\"", "\"\\u0439\""});
  check_ascending(kAiCi, {"\"l\"", "\"l\\u00b7\"", "\"lz\""});  // Catalan l-middle-dot: l, then punctuation
  // ...while MariaDB's utf8mb4_uca1400_ai_ci contracts both.
  check_equal(2304, "\"\\u0438\\u0306\"", "\"\\u0439\"");
  check_equal(2304, "\"l\\u00b7\"", "\"l\"");
}

TEST_CASE("merge key order 0900: implicit weights of UCA 9.0.0") {
  // Han: core (4E00..9FD5, FB40) before extension A (3400.., FB80) before extension B
  // (20000.., FB84), each by code point; all after every character DUCET weighs (letters, and
  // symbols as U+1F923, an emoji of Unicode 9).
  check_ascending(kAiCi, {"\"\\ud83e\\udd23\"", "\"z\"", "\"\\u4e00\"", "\"\\u4e01\"", "\"\\u9fd5\"", "\"\\u3400\"",
                          "\"\\u4db5\"", "\"\\ud840\\udc00\"", "\"\\ud869\\udeb2\""});
  // Tangut weighs FB00, before Han; MySQL gives the whole block 17000..18AFF that weight,
  // U+187F0 (Unicode 11) included.
  check_ascending(kAiCi, {"\"\\ud81c\\udc00\"", "\"\\ud821\\udff0\"", "\"\\u4e00\""});
  // Characters assigned after 9.0.0 weigh FBC0 + (CP >> 15) then the code point: after all
  // assigned characters, Han included, in code point order. U+9FD6 (Han, Unicode 10) is not Han
  // here; U+1F97A (Unicode 11) is an emoji DUCET weighs, but not DUCET 9.0.0.
  check_ascending(kAiCi, {"\"\\u9fd5\"", "\"\\ud869\\udeb2\"", "\"\\u9fd6\"", "\"\\ud83e\\udd7a\"",
                          "\"\\ud83e\\udd7b\""});
  check_ascending(kAiCi, {"\"\\ud83e\\udd23\"", "\"\\ud83e\\udd7a\""});
  check_ascending(kAiCi, {"\"\\ud83d\\ude00\"", "\"\\ud83e\\udd7a\""});  // U+1F600 (Unicode 6.1) has a weight
}

TEST_CASE("merge key order 0900: Hangul syllables weigh as their jamo") {
  // U+AC00 = U+1100 U+1161, U+AC01 = + U+11A8, at every level.
  for (const std::uint32_t id : {kAiCi, kAsCi, kAsCs}) {
    check_equal(id, "\"\\uac00\"", "\"\\u1100\\u1161\"");
    check_equal(id, "\"\\uac01\"", "\"\\u1100\\u1161\\u11a8\"");
    check_ascending(id, {"\"\\uac00\"", "\"\\uac01\"", "\"\\ub098\"", "\"\\ud7a3\""});
  }
  // U+D700..D7A3 share page D7 with Jamo Extended-B, so MySQL's generator computes them into
  // its table, with the tertiary weight of each jamo one higher: equal to their jamo up to
  // accents, after them with case.
  check_equal(kAsCi, "\"\\ud700\"", "\"\\u1112\\u1170\\u11ab\"");
  check_ascending(kAsCs, {"\"\\u1112\\u1170\\u11ab\"", "\"\\ud700\""});
}

TEST_CASE("merge key order 0900: the table is allkeys.txt's for every Unicode 9.0.0 character") {
  const std::string dir = "/usr/share/unicode/";
  std::ifstream allkeys(dir + "allkeys.txt");
  std::ifstream ages(dir + "DerivedAge.txt");
  if (!allkeys || !ages) {
    MESSAGE("skipped: no " << dir << "allkeys.txt (Debian's unicode-data)");
    return;
  }
  std::set<std::uint32_t> assigned;
  for (std::string line; std::getline(ages, line);) {
    line = line.substr(0, line.find('#'));
    const auto semicolon = line.find(';');
    if (semicolon == std::string::npos) continue;
    const std::string range = line.substr(0, semicolon);
    const auto first = hex(range);
    const auto dots = range.find("..");
    const auto last = dots == std::string::npos ? first : hex(range.substr(dots + 2));
    std::istringstream age(line.substr(semicolon + 1));
    unsigned major = 0;
    age >> major;
    if (major <= 9)
      for (std::uint32_t cp = first; cp <= last; ++cp) assigned.insert(cp);
  }
  const UcaTable& table = UcaTable::get(UcaVersion::mysql0900);
  std::size_t checked = 0;
  for (std::string line; std::getline(allkeys, line);) {
    if (line.empty() || line[0] == '#' || line[0] == '@') continue;
    const auto semicolon = line.find(';');
    const std::string chars = line.substr(0, semicolon);
    if (chars.find_first_not_of(' ', chars.find(' ')) != std::string::npos) continue;  // a contraction
    const auto cp = hex(chars);
    if (assigned.count(cp) == 0) continue;
    // Up to 8 elements [.PPPP.SSSS.TTTT] or [*...]; zeros weigh nothing at their level.
    std::vector<std::vector<std::uint32_t>> expected(3);
    std::size_t elements = 0;
    for (auto at = line.find('[', semicolon); at != std::string::npos && elements < 8;
         at = line.find('[', at + 1), ++elements) {
      std::size_t from = at + 2;
      for (auto& level : expected) {
        std::size_t used = 0;
        const auto weight = std::stoul(line.substr(from), &used, 16);
        if (weight != 0) level.push_back(static_cast<std::uint32_t>(weight));
        from += used + 1;
      }
    }
    const std::vector<std::uint32_t> text = {cp};
    for (unsigned level = 0; level < 3; ++level) {
      std::vector<std::uint32_t> weights;
      table.append_weights(text, level, weights);
      CAPTURE(cp);
      CAPTURE(level);
      REQUIRE(weights == expected[level]);
    }
    ++checked;
  }
  CHECK(checked > 20000);
}
