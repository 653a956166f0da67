// Generated data for charset.h: the collation id table.
//
// Collation ids. Ids below 2048 are listed one by one: MariaDB 10.11's
//   SELECT ID, FULL_COLLATION_NAME, CHARACTER_SET_NAME
//   FROM information_schema.COLLATION_CHARACTER_SET_APPLICABILITY ORDER BY ID
// (which also lists ids 2048+), plus the ids only MySQL has, from MySQL 8.0's SHOW COLLATION
// (cross-checked with go-mysql-server's MySQL 8.0 table and MariaDB's strings/ctype-uca0900.c):
//   1..247     both servers; the same id is the same charset everywhere. Names differ only for
//              122 149 181 213 245: MySQL *_croatian_ci = MariaDB *_croatian_mysql561_ci (MariaDB's
//              own *_croatian_ci are 576..736), and MySQL < 8.0.30 / MariaDB < 10.6 say utf8_
//              for utf8mb3_.
//   76         MySQL 8.0 utf8mb3_tolower_ci (internal).   248..250  MySQL gb18030 (5.7+).
//   255..323   MySQL 8.0+ utf8mb4_*0900* (272 276 295 299 fa/si are not compiled in, 301 302 unused).
//              MariaDB 11.4.5+ accepts 255..309 as aliases of its utf8mb4 UCA-14.0 collations
//              (MDEV-20912): utf8mb4 either way.
//   576..738   MariaDB utf8mb3/utf8mb4/ucs2/utf16/utf32 croatian, myanmar, thai_520_w2.
//   1024..2047 MariaDB NO PAD collations (1024 + the PAD SPACE id where one exists). MySQL keeps
//              this range for user-defined collations, which no table can know; such an id from
//              a MySQL server is read as MariaDB's (usually the same charset family anyway).
//   2048..3327 MariaDB 10.10+ UCA-14.0 collations (it reserves up to 4095), computed rather than
//              listed (strings/ctype-uca1400.h):
//              id = 2048 + charset * 256 + tailoring * 8 + nopad * 4 + as * 2 + cs, charset
//              0..4 = utf8mb3 utf8mb4 ucs2 utf16 utf32. The names this builds match the server's
//              920 rows exactly.
// No id means different charsets in the two servers, so one table serves both flavours.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "rowimage/charset.h"

namespace cdc::rowimage {

namespace {

using detail::CollationRow;

// clang-format off
constexpr std::array kCollations = std::to_array<CollationRow>({
    {1, Charset::big5, "big5_chinese_ci"},
    {2, Charset::latin2, "latin2_czech_cs"},
    {3, Charset::dec8, "dec8_swedish_ci"},
    {4, Charset::cp850, "cp850_general_ci"},
    {5, Charset::latin1, "latin1_german1_ci"},
    {6, Charset::hp8, "hp8_english_ci"},
    {7, Charset::koi8r, "koi8r_general_ci"},
    {8, Charset::latin1, "latin1_swedish_ci"},
    {9, Charset::latin2, "latin2_general_ci"},
    {10, Charset::swe7, "swe7_swedish_ci"},
    {11, Charset::ascii, "ascii_general_ci"},
    {12, Charset::ujis, "ujis_japanese_ci"},
    {13, Charset::sjis, "sjis_japanese_ci"},
    {14, Charset::cp1251, "cp1251_bulgarian_ci"},
    {15, Charset::latin1, "latin1_danish_ci"},
    {16, Charset::hebrew, "hebrew_general_ci"},
    {18, Charset::tis620, "tis620_thai_ci"},
    {19, Charset::euckr, "euckr_korean_ci"},
    {20, Charset::latin7, "latin7_estonian_cs"},
    {21, Charset::latin2, "latin2_hungarian_ci"},
    {22, Charset::koi8u, "koi8u_general_ci"},
    {23, Charset::cp1251, "cp1251_ukrainian_ci"},
    {24, Charset::gb2312, "gb2312_chinese_ci"},
    {25, Charset::greek, "greek_general_ci"},
    {26, Charset::cp1250, "cp1250_general_ci"},
    {27, Charset::latin2, "latin2_croatian_ci"},
    {28, Charset::gbk, "gbk_chinese_ci"},
    {29, Charset::cp1257, "cp1257_lithuanian_ci"},
    {30, Charset::latin5, "latin5_turkish_ci"},
    {31, Charset::latin1, "latin1_german2_ci"},
    {32, Charset::armscii8, "armscii8_general_ci"},
    {33, Charset::utf8mb3, "utf8mb3_general_ci"},
    {34, Charset::cp1250, "cp1250_czech_cs"},
    {35, Charset::ucs2, "ucs2_general_ci"},
    {36, Charset::cp866, "cp866_general_ci"},
    {37, Charset::keybcs2, "keybcs2_general_ci"},
    {38, Charset::macce, "macce_general_ci"},
    {39, Charset::macroman, "macroman_general_ci"},
    {40, Charset::cp852, "cp852_general_ci"},
    {41, Charset::latin7, "latin7_general_ci"},
    {42, Charset::latin7, "latin7_general_cs"},
    {43, Charset::macce, "macce_bin"},
    {44, Charset::cp1250, "cp1250_croatian_ci"},
    {45, Charset::utf8mb4, "utf8mb4_general_ci"},
    {46, Charset::utf8mb4, "utf8mb4_bin"},
    {47, Charset::latin1, "latin1_bin"},
    {48, Charset::latin1, "latin1_general_ci"},
    {49, Charset::latin1, "latin1_general_cs"},
    {50, Charset::cp1251, "cp1251_bin"},
    {51, Charset::cp1251, "cp1251_general_ci"},
    {52, Charset::cp1251, "cp1251_general_cs"},
    {53, Charset::macroman, "macroman_bin"},
    {54, Charset::utf16, "utf16_general_ci"},
    {55, Charset::utf16, "utf16_bin"},
    {56, Charset::utf16le, "utf16le_general_ci"},
    {57, Charset::cp1256, "cp1256_general_ci"},
    {58, Charset::cp1257, "cp1257_bin"},
    {59, Charset::cp1257, "cp1257_general_ci"},
    {60, Charset::utf32, "utf32_general_ci"},
    {61, Charset::utf32, "utf32_bin"},
    {62, Charset::utf16le, "utf16le_bin"},
    {63, Charset::binary, "binary"},
    {64, Charset::armscii8, "armscii8_bin"},
    {65, Charset::ascii, "ascii_bin"},
    {66, Charset::cp1250, "cp1250_bin"},
    {67, Charset::cp1256, "cp1256_bin"},
    {68, Charset::cp866, "cp866_bin"},
    {69, Charset::dec8, "dec8_bin"},
    {70, Charset::greek, "greek_bin"},
    {71, Charset::hebrew, "hebrew_bin"},
    {72, Charset::hp8, "hp8_bin"},
    {73, Charset::keybcs2, "keybcs2_bin"},
    {74, Charset::koi8r, "koi8r_bin"},
    {75, Charset::koi8u, "koi8u_bin"},
    {76, Charset::utf8mb3, "utf8mb3_tolower_ci"},  // MySQL 8.0 only (internal)
    {77, Charset::latin2, "latin2_bin"},
    {78, Charset::latin5, "latin5_bin"},
    {79, Charset::latin7, "latin7_bin"},
    {80, Charset::cp850, "cp850_bin"},
    {81, Charset::cp852, "cp852_bin"},
    {82, Charset::swe7, "swe7_bin"},
    {83, Charset::utf8mb3, "utf8mb3_bin"},
    {84, Charset::big5, "big5_bin"},
    {85, Charset::euckr, "euckr_bin"},
    {86, Charset::gb2312, "gb2312_bin"},
    {87, Charset::gbk, "gbk_bin"},
    {88, Charset::sjis, "sjis_bin"},
    {89, Charset::tis620, "tis620_bin"},
    {90, Charset::ucs2, "ucs2_bin"},
    {91, Charset::ujis, "ujis_bin"},
    {92, Charset::geostd8, "geostd8_general_ci"},
    {93, Charset::geostd8, "geostd8_bin"},
    {94, Charset::latin1, "latin1_spanish_ci"},
    {95, Charset::cp932, "cp932_japanese_ci"},
    {96, Charset::cp932, "cp932_bin"},
    {97, Charset::eucjpms, "eucjpms_japanese_ci"},
    {98, Charset::eucjpms, "eucjpms_bin"},
    {99, Charset::cp1250, "cp1250_polish_ci"},
    {101, Charset::utf16, "utf16_unicode_ci"},
    {102, Charset::utf16, "utf16_icelandic_ci"},
    {103, Charset::utf16, "utf16_latvian_ci"},
    {104, Charset::utf16, "utf16_romanian_ci"},
    {105, Charset::utf16, "utf16_slovenian_ci"},
    {106, Charset::utf16, "utf16_polish_ci"},
    {107, Charset::utf16, "utf16_estonian_ci"},
    {108, Charset::utf16, "utf16_spanish_ci"},
    {109, Charset::utf16, "utf16_swedish_ci"},
    {110, Charset::utf16, "utf16_turkish_ci"},
    {111, Charset::utf16, "utf16_czech_ci"},
    {112, Charset::utf16, "utf16_danish_ci"},
    {113, Charset::utf16, "utf16_lithuanian_ci"},
    {114, Charset::utf16, "utf16_slovak_ci"},
    {115, Charset::utf16, "utf16_spanish2_ci"},
    {116, Charset::utf16, "utf16_roman_ci"},
    {117, Charset::utf16, "utf16_persian_ci"},
    {118, Charset::utf16, "utf16_esperanto_ci"},
    {119, Charset::utf16, "utf16_hungarian_ci"},
    {120, Charset::utf16, "utf16_sinhala_ci"},
    {121, Charset::utf16, "utf16_german2_ci"},
    {122, Charset::utf16, "utf16_croatian_mysql561_ci"},  // MySQL: utf16_croatian_ci
    {123, Charset::utf16, "utf16_unicode_520_ci"},
    {124, Charset::utf16, "utf16_vietnamese_ci"},
    {128, Charset::ucs2, "ucs2_unicode_ci"},
    {129, Charset::ucs2, "ucs2_icelandic_ci"},
    {130, Charset::ucs2, "ucs2_latvian_ci"},
    {131, Charset::ucs2, "ucs2_romanian_ci"},
    {132, Charset::ucs2, "ucs2_slovenian_ci"},
    {133, Charset::ucs2, "ucs2_polish_ci"},
    {134, Charset::ucs2, "ucs2_estonian_ci"},
    {135, Charset::ucs2, "ucs2_spanish_ci"},
    {136, Charset::ucs2, "ucs2_swedish_ci"},
    {137, Charset::ucs2, "ucs2_turkish_ci"},
    {138, Charset::ucs2, "ucs2_czech_ci"},
    {139, Charset::ucs2, "ucs2_danish_ci"},
    {140, Charset::ucs2, "ucs2_lithuanian_ci"},
    {141, Charset::ucs2, "ucs2_slovak_ci"},
    {142, Charset::ucs2, "ucs2_spanish2_ci"},
    {143, Charset::ucs2, "ucs2_roman_ci"},
    {144, Charset::ucs2, "ucs2_persian_ci"},
    {145, Charset::ucs2, "ucs2_esperanto_ci"},
    {146, Charset::ucs2, "ucs2_hungarian_ci"},
    {147, Charset::ucs2, "ucs2_sinhala_ci"},
    {148, Charset::ucs2, "ucs2_german2_ci"},
    {149, Charset::ucs2, "ucs2_croatian_mysql561_ci"},  // MySQL: ucs2_croatian_ci
    {150, Charset::ucs2, "ucs2_unicode_520_ci"},
    {151, Charset::ucs2, "ucs2_vietnamese_ci"},
    {159, Charset::ucs2, "ucs2_general_mysql500_ci"},
    {160, Charset::utf32, "utf32_unicode_ci"},
    {161, Charset::utf32, "utf32_icelandic_ci"},
    {162, Charset::utf32, "utf32_latvian_ci"},
    {163, Charset::utf32, "utf32_romanian_ci"},
    {164, Charset::utf32, "utf32_slovenian_ci"},
    {165, Charset::utf32, "utf32_polish_ci"},
    {166, Charset::utf32, "utf32_estonian_ci"},
    {167, Charset::utf32, "utf32_spanish_ci"},
    {168, Charset::utf32, "utf32_swedish_ci"},
    {169, Charset::utf32, "utf32_turkish_ci"},
    {170, Charset::utf32, "utf32_czech_ci"},
    {171, Charset::utf32, "utf32_danish_ci"},
    {172, Charset::utf32, "utf32_lithuanian_ci"},
    {173, Charset::utf32, "utf32_slovak_ci"},
    {174, Charset::utf32, "utf32_spanish2_ci"},
    {175, Charset::utf32, "utf32_roman_ci"},
    {176, Charset::utf32, "utf32_persian_ci"},
    {177, Charset::utf32, "utf32_esperanto_ci"},
    {178, Charset::utf32, "utf32_hungarian_ci"},
    {179, Charset::utf32, "utf32_sinhala_ci"},
    {180, Charset::utf32, "utf32_german2_ci"},
    {181, Charset::utf32, "utf32_croatian_mysql561_ci"},  // MySQL: utf32_croatian_ci
    {182, Charset::utf32, "utf32_unicode_520_ci"},
    {183, Charset::utf32, "utf32_vietnamese_ci"},
    {192, Charset::utf8mb3, "utf8mb3_unicode_ci"},
    {193, Charset::utf8mb3, "utf8mb3_icelandic_ci"},
    {194, Charset::utf8mb3, "utf8mb3_latvian_ci"},
    {195, Charset::utf8mb3, "utf8mb3_romanian_ci"},
    {196, Charset::utf8mb3, "utf8mb3_slovenian_ci"},
    {197, Charset::utf8mb3, "utf8mb3_polish_ci"},
    {198, Charset::utf8mb3, "utf8mb3_estonian_ci"},
    {199, Charset::utf8mb3, "utf8mb3_spanish_ci"},
    {200, Charset::utf8mb3, "utf8mb3_swedish_ci"},
    {201, Charset::utf8mb3, "utf8mb3_turkish_ci"},
    {202, Charset::utf8mb3, "utf8mb3_czech_ci"},
    {203, Charset::utf8mb3, "utf8mb3_danish_ci"},
    {204, Charset::utf8mb3, "utf8mb3_lithuanian_ci"},
    {205, Charset::utf8mb3, "utf8mb3_slovak_ci"},
    {206, Charset::utf8mb3, "utf8mb3_spanish2_ci"},
    {207, Charset::utf8mb3, "utf8mb3_roman_ci"},
    {208, Charset::utf8mb3, "utf8mb3_persian_ci"},
    {209, Charset::utf8mb3, "utf8mb3_esperanto_ci"},
    {210, Charset::utf8mb3, "utf8mb3_hungarian_ci"},
    {211, Charset::utf8mb3, "utf8mb3_sinhala_ci"},
    {212, Charset::utf8mb3, "utf8mb3_german2_ci"},
    {213, Charset::utf8mb3, "utf8mb3_croatian_mysql561_ci"},  // MySQL: utf8mb3_croatian_ci
    {214, Charset::utf8mb3, "utf8mb3_unicode_520_ci"},
    {215, Charset::utf8mb3, "utf8mb3_vietnamese_ci"},
    {223, Charset::utf8mb3, "utf8mb3_general_mysql500_ci"},
    {224, Charset::utf8mb4, "utf8mb4_unicode_ci"},
    {225, Charset::utf8mb4, "utf8mb4_icelandic_ci"},
    {226, Charset::utf8mb4, "utf8mb4_latvian_ci"},
    {227, Charset::utf8mb4, "utf8mb4_romanian_ci"},
    {228, Charset::utf8mb4, "utf8mb4_slovenian_ci"},
    {229, Charset::utf8mb4, "utf8mb4_polish_ci"},
    {230, Charset::utf8mb4, "utf8mb4_estonian_ci"},
    {231, Charset::utf8mb4, "utf8mb4_spanish_ci"},
    {232, Charset::utf8mb4, "utf8mb4_swedish_ci"},
    {233, Charset::utf8mb4, "utf8mb4_turkish_ci"},
    {234, Charset::utf8mb4, "utf8mb4_czech_ci"},
    {235, Charset::utf8mb4, "utf8mb4_danish_ci"},
    {236, Charset::utf8mb4, "utf8mb4_lithuanian_ci"},
    {237, Charset::utf8mb4, "utf8mb4_slovak_ci"},
    {238, Charset::utf8mb4, "utf8mb4_spanish2_ci"},
    {239, Charset::utf8mb4, "utf8mb4_roman_ci"},
    {240, Charset::utf8mb4, "utf8mb4_persian_ci"},
    {241, Charset::utf8mb4, "utf8mb4_esperanto_ci"},
    {242, Charset::utf8mb4, "utf8mb4_hungarian_ci"},
    {243, Charset::utf8mb4, "utf8mb4_sinhala_ci"},
    {244, Charset::utf8mb4, "utf8mb4_german2_ci"},
    {245, Charset::utf8mb4, "utf8mb4_croatian_mysql561_ci"},  // MySQL: utf8mb4_croatian_ci
    {246, Charset::utf8mb4, "utf8mb4_unicode_520_ci"},
    {247, Charset::utf8mb4, "utf8mb4_vietnamese_ci"},
    {248, Charset::gb18030, "gb18030_chinese_ci"},  // MySQL 5.7+ only
    {249, Charset::gb18030, "gb18030_bin"},  // MySQL 5.7+ only
    {250, Charset::gb18030, "gb18030_unicode_520_ci"},  // MySQL 5.7+ only
    {255, Charset::utf8mb4, "utf8mb4_0900_ai_ci"},
    {256, Charset::utf8mb4, "utf8mb4_de_pb_0900_ai_ci"},
    {257, Charset::utf8mb4, "utf8mb4_is_0900_ai_ci"},
    {258, Charset::utf8mb4, "utf8mb4_lv_0900_ai_ci"},
    {259, Charset::utf8mb4, "utf8mb4_ro_0900_ai_ci"},
    {260, Charset::utf8mb4, "utf8mb4_sl_0900_ai_ci"},
    {261, Charset::utf8mb4, "utf8mb4_pl_0900_ai_ci"},
    {262, Charset::utf8mb4, "utf8mb4_et_0900_ai_ci"},
    {263, Charset::utf8mb4, "utf8mb4_es_0900_ai_ci"},
    {264, Charset::utf8mb4, "utf8mb4_sv_0900_ai_ci"},
    {265, Charset::utf8mb4, "utf8mb4_tr_0900_ai_ci"},
    {266, Charset::utf8mb4, "utf8mb4_cs_0900_ai_ci"},
    {267, Charset::utf8mb4, "utf8mb4_da_0900_ai_ci"},
    {268, Charset::utf8mb4, "utf8mb4_lt_0900_ai_ci"},
    {269, Charset::utf8mb4, "utf8mb4_sk_0900_ai_ci"},
    {270, Charset::utf8mb4, "utf8mb4_es_trad_0900_ai_ci"},
    {271, Charset::utf8mb4, "utf8mb4_la_0900_ai_ci"},
    {273, Charset::utf8mb4, "utf8mb4_eo_0900_ai_ci"},
    {274, Charset::utf8mb4, "utf8mb4_hu_0900_ai_ci"},
    {275, Charset::utf8mb4, "utf8mb4_hr_0900_ai_ci"},
    {277, Charset::utf8mb4, "utf8mb4_vi_0900_ai_ci"},
    {278, Charset::utf8mb4, "utf8mb4_0900_as_cs"},
    {279, Charset::utf8mb4, "utf8mb4_de_pb_0900_as_cs"},
    {280, Charset::utf8mb4, "utf8mb4_is_0900_as_cs"},
    {281, Charset::utf8mb4, "utf8mb4_lv_0900_as_cs"},
    {282, Charset::utf8mb4, "utf8mb4_ro_0900_as_cs"},
    {283, Charset::utf8mb4, "utf8mb4_sl_0900_as_cs"},
    {284, Charset::utf8mb4, "utf8mb4_pl_0900_as_cs"},
    {285, Charset::utf8mb4, "utf8mb4_et_0900_as_cs"},
    {286, Charset::utf8mb4, "utf8mb4_es_0900_as_cs"},
    {287, Charset::utf8mb4, "utf8mb4_sv_0900_as_cs"},
    {288, Charset::utf8mb4, "utf8mb4_tr_0900_as_cs"},
    {289, Charset::utf8mb4, "utf8mb4_cs_0900_as_cs"},
    {290, Charset::utf8mb4, "utf8mb4_da_0900_as_cs"},
    {291, Charset::utf8mb4, "utf8mb4_lt_0900_as_cs"},
    {292, Charset::utf8mb4, "utf8mb4_sk_0900_as_cs"},
    {293, Charset::utf8mb4, "utf8mb4_es_trad_0900_as_cs"},
    {294, Charset::utf8mb4, "utf8mb4_la_0900_as_cs"},
    {296, Charset::utf8mb4, "utf8mb4_eo_0900_as_cs"},
    {297, Charset::utf8mb4, "utf8mb4_hu_0900_as_cs"},
    {298, Charset::utf8mb4, "utf8mb4_hr_0900_as_cs"},
    {300, Charset::utf8mb4, "utf8mb4_vi_0900_as_cs"},
    {303, Charset::utf8mb4, "utf8mb4_ja_0900_as_cs"},
    {304, Charset::utf8mb4, "utf8mb4_ja_0900_as_cs_ks"},
    {305, Charset::utf8mb4, "utf8mb4_0900_as_ci"},
    {306, Charset::utf8mb4, "utf8mb4_ru_0900_ai_ci"},
    {307, Charset::utf8mb4, "utf8mb4_ru_0900_as_cs"},
    {308, Charset::utf8mb4, "utf8mb4_zh_0900_as_cs"},
    {309, Charset::utf8mb4, "utf8mb4_0900_bin"},
    {310, Charset::utf8mb4, "utf8mb4_nb_0900_ai_ci"},
    {311, Charset::utf8mb4, "utf8mb4_nb_0900_as_cs"},
    {312, Charset::utf8mb4, "utf8mb4_nn_0900_ai_ci"},
    {313, Charset::utf8mb4, "utf8mb4_nn_0900_as_cs"},
    {314, Charset::utf8mb4, "utf8mb4_sr_latn_0900_ai_ci"},
    {315, Charset::utf8mb4, "utf8mb4_sr_latn_0900_as_cs"},
    {316, Charset::utf8mb4, "utf8mb4_bs_0900_ai_ci"},
    {317, Charset::utf8mb4, "utf8mb4_bs_0900_as_cs"},
    {318, Charset::utf8mb4, "utf8mb4_bg_0900_ai_ci"},
    {319, Charset::utf8mb4, "utf8mb4_bg_0900_as_cs"},
    {320, Charset::utf8mb4, "utf8mb4_gl_0900_ai_ci"},
    {321, Charset::utf8mb4, "utf8mb4_gl_0900_as_cs"},
    {322, Charset::utf8mb4, "utf8mb4_mn_cyrl_0900_ai_ci"},
    {323, Charset::utf8mb4, "utf8mb4_mn_cyrl_0900_as_cs"},
    {576, Charset::utf8mb3, "utf8mb3_croatian_ci"},
    {577, Charset::utf8mb3, "utf8mb3_myanmar_ci"},
    {578, Charset::utf8mb3, "utf8mb3_thai_520_w2"},
    {608, Charset::utf8mb4, "utf8mb4_croatian_ci"},
    {609, Charset::utf8mb4, "utf8mb4_myanmar_ci"},
    {610, Charset::utf8mb4, "utf8mb4_thai_520_w2"},
    {640, Charset::ucs2, "ucs2_croatian_ci"},
    {641, Charset::ucs2, "ucs2_myanmar_ci"},
    {642, Charset::ucs2, "ucs2_thai_520_w2"},
    {672, Charset::utf16, "utf16_croatian_ci"},
    {673, Charset::utf16, "utf16_myanmar_ci"},
    {674, Charset::utf16, "utf16_thai_520_w2"},
    {736, Charset::utf32, "utf32_croatian_ci"},
    {737, Charset::utf32, "utf32_myanmar_ci"},
    {738, Charset::utf32, "utf32_thai_520_w2"},
    {1025, Charset::big5, "big5_chinese_nopad_ci"},
    {1027, Charset::dec8, "dec8_swedish_nopad_ci"},
    {1028, Charset::cp850, "cp850_general_nopad_ci"},
    {1030, Charset::hp8, "hp8_english_nopad_ci"},
    {1031, Charset::koi8r, "koi8r_general_nopad_ci"},
    {1032, Charset::latin1, "latin1_swedish_nopad_ci"},
    {1033, Charset::latin2, "latin2_general_nopad_ci"},
    {1034, Charset::swe7, "swe7_swedish_nopad_ci"},
    {1035, Charset::ascii, "ascii_general_nopad_ci"},
    {1036, Charset::ujis, "ujis_japanese_nopad_ci"},
    {1037, Charset::sjis, "sjis_japanese_nopad_ci"},
    {1040, Charset::hebrew, "hebrew_general_nopad_ci"},
    {1042, Charset::tis620, "tis620_thai_nopad_ci"},
    {1043, Charset::euckr, "euckr_korean_nopad_ci"},
    {1046, Charset::koi8u, "koi8u_general_nopad_ci"},
    {1048, Charset::gb2312, "gb2312_chinese_nopad_ci"},
    {1049, Charset::greek, "greek_general_nopad_ci"},
    {1050, Charset::cp1250, "cp1250_general_nopad_ci"},
    {1052, Charset::gbk, "gbk_chinese_nopad_ci"},
    {1054, Charset::latin5, "latin5_turkish_nopad_ci"},
    {1056, Charset::armscii8, "armscii8_general_nopad_ci"},
    {1057, Charset::utf8mb3, "utf8mb3_general_nopad_ci"},
    {1059, Charset::ucs2, "ucs2_general_nopad_ci"},
    {1060, Charset::cp866, "cp866_general_nopad_ci"},
    {1061, Charset::keybcs2, "keybcs2_general_nopad_ci"},
    {1062, Charset::macce, "macce_general_nopad_ci"},
    {1063, Charset::macroman, "macroman_general_nopad_ci"},
    {1064, Charset::cp852, "cp852_general_nopad_ci"},
    {1065, Charset::latin7, "latin7_general_nopad_ci"},
    {1067, Charset::macce, "macce_nopad_bin"},
    {1069, Charset::utf8mb4, "utf8mb4_general_nopad_ci"},
    {1070, Charset::utf8mb4, "utf8mb4_nopad_bin"},
    {1071, Charset::latin1, "latin1_nopad_bin"},
    {1074, Charset::cp1251, "cp1251_nopad_bin"},
    {1075, Charset::cp1251, "cp1251_general_nopad_ci"},
    {1077, Charset::macroman, "macroman_nopad_bin"},
    {1078, Charset::utf16, "utf16_general_nopad_ci"},
    {1079, Charset::utf16, "utf16_nopad_bin"},
    {1080, Charset::utf16le, "utf16le_general_nopad_ci"},
    {1081, Charset::cp1256, "cp1256_general_nopad_ci"},
    {1082, Charset::cp1257, "cp1257_nopad_bin"},
    {1083, Charset::cp1257, "cp1257_general_nopad_ci"},
    {1084, Charset::utf32, "utf32_general_nopad_ci"},
    {1085, Charset::utf32, "utf32_nopad_bin"},
    {1086, Charset::utf16le, "utf16le_nopad_bin"},
    {1088, Charset::armscii8, "armscii8_nopad_bin"},
    {1089, Charset::ascii, "ascii_nopad_bin"},
    {1090, Charset::cp1250, "cp1250_nopad_bin"},
    {1091, Charset::cp1256, "cp1256_nopad_bin"},
    {1092, Charset::cp866, "cp866_nopad_bin"},
    {1093, Charset::dec8, "dec8_nopad_bin"},
    {1094, Charset::greek, "greek_nopad_bin"},
    {1095, Charset::hebrew, "hebrew_nopad_bin"},
    {1096, Charset::hp8, "hp8_nopad_bin"},
    {1097, Charset::keybcs2, "keybcs2_nopad_bin"},
    {1098, Charset::koi8r, "koi8r_nopad_bin"},
    {1099, Charset::koi8u, "koi8u_nopad_bin"},
    {1101, Charset::latin2, "latin2_nopad_bin"},
    {1102, Charset::latin5, "latin5_nopad_bin"},
    {1103, Charset::latin7, "latin7_nopad_bin"},
    {1104, Charset::cp850, "cp850_nopad_bin"},
    {1105, Charset::cp852, "cp852_nopad_bin"},
    {1106, Charset::swe7, "swe7_nopad_bin"},
    {1107, Charset::utf8mb3, "utf8mb3_nopad_bin"},
    {1108, Charset::big5, "big5_nopad_bin"},
    {1109, Charset::euckr, "euckr_nopad_bin"},
    {1110, Charset::gb2312, "gb2312_nopad_bin"},
    {1111, Charset::gbk, "gbk_nopad_bin"},
    {1112, Charset::sjis, "sjis_nopad_bin"},
    {1113, Charset::tis620, "tis620_nopad_bin"},
    {1114, Charset::ucs2, "ucs2_nopad_bin"},
    {1115, Charset::ujis, "ujis_nopad_bin"},
    {1116, Charset::geostd8, "geostd8_general_nopad_ci"},
    {1117, Charset::geostd8, "geostd8_nopad_bin"},
    {1119, Charset::cp932, "cp932_japanese_nopad_ci"},
    {1120, Charset::cp932, "cp932_nopad_bin"},
    {1121, Charset::eucjpms, "eucjpms_japanese_nopad_ci"},
    {1122, Charset::eucjpms, "eucjpms_nopad_bin"},
    {1125, Charset::utf16, "utf16_unicode_nopad_ci"},
    {1147, Charset::utf16, "utf16_unicode_520_nopad_ci"},
    {1152, Charset::ucs2, "ucs2_unicode_nopad_ci"},
    {1174, Charset::ucs2, "ucs2_unicode_520_nopad_ci"},
    {1184, Charset::utf32, "utf32_unicode_nopad_ci"},
    {1206, Charset::utf32, "utf32_unicode_520_nopad_ci"},
    {1216, Charset::utf8mb3, "utf8mb3_unicode_nopad_ci"},
    {1238, Charset::utf8mb3, "utf8mb3_unicode_520_nopad_ci"},
    {1248, Charset::utf8mb4, "utf8mb4_unicode_nopad_ci"},
    {1270, Charset::utf8mb4, "utf8mb4_unicode_520_nopad_ci"},
});
// clang-format on

constexpr bool sorted_by_id() {
  for (std::size_t i = 1; i < kCollations.size(); ++i) {
    if (kCollations[i - 1].id >= kCollations[i].id) return false;
  }
  return true;
}
static_assert(sorted_by_id(), "kCollations must be sorted by id for binary search");

// MariaDB UCA-14.0 collation ids (strings/ctype-uca1400.h): 1ccc tttt tPST.
constexpr std::uint16_t kUca1400First = 2048;
constexpr std::uint16_t kUca1400Last = 2048 + 5 * 256 - 1;  // charset 0..4

constexpr std::array<Charset, 5> kUca1400Charsets = {Charset::utf8mb3, Charset::utf8mb4, Charset::ucs2,
                                                     Charset::utf16, Charset::utf32};

// Tailoring number -> name part; nullptr where MariaDB defines no UCA-14.0 collation (21 and
// 22 were croatian_mysql561 and unicode_520 in the older numbering).
constexpr std::array<const char*, 25> kUca1400Tailorings = {
    "", "icelandic", "latvian", "romanian", "slovenian", "polish", "estonian", "spanish",
    "swedish", "turkish", "czech", "danish", "lithuanian", "slovak", "spanish2", "roman",
    "persian", "esperanto", "hungarian", "sinhala", "german2", nullptr, nullptr, "vietnamese",
    "croatian"};

// Names of every id in the range, built once; empty where the tailoring is not defined.
const std::array<std::string, kUca1400Last - kUca1400First + 1>& uca1400_names() {
  static const auto names = [] {
    std::array<std::string, kUca1400Last - kUca1400First + 1> built;
    for (std::size_t i = 0; i < built.size(); ++i) {
      const std::size_t tailoring = (i >> 3) & 0x1F;
      if (tailoring >= kUca1400Tailorings.size() || kUca1400Tailorings[tailoring] == nullptr) continue;
      const std::string_view part = kUca1400Tailorings[tailoring];
      std::string name(charset_name(kUca1400Charsets[i >> 8]));
      name += "_uca1400";
      if (!part.empty()) name.append("_").append(part);
      if ((i & 4U) != 0) name += "_nopad";
      name += (i & 2U) != 0 ? "_as" : "_ai";
      name += (i & 1U) != 0 ? "_cs" : "_ci";
      built[i] = std::move(name);
    }
    return built;
  }();
  return names;
}

// Offset of id in the UCA-14.0 range, or nullopt outside it.
std::optional<std::size_t> uca1400_offset(std::uint16_t id) {
  if (id < kUca1400First || id > kUca1400Last) return std::nullopt;
  return static_cast<std::size_t>(id - kUca1400First);
}

const CollationRow* find_row(std::uint16_t id) {
  const auto* row = std::lower_bound(kCollations.begin(), kCollations.end(), id,
                                     [](const CollationRow& r, std::uint16_t wanted) { return r.id < wanted; });
  return row != kCollations.end() && row->id == id ? row : nullptr;
}

CollationInfo make_info(std::uint16_t id, Charset charset, std::string_view name) {
  return CollationInfo{id, charset, name, charset_name(charset), max_bytes_per_char(charset)};
}

}  // namespace

std::optional<CollationInfo> collation_info(std::uint16_t id) {
  if (const auto offset = uca1400_offset(id)) {
    const std::string& name = uca1400_names()[*offset];
    if (name.empty()) return std::nullopt;
    return make_info(id, kUca1400Charsets[*offset >> 8], name);
  }
  const CollationRow* row = find_row(id);
  if (row == nullptr) return std::nullopt;
  return make_info(id, row->charset, row->name);
}

Charset charset_of(std::uint16_t id) noexcept {
  if (const auto offset = uca1400_offset(id)) return kUca1400Charsets[*offset >> 8];
  const CollationRow* row = find_row(id);
  return row != nullptr ? row->charset : Charset::unknown;
}

std::optional<std::uint16_t> mariadb_0900_alias_target(std::uint16_t id) noexcept {
  // MariaDB's mysql_0900_mapping: the untailored and language utf8mb4_*_0900_ai_ci (255..277)
  // and _as_cs (278..300, the same languages in the same order), and utf8mb4_0900_as_ci (305).
  // 272/295 (fa) and 276/299 (si) are not compiled into MySQL and have no alias.
  static constexpr std::array<std::uint16_t, 23> kAiCiTargets = {
      2308, 2468, 2316, 2324, 2332, 2340, 2348, 2356, 2364, 2372, 2380, 2388,
      2396, 2404, 2412, 2420, 2428, 0,    2444, 2452, 2500, 0,    2492};
  constexpr std::uint16_t kAiCiFirst = 255, kAsCsFirst = 278, kAsCi = 305;
  constexpr std::uint16_t kAsCsFromAiCi = 3;  // as * 2 + cs in MariaDB's UCA-14.0 ids
  std::uint16_t target = 0;
  if (id >= kAiCiFirst && id < kAiCiFirst + kAiCiTargets.size()) {
    target = kAiCiTargets[id - kAiCiFirst];
  } else if (id >= kAsCsFirst && id < kAsCsFirst + kAiCiTargets.size()) {
    target = kAiCiTargets[id - kAsCsFirst];
    if (target != 0) target += kAsCsFromAiCi;
  } else if (id == kAsCi) {
    target = 2310;
  }
  if (target == 0) return std::nullopt;
  return target;
}

namespace detail {

std::span<const CollationRow> collation_rows() noexcept { return kCollations; }

}  // namespace detail

}  // namespace cdc::rowimage
