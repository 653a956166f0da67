// order/key_order.h against the live server for the UCA collations (order/uca_table.h):
// utf8mb4_unicode_ci, utf8mb4_unicode_520_ci and utf8mb4_uca1400_* at each of their levels, PAD
// SPACE and NO PAD, utf8mb4 and utf8mb3. Every BMP character (alone, and after 'a' before a space
// or a tab), a sample of the supplementary planes, and random strings built of contractions,
// their parts, expansions, ignorable characters, combining marks and trailing spaces; the server's
// < and = must agree with memcmp of the sort keys.

#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "key_order_check.h"

using namespace cdc::test::key_order;

namespace {

struct Collation {
  std::string charset;
  std::string name;
  std::uint32_t id;
};

// The PAD SPACE and NO PAD collations of each family, at each of uca1400's level choices.
const std::vector<Collation> kCollations = {
    {"utf8mb4", "utf8mb4_uca1400_ai_ci", 2304},       {"utf8mb4", "utf8mb4_uca1400_ai_cs", 2305},
    {"utf8mb4", "utf8mb4_uca1400_as_ci", 2306},       {"utf8mb4", "utf8mb4_uca1400_as_cs", 2307},
    {"utf8mb4", "utf8mb4_uca1400_nopad_ai_ci", 2308}, {"utf8mb4", "utf8mb4_uca1400_nopad_as_cs", 2311},
    {"utf8mb3", "utf8mb3_uca1400_as_ci", 2050},       {"utf8mb3", "utf8mb3_uca1400_nopad_ai_cs", 2053},
    {"utf8mb4", "utf8mb4_unicode_ci", 224},           {"utf8mb4", "utf8mb4_unicode_nopad_ci", 1248},
    {"utf8mb3", "utf8mb3_unicode_ci", 192},           {"utf8mb4", "utf8mb4_unicode_520_ci", 246},
    {"utf8mb4", "utf8mb4_unicode_520_nopad_ci", 1270}, {"utf8mb3", "utf8mb3_unicode_520_ci", 214},
};

Column column_of(const Collation& c, const std::string& type) {
  return Column{fmt::format("{} CHARACTER SET {} COLLATE {}", type, c.charset, c.name), type, c.id, Json::string};
}

// What UCA does beyond one weight per character.
const std::vector<std::string> kUcaPieces = {
    "a", "A", "b", "l", "L", " ", " ", " ", "\t", "-", "0", "\xC3\xA1" /* á */, "\xC3\x81" /* Á */,
    "\xC3\xA0" /* à */, "a\xCC\x81" /* a + combining acute */, "\xCC\x81" /* combining acute */,
    "\xCC\x88" /* combining diaeresis */,
    // Contractions and their parts: Catalan l·, Cyrillic й (и + breve), Thai and Lao prevowels,
    // Tibetan 0FB2 0F71 0F80 (three characters) and 0F71 0F80 (two).
    "\xC2\xB7" /* · */, "\xCE\x87" /* ano teleia */, "\xD0\xB8" /* и */, "\xCC\x86" /* combining breve */,
    "\xE0\xB9\x80" /* เ */, "\xE0\xB8\x81" /* ก */, "\xE0\xBB\x80" /* ເ */, "\xE0\xBA\x81" /* ກ */,
    "\xE0\xBE\xB2" /* ྲ */, "\xE0\xBD\xB1" /* ཱ */, "\xE0\xBE\x80" /* ྀ */,
    // Expansions: ß, æ, ǆ, the fi ligature, ㎒, a Hangul syllable, ½.
    "\xC3\x9F", "\xC3\xA6", "\xC7\x86", "\xEF\xAC\x81", "\xE3\x8E\x92", "\xEA\xB0\x80" /* 가 */, "\xC2\xBD",
    // Ignorable: soft hyphen, zero width joiner, a control character, U+FFFE.
    "\xC2\xAD", "\xE2\x80\x8D", "\x01", "\xEF\xBF\xBE",
    // Implicit weights: CJK, an unassigned BMP code point, emoji, a supplementary ideograph, an
    // unassigned supplementary one; nbsp and U+FFFD.
    "\xE6\x97\xA5", "\xCD\xB8" /* U+0378 */, "\xF0\x9F\x98\x80", "\xF0\xA0\x80\x80" /* U+20000 */,
    "\xF3\xA0\x80\x81" /* U+E0001 */, "\xC2\xA0", "\xEF\xBF\xBD"};

}  // namespace

TEST_CASE("merge key order live: UCA collations order every BMP character as the server") {
  auto connection = connect();
  const std::string character = "CONVERT(UNHEX(LPAD(HEX(seq), 8, '0')) USING utf32)";
  const std::string bmp = fmt::format("FROM {}.seq_0_to_65535 WHERE seq NOT BETWEEN 55296 AND 57343", kDatabase);
  query(connection, fmt::format("CREATE DATABASE IF NOT EXISTS {}", kDatabase));
  for (const Collation& collation : kCollations) {
    CAPTURE(collation.name);
    // Each character alone, after 'a' before a space or a tab for a third of them, and in
    // utf8mb4 every 61st supplementary code point.
    std::string fill = fmt::format(
        "SELECT seq, {0} {1} UNION ALL SELECT 100000 + seq, CONCAT('a', {0}, IF(seq % 2, ' ', '\t')) {1} AND seq % 3 = "
        "0",
        character, bmp);
    if (collation.charset == "utf8mb4")
      fill += fmt::format(" UNION ALL SELECT 2000000 + seq, {} FROM {}.seq_65536_to_1114111_step_61", character,
                          kDatabase);
    const auto rows = check_sorted_neighbours(connection, column_of(collation, "varchar(4)"), fill);
    MESSAGE(collation.name, ": ", rows, " values, each compared by the server with its neighbour in sort-key order");
  }
}

TEST_CASE("merge key order live: UCA collations order strings with contractions expansions and ignorables") {
  auto connection = connect();
  std::uint64_t seed = 1400;
  for (const Collation& collation : kCollations) {
    CAPTURE(collation.name);
    std::vector<std::string> pieces = kUcaPieces;
    if (collation.charset == "utf8mb3") pieces = without_supplementary(pieces);
    report(collation.name, check_column(connection, column_of(collation, "varchar(24)"), text_values(seed++, pieces)));
  }
  // CHAR pads and TEXT does not: both compare as the collation says.
  const Collation ai_ci = kCollations.front();
  report("char(12) " + ai_ci.name, check_column(connection, column_of(ai_ci, "char(12)"), text_values(1, kUcaPieces)));
  report("text " + ai_ci.name, check_column(connection, column_of(ai_ci, "text"), text_values(2, kUcaPieces)));
}
