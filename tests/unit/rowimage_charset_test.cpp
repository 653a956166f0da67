#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ndjson/utf8.h"
#include "ndjson/writer.h"
#include "rowimage/charset.h"

// Expected values marked "server:" come from the MariaDB 10.11 started by
// scripts/lib/throwaway_mariadb.sh, e.g.
//   SELECT HEX(CONVERT(CAST(x'C4E3BAC3' AS CHAR CHARACTER SET gbk) USING utf8mb4));  -- E4BDA0E5A5BD
// which converts exactly as a SELECT of a gbk column through a utf8mb4 connection does. Where
// the server prints '?' (0x3F) for bytes it cannot convert, write_text() writes U+FFFD; those
// cases say "server: ?".

namespace {

using cdc::ndjson::Writer;
using cdc::ndjson::is_valid_utf8;
using cdc::rowimage::Charset;
using cdc::rowimage::CollationInfo;
using cdc::rowimage::TextScratch;
using cdc::rowimage::charset_name;
using cdc::rowimage::charset_of;
using cdc::rowimage::collation_info;
using cdc::rowimage::is_binary_collation;
using cdc::rowimage::kCharsetCount;
using cdc::rowimage::max_bytes_per_char;
using cdc::rowimage::to_utf8;
using cdc::rowimage::trim_char_padding;
using cdc::rowimage::write_text;

constexpr std::string_view kFffd = "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER

// UTF-8 of one code point, written independently of charset.cpp's encoder.
std::string utf8(char32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

std::string fffd(std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) out += kFffd;
  return out;
}

std::string converted(std::string_view raw, Charset charset) {
  TextScratch scratch;
  return std::string(to_utf8(raw, charset, scratch));
}

// The JSON text write_text() produces for one value, quotes included.
std::string json_text(std::string_view raw, std::uint16_t collation_id) {
  Writer writer;
  TextScratch scratch;
  write_text(raw, collation_id, writer, scratch);
  return std::string(writer.buffered());
}

std::string json_string(std::string_view utf8_text) {
  Writer writer;
  writer.string(utf8_text);
  return std::string(writer.buffered());
}

struct ConversionCase {
  std::string name;
  Charset charset;
  std::string raw;
  std::string expected;
};

void check_conversions(const std::vector<ConversionCase>& cases) {
  TextScratch scratch;
  for (const ConversionCase& c : cases) {
    CAPTURE(c.name);
    CHECK(std::string(to_utf8(c.raw, c.charset, scratch)) == c.expected);
    // Alone, in a fresh scratch (no state carried over from the previous case).
    CHECK(converted(c.raw, c.charset) == c.expected);
  }
}

TEST_CASE("charset: collation ids name the charset either server gives them") {
  struct Case {
    std::string name;  // the collation name we expect
    std::uint16_t id;
    Charset charset;
    std::string charset_name;
    int max_bytes;
  };
  const std::vector<Case> cases = {
      {"big5_chinese_ci", 1, Charset::big5, "big5", 2},
      {"latin1_swedish_ci", 8, Charset::latin1, "latin1", 1},
      {"swe7_swedish_ci", 10, Charset::swe7, "swe7", 1},
      {"ujis_japanese_ci", 12, Charset::ujis, "ujis", 3},
      {"euckr_korean_ci", 19, Charset::euckr, "euckr", 2},
      {"utf8mb3_general_ci", 33, Charset::utf8mb3, "utf8mb3", 3},
      {"ucs2_general_ci", 35, Charset::ucs2, "ucs2", 2},
      {"utf8mb4_general_ci", 45, Charset::utf8mb4, "utf8mb4", 4},
      {"utf8mb4_bin", 46, Charset::utf8mb4, "utf8mb4", 4},
      {"utf16_general_ci", 54, Charset::utf16, "utf16", 4},
      {"utf16le_general_ci", 56, Charset::utf16le, "utf16le", 4},
      {"utf32_general_ci", 60, Charset::utf32, "utf32", 4},
      {"binary", 63, Charset::binary, "binary", 1},
      {"utf8mb3_tolower_ci", 76, Charset::utf8mb3, "utf8mb3", 3},  // MySQL 8.0 only
      {"geostd8_general_ci", 92, Charset::geostd8, "geostd8", 1},
      {"cp932_japanese_ci", 95, Charset::cp932, "cp932", 2},
      {"eucjpms_japanese_ci", 97, Charset::eucjpms, "eucjpms", 3},
      {"utf16_croatian_mysql561_ci", 122, Charset::utf16, "utf16", 4},  // MySQL: utf16_croatian_ci
      {"ucs2_general_mysql500_ci", 159, Charset::ucs2, "ucs2", 2},
      {"utf8mb4_unicode_ci", 224, Charset::utf8mb4, "utf8mb4", 4},
      {"utf8mb4_croatian_mysql561_ci", 245, Charset::utf8mb4, "utf8mb4", 4},  // MySQL: utf8mb4_croatian_ci
      {"utf8mb4_vietnamese_ci", 247, Charset::utf8mb4, "utf8mb4", 4},
      {"gb18030_chinese_ci", 248, Charset::gb18030, "gb18030", 4},  // MySQL 5.7+ only
      {"gb18030_unicode_520_ci", 250, Charset::gb18030, "gb18030", 4},
      {"utf8mb4_0900_ai_ci", 255, Charset::utf8mb4, "utf8mb4", 4},  // MySQL 8.0 default
      {"utf8mb4_de_pb_0900_ai_ci", 256, Charset::utf8mb4, "utf8mb4", 4},
      {"utf8mb4_vi_0900_ai_ci", 277, Charset::utf8mb4, "utf8mb4", 4},
      {"utf8mb4_0900_as_cs", 278, Charset::utf8mb4, "utf8mb4", 4},
      {"utf8mb4_vi_0900_as_cs", 300, Charset::utf8mb4, "utf8mb4", 4},
      {"utf8mb4_ja_0900_as_cs_ks", 304, Charset::utf8mb4, "utf8mb4", 4},
      {"utf8mb4_0900_as_ci", 305, Charset::utf8mb4, "utf8mb4", 4},
      {"utf8mb4_0900_bin", 309, Charset::utf8mb4, "utf8mb4", 4},
      {"utf8mb4_nb_0900_ai_ci", 310, Charset::utf8mb4, "utf8mb4", 4},
      {"utf8mb4_mn_cyrl_0900_as_cs", 323, Charset::utf8mb4, "utf8mb4", 4},
      {"utf8mb3_croatian_ci", 576, Charset::utf8mb3, "utf8mb3", 3},  // MariaDB only from here on
      {"utf8mb4_myanmar_ci", 609, Charset::utf8mb4, "utf8mb4", 4},
      {"utf32_thai_520_w2", 738, Charset::utf32, "utf32", 4},
      {"big5_chinese_nopad_ci", 1025, Charset::big5, "big5", 2},
      {"latin1_nopad_bin", 1071, Charset::latin1, "latin1", 1},
      {"eucjpms_nopad_bin", 1122, Charset::eucjpms, "eucjpms", 3},
      {"utf8mb4_unicode_520_nopad_ci", 1270, Charset::utf8mb4, "utf8mb4", 4},
      {"utf8mb3_uca1400_ai_ci", 2048, Charset::utf8mb3, "utf8mb3", 3},
      {"utf8mb4_uca1400_ai_ci", 2304, Charset::utf8mb4, "utf8mb4", 4},  // MariaDB 11.8 default
      {"utf8mb4_uca1400_nopad_ai_ci", 2308, Charset::utf8mb4, "utf8mb4", 4},  // = MySQL's 255
      {"utf8mb4_uca1400_german2_as_cs", 2467, Charset::utf8mb4, "utf8mb4", 4},
      {"utf8mb4_uca1400_croatian_nopad_as_cs", 2503, Charset::utf8mb4, "utf8mb4", 4},
      {"ucs2_uca1400_swedish_ai_ci", 2624, Charset::ucs2, "ucs2", 2},
      {"utf16_uca1400_vietnamese_nopad_as_ci", 3006, Charset::utf16, "utf16", 4},
      {"utf32_uca1400_croatian_nopad_as_cs", 3271, Charset::utf32, "utf32", 4},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CAPTURE(c.id);
    const std::optional<CollationInfo> info = collation_info(c.id);
    REQUIRE(info.has_value());
    CHECK(info->id == c.id);
    CHECK(info->collation_name == c.name);
    CHECK(info->charset == c.charset);
    CHECK(info->charset_name == c.charset_name);
    CHECK(static_cast<int>(info->max_bytes_per_char) == c.max_bytes);
    CHECK(charset_of(c.id) == c.charset);
  }
}

TEST_CASE("charset: ids no server defines are unknown") {
  struct Case {
    std::string name;
    std::uint16_t id;
    Charset charset;  // what charset_of() still says
  };
  const std::vector<Case> cases = {
      {"0: the binlog had no charset metadata", 0, Charset::unknown},
      {"17: MySQL's internal filename charset", 17, Charset::unknown},
      {"272: utf8mb4_fa_0900_ai_ci is not compiled in", 272, Charset::unknown},
      {"301: unused in MySQL", 301, Charset::unknown},
      {"324: after MySQL's last", 324, Charset::unknown},
      {"1024: MySQL user-defined range, nothing in MariaDB", 1024, Charset::unknown},
      {"2216: UCA-14.0 tailoring 21 is not defined", 2216, Charset::utf8mb3},
      {"2760: UCA-14.0 tailoring 25 (ucs2), reserved", 2760, Charset::ucs2},
      {"3328: charset 5 in the UCA-14.0 numbering", 3328, Charset::unknown},
      {"65535", 65535, Charset::unknown},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK_FALSE(collation_info(c.id).has_value());
    CHECK(charset_of(c.id) == c.charset);
  }
}

TEST_CASE("charset: the collation table is consistent") {
  std::size_t known = 0;
  std::size_t uca1400 = 0;
  for (std::uint32_t id = 0; id <= 0xFFFF; ++id) {
    const auto id16 = static_cast<std::uint16_t>(id);
    const std::optional<CollationInfo> info = collation_info(id16);
    if (!info) continue;
    CAPTURE(id);
    ++known;
    if (id >= 2048) ++uca1400;
    const std::string name(info->collation_name);
    CAPTURE(name);
    CHECK(info->id == id16);
    CHECK(info->charset != Charset::unknown);
    CHECK(charset_of(id16) == info->charset);
    CHECK(info->charset_name == charset_name(info->charset));
    CHECK(info->max_bytes_per_char == max_bytes_per_char(info->charset));
    if (info->charset == Charset::binary) {
      CHECK(name == "binary");
    } else {
      CHECK(name.starts_with(std::string(info->charset_name) + "_"));
    }
  }
  // 322 MariaDB 10.11 ids below 2048 + 67 only MySQL has; 920 MariaDB UCA-14.0 ids
  // (SELECT COUNT(*) FROM information_schema.COLLATION_CHARACTER_SET_APPLICABILITY WHERE ID >= 2048).
  CHECK(known == 322 + 67 + 920);
  CHECK(uca1400 == 920);
  // Every charset but unknown has at least one collation and a distinct name.
  std::set<std::string> names;
  for (std::size_t i = 1; i < kCharsetCount; ++i) {
    const auto charset = static_cast<Charset>(i);
    const std::string name(charset_name(charset));
    CAPTURE(name);
    CHECK(names.insert(name).second);
    CHECK(max_bytes_per_char(charset) >= 1);
    bool used = false;
    for (const auto& row : cdc::rowimage::detail::collation_rows()) used = used || row.charset == charset;
    CHECK(used);
  }
}

TEST_CASE("charset: binary is not text") {
  CHECK(is_binary_collation(63));
  CHECK(charset_of(63) == Charset::binary);
  for (const std::uint16_t id : std::array<std::uint16_t, 9>{0, 8, 33, 45, 47, 83, 255, 1071, 2304}) {
    CAPTURE(id);
    CHECK_FALSE(is_binary_collation(id));
  }
}

TEST_CASE("charset: latin1 is MySQL's cs_to_uni for all 256 bytes") {
  // Windows-1252 for 80..9F, with its five holes kept as the C1 controls (strings/ctype-latin1.cc,
  // WL#1494); every other byte is its own code point. Written out here, not taken from
  // charset_table.cpp.
  constexpr std::array<char32_t, 32> kCp1252 = {
      0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,  // 80..87
      0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,  // 88..8F
      0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,  // 90..97
      0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,  // 98..9F
  };
  const auto expected_for = [&](unsigned byte) {
    return byte >= 0x80 && byte <= 0x9F ? kCp1252[byte - 0x80] : static_cast<char32_t>(byte);
  };
  std::string all_bytes;
  std::string all_expected;
  TextScratch scratch;
  for (unsigned byte = 0; byte < 256; ++byte) {
    CAPTURE(byte);
    const std::string raw(1, static_cast<char>(byte));
    const std::string expected = utf8(expected_for(byte));
    CHECK(std::string(to_utf8(raw, Charset::latin1, scratch)) == expected);
    all_bytes += raw;
    all_expected += expected;
  }
  CHECK(std::string(to_utf8(all_bytes, Charset::latin1, scratch)) == all_expected);
  // server: SELECT HEX(CONVERT(_latin1 0xE9 USING utf8mb4)) -- C3A9
  CHECK(json_text("caf\xE9", 8) == "\"café\"");
}

TEST_CASE("charset: single-byte charsets follow the server's tables") {
  const std::vector<ConversionCase> cases = {
      // server: CAST(x'CFF0E8E2E5F2' AS CHAR CHARACTER SET cp1251) -> D09FD180D0B8D0B2D0B5D182
      {"cp1251 Привет", Charset::cp1251, "\xCF\xF0\xE8\xE2\xE5\xF2", "Привет"},
      {"cp1250 8A 9A", Charset::cp1250, "\x8A\x9A", "Šš"},
      {"latin2 Łódź", Charset::latin2, "\xA3\xF3" "d\xBC", "Łódź"},  // server: C581C3B364C5BA
      {"koi8r Привет", Charset::koi8r, "\xF0\xD2\xC9\xD7\xC5\xD4", "Привет"},
      {"koi8u 95 is U+2022", Charset::koi8u, "\x95", "\u2022"},  // glibc KOI8-U: U+2219
      {"greek A1 is U+02BD", Charset::greek, "\xA1\xE1\xE2", "\u02BDαβ"},  // server: CABDCEB1CEB2
      {"hebrew AF is U+203E", Charset::hebrew, "\xE0\xE1\xAF", "אב\u203E"},
      {"cp1256 العربية", Charset::cp1256, "\xC7\xE1\xDA\xD1\xC8\xED\xC9", "العربية"},
      {"cp1256 8A has no mapping", Charset::cp1256, "\x8A", std::string(kFffd)},  // server: ?
      {"cp866 FC is U+207F", Charset::cp866, "\x8F\xE0\xA8\xA2\xA5\xE2\xFC", "Привет\u207F"},
      {"swe7 brackets are letters", Charset::swe7, "[\\]{|}@", "ÄÖÅäöåÉ"},
      {"swe7 DEL has no mapping", Charset::swe7, "\x7F", std::string(kFffd)},  // server: ?
      {"swe7 high bytes have no mapping", Charset::swe7, "a\xC4", "a" + fffd(1)},
      {"macroman C6 F0", Charset::macroman, "\x8A\xC6\xF0", "ä\u2206\uF8FF"},
      {"armscii8 FF is an apostrophe", Charset::armscii8, "\xB2\xFF", "Ա'"},  // server: D4B127
      {"geostd8 Georgian", Charset::geostd8, "\xC0\xC1", "აბ"},
      {"dec8 A0 A8", Charset::dec8, "\xA0\xA8", "\u00A0¤"},
      {"hp8 FF has no mapping", Charset::hp8, "\xA1\xFF", "À" + fffd(1)},  // server: C3803F
      {"keybcs2 80 A0", Charset::keybcs2, "\x80\xA0", "Čá"},
      {"tis620 A0 is U+FFFD in the server table", Charset::tis620, "\xA1\xA0", "ก\uFFFD"},
      {"latin5 DD FD", Charset::latin5, "\xDD\xFD", "İı"},
      {"latin7 D0", Charset::latin7, "\xD0", "Š"},
      {"cp1257 C0", Charset::cp1257, "\xC0", "Ą"},
      {"cp850 82", Charset::cp850, "\x82", "é"},
      {"cp852 A5", Charset::cp852, "\xA5", "ą"},
      {"macce 8C", Charset::macce, "\x8C", "Ć"},  // server: C486
      {"ascii 80 has no mapping", Charset::ascii, "A\x80", "A" + fffd(1)},  // server: 413F
      {"NUL stays NUL", Charset::latin1, std::string("a\0\xE9", 3), std::string("a\0é", 4)},
      {"empty", Charset::cp1251, "", ""},
  };
  check_conversions(cases);
}

TEST_CASE("charset: multi-byte charsets follow the server") {
  const std::vector<ConversionCase> cases = {
      // server: CAST(x'C4E3BAC3' AS CHAR CHARACTER SET gbk) -> E4BDA0E5A5BD
      {"gbk 你好", Charset::gbk, "\xC4\xE3\xBA\xC3", "你好"},
      {"gbk with ASCII", Charset::gbk, "id=\xC4\xE3, ok", "id=你, ok"},
      {"gb2312 中文", Charset::gb2312, "\xD6\xD0\xCE\xC4", "中文"},
      {"big5 中文", Charset::big5, "\xA4\xA4\xA4\xE5", "中文"},
      {"big5 A145 is U+2022 (glibc: U+2027)", Charset::big5, "\xA1\x45", "\u2022"},
      {"big5 A1C3 is U+FFFD in the server table", Charset::big5, "\xA1\xC3", std::string(kFffd)},
      {"big5 C6A1 is a kana (glibc: private use)", Charset::big5, "\xC6\xA1", "\u30FE"},
      {"sjis 日本語", Charset::sjis, "\x93\xFA\x96\x7B\x8C\xEA", "日本語"},
      {"sjis 5C 7E are ASCII (glibc: U+00A5 U+203E)", Charset::sjis, "\\~", "\\~"},
      {"sjis 5C as a trail byte", Charset::sjis, "\x83\x5C", "ソ"},
      {"sjis 815F is a backslash", Charset::sjis, "\x81\x5F", "\\"},  // server: 5C
      {"sjis 8740 is NEC-only", Charset::sjis, "\x87\x40", std::string(kFffd)},  // server: ?
      {"sjis half-width katakana", Charset::sjis, "\xB1", "ｱ"},
      {"cp932 8740", Charset::cp932, "\x87\x40", "①"},
      {"cp932 815F", Charset::cp932, "\x81\x5F", "＼"},
      {"euckr 한국어", Charset::euckr, "\xC7\xD1\xB1\xB9\xBE\xEE", "한국어"},
      {"euckr CP949 extension", Charset::euckr, "\x81\x41", "갂"},  // server: EAB082
      {"ujis 日本", Charset::ujis, "\xC6\xFC\xCB\xDC", "日本"},
      {"ujis 8E half-width katakana", Charset::ujis, "\x8E\xB1", "ｱ"},
      {"ujis user-defined F5A1", Charset::ujis, "\xF5\xA1", "\uE000"},  // server: EE8080
      {"ujis user-defined FEFE", Charset::ujis, "\xFE\xFE", "\uE3AB"},
      {"ujis user-defined 8F F5A1", Charset::ujis, "\x8F\xF5\xA1", "\uE3AC"},  // server: EE8EAC
      {"ujis A1C0 is a backslash", Charset::ujis, "\xA1\xC0", "\\"},
      {"ujis 8FA2B7 is a tilde", Charset::ujis, "\x8F\xA2\xB7", "~"},
      {"eucjpms A1C0", Charset::eucjpms, "\xA1\xC0", "＼"},
      {"eucjpms ADA1", Charset::eucjpms, "\xAD\xA1", "①"},
      {"eucjpms user-defined F5A1", Charset::eucjpms, "\xF5\xA1", "\uE000"},
  };
  check_conversions(cases);
}

TEST_CASE("charset: gb18030 goes through glibc's GB18030") {
  // MySQL-only charset, so not compared with a server: glibc 2.36 implements GB18030-2005, as
  // MySQL does. The expected bytes are Python's gb18030 codec's encoding of the characters.
  const std::vector<ConversionCase> cases = {
      {"two bytes", Charset::gb18030, "\xD6\xD0\xCE\xC4", "中文"},
      {"A2E3 is the euro sign", Charset::gb18030, "\xA2\xE3", "€"},
      {"four bytes, BMP", Charset::gb18030, "\x81\x30\x81\x30", "\u0080"},
      {"four bytes, supplementary", Charset::gb18030, "\x94\x39\xFC\x36", "😀"},
      {"four bytes cut short", Charset::gb18030, "\x81\x30", fffd(1) + "0"},
      {"beyond U+10FFFF", Charset::gb18030, "\xFE\x39\xFE\x39", fffd(1)},
      {"80 alone", Charset::gb18030, "\x80", fffd(1)},
  };
  check_conversions(cases);
}

TEST_CASE("charset: invalid bytes in multi-byte charsets are one U+FFFD each") {
  // Each U+FFFD stands where the server prints one '?': a byte that cannot start a character
  // is replaced alone and decoding resumes at the next byte.
  const std::vector<ConversionCase> cases = {
      {"gbk 80 cannot lead", Charset::gbk, "\x80", fffd(1)},             // server: 3F
      {"gbk cut short", Charset::gbk, "A\x81", "A" + fffd(1)},           // server: 413F
      {"gbk FF then ASCII", Charset::gbk, "\xFF" "A", fffd(1) + "A"},    // server: 3F41
      {"gbk lead then FF", Charset::gbk, "\x81\xFF", fffd(2)},           // server: 3F3F
      {"big5 lead then space", Charset::big5, "\xA4 ", fffd(1) + " "},   // server: 3F20
      {"gb2312 lone lead", Charset::gb2312, "\xA1", fffd(1)},            // server: 3F
      {"sjis lead then newline", Charset::sjis, "\x93\n", fffd(1) + "\n"},  // server: 3F0A
      {"euckr trail 5B is not a trail", Charset::euckr, "\xC7[", fffd(1) + "["},  // server: 3F5B
      {"ujis 8F cut short", Charset::ujis, "\x8F\xA1", fffd(2)},         // server: 3F3F
      {"eucjpms 8E then E0", Charset::eucjpms, "\x8E\xE0", fffd(2)},     // server: 3F3F
      {"valid around invalid", Charset::gbk, "\xC4\xE3\xFF\xBA\xC3", "你" + fffd(1) + "好"},
      {"a UTF-8 string read as gbk", Charset::gbk, "\xE2\x82\xAC", "鈧" + fffd(1)},
  };
  check_conversions(cases);
}

TEST_CASE("charset: ucs2, utf16, utf16le and utf32") {
  const std::vector<ConversionCase> cases = {
      {"ucs2 BMP", Charset::ucs2, std::string("\x00" "A\x00\xE9\x20\xAC", 6), "Aé€"},
      {"ucs2 surrogate is not a character", Charset::ucs2, std::string("\xD8\x3D\xDE\x00", 4), fffd(2)},
      {"ucs2 odd trailing byte", Charset::ucs2, std::string("\x00" "A\x00", 3), "A" + fffd(1)},
      {"utf16 BMP", Charset::utf16, std::string("\x00" "A\x20\xAC", 4), "A€"},
      {"utf16 surrogate pair", Charset::utf16, std::string("\xD8\x3D\xDE\x00", 4), "😀"},  // server: F09F9880
      {"utf16 last code point", Charset::utf16, "\xDB\xFF\xDF\xFF", "\U0010FFFF"},
      {"utf16 lone high at the end", Charset::utf16, std::string("\x00" "A\xD8\x3D", 4), "A" + fffd(1)},
      {"utf16 high then a letter", Charset::utf16, std::string("\xD8\x3D\x00" "A", 4), fffd(1) + "A"},
      {"utf16 two highs then low", Charset::utf16, std::string("\xD8\x3D\xD8\x3D\xDE\x00", 6), fffd(1) + "😀"},
      {"utf16 lone low", Charset::utf16, std::string("\xDE\x00", 2), fffd(1)},
      {"utf16 odd trailing byte", Charset::utf16, std::string("\x00" "A\x00", 3), "A" + fffd(1)},
      {"utf16 high then odd byte", Charset::utf16, "\xD8\x3D\xDE", fffd(2)},
      {"utf16le surrogate pair", Charset::utf16le, std::string("\x3D\xD8\x00\xDE", 4), "😀"},  // server: F09F9880
      {"utf16le BMP", Charset::utf16le, std::string("A\x00\xAC\x20", 4), "A€"},
      {"utf16le lone low", Charset::utf16le, std::string("\x00\xDE", 2), fffd(1)},
      {"utf16le odd trailing byte", Charset::utf16le, "A", fffd(1)},
      {"utf32", Charset::utf32, std::string("\x00\x00\x00" "A\x00\x01\xF6\x00", 8), "A😀"},
      {"utf32 surrogate", Charset::utf32, std::string("\x00\x00\xD8\x00", 4), fffd(1)},
      {"utf32 above U+10FFFF", Charset::utf32, std::string("\x00\x11\x00\x00", 4), fffd(1)},
      {"utf32 cut short", Charset::utf32, std::string("\x00\x00\x00" "A\x00\x00", 6), "A" + fffd(1)},
      {"NUL stays NUL", Charset::utf32, std::string(4, '\0'), std::string(1, '\0')},
      {"empty", Charset::utf16, "", ""},
  };
  check_conversions(cases);
}

TEST_CASE("charset: utf8mb3, utf8mb4 and unknown ids pass through the writer") {
  struct Case {
    std::string name;
    std::uint16_t collation_id;
    std::string raw;
    std::string json;
  };
  const std::vector<Case> cases = {
      {"utf8mb4 4-byte emoji", 45, "\xF0\x9F\x98\x80", "\"😀\""},
      {"utf8mb4_0900_ai_ci", 255, "a\xF0\x9F\x98\x80z", "\"a😀z\""},
      {"utf8mb4_uca1400_ai_ci", 2304, "é", "\"é\""},
      {"utf8mb3", 33, "日本", "\"日本\""},
      {"invalid UTF-8 is replaced by the writer", 45, "a\xC3", "\"a\xEF\xBF\xBD\""},
      {"encoded surrogate", 46, "\xED\xA0\x80", "\"" + fffd(3) + "\""},
      {"unknown id 0 is UTF-8", 0, "\xF0\x9F\x98\x80", "\"😀\""},
      {"unknown id 9999 is UTF-8", 9999, "caf\xC3\xA9", "\"café\""},
      {"unknown id with latin1 bytes", 0, "caf\xE9", "\"caf\xEF\xBF\xBD\""},
      {"escaping", 45, "a\"b\\c\n", "\"a\\\"b\\\\c\\n\""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(json_text(c.raw, c.collation_id) == c.json);
  }
}

TEST_CASE("charset: write_text writes what Writer::string writes for the converted text") {
  struct Case {
    std::string name;
    std::uint16_t collation_id;
    std::string raw;
    std::string utf8_text;
  };
  const std::vector<Case> cases = {
      {"latin1 quote and control", 8, "\"\x01\xE9", "\"\x01é"},
      {"gbk", 28, "\xC4\xE3\"", "你\""},
      {"ucs2", 35, std::string("\x00\"\x00\\", 4), "\"\\"},
      {"ujis user-defined", 12, "\xF5\xA1", "\uE000"},
      {"utf32 via a UCA-14.0 id", 3072, std::string("\x00\x01\xF6\x00", 4), "😀"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(json_text(c.raw, c.collation_id) == json_string(c.utf8_text));
  }

  // Inside a record, next to other fields.
  Writer writer;
  TextScratch scratch;
  writer.begin_object();
  writer.key("a");
  write_text("\xE9", 8, writer, scratch);
  writer.key("b");
  write_text("\xC4\xE3", 28, writer, scratch);
  writer.end_object();
  writer.end_record();
  CHECK(writer.buffered() == "{\"a\":\"é\",\"b\":\"你\"}\n");
}

TEST_CASE("charset: ASCII text is returned without a copy") {
  TextScratch scratch;
  const std::string raw = "plain ascii 123";
  for (const Charset charset : {Charset::latin1, Charset::cp1251, Charset::gbk, Charset::sjis, Charset::utf8mb4,
                                Charset::unknown}) {
    const std::string name(charset_name(charset));
    CAPTURE(name);
    const std::string_view out = to_utf8(raw, charset, scratch);
    CHECK(out.data() == raw.data());
    CHECK(out == raw);
  }
  // swe7 is not ASCII-compatible, so it converts even "plain" text.
  CHECK(std::string(to_utf8("[a]", Charset::swe7, scratch)) == "ÄaÅ");
}

TEST_CASE("charset: the scratch buffer stops growing and iconv state does not leak") {
  struct Case {
    std::string name;
    Charset charset;
    std::string raw;
  };
  const std::vector<Case> cases = {
      {"latin1", Charset::latin1, std::string(200, '\xE9')},
      {"gbk", Charset::gbk, "\xC4\xE3\xBA\xC3\xFF"},
      {"big5", Charset::big5, "\xA4\xA4\xA1\x45"},
      {"sjis", Charset::sjis, "\x93\xFA\\\x81\x5F\xB1"},
      {"ujis", Charset::ujis, "\xC6\xFC\x8F\xF5\xA1"},
      {"utf16", Charset::utf16, std::string("\xD8\x3D\xDE\x00\xD8", 5)},
      {"euckr", Charset::euckr, "\xC7\xD1\x81"},
  };
  TextScratch scratch;
  std::vector<std::string> first;
  for (const Case& c : cases) first.emplace_back(to_utf8(c.raw, c.charset, scratch));
  const std::size_t warm = scratch.capacity();
  CHECK(warm >= 600);  // the latin1 value: 200 x 3 bytes
  for (int round = 0; round < 50; ++round) {
    for (std::size_t i = 0; i < cases.size(); ++i) {
      CAPTURE(cases[i].name);
      CHECK(std::string(to_utf8(cases[i].raw, cases[i].charset, scratch)) == first[i]);
    }
  }
  CHECK(scratch.capacity() == warm);
  CHECK_FALSE(scratch.missing_converter());
}

TEST_CASE("charset: TextScratch can be moved") {
  TextScratch a;
  CHECK(std::string(to_utf8("\xC4\xE3", Charset::gbk, a)) == "你");
  TextScratch b(std::move(a));
  CHECK(std::string(to_utf8("\xBA\xC3", Charset::gbk, b)) == "好");
  TextScratch c;
  c = std::move(b);
  CHECK(std::string(to_utf8("\xA4\xA4", Charset::big5, c)) == "中");
}

TEST_CASE("charset: every conversion of random bytes is valid UTF-8") {
  std::mt19937 rng(20240904);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<std::size_t> length(0, 24);
  TextScratch scratch;
  for (std::size_t i = 0; i < kCharsetCount; ++i) {
    const auto charset = static_cast<Charset>(i);
    if (charset == Charset::unknown || charset == Charset::binary || charset == Charset::utf8mb3 ||
        charset == Charset::utf8mb4) {
      continue;  // passed through for the writer to repair
    }
    const std::string name(charset_name(charset));
    CAPTURE(name);
    for (int round = 0; round < 2000; ++round) {
      std::string raw(length(rng), '\0');
      for (char& c : raw) c = static_cast<char>(byte(rng));
      CAPTURE(raw);
      const std::string_view out = to_utf8(raw, charset, scratch);
      REQUIRE(is_valid_utf8(out));
      // Nothing is dropped: at least one character out per character in, and the single-byte
      // charsets give exactly one per byte.
      if (max_bytes_per_char(charset) == 1) {
        std::size_t code_points = 0;
        for (const char c : out) code_points += (static_cast<unsigned char>(c) & 0xC0U) != 0x80U ? 1 : 0;
        CHECK(code_points == raw.size());
      }
      CHECK(out.empty() == raw.empty());
    }
  }
}

TEST_CASE("charset: trim_char_padding strips whole pad units only") {
  struct Case {
    std::string name;
    Charset charset;
    std::string raw;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"latin1", Charset::latin1, "ab  ", "ab"},
      {"utf8mb4 keeps inner spaces", Charset::utf8mb4, "a b ", "a b"},
      {"unknown is UTF-8", Charset::unknown, "a ", "a"},
      {"tabs are not padding", Charset::latin1, "a\t", "a\t"},
      {"all spaces", Charset::gbk, "   ", ""},
      {"gbk", Charset::gbk, "\xC4\xE3 ", "\xC4\xE3"},
      {"ucs2", Charset::ucs2, std::string("\x00" "A\x00 \x00 ", 6), std::string("\x00" "A", 2)},
      {"ucs2 20 as a low byte is data", Charset::ucs2, "\x4E\x20", "\x4E\x20"},  // U+4E20
      {"utf16 odd length left alone", Charset::utf16, std::string("\x00" "A ", 3), std::string("\x00" "A ", 3)},
      {"utf16le", Charset::utf16le, std::string("A\x00 \x00", 4), std::string("A\x00", 2)},
      {"utf16le 00 20 is data", Charset::utf16le, std::string("\x00 ", 2), std::string("\x00 ", 2)},  // U+2000
      {"utf32", Charset::utf32, std::string("\x00\x00\x00" "B\x00\x00\x00 ", 8), std::string("\x00\x00\x00" "B", 4)},
      {"utf32 U+2020 is data", Charset::utf32, std::string("\x00\x00  ", 4), std::string("\x00\x00  ", 4)},
      {"binary is never trimmed", Charset::binary, "a ", "a "},
      {"empty", Charset::latin1, "", ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(std::string(trim_char_padding(c.raw, c.charset)) == c.expected);
  }
}

}  // namespace
