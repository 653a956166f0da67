// The text parsers of MysqlGtidSet and Gtid. The grammar and where it differs from the
// server's Gtid_set::add_gtid_text (sql/rpl_gtid_set.cc) are described in mysql_gtid_set.h.

#include <fmt/format.h>

#include "gtid/mysql_gtid_set.h"
#include "gtid/text_helpers.h"

namespace cdc::gtid {

namespace {

constexpr std::string_view kUuidExample = "3e11fa47-71ca-11e1-9e33-c80aa9429562";

constexpr bool is_hex(char c) noexcept {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
using detail::is_tag_char;
using detail::is_tag_start;

class Parser : public detail::TextCursor {
 public:
  using TextCursor::TextCursor;
  [[nodiscard]] bool at_number() const noexcept { return pos_ < text_.size() && is_digit(text_[pos_]); }
  [[nodiscard]] bool at_tag() const noexcept { return pos_ < text_.size() && is_tag_start(text_[pos_]); }

  Result<Uuid> uuid() {
    const std::size_t start = pos_;
    std::size_t end = start;
    while (end < text_.size() && (is_hex(text_[end]) || text_[end] == '-')) ++end;
    const std::string_view token = text_.substr(start, end - start);
    if (token.empty()) return expected(fmt::format("a UUID like {}", kUuidExample));
    if (token.size() < Uuid::kTextLength && end < text_.size() && !is_space(text_[end]) &&
        text_[end] != ':' && text_[end] != ',') {
      return error_at(end, fmt::format("expected a hex digit or '-' in the UUID, found {}",
                                       detail::describe_char(text_[end])));
    }
    if (token.size() != Uuid::kTextLength) {
      return error_at(start, fmt::format("expected a UUID of 36 characters like {}, found '{}' ({} characters)",
                                         kUuidExample, detail::excerpt(token, 40), token.size()));
    }
    auto parsed = Uuid::parse(token);
    if (!parsed) return error_at(start, fmt::format("invalid UUID '{}': {}", token, parsed.error().message));
    pos_ = end;
    return parsed;
  }

  // Decimal digits, 1..kMaxGno. what names the number for messages.
  Result<std::uint64_t> number(std::string_view what) {
    const std::size_t start = pos_;
    std::size_t end = start;
    while (end < text_.size() && is_digit(text_[end])) ++end;
    const std::string_view digits = text_.substr(start, end - start);
    if (digits.empty()) return expected(what);
    if (digits == "0") return error_at(start, "transaction numbers start at 1, found 0");
    if (digits.front() == '0') {
      return error_at(start, fmt::format("number '{}' has a leading zero (the server would read it as octal)",
                                         detail::excerpt(digits)));
    }
    std::uint64_t value = 0;
    bool too_large = digits.size() > 19;  // 19 digits always fit in 64 bits
    for (std::size_t i = 0; !too_large && i < digits.size(); ++i) {
      value = value * 10 + static_cast<std::uint64_t>(digits[i] - '0');
    }
    if (too_large || value > kMaxGno) {
      return error_at(start, fmt::format("transaction number {} is larger than the maximum {}",
                                         detail::excerpt(digits, 30), kMaxGno));
    }
    pos_ = end;
    return value;
  }

  Result<std::string> tag() {
    const std::size_t start = pos_;
    std::size_t end = start;
    while (end < text_.size() && is_tag_char(text_[end])) ++end;
    const std::string_view token = text_.substr(start, end - start);
    if (token.size() > kMaxTagLength) {
      return error_at(start, fmt::format("tag '{}' has {} characters, more than {}", detail::excerpt(token, 40),
                                         token.size(), kMaxTagLength));
    }
    pos_ = end;
    auto normalized = normalize_tag(token);  // cannot fail: checked above; folds the case
    if (!normalized) return error_at(start, normalized.error().message);
    return normalized;
  }
};

}  // namespace

Result<MysqlGtidSet> MysqlGtidSet::parse(std::string_view text) {
  Parser in(text, "GTID set");
  MysqlGtidSet set;
  in.skip_space();
  while (true) {
    while (in.at(',')) {  // empty entries, as the server allows
      in.advance();
      in.skip_space();
    }
    if (in.at_end()) return set;

    auto uuid = in.uuid();
    if (!uuid) return fail(std::move(uuid).error());
    Tsid tsid{*uuid, {}};
    std::string_view after = "after the UUID";
    in.skip_space();
    while (in.at(':')) {
      in.advance();
      in.skip_space();
      if (in.at_number()) {
        const std::size_t start_offset = in.pos();
        auto start = in.number("a transaction number");
        if (!start) return fail(std::move(start).error());
        std::uint64_t end = *start;
        in.skip_space();
        if (in.at('-')) {
          in.advance();
          in.skip_space();
          auto last = in.number("the end of the interval (a transaction number)");
          if (!last) return fail(std::move(last).error());
          if (*last < *start) {
            return in.error_at(start_offset, fmt::format("interval {}-{} starts after it ends", *start, *last));
          }
          end = *last;
          in.skip_space();
        }
        set.add_unchecked(tsid, Interval{*start, end});
        after = "after an interval";
      } else if (in.at_tag()) {
        auto tag = in.tag();
        if (!tag) return fail(std::move(tag).error());
        tsid.tag = std::move(*tag);
        in.skip_space();
        after = "after a tag";
      } else {
        return in.expected("a transaction number or a tag after ':'");
      }
    }
    if (!in.at_end() && !in.at(',')) {
      return in.expected(fmt::format("':', ',' or the end of the set {}", after));
    }
  }
}

Result<Gtid> Gtid::parse(std::string_view text) {
  Parser in(text, "GTID");
  in.skip_space();
  auto uuid = in.uuid();
  if (!uuid) return fail(std::move(uuid).error());
  Gtid gtid{*uuid, {}, 0};
  in.skip_space();
  if (!in.at(':')) return in.expected("':' after the UUID");
  in.advance();
  in.skip_space();
  if (in.at_tag()) {
    auto tag = in.tag();
    if (!tag) return fail(std::move(tag).error());
    gtid.tag = std::move(*tag);
    in.skip_space();
    if (!in.at(':')) return in.expected("':' after the tag");
    in.advance();
    in.skip_space();
  }
  auto number = in.number("a transaction number");
  if (!number) return fail(std::move(number).error());
  gtid.number = *number;
  in.skip_space();
  if (!in.at_end()) return in.expected("the end of the GTID (one GTID is uuid[:tag]:number)");
  return gtid;
}

}  // namespace cdc::gtid
