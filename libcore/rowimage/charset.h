#pragma once

// Text columns in row images: which character set a collation id names, and how the raw bytes
// of a CHAR/VARCHAR/TEXT (or ENUM/SET label) value become one UTF-8 JSON string.
//
// The binlog carries text as the bytes stored in the column's character set, and TABLE_MAP's
// optional metadata (DEFAULT_CHARSET / COLUMN_CHARSET / ENUM_AND_SET_*_CHARSET) gives each
// column's collation id. cdc-ndjson(5) (VALUES) wants the JSON string to be byte-identical to what
// a SELECT through a utf8mb4 connection returns, so every conversion here follows the server's
// own tables, not a generic codec's:
//
// * utf8mb3, utf8mb4 and unknown ids (0 = the binlog has no charset metadata, or an id we do not
//   know, e.g. a MySQL user-defined collation): the bytes are taken as UTF-8 and handed to
//   ndjson::Writer::string(), which replaces ill-formed sequences with U+FFFD (writer.h).
// * Single-byte charsets (latin1 ... tis620, ascii, swe7): tables generated from MariaDB
//   10.11's own conversions (charset_conversion_tables.cpp says how). latin1 is MySQL's latin1:
//   Windows-1252 with the five undefined bytes 81 8D 8F 90 9D mapped to U+0081 U+008D U+008F
//   U+0090 U+009D (strings/ctype-latin1.c, cs_to_uni). glibc iconv is not used for these: it
//   has no keybcs2 and maps some bytes differently from the server in 12 of the other 24
//   (latin1, cp1256, cp866, koi8u, greek, hebrew, armscii8, geostd8, macroman, swe7, dec8,
//   tis620).
// * ucs2 (UCS-2BE), utf16 (UTF-16BE), utf16le, utf32 (UTF-32BE): decoded here.
// * Multi-byte legacy charsets (big5, gbk, gb2312, gb18030, sjis, cp932, ujis, eucjpms, euckr):
//   split into characters with the server's lead/trail byte rules, ASCII bytes copied as they
//   are, the rest converted with glibc iconv (one cached iconv_t per charset in TextScratch),
//   plus the few code points where the server's table and iconv's disagree (sjis 815F, ujis
//   A1C0/8FA2B7 and user-defined rows F5..FE, 461 big5 codes). See kProps in charset.cpp for the
//   iconv name of each and how exactly it was checked against the server.
// * binary (collation 63) is not text: BINARY/VARBINARY/BLOB values go through
//   Writer::string_base64(). Check is_binary_collation() first; write_text() asserts.
//
// Bytes that cannot be converted never fail and are never dropped: each becomes one U+FFFD,
// exactly where the server's conversion writes one '?'. That is: a byte that cannot start a
// character (or starts one that is cut short) is one U+FFFD and decoding resumes at the next
// byte; a well-formed character with no Unicode mapping is one U+FFFD for the whole character.
// The server writes '?' (0x3F) instead, so for such invalid stored bytes the JSON differs from
// a SELECT by that one character; U+FFFD keeps the output consistent with the writer's
// invalid-UTF-8 policy and distinguishable from a real '?'. UCS-2/UTF-16/UTF-32 code units that
// are not Unicode scalar values (lone surrogates, values above U+10FFFF) are one U+FFFD per
// unit, as is an incomplete unit at the end. (The server prints '?' per byte for those and then
// resynchronises byte by byte; ucs2 and utf32 surrogates it passes on as 3-byte encoded
// surrogates, which Writer::string() would turn into three U+FFFD.)
//
// CHAR padding. The server strips trailing pad spaces from CHAR(n) when it writes the row image
// (Field_string::pack() calls the charset's lengthsp(), so ucs2/utf16/utf32 lose whole 0x0020
// units) and again on SELECT (Field_string::val_str(), unless sql_mode PAD_CHAR_TO_FULL_LENGTH
// is set), so values from MySQL 5.6+ and MariaDB 10.x need nothing: with mariadb-binlog -v on
// 10.11, a ucs2 CHAR(4) 'A  ' is logged as 00 41. trim_char_padding() strips the same way for
// callers that do not want to depend on that; it is idempotent, so calling it on every CHAR
// column is safe (never on VARCHAR/TEXT, whose trailing spaces are data). BINARY(n) is the
// opposite case and not handled here: pack() strips its 0x00 padding but SELECT returns it
// (BINARY(4) 'ab' is logged as 61 62 and selected as 61 62 00 00), so the base64 path must pad
// BINARY(n) values back to n bytes with 0x00.
//
// Threads: the collation functions are thread-safe. A TextScratch belongs to one thread.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace cdc::ndjson {
class Writer;
}

namespace cdc::rowimage {

// The character sets MySQL 5.7-9.x and MariaDB 10.x-11.x know. Values are ours, not on the wire.
enum class Charset : std::uint8_t {
  unknown = 0,  // no metadata or an id we do not know: the bytes are taken as UTF-8
  binary,
  utf8mb3,  // "utf8" before MySQL 8.0.30 / MariaDB 10.6
  utf8mb4,
  ascii,
  latin1,    // MySQL's latin1 = Windows-1252 + U+0081 U+008D U+008F U+0090 U+009D
  latin2,    // ISO 8859-2
  latin5,    // ISO 8859-9
  latin7,    // ISO 8859-13
  cp1250,
  cp1251,
  cp1256,
  cp1257,
  cp850,
  cp852,
  cp866,
  koi8r,
  koi8u,
  greek,     // ISO 8859-7 (1987: no euro, 0xA1/0xA2 are U+02BD/U+02BC)
  hebrew,    // ISO 8859-8
  armscii8,
  geostd8,
  macroman,
  macce,
  swe7,      // 7-bit Swedish: not ASCII-compatible (0x40 is U+00C9, 0x5B is U+00C4, ...)
  dec8,
  hp8,
  keybcs2,
  tis620,
  ucs2,      // UCS-2, big-endian
  utf16,     // UTF-16, big-endian
  utf16le,
  utf32,     // UTF-32, big-endian
  big5,
  gbk,
  gb2312,
  gb18030,   // MySQL 5.7+ only
  sjis,
  cp932,
  ujis,      // EUC-JP
  eucjpms,   // EUC-JP with Microsoft's extensions
  euckr,     // EUC-KR with the CP949 (UHC) extension, as both servers implement it
};

inline constexpr std::size_t kCharsetCount = static_cast<std::size_t>(Charset::euckr) + 1;

// Collation 63, "binary": BINARY/VARBINARY/BLOB and every non-text column.
inline constexpr std::uint16_t kBinaryCollationId = 63;

struct CollationInfo {
  std::uint16_t id = 0;
  Charset charset = Charset::unknown;
  // As SHOW COLLATION prints it. Where MySQL and MariaDB name one id differently, MariaDB's name
  // (charset_collations.cpp notes the other); MySQL before 8.0.30 says utf8_ for utf8mb3_.
  std::string_view collation_name;
  std::string_view charset_name;
  std::uint8_t max_bytes_per_char = 0;  // MAXLEN in information_schema.CHARACTER_SETS
};

// The collation with this id, in either server's numbering (see charset_collations.cpp for the id
// ranges and where MySQL and MariaDB differ), or nullopt when no server we know defines it.
[[nodiscard]] std::optional<CollationInfo> collation_info(std::uint16_t id);

// The charset write_text() uses for this id: collation_info(id)->charset, except that ids in
// MariaDB's UCA-14.0 range 2048..3327 whose tailoring we do not know still give their charset,
// which the id encodes (a newer MariaDB may add tailorings). Charset::unknown otherwise.
[[nodiscard]] Charset charset_of(std::uint16_t id) noexcept;

// MariaDB 11.4.5+ accepts MySQL's utf8mb4_0900 collation ids 255..308 as aliases of its own
// utf8mb4_uca1400 NO PAD collations (MDEV-20912, strings/ctype-uca0900.c): the MariaDB
// collation an id from a MariaDB server stands for, or nullopt when the id is not such an alias
// (from a MySQL server, 255 is MySQL's own utf8mb4_0900_ai_ci, which orders differently).
[[nodiscard]] std::optional<std::uint16_t> mariadb_0900_alias_target(std::uint16_t id) noexcept;

[[nodiscard]] std::string_view charset_name(Charset charset) noexcept;  // "unknown" for unknown
[[nodiscard]] std::uint8_t max_bytes_per_char(Charset charset) noexcept;  // 0 for unknown

// True when bytes 00..7F of the charset are ASCII, so a plain ASCII value is its own UTF-8
// (write_text() then skips the conversion). False for binary, swe7 and the UCS/UTF-16/32 forms.
[[nodiscard]] bool is_ascii_compatible(Charset charset) noexcept;

[[nodiscard]] constexpr bool is_binary_collation(std::uint16_t id) noexcept {
  return id == kBinaryCollationId;
}

// Reusable state for the conversions: the output buffer and one lazily opened iconv descriptor
// per multi-byte charset. After warm-up converting a value allocates nothing. One per thread.
class TextScratch {
 public:
  TextScratch() = default;
  ~TextScratch();
  TextScratch(const TextScratch&) = delete;
  TextScratch& operator=(const TextScratch&) = delete;
  TextScratch(TextScratch&& other) noexcept;
  TextScratch& operator=(TextScratch&& other) noexcept;

  // Capacity of the reused output buffer; exposed so tests can check that it stops growing.
  [[nodiscard]] std::size_t capacity() const noexcept { return buf_.capacity(); }
  // True once iconv_open() failed for some charset (glibc's gconv modules are missing, e.g. a
  // static binary or a trimmed container). Text in that charset then comes out as U+FFFD for
  // every non-ASCII character; callers should warn once.
  [[nodiscard]] bool missing_converter() const noexcept { return missing_converter_; }

 private:
  friend std::string_view to_utf8(std::string_view raw, Charset charset, TextScratch& scratch);

  // The cached descriptor converting charset (named iconv_name for iconv_open) to UTF-8, opened
  // on first use; nullptr when it cannot be opened.
  void* iconv_handle(Charset charset, const char* iconv_name) noexcept;
  void close_all() noexcept;

  std::string buf_;  // its size() only grows; the current result is a prefix
  // glibc's iconv_t (a void*); nullptr = not opened yet, (void*)-1 = iconv_open() failed.
  std::array<void*, kCharsetCount> iconv_{};
  bool missing_converter_ = false;
};

// raw (bytes in charset) as UTF-8. For utf8mb3, utf8mb4 and unknown, and whenever the value is
// plain ASCII in an ASCII-compatible charset, this is raw itself, not validated: pass it to
// Writer::string(), which replaces ill-formed UTF-8. Otherwise the result is well-formed UTF-8
// in scratch, valid until the next conversion with the same scratch. charset must not be binary
// (asserts; without assertions its bytes come back unchanged).
[[nodiscard]] std::string_view to_utf8(std::string_view raw, Charset charset, TextScratch& scratch);

// Writes raw, stored in the column charset of collation_id, as one JSON string value:
// out.string(to_utf8(raw, charset_of(collation_id), scratch)). Never fails. collation_id must
// not be 63 (binary): the caller base64s those. Without assertions such a value is written with
// string_base64(), which is what the caller should have done.
void write_text(std::string_view raw, std::uint16_t collation_id, ndjson::Writer& out, TextScratch& scratch);
// The same with the charset already resolved, for callers that look it up once per column
// rather than once per value. charset must not be binary (the same assert and fallback).
void write_text(std::string_view raw, Charset charset, ndjson::Writer& out, TextScratch& scratch);

// raw without the trailing pad spaces of a CHAR(n) value in this charset: 0x20 bytes (every
// other charset, unknown included), or whole 00 20 (ucs2, utf16), 20 00 (utf16le) and
// 00 00 00 20 (utf32) units; a value that is not a whole number of units is left alone. A
// 0x20 byte is never part of a multi-byte character in any server charset. binary: raw.
[[nodiscard]] std::string_view trim_char_padding(std::string_view raw, Charset charset) noexcept;

namespace detail {

// Tables generated from the server's conversions; defined in charset_conversion_tables.cpp
// (the conversions) and charset_collations.cpp (the collation ids).
struct CodeOverride {
  std::uint16_t code;     // the two bytes of a character, first byte high
  std::uint16_t unicode;  // 0xFFFD where the server has no mapping (it prints '?')
};
using HalfTable = std::array<std::uint16_t, 128>;

// Bytes 0x80..0xFF of a single-byte charset (0xFFFD = unmapped), nullptr if charset is not one.
[[nodiscard]] const HalfTable* sbcs_upper_half(Charset charset) noexcept;
// Bytes 0x00..0x7F of swe7, the one single-byte charset that is not ASCII there.
[[nodiscard]] const HalfTable& swe7_lower_half() noexcept;
// big5 characters where the server's table differs from glibc's BIG5, sorted by code.
[[nodiscard]] std::span<const CodeOverride> big5_overrides() noexcept;

struct CollationRow {
  std::uint16_t id;
  Charset charset;
  std::string_view name;
};
// Every collation below MariaDB's UCA-14.0 range, sorted by id.
[[nodiscard]] std::span<const CollationRow> collation_rows() noexcept;

}  // namespace detail

}  // namespace cdc::rowimage
