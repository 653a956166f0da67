#pragma once

// The text of big5, gbk, gb2312, gb18030, sjis, cp932, ujis, eucjpms and euckr columns as
// UTF-8 (rowimage/charset.h says how each is checked against the server). Internal to
// rowimage/charset.cpp, which picks the conversion of each character set.

#include <string_view>

#include "rowimage/charset.h"
#include "rowimage/utf8_out.h"

namespace cdc::rowimage {

// Appends raw's text in `charset` to out. keep_5c_7e_out: bytes 5C and 7E are copied rather
// than handed to iconv, whose conversion of the charset does not map them to themselves (sjis);
// iconv_handle: the charset's open iconv_t (TextScratch::iconv_handle), or null when it
// could not be opened (ASCII is kept and every other character is then one U+FFFD).
void convert_multibyte(std::string_view raw, Charset charset, bool keep_5c_7e_out, void* iconv_handle,
                       text_out::Utf8Out& out);

}  // namespace cdc::rowimage
