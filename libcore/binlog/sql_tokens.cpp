#include "binlog/sql_tokens.h"

#include <cctype>

namespace cdc::binlog {

void SqlTokens::skip_space() noexcept {
  for (;;) {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (text_.substr(pos_).starts_with("/*!")) {
      pos_ += 3;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      continue;
    }
    if (text_.substr(pos_).starts_with("/*")) {
      const std::size_t end = text_.find("*/", pos_ + 2);
      pos_ = end == std::string_view::npos ? text_.size() : end + 2;
      continue;
    }
    if (text_.substr(pos_).starts_with("*/")) {  // the end of a versioned comment
      pos_ += 2;
      continue;
    }
    if (text_.substr(pos_).starts_with("-- ") || text_.substr(pos_).starts_with("#")) {
      const std::size_t end = text_.find('\n', pos_);
      pos_ = end == std::string_view::npos ? text_.size() : end + 1;
      continue;
    }
    return;
  }
}

bool SqlTokens::keyword(std::string_view word) noexcept {
  skip_space();
  if (text_.size() - pos_ < word.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(text_[pos_ + i])) != word[i]) return false;
  const std::size_t end = pos_ + word.size();
  if (end < text_.size() &&
      (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_' || text_[end] == '$'))
    return false;
  pos_ = end;
  return true;
}

void SqlTokens::if_exists() noexcept {
  if (!keyword("IF")) return;
  keyword("NOT");
  keyword("EXISTS");
}

bool SqlTokens::symbol(char c) noexcept {
  skip_space();
  if (pos_ < text_.size() && text_[pos_] == c) {
    ++pos_;
    return true;
  }
  return false;
}

std::string SqlTokens::identifier() {
  skip_space();
  std::string out;
  if (pos_ < text_.size() && text_[pos_] == '`') {
    ++pos_;
    while (pos_ < text_.size()) {
      if (text_[pos_] == '`') {
        if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '`') {
          out += '`';
          pos_ += 2;
          continue;
        }
        ++pos_;
        break;
      }
      out += text_[pos_++];
    }
    return out;
  }
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || static_cast<unsigned char>(c) >= 0x80))
      break;
    out += c;
    ++pos_;
  }
  return out;
}

}  // namespace cdc::binlog
