#pragma once

// The UTF-8 a text conversion builds (rowimage/charset.cpp and charset_multibyte.cpp): code
// points appended to a scratch buffer that only grows, so that after warm-up nothing is
// allocated. Internal to the text conversion.

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

namespace cdc::rowimage::text_out {

inline constexpr char32_t kReplacement = 0xFFFD;

inline const unsigned char* bytes_of(std::string_view text) {
  return reinterpret_cast<const unsigned char*>(text.data());
}

// Appends UTF-8 to the scratch buffer. The buffer's size() is the window in use and only grows,
// so after warm-up nothing is allocated; len is the length of the current result.
class Utf8Out {
 public:
  explicit Utf8Out(std::string& buf) : buf_(buf) {}

  void ensure(std::size_t more) {
    if (len_ + more > buf_.size()) buf_.resize(std::max({len_ + more, buf_.size() * 2, std::size_t{64}}));
  }
  void byte(unsigned char c) {
    ensure(1);
    buf_[len_++] = static_cast<char>(c);
  }
  // cp must be a Unicode scalar value (not a surrogate, at most U+10FFFF).
  void code_point(char32_t cp) {
    ensure(4);
    put_code_point(cp);
  }
  // code_point() without the room check, for loops that ensure() their worst case up front.
  void put_code_point(char32_t cp) {
    char* p = buf_.data() + len_;
    if (cp < 0x80) {
      p[0] = static_cast<char>(cp);
      len_ += 1;
    } else if (cp < 0x800) {
      p[0] = static_cast<char>(0xC0U | (cp >> 6));
      p[1] = static_cast<char>(0x80U | (cp & 0x3FU));
      len_ += 2;
    } else if (cp < 0x10000) {
      p[0] = static_cast<char>(0xE0U | (cp >> 12));
      p[1] = static_cast<char>(0x80U | ((cp >> 6) & 0x3FU));
      p[2] = static_cast<char>(0x80U | (cp & 0x3FU));
      len_ += 3;
    } else {
      p[0] = static_cast<char>(0xF0U | (cp >> 18));
      p[1] = static_cast<char>(0x80U | ((cp >> 12) & 0x3FU));
      p[2] = static_cast<char>(0x80U | ((cp >> 6) & 0x3FU));
      p[3] = static_cast<char>(0x80U | (cp & 0x3FU));
      len_ += 4;
    }
  }
  void replacement() { code_point(kReplacement); }

  // Room for a writer that fills the buffer itself (iconv): where to write and how much fits.
  char* tail() { return buf_.data() + len_; }
  std::size_t room() const { return buf_.size() - len_; }
  void advance(std::size_t written) { len_ += written; }

  std::string_view result() const { return {buf_.data(), len_}; }

 private:
  std::string& buf_;
  std::size_t len_ = 0;
};

}  // namespace cdc::rowimage::text_out
