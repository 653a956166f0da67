#include "order/key_order.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <utility>

#include "ndjson/json_scan.h"
#include "order/collation_weights.h"
#include "order/key_json_text.h"
#include "order/uca_table.h"
#include "rowimage/charset.h"
#include "rowimage/fixed_binary_values.h"
#include "util/base64.h"
#include "util/text.h"

namespace cdc::order {

// How a column's values become sort keys. Every encoding below is prefix-free, so a row key
// (the concatenation) compares column by column.
enum class KeyColumnOrder::Kind : std::uint8_t {
  signed_integer,    // 8 bytes big-endian, sign bit flipped (TINYINT..BIGINT, YEAR)
  unsigned_integer,  // 8 bytes big-endian
  decimal,           // sign byte, exponent byte, digit bytes, terminator (negatives complemented)
  datetime,          // DATE, DATETIME: the packed value, 8 bytes big-endian
  timestamp,         // TIMESTAMP: the same, the text ending in 'Z' (UTC)
  time,              // TIME: signed microseconds, as signed_integer
  binary,            // the bytes, 00 escaped as 00 FF, terminated by 00 00
  fixed_binary,      // MariaDB INET4/INET6/UUID: the value's bytes in the server's order (fixed size)
  // Text: one weight per character, then the PAD SPACE or NO PAD framing (append_weights).
  text_code_point,         // *_bin of utf8mb3/utf8mb4, utf8mb4_0900_bin: the code point
  text_latin1_byte,        // latin1_bin: the latin1 byte
  text_ascii_byte,         // ascii_bin: the byte, which must be ASCII
  text_general_ci,         // utf8mb3/utf8mb4 general_ci: MariaDB's 16-bit weight per BMP character
  text_latin1_swedish_ci,  // latin1_swedish_ci: one weight per latin1 byte
  // UCA collations: each level compared in turn, one PAD SPACE or NO PAD frame per level.
  text_uca,
};

namespace {

using Kind = KeyColumnOrder::Kind;
using detail::decode_utf8;
using detail::json_string;

constexpr std::string_view kKnownTypes =
    "integer, YEAR, DECIMAL, CHAR/VARCHAR/TEXT, BINARY/VARBINARY/BLOB, DATE, DATETIME, TIMESTAMP, TIME, INET4, INET6 "
    "or UUID";

// At most ~80 characters of a value, for messages.
std::string shown(std::string_view value) {
  if (value.size() <= 80) return std::string(value);
  return fmt::format("{}... ({} bytes)", value.substr(0, 72), value.size());
}

std::string_view kind_name(Kind kind) {
  switch (kind) {
    case Kind::signed_integer:
      return "signed integer";
    case Kind::unsigned_integer:
      return "unsigned integer";
    case Kind::decimal:
      return "DECIMAL";
    case Kind::datetime:
      return "DATE/DATETIME";
    case Kind::timestamp:
      return "TIMESTAMP";
    case Kind::time:
      return "TIME";
    case Kind::binary:
      return "binary string (base64)";
    case Kind::fixed_binary:
      return "INET4, INET6 or UUID (the server's text)";
    case Kind::text_code_point:
    case Kind::text_latin1_byte:
    case Kind::text_ascii_byte:
    case Kind::text_general_ci:
    case Kind::text_latin1_swedish_ci:
    case Kind::text_uca:
      return "text";
  }
  return "value";
}

Unexpected bad_value(std::string_view json, Kind kind, std::string_view why = {}) {
  return fail(Errc::corrupt_input, fmt::format("key value {} is not a valid {}{}{}", shown(json), kind_name(kind),
                                               why.empty() ? "" : ": ", why));
}

void put_u64(std::uint64_t value, std::string& out) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>((value >> shift) & 0xFFU));
}

void put_i64(std::int64_t value, std::string& out) {
  put_u64(static_cast<std::uint64_t>(value) ^ (std::uint64_t{1} << 63), out);
}

void put_be(std::uint32_t value, unsigned width, std::string& out) {
  for (unsigned i = width; i-- > 0;) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFFU));
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// ---- numbers ----

std::optional<std::uint64_t> parse_digits(std::string_view digits) {
  if (digits.empty() || digits.size() > 20) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : digits) {
    if (!is_digit(c)) return std::nullopt;
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return std::nullopt;
    value = value * 10 + d;
  }
  return value;
}

Result<void> append_integer(std::string_view json, Kind kind, std::string& out) {
  std::string_view text = ndjson::trim_json_space(json);
  const bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  if (text.size() > 1 && text.front() == '0') return bad_value(json, kind, "leading zero");
  const auto magnitude = parse_digits(text);
  if (!magnitude) return bad_value(json, kind);
  if (kind == Kind::unsigned_integer) {
    if (negative && *magnitude != 0) return bad_value(json, kind, "negative");
    put_u64(*magnitude, out);
    return {};
  }
  constexpr auto kLimit = std::uint64_t{1} << 63;
  if (negative ? *magnitude > kLimit : *magnitude >= kLimit) return bad_value(json, kind, "out of range");
  const std::uint64_t bits = negative ? ~*magnitude + 1 : *magnitude;  // two's complement
  put_u64(bits ^ kLimit, out);
  return {};
}

// DECIMAL. Sort key: a sign byte (01 negative, 02 zero, 03 positive); for non-zero values the
// decimal exponent E (value = 0.d1d2... x 10^E, d1 != 0) as one byte E + 128, the significant
// digits d1d2... without trailing zeros as bytes 01..0A, and a 00 terminator. The exponent
// orders magnitudes of different lengths, the terminator (below every digit) orders 0.1 before
// 0.15; a negative value's bytes after the sign are complemented, which reverses their order
// and keeps them prefix-free. "1.50" and "1.5", "-0.00" and "0" get the same key: the server
// compares DECIMAL values exactly, by value.
Result<void> append_decimal(std::string_view json, std::string& out) {
  const Kind kind = Kind::decimal;
  std::string_view text = ndjson::trim_json_space(json);
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') text = text.substr(1, text.size() - 2);
  const bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  const std::size_t dot = text.find('.');
  std::string_view integer = text.substr(0, dot);
  std::string_view fraction = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  if (integer.empty() || (dot != std::string_view::npos && fraction.empty())) return bad_value(json, kind);
  if (!std::all_of(integer.begin(), integer.end(), is_digit) ||
      !std::all_of(fraction.begin(), fraction.end(), is_digit))
    return bad_value(json, kind);
  if (integer.size() + fraction.size() > 100) return bad_value(json, kind, "too many digits");
  while (!integer.empty() && integer.front() == '0') integer.remove_prefix(1);
  while (!fraction.empty() && fraction.back() == '0') fraction.remove_suffix(1);
  std::string digits;
  int exponent = static_cast<int>(integer.size());
  digits.append(integer).append(fraction);
  if (integer.empty()) {  // 0.00ddd: the leading zeros of the fraction lower the exponent
    std::size_t zeros = 0;
    while (zeros < digits.size() && digits[zeros] == '0') ++zeros;
    digits.erase(0, zeros);
    exponent = -static_cast<int>(zeros);
  }
  if (digits.empty()) {
    out.push_back('\x02');
    return {};
  }
  const auto put = [&](unsigned byte) { out.push_back(static_cast<char>(negative ? (~byte & 0xFFU) : byte)); };
  out.push_back(negative ? '\x01' : '\x03');
  put(static_cast<unsigned>(exponent + 128));
  for (const char d : digits) put(static_cast<unsigned>(d - '0') + 1);
  put(0);
  return {};
}

// ---- temporal ----

// Exactly n digits at text[at...]; advances at.
std::optional<std::uint32_t> fixed_digits(std::string_view text, std::size_t& at, std::size_t n) {
  if (at + n > text.size()) return std::nullopt;
  std::uint32_t value = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (!is_digit(text[i])) return std::nullopt;
    value = value * 10 + static_cast<std::uint32_t>(text[i] - '0');
  }
  at += n;
  return value;
}

// ".ffffff" (1..6 digits) at text[at...], as microseconds; 0 when there is none.
std::optional<std::uint32_t> fraction_micros(std::string_view text, std::size_t& at) {
  if (at == text.size() || text[at] != '.') return 0U;
  ++at;
  std::size_t n = 0;
  std::uint32_t value = 0;
  while (at < text.size() && is_digit(text[at]) && n < 6) {
    value = value * 10 + static_cast<std::uint32_t>(text[at] - '0');
    ++at, ++n;
  }
  if (n == 0) return std::nullopt;
  for (std::size_t k = n; k < 6; ++k) value *= 10;
  return value;
}

// DATE "YYYY-MM-DD", DATETIME "YYYY-MM-DD hh:mm:ss[.f]", TIMESTAMP the same with a 'Z' (UTC, so
// the order is the instants' order). Zero dates and zero parts ("0000-00-00") are kept: they
// sort first, as the server's packed form (my_time.h TIME_to_longlong_datetime_packed) does.
Result<void> append_datetime(std::string_view json, bool timestamp, std::string& out) {
  const Kind kind = timestamp ? Kind::timestamp : Kind::datetime;
  auto text = json_string(ndjson::trim_json_space(json));
  if (!text) return bad_value(json, kind, "not a JSON string");
  std::string_view s = *text;
  if (timestamp && !s.empty() && s.back() == 'Z') s.remove_suffix(1);
  std::size_t at = 0;
  const auto year = fixed_digits(s, at, 4);
  const bool dash1 = at < s.size() && s[at] == '-';
  at += dash1 ? 1 : 0;
  const auto month = fixed_digits(s, at, 2);
  const bool dash2 = at < s.size() && s[at] == '-';
  at += dash2 ? 1 : 0;
  const auto day = fixed_digits(s, at, 2);
  if (!year || !month || !day || !dash1 || !dash2 || *month > 12 || *day > 31) return bad_value(json, kind);
  std::uint32_t hour = 0, minute = 0, second = 0, micros = 0;
  if (at < s.size()) {
    if (s[at] != ' ' && s[at] != 'T') return bad_value(json, kind);
    ++at;
    const auto h = fixed_digits(s, at, 2);
    const bool colon1 = at < s.size() && s[at] == ':';
    at += colon1 ? 1 : 0;
    const auto m = fixed_digits(s, at, 2);
    const bool colon2 = at < s.size() && s[at] == ':';
    at += colon2 ? 1 : 0;
    const auto sec = fixed_digits(s, at, 2);
    const auto frac = fraction_micros(s, at);
    if (!h || !m || !sec || !frac || !colon1 || !colon2 || *h > 23 || *m > 59 || *sec > 59 || at != s.size())
      return bad_value(json, kind);
    hour = *h, minute = *m, second = *sec, micros = *frac;
  }
  const std::uint64_t days = (std::uint64_t{*year} * 13 + *month) * 32 + *day;
  const std::uint64_t seconds = ((days * 24 + hour) * 60 + minute) * 60 + second;
  put_u64(seconds * 1'000'000 + micros, out);
  return {};
}

// TIME "[-]h..h:mm:ss[.f]", hours up to 838: signed microseconds.
Result<void> append_time(std::string_view json, std::string& out) {
  const Kind kind = Kind::time;
  auto text = json_string(ndjson::trim_json_space(json));
  if (!text) return bad_value(json, kind, "not a JSON string");
  std::string_view s = *text;
  const bool negative = !s.empty() && s.front() == '-';
  if (negative) s.remove_prefix(1);
  std::size_t at = 0;
  std::uint32_t hours = 0;
  std::size_t hour_digits = 0;
  while (at < s.size() && is_digit(s[at]) && hour_digits < 4) {
    hours = hours * 10 + static_cast<std::uint32_t>(s[at] - '0');
    ++at, ++hour_digits;
  }
  const bool colon1 = at < s.size() && s[at] == ':';
  at += colon1 ? 1 : 0;
  const auto minute = fixed_digits(s, at, 2);
  const bool colon2 = at < s.size() && s[at] == ':';
  at += colon2 ? 1 : 0;
  const auto second = fixed_digits(s, at, 2);
  const auto micros = fraction_micros(s, at);
  if (hour_digits < 2 || !colon1 || !colon2 || !minute || !second || !micros || at != s.size() || hours > 838 ||
      *minute > 59 || *second > 59)
    return bad_value(json, kind);
  const auto magnitude =
      static_cast<std::int64_t>(((std::uint64_t{hours} * 60 + *minute) * 60 + *second) * 1'000'000 + *micros);
  put_i64(negative ? -magnitude : magnitude, out);
  return {};
}

// ---- strings ----

// Variable-length bytes: 00 escaped as 00 FF, then 00 00. memcmp order is the bytes' order
// with a shorter prefix first, as MariaDB compares VARBINARY/BLOB ('a' < 'a\0').
void append_escaped_bytes(std::string_view bytes, std::string& out) {
  for (const char c : bytes) {
    out.push_back(c);
    if (c == '\0') out.push_back('\xFF');
  }
  out.append(2, '\0');
}

// latin1 (MariaDB's: cp1252 plus U+0081 U+008D U+008F U+0090 U+009D) back from Unicode.
std::optional<std::uint8_t> latin1_byte(std::uint32_t cp) {
  if (cp < 0x80) return static_cast<std::uint8_t>(cp);
  static const auto table = [] {
    std::array<std::pair<std::uint32_t, std::uint8_t>, 128> pairs{};
    const auto* upper = rowimage::detail::sbcs_upper_half(rowimage::Charset::latin1);
    for (std::size_t i = 0; i < 128; ++i)
      pairs[i] = {upper != nullptr ? (*upper)[i] : 0xFFFDU, static_cast<std::uint8_t>(0x80 + i)};
    std::sort(pairs.begin(), pairs.end());
    return pairs;
  }();
  const auto it = std::lower_bound(table.begin(), table.end(), std::pair<std::uint32_t, std::uint8_t>{cp, 0});
  if (it == table.end() || it->first != cp || cp == 0xFFFD) return std::nullopt;
  return it->second;
}

// One weight per character, `width` bytes each, then the framing of the collation's pad
// attribute. NO PAD: 01 weight per character, 00 at the end (a prefix sorts first).
// PAD SPACE (the shorter value compares as if padded with spaces, so 'a' = 'a  ' but
// 'a\t' < 'a', as MariaDB's strnncollsp does; strings/strcoll.inl): trailing space weights are
// dropped, and the rest is cut into groups "k space weights, then one other weight c", each
// written as 01 k c when c sorts below the space, 03 (~k) c when above, and 02 ends the value.
// Two values first differ in some group; the one whose group has fewer spaces meets its c where
// the other has a space, so it is smaller when c < space and larger when c > space; the end
// (an endless run of spaces) lies between the two sides.
void append_weights(const std::vector<std::uint32_t>& weights, unsigned width, bool pad_space, std::uint32_t space,
                    std::string& out) {
  if (!pad_space) {
    for (const std::uint32_t w : weights) {
      out.push_back('\x01');
      put_be(w, width, out);
    }
    out.push_back('\0');
    return;
  }
  std::size_t end = weights.size();
  while (end > 0 && weights[end - 1] == space) --end;
  std::uint32_t run = 0;
  for (std::size_t i = 0; i < end; ++i) {
    const std::uint32_t w = weights[i];
    if (w == space) {
      ++run;
      continue;
    }
    if (w < space) {
      out.push_back('\x01');
      put_be(run, 4, out);
    } else {
      out.push_back('\x03');
      put_be(~run, 4, out);
    }
    put_be(w, width, out);
    run = 0;
  }
  out.push_back('\x02');
}

// UCA: the weights of each compared level, framed as append_weights does, one level after the
// other. The server compares level by level (the whole string's primary weights first, then its
// secondary ones), so the frames concatenated, each prefix-free, compare the same way. A MariaDB
// NO PAD collation is NO PAD at the primary level only: MariaDB pads the accent and case levels
// with the space's weight all the same (utf8mb4_uca1400_nopad_ai_cs finds 'a' = 'a' + U+0301,
// whose tertiary weights are 0002 and 0002 0002). MySQL's 0900 collations are NO PAD at every
// level: its scanner compares each level's weights to the end of both strings, padding none
// (strings/ctype-uca.cc, uca_scanner_900), so 'a' < 'a ' and 'a' < 'a' + U+0301 under _as_ci.
void append_uca_levels(const std::vector<std::uint32_t>& chars, const KeyColumnOrder& order, std::string& out) {
  const auto version = static_cast<detail::UcaVersion>(order.uca_version);
  const auto& table = detail::UcaTable::get(version);
  const bool pads_above_primary = version != detail::UcaVersion::mysql0900;
  thread_local std::vector<std::uint32_t> weights;
  for (unsigned level = 0; level < table.levels(); ++level) {
    if ((order.uca_levels & (1U << level)) == 0) continue;
    weights.clear();
    table.append_weights(chars, level, weights);
    append_weights(weights, 2, order.pad_space || (level > 0 && pads_above_primary), table.space_weight(level), out);
  }
}

Result<void> append_text(std::string_view json, const KeyColumnOrder& order, std::string& out) {
  const Kind kind = order.kind;
  const bool pad_space = order.pad_space;
  auto text = json_string(ndjson::trim_json_space(json));
  if (!text) return bad_value(json, kind, "not a JSON string");
  thread_local std::vector<std::uint32_t> chars;
  if (!decode_utf8(*text, chars)) return bad_value(json, kind, "ill-formed UTF-8");
  if (kind == Kind::text_uca) {
    append_uca_levels(chars, order, out);
    return {};
  }
  unsigned width = 3;
  std::uint32_t space = 0x20;
  switch (kind) {
    case Kind::text_code_point:
      break;
    case Kind::text_latin1_byte:
    case Kind::text_ascii_byte:
    case Kind::text_latin1_swedish_ci:
      width = 1;
      for (std::uint32_t& c : chars) {
        const auto byte = latin1_byte(c);
        if (!byte || (kind == Kind::text_ascii_byte && *byte >= 0x80))
          return bad_value(json, kind,
                           fmt::format("U+{:04X} is not in the column's character set (was it stored as an "
                                       "invalid byte?)",
                                       c));
        c = kind == Kind::text_latin1_swedish_ci ? detail::latin1_swedish_ci_weight(*byte) : *byte;
      }
      if (kind == Kind::text_latin1_swedish_ci) space = detail::latin1_swedish_ci_weight(0x20);
      break;
    case Kind::text_general_ci:
      width = 2;
      for (std::uint32_t& c : chars) c = detail::general_ci_weight(c);
      space = detail::general_ci_weight(0x20);
      break;
    default:
      return fail(Errc::internal, "append_text on a non-text column");
  }
  append_weights(chars, width, pad_space, space, out);
  return {};
}

// ---- make ----

Unexpected unsupported_collation(std::uint32_t collation_id) {
  const auto info =
      collation_id <= 0xFFFF ? rowimage::collation_info(static_cast<std::uint16_t>(collation_id)) : std::nullopt;
  const std::string name =
      info ? fmt::format("{} (id {})", info->collation_name, collation_id) : fmt::format("id {}", collation_id);
  return fail(Errc::unsupported, fmt::format("key column collation {}: cdc-merge cannot order it without the server; "
                                             "plan the table with --chunk-key on a numeric, binary or _bin column",
                                             name));
}

struct TextCollation {
  Kind kind;
  bool pad_space;
  detail::UcaVersion uca_version = detail::UcaVersion::uca1400;
  std::uint8_t uca_levels = 0;
};

// utf8mb3/utf8mb4 UCA collations, by name without the charset: unicode_ci, unicode_520_ci and
// their _nopad_ variants (primary level only), uca1400_[nopad_]{ai,as}_{ci,cs} (ai_ci: level 1;
// as: + accents; cs: + case), and MySQL's 0900_ai_ci (level 1), 0900_as_ci (levels 1-2) and
// 0900_as_cs (levels 1-3), all NO PAD (MySQL reference manual, "Unicode Character Sets"; not
// its language collations, utf8mb4_xx_0900_*, which tailor the order).
std::optional<TextCollation> uca_collation(std::string_view name) {
  using detail::UcaVersion;
  constexpr std::uint8_t kPrimary = 1;
  if (name == "0900_ai_ci") return TextCollation{Kind::text_uca, false, UcaVersion::mysql0900, kPrimary};
  if (name == "0900_as_ci") return TextCollation{Kind::text_uca, false, UcaVersion::mysql0900, kPrimary | 2U};
  if (name == "0900_as_cs") return TextCollation{Kind::text_uca, false, UcaVersion::mysql0900, kPrimary | 2U | 4U};
  if (name == "unicode_ci") return TextCollation{Kind::text_uca, true, UcaVersion::unicode400, kPrimary};
  if (name == "unicode_nopad_ci") return TextCollation{Kind::text_uca, false, UcaVersion::unicode400, kPrimary};
  if (name == "unicode_520_ci") return TextCollation{Kind::text_uca, true, UcaVersion::unicode520, kPrimary};
  if (name == "unicode_520_nopad_ci") return TextCollation{Kind::text_uca, false, UcaVersion::unicode520, kPrimary};
  if (!name.starts_with("uca1400_")) return std::nullopt;
  name.remove_prefix(8);
  const bool nopad = name.starts_with("nopad_");
  if (nopad) name.remove_prefix(6);
  if (name.size() != 5 || name[2] != '_' || name[0] != 'a' || name[3] != 'c') return std::nullopt;
  const bool accents = name[1] == 's';
  const bool cases = name[4] == 's';
  if ((!accents && name[1] != 'i') || (!cases && name[4] != 'i')) return std::nullopt;
  const auto levels = static_cast<std::uint8_t>(kPrimary | (accents ? 2U : 0U) | (cases ? 4U : 0U));
  return TextCollation{Kind::text_uca, !nopad, UcaVersion::uca1400, levels};
}

std::optional<TextCollation> text_collation(std::uint32_t collation_id) {
  if (collation_id > 0xFFFF) return std::nullopt;
  const auto info = rowimage::collation_info(static_cast<std::uint16_t>(collation_id));
  if (!info) return std::nullopt;
  const std::string_view name = info->collation_name;
  using rowimage::Charset;
  const bool utf8 = info->charset == Charset::utf8mb3 || info->charset == Charset::utf8mb4;
  // The binary-ordered ones: utf8mb3_bin, utf8mb4_bin (PAD SPACE), utf8mb3_nopad_bin,
  // utf8mb4_nopad_bin and MySQL's utf8mb4_0900_bin (NO PAD); latin1/ascii likewise.
  const bool nopad_bin = name.ends_with("_nopad_bin") || name == "utf8mb4_0900_bin";
  const bool pad_bin = name == "utf8mb3_bin" || name == "utf8mb4_bin" || name == "utf8_bin" || name == "latin1_bin" ||
                       name == "ascii_bin";
  if (pad_bin || nopad_bin) {
    if (utf8) return TextCollation{Kind::text_code_point, pad_bin};
    if (info->charset == Charset::latin1) return TextCollation{Kind::text_latin1_byte, pad_bin};
    if (info->charset == Charset::ascii) return TextCollation{Kind::text_ascii_byte, pad_bin};
    return std::nullopt;
  }
  if (detail::have_collation_weights()) {
    if (name == "utf8mb3_general_ci" || name == "utf8mb4_general_ci" || name == "utf8_general_ci")
      return TextCollation{Kind::text_general_ci, true};
    if (name == "utf8mb3_general_nopad_ci" || name == "utf8mb4_general_nopad_ci")
      return TextCollation{Kind::text_general_ci, false};
    if (name == "latin1_swedish_ci") return TextCollation{Kind::text_latin1_swedish_ci, true};
    if (name == "latin1_swedish_nopad_ci") return TextCollation{Kind::text_latin1_swedish_ci, false};
  }
  if (utf8) {
    const auto uca = uca_collation(name.substr(name.find('_') + 1));
    if (uca && detail::UcaTable::get(uca->uca_version).ok()) return uca;
  }
  return std::nullopt;
}

}  // namespace

Result<KeyColumnOrder> KeyColumnOrder::make(std::string_view key_type, std::uint32_t collation_id) {
  const std::string type = to_lower(ndjson::trim_json_space(key_type));
  const std::string base = type.substr(0, type.find_first_of("( "));
  const bool is_unsigned = type.find("unsigned") != std::string::npos;
  KeyColumnOrder order;
  order.collation_id = collation_id;
  if (base == "tinyint" || base == "smallint" || base == "mediumint" || base == "int" || base == "integer" ||
      base == "bigint") {
    order.kind = is_unsigned ? Kind::unsigned_integer : Kind::signed_integer;
  } else if (base == "year") {
    order.kind = Kind::signed_integer;
  } else if (base == "decimal" || base == "numeric" || base == "dec" || base == "fixed") {
    order.kind = Kind::decimal;
  } else if (base == "date" || base == "datetime") {
    order.kind = Kind::datetime;
  } else if (base == "timestamp") {
    order.kind = Kind::timestamp;
  } else if (base == "time") {
    order.kind = Kind::time;
  } else if (base == "binary" || base == "varbinary" || base == "tinyblob" || base == "blob" || base == "mediumblob" ||
             base == "longblob") {
    order.kind = Kind::binary;
  } else if (const FixedBinaryType fixed = rowimage::fixed_binary_type_named(base); fixed != FixedBinaryType::none) {
    order.kind = Kind::fixed_binary;
    order.fixed_binary = fixed;
  } else if (base == "char" || base == "varchar" || base == "tinytext" || base == "text" || base == "mediumtext" ||
             base == "longtext") {
    if (collation_id == rowimage::kBinaryCollationId) {
      order.kind = Kind::binary;
    } else {
      const auto text = text_collation(collation_id);
      if (!text) return unsupported_collation(collation_id);
      order.kind = text->kind;
      order.pad_space = text->pad_space;
      order.uca_version = static_cast<std::uint8_t>(text->uca_version);
      order.uca_levels = text->uca_levels;
    }
  } else {
    return fail(Errc::unsupported,
                fmt::format("key column type {}: cdc-merge orders only {} key columns", key_type, kKnownTypes));
  }
  return order;
}

bool KeyColumnOrder::is_integer(bool is_unsigned) const noexcept {
  return kind == (is_unsigned ? Kind::unsigned_integer : Kind::signed_integer);
}

Result<void> KeyColumnOrder::append_sort_key(std::string_view json_value, std::string& out) const {
  switch (kind) {
    case Kind::signed_integer:
    case Kind::unsigned_integer:
      return append_integer(json_value, kind, out);
    case Kind::decimal:
      return append_decimal(json_value, out);
    case Kind::datetime:
      return append_datetime(json_value, false, out);
    case Kind::timestamp:
      return append_datetime(json_value, true, out);
    case Kind::time:
      return append_time(json_value, out);
    case Kind::binary: {
      auto text = json_string(ndjson::trim_json_space(json_value));
      if (!text) return bad_value(json_value, kind, "not a JSON string");
      auto bytes = decode_base64(*text);
      if (!bytes) return bad_value(json_value, kind, "not base64");
      append_escaped_bytes(*bytes, out);
      return {};
    }
    case Kind::fixed_binary: {
      // The server's text has nothing to escape, so the quotes come off without unescaping
      // (an escape fails the parse); fixed-size sort keys are prefix-free as they are.
      const std::string_view quoted = ndjson::trim_json_space(json_value);
      rowimage::FixedBinaryBytes bytes;
      if (quoted.size() < 2 || quoted.front() != '"' || quoted.back() != '"' ||
          !rowimage::parse_fixed_binary_text(fixed_binary, quoted.substr(1, quoted.size() - 2), bytes))
        return bad_value(json_value, kind);
      rowimage::to_server_order(fixed_binary, bytes);
      out.append(reinterpret_cast<const char*>(bytes.data()), rowimage::fixed_binary_size(fixed_binary));
      return {};
    }
    case Kind::text_code_point:
    case Kind::text_latin1_byte:
    case Kind::text_ascii_byte:
    case Kind::text_general_ci:
    case Kind::text_latin1_swedish_ci:
    case Kind::text_uca:
      return append_text(json_value, *this, out);
  }
  return fail(Errc::internal, "KeyColumnOrder without a kind");
}

Result<void> append_row_sort_key(std::span<const KeyColumnOrder> columns, std::span<const std::string_view> values,
                                 std::string& out) {
  if (columns.size() != values.size())
    return fail(Errc::corrupt_input,
                fmt::format("key has {} values for {} key columns", values.size(), columns.size()));
  for (std::size_t i = 0; i < columns.size(); ++i) {
    auto done = columns[i].append_sort_key(values[i], out);
    if (!done) return fail(std::move(done).error().with_context(fmt::format("key column {}", i + 1)));
  }
  return {};
}

}  // namespace cdc::order
