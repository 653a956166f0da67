// The multi-byte legacy character sets (rowimage/charset_multibyte.h): each value split into
// characters by the server's own lead/trail byte rules, ASCII copied, the rest converted by
// glibc iconv, and the code points where the server's table and iconv's differ put right.
#include "rowimage/charset_multibyte.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <iconv.h>

namespace cdc::rowimage {

namespace {

using text_out::bytes_of;
using text_out::kReplacement;
using text_out::Utf8Out;

bool in(unsigned char c, unsigned lo, unsigned hi) { return c >= lo && c <= hi; }

// Length of the character starting with the non-ASCII byte p[0], following the server's
// ismbchar/mbcharlen rules for the charset (strings/ctype-<charset>.c), or 0 when p[0] cannot
// start a character or the character is cut short by the end of the value or a bad byte.
std::size_t mb_length(Charset charset, const unsigned char* p, std::size_t left) {
  const unsigned char lead = p[0];
  const auto second = [&](auto&& ok) -> std::size_t { return left >= 2 && ok(p[1]) ? 2 : 0; };
  switch (charset) {
    case Charset::big5:  // A1..F9, then 40..7E or A1..FE
      if (!in(lead, 0xA1, 0xF9)) return 0;
      return second([](unsigned char c) { return in(c, 0x40, 0x7E) || in(c, 0xA1, 0xFE); });
    case Charset::gbk:  // 81..FE, then 40..7E or 80..FE
      if (!in(lead, 0x81, 0xFE)) return 0;
      return second([](unsigned char c) { return in(c, 0x40, 0x7E) || in(c, 0x80, 0xFE); });
    case Charset::gb2312:  // EUC-CN: A1..F7, then A1..FE
      if (!in(lead, 0xA1, 0xF7)) return 0;
      return second([](unsigned char c) { return in(c, 0xA1, 0xFE); });
    case Charset::gb18030:  // 81..FE then 40..7E / 80..FE, or 81..FE 30..39 81..FE 30..39
      if (!in(lead, 0x81, 0xFE) || left < 2) return 0;
      if (in(p[1], 0x30, 0x39)) {
        return left >= 4 && in(p[2], 0x81, 0xFE) && in(p[3], 0x30, 0x39) ? 4 : 0;
      }
      return in(p[1], 0x40, 0x7E) || in(p[1], 0x80, 0xFE) ? 2 : 0;
    case Charset::sjis:
    case Charset::cp932:  // A1..DF half-width katakana; 81..9F/E0..FC then 40..7E/80..FC
      if (in(lead, 0xA1, 0xDF)) return 1;
      if (!in(lead, 0x81, 0x9F) && !in(lead, 0xE0, 0xFC)) return 0;
      return second([](unsigned char c) { return in(c, 0x40, 0x7E) || in(c, 0x80, 0xFC); });
    case Charset::ujis:
    case Charset::eucjpms:  // 8E A1..DF; 8F A1..FE A1..FE; A1..FE A1..FE
      if (lead == 0x8E) return second([](unsigned char c) { return in(c, 0xA1, 0xDF); });
      if (lead == 0x8F) return left >= 3 && in(p[1], 0xA1, 0xFE) && in(p[2], 0xA1, 0xFE) ? 3 : 0;
      if (!in(lead, 0xA1, 0xFE)) return 0;
      return second([](unsigned char c) { return in(c, 0xA1, 0xFE); });
    case Charset::euckr:  // 81..FE, then 41..5A, 61..7A or 81..FE (CP949)
      if (!in(lead, 0x81, 0xFE)) return 0;
      return second([](unsigned char c) {
        return in(c, 0x41, 0x5A) || in(c, 0x61, 0x7A) || in(c, 0x81, 0xFE);
      });
    default:
      return 0;
  }
}

// The server's mapping where iconv's differs, or 0 to let iconv convert the character.
char32_t mb_override(Charset charset, const unsigned char* p, std::size_t length) {
  switch (charset) {
    case Charset::sjis:
      // FULLWIDTH REVERSE SOLIDUS in glibc; the server's sjis table gives '\'.
      return length == 2 && p[0] == 0x81 && p[1] == 0x5F ? U'\\' : 0;
    case Charset::ujis: {
      // User-defined rows F5..FE (and 8F F5..FE) are the private use area in the server
      // (U+E000.., 94 per row), unmapped in glibc's EUC-JP; two symbols are ASCII there.
      if (length == 2 && p[0] == 0xA1 && p[1] == 0xC0) return U'\\';
      if (length == 3 && p[1] == 0xA2 && p[2] == 0xB7) return U'~';
      const unsigned char* row = length == 3 ? p + 1 : p;
      if (length >= 2 && row[0] >= 0xF5) {
        const char32_t base = length == 3 ? 0xE3AC : 0xE000;
        return base + static_cast<char32_t>((row[0] - 0xF5) * 94 + (row[1] - 0xA1));
      }
      return 0;
    }
    case Charset::big5: {
      if (length != 2) return 0;
      const auto code = static_cast<std::uint16_t>((p[0] << 8) | p[1]);
      const auto table = detail::big5_overrides();
      const auto by_code = [](const detail::CodeOverride& o, std::uint16_t c) { return o.code < c; };
      const auto hit = std::lower_bound(table.begin(), table.end(), code, by_code);
      return hit != table.end() && hit->code == code ? hit->unicode : 0;
    }
    default:
      return 0;
  }
}

// Converts run, made only of ASCII that iconv maps to itself and whole characters that passed
// mb_length(), with cd; a character iconv cannot map is one U+FFFD.
void convert_run(iconv_t cd, Charset charset, std::string_view run, Utf8Out& out) {
  if (run.empty()) return;
  if (cd == nullptr) {  // no converter: keep ASCII, replace each character
    for (std::size_t i = 0; i < run.size();) {
      const auto c = static_cast<unsigned char>(run[i]);
      if (c < 0x80) {
        out.byte(c);
        ++i;
        continue;
      }
      out.replacement();
      i += std::max<std::size_t>(1, mb_length(charset, bytes_of(run) + i, run.size() - i));
    }
    return;
  }
  iconv(cd, nullptr, nullptr, nullptr, nullptr);  // back to the initial state
  // iconv() takes char** for its input but never writes through it.
  char* in = const_cast<char*>(run.data());
  std::size_t in_left = run.size();
  while (in_left > 0) {
    out.ensure(3 * in_left + 4);  // 3 bytes per input byte is the worst case (sjis A1..DF)
    char* to = out.tail();
    std::size_t to_left = out.room();
    const std::size_t done = iconv(cd, &in, &in_left, &to, &to_left);
    out.advance(static_cast<std::size_t>(to - out.tail()));
    if (done != static_cast<std::size_t>(-1)) break;
    if (errno == E2BIG) {  // cannot happen with 3 bytes per byte, but never loop without room
      out.ensure(out.room() + 64);
      continue;
    }
    // EILSEQ (no mapping) or EINVAL (iconv saw an incomplete character): one U+FFFD for the
    // character at `in`, then carry on after it.
    out.replacement();
    const std::size_t length = mb_length(charset, reinterpret_cast<const unsigned char*>(in), in_left);
    const std::size_t skip = std::min(in_left, std::max<std::size_t>(1, length));
    in += skip;
    in_left -= skip;
    iconv(cd, nullptr, nullptr, nullptr, nullptr);
  }
}

}  // namespace

void convert_multibyte(std::string_view raw, Charset charset, bool keep_5c_7e_out, void* iconv_handle,
                       text_out::Utf8Out& out) {
  const auto cd = static_cast<iconv_t>(iconv_handle);
  const unsigned char* p = bytes_of(raw);
  const std::size_t n = raw.size();
  out.ensure(n);
  std::size_t run_start = 0;
  const auto flush = [&](std::size_t end) {
    convert_run(cd, charset, raw.substr(run_start, end - run_start), out);
  };
  std::size_t i = 0;
  while (i < n) {
    if (p[i] < 0x80) {
      if (keep_5c_7e_out && (p[i] == 0x5C || p[i] == 0x7E)) {
        flush(i);
        out.byte(p[i]);
        run_start = i + 1;
      }
      ++i;
      continue;
    }
    const std::size_t length = mb_length(charset, p + i, n - i);
    if (length == 0) {  // cannot start a character here: one U+FFFD, resume at the next byte
      flush(i);
      out.replacement();
      run_start = ++i;
      continue;
    }
    if (const char32_t mapped = mb_override(charset, p + i, length); mapped != 0) {
      flush(i);
      out.code_point(mapped);
      i += length;
      run_start = i;
      continue;
    }
    i += length;  // stays in the run for iconv
  }
  flush(n);
}

}  // namespace cdc::rowimage
