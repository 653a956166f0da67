#include "rowimage/charset.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include <iconv.h>

#include "ndjson/writer.h"
#include "rowimage/charset_multibyte.h"
#include "rowimage/utf8_out.h"
#include "util/text.h"

namespace cdc::rowimage {

namespace {

using text_out::bytes_of;
using text_out::kReplacement;
using text_out::Utf8Out;

static_assert(std::is_same_v<iconv_t, void*>, "TextScratch stores glibc's iconv_t as void*");

enum class Method : std::uint8_t {
  utf8,     // passed through; Writer::string() replaces ill-formed UTF-8
  binary,   // not text
  sbcs,     // one byte, one table entry (charset_conversion_tables.cpp)
  ucs2,     // 2-byte big-endian units, no surrogate pairs
  utf16be,  // 2-byte big-endian units with surrogate pairs
  utf16le,
  utf32,    // 4-byte big-endian units
  iconv,    // multi-byte legacy charsets: our character split, glibc for the mapping
};

struct CharsetProps {
  std::string_view name;
  std::uint8_t max_bytes;
  Method method;
  // For Method::iconv: the glibc name, and whether iconv maps every byte 00..7F to itself, so
  // ASCII can stay inside the runs handed to iconv. glibc's SHIFT_JIS does not: it maps 5C and
  // 7E to U+00A5 and U+203E, so for sjis those two bytes are copied outside iconv.
  const char* iconv_name = nullptr;
  bool iconv_ascii_identity = true;
};

// Indexed by Charset. For the iconv charsets, the glibc name was chosen by converting every
// 1-, 2- and (ujis/eucjpms 8F xx xx) 3-byte sequence with MariaDB 10.11, e.g.
//   SELECT seq, HEX(CONVERT(CAST(UNHEX(LPAD(HEX(seq), 4, '0')) AS CHAR CHARACTER SET gbk)
//                          USING utf8mb4)) FROM seq_32768_to_65535
// and with each candidate; with the splitting and overrides below, these agree with the server
// on every sequence: big5 BIG5 (+ 461 overrides), gbk GBK, gb2312 EUC-CN, sjis SHIFT_JIS
// (+ ASCII kept out of iconv, 815F), cp932 CP932, ujis EUC-JP (+ A1C0, 8FA2B7 and the
// user-defined rows), eucjpms EUC-JP-MS, euckr CP949 (the servers' euckr has the UHC
// extension). gb18030 exists only in MySQL, so GB18030 (glibc 2.36 implements GB18030-2005 as
// MySQL does) could not be checked against a server; glibc 2.38+ follows GB18030-2022, which
// moves a few dozen characters out of the private use area.
constexpr std::array<CharsetProps, kCharsetCount> kProps = {{
    {"unknown", 0, Method::utf8},
    {"binary", 1, Method::binary},
    {"utf8mb3", 3, Method::utf8},
    {"utf8mb4", 4, Method::utf8},
    {"ascii", 1, Method::sbcs},
    {"latin1", 1, Method::sbcs},
    {"latin2", 1, Method::sbcs},
    {"latin5", 1, Method::sbcs},
    {"latin7", 1, Method::sbcs},
    {"cp1250", 1, Method::sbcs},
    {"cp1251", 1, Method::sbcs},
    {"cp1256", 1, Method::sbcs},
    {"cp1257", 1, Method::sbcs},
    {"cp850", 1, Method::sbcs},
    {"cp852", 1, Method::sbcs},
    {"cp866", 1, Method::sbcs},
    {"koi8r", 1, Method::sbcs},
    {"koi8u", 1, Method::sbcs},
    {"greek", 1, Method::sbcs},
    {"hebrew", 1, Method::sbcs},
    {"armscii8", 1, Method::sbcs},
    {"geostd8", 1, Method::sbcs},
    {"macroman", 1, Method::sbcs},
    {"macce", 1, Method::sbcs},
    {"swe7", 1, Method::sbcs},
    {"dec8", 1, Method::sbcs},
    {"hp8", 1, Method::sbcs},
    {"keybcs2", 1, Method::sbcs},
    {"tis620", 1, Method::sbcs},
    {"ucs2", 2, Method::ucs2},
    {"utf16", 4, Method::utf16be},
    {"utf16le", 4, Method::utf16le},
    {"utf32", 4, Method::utf32},
    {"big5", 2, Method::iconv, "BIG5"},
    {"gbk", 2, Method::iconv, "GBK"},
    {"gb2312", 2, Method::iconv, "EUC-CN"},
    {"gb18030", 4, Method::iconv, "GB18030"},
    {"sjis", 2, Method::iconv, "SHIFT_JIS", false},
    {"cp932", 2, Method::iconv, "CP932"},
    {"ujis", 3, Method::iconv, "EUC-JP"},
    {"eucjpms", 3, Method::iconv, "EUC-JP-MS"},
    {"euckr", 2, Method::iconv, "CP949"},
}};

constexpr std::size_t index_of(Charset charset) { return static_cast<std::size_t>(charset); }

const CharsetProps& props(Charset charset) {
  const std::size_t i = index_of(charset);
  return kProps[i < kProps.size() ? i : 0];
}

// ---- single-byte charsets

void convert_sbcs(std::string_view raw, Charset charset, Utf8Out& out) {
  const detail::HalfTable* upper = detail::sbcs_upper_half(charset);
  const detail::HalfTable* lower = charset == Charset::swe7 ? &detail::swe7_lower_half() : nullptr;
  assert(upper != nullptr);
  out.ensure(3 * raw.size());  // every table entry is in the BMP: at most 3 bytes
  for (const char byte : raw) {
    const auto c = static_cast<unsigned char>(byte);
    if (c >= 0x80) {
      out.put_code_point((*upper)[c - 0x80U]);
    } else {
      out.put_code_point(lower != nullptr ? (*lower)[c] : c);
    }
  }
}

// ---- UCS-2, UTF-16, UTF-32

template <bool kBigEndian>
char32_t unit16(const unsigned char* p) {
  return kBigEndian ? static_cast<char32_t>((p[0] << 8) | p[1]) : static_cast<char32_t>((p[1] << 8) | p[0]);
}

bool is_surrogate(char32_t u) { return u >= 0xD800 && u <= 0xDFFF; }

void convert_ucs2(std::string_view raw, Utf8Out& out) {
  const unsigned char* p = bytes_of(raw);
  std::size_t i = 0;
  for (; i + 2 <= raw.size(); i += 2) {
    const char32_t u = unit16<true>(p + i);
    out.code_point(is_surrogate(u) ? kReplacement : u);  // UCS-2 has no surrogate pairs
  }
  if (i < raw.size()) out.replacement();  // odd trailing byte
}

template <bool kBigEndian>
void convert_utf16(std::string_view raw, Utf8Out& out) {
  const unsigned char* p = bytes_of(raw);
  const std::size_t n = raw.size();
  std::size_t i = 0;
  while (i + 2 <= n) {
    const char32_t u = unit16<kBigEndian>(p + i);
    if (!is_surrogate(u)) {
      out.code_point(u);
      i += 2;
      continue;
    }
    if (u <= 0xDBFF && i + 4 <= n) {
      const char32_t low = unit16<kBigEndian>(p + i + 2);
      if (low >= 0xDC00 && low <= 0xDFFF) {
        out.code_point(0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00));
        i += 4;
        continue;
      }
    }
    // A lone surrogate is one bad unit; whatever follows it is decoded on its own.
    out.replacement();
    i += 2;
  }
  if (i < n) out.replacement();  // odd trailing byte
}

void convert_utf32(std::string_view raw, Utf8Out& out) {
  const unsigned char* p = bytes_of(raw);
  std::size_t i = 0;
  for (; i + 4 <= raw.size(); i += 4) {
    const char32_t u = (static_cast<char32_t>(p[i]) << 24) | (static_cast<char32_t>(p[i + 1]) << 16) |
                       (static_cast<char32_t>(p[i + 2]) << 8) | p[i + 3];
    out.code_point(u > 0x10FFFF || is_surrogate(u) ? kReplacement : u);
  }
  if (i < raw.size()) out.replacement();  // 1..3 bytes of a unit
}

}  // namespace

// ---- charset properties

std::string_view charset_name(Charset charset) noexcept { return props(charset).name; }

std::uint8_t max_bytes_per_char(Charset charset) noexcept { return props(charset).max_bytes; }

// ---- TextScratch

namespace {
iconv_t failed_iconv() { return reinterpret_cast<iconv_t>(static_cast<std::intptr_t>(-1)); }
}  // namespace

TextScratch::~TextScratch() { close_all(); }

TextScratch::TextScratch(TextScratch&& other) noexcept
    : buf_(std::move(other.buf_)), iconv_(other.iconv_), missing_converter_(other.missing_converter_) {
  other.iconv_.fill(nullptr);
  other.missing_converter_ = false;
}

TextScratch& TextScratch::operator=(TextScratch&& other) noexcept {
  if (this != &other) {
    close_all();
    buf_ = std::move(other.buf_);
    iconv_ = other.iconv_;
    missing_converter_ = other.missing_converter_;
    other.iconv_.fill(nullptr);
    other.missing_converter_ = false;
  }
  return *this;
}

void TextScratch::close_all() noexcept {
  for (void*& cd : iconv_) {
    if (cd != nullptr && cd != failed_iconv()) iconv_close(cd);
    cd = nullptr;
  }
}

void* TextScratch::iconv_handle(Charset charset, const char* iconv_name) noexcept {
  void*& slot = iconv_[index_of(charset)];
  if (slot == nullptr) {
    slot = iconv_open("UTF-8", iconv_name);
    if (slot == failed_iconv()) missing_converter_ = true;
  }
  return slot == failed_iconv() ? nullptr : slot;
}

// ---- conversion

std::string_view to_utf8(std::string_view raw, Charset charset, TextScratch& scratch) {
  const CharsetProps& p = props(charset);
  assert(p.method != Method::binary && "binary values are not text: use Writer::string_base64()");
  switch (p.method) {
    case Method::utf8:
    case Method::binary:
      return raw;
    case Method::sbcs:
    case Method::iconv:
      if (charset != Charset::swe7 && is_ascii(raw)) return raw;
      break;
    case Method::ucs2:
    case Method::utf16be:
    case Method::utf16le:
    case Method::utf32:
      break;
  }
  Utf8Out out(scratch.buf_);
  switch (p.method) {
    case Method::sbcs:
      convert_sbcs(raw, charset, out);
      break;
    case Method::ucs2:
      convert_ucs2(raw, out);
      break;
    case Method::utf16be:
      convert_utf16<true>(raw, out);
      break;
    case Method::utf16le:
      convert_utf16<false>(raw, out);
      break;
    case Method::utf32:
      convert_utf32(raw, out);
      break;
    case Method::iconv:
      convert_multibyte(raw, charset, !p.iconv_ascii_identity, scratch.iconv_handle(charset, p.iconv_name), out);
      break;
    case Method::utf8:
    case Method::binary:
      break;
  }
  return out.result();
}

bool is_ascii_compatible(Charset charset) noexcept {
  const Method method = props(charset).method;
  return method == Method::utf8 || method == Method::iconv || (method == Method::sbcs && charset != Charset::swe7);
}

void write_text(std::string_view raw, std::uint16_t collation_id, ndjson::Writer& out, TextScratch& scratch) {
  write_text(raw, charset_of(collation_id), out, scratch);
}

void write_text(std::string_view raw, Charset charset, ndjson::Writer& out, TextScratch& scratch) {
  assert(charset != Charset::binary && "collation 63 is binary: use Writer::string_base64()");
  if (charset == Charset::binary) {
    out.string_base64(raw);
    return;
  }
  // Plain ASCII in an ASCII-compatible charset is its own UTF-8 (to_utf8 would return raw): one
  // scan in the writer instead of to_utf8's and then the writer's.
  if (is_ascii_compatible(charset) && out.string_if_plain(raw)) return;
  out.string(to_utf8(raw, charset, scratch));
}

std::string_view trim_char_padding(std::string_view raw, Charset charset) noexcept {
  std::string_view unit = " ";
  switch (charset) {
    case Charset::binary:
      return raw;
    case Charset::ucs2:
    case Charset::utf16:
      unit = std::string_view("\0 ", 2);
      break;
    case Charset::utf16le:
      unit = std::string_view(" \0", 2);
      break;
    case Charset::utf32:
      unit = std::string_view("\0\0\0 ", 4);
      break;
    default:
      break;
  }
  if (unit.size() == 1) {
    // Most charsets: plain 0x20 bytes, the common case worth a simple loop.
    while (!raw.empty() && raw.back() == ' ') raw.remove_suffix(1);
    return raw;
  }
  // Whole units only: a value whose length is not a multiple of the unit is left alone.
  if (raw.size() % unit.size() != 0) return raw;
  while (raw.size() >= unit.size() && raw.substr(raw.size() - unit.size()) == unit) {
    raw.remove_suffix(unit.size());
  }
  return raw;
}

}  // namespace cdc::rowimage
