#include "order/uca_table.h"

#include <algorithm>
#include <optional>

namespace cdc::order::detail {

// The generated text. Words separated by spaces, hex numbers throughout.
//
// runs: one word per run of code points, in code point order:
//   [GAP][,COUNT][+]:LEVELS
//   GAP code points skipped since the previous run's end (the surrogates; omitted when 0),
//   COUNT the run's length (omitted when 1), + when the last level-0 weight grows by one per
//   code point.
// contractions: one word per contraction: CP.CP[.CP]:LEVELS
// LEVELS: each level's weights '.'-separated, levels '|'-separated. A three-level table may
// omit trailing levels that are the commonest ones: level 1 "20", level 2 "2".
//
//   ",9:||"  U+0000..U+0008 weigh nothing;  ",a+:206b"  ten code points weighing 206B..2074;
//   "6c.b7:21b0|20.118|2.2"  the contraction "l·".

namespace {

constexpr std::array<std::uint16_t, 3> kCommonWeight = {0, 0x20, 0x02};

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}
  [[nodiscard]] bool done() {
    while (at_ < text_.size() && text_[at_] == ' ') ++at_;
    return at_ == text_.size();
  }
  [[nodiscard]] bool take(char c) {
    if (at_ < text_.size() && text_[at_] == c) return ++at_, true;
    return false;
  }
  // Hex digits (maybe none: nullopt).
  [[nodiscard]] std::optional<std::uint32_t> hex() {
    std::uint32_t value = 0;
    const std::size_t start = at_;
    while (at_ < text_.size() && at_ - start < 8) {
      const char c = text_[at_];
      unsigned digit = 0;
      if (c >= '0' && c <= '9')
        digit = static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        digit = static_cast<unsigned>(c - 'a' + 10);
      else
        break;
      value = value << 4 | digit;
      ++at_;
    }
    if (at_ == start) return std::nullopt;
    return value;
  }

 private:
  std::string_view text_;
  std::size_t at_ = 0;
};

}  // namespace

UcaTable UcaTable::parse(const UcaSource& source) {
  UcaTable table;
  table.levels_ = source.levels;
  if (source.levels < 1 || source.levels > 3) return table;

  // LEVELS into the pool; false when malformed.
  const auto read_levels = [&table](Reader& reader, Weights& weights) {
    weights.offset = static_cast<std::uint32_t>(table.pool_.size());
    for (unsigned level = 0; level < table.levels_; ++level) {
      std::size_t length = 0;
      if (level == 0 || reader.take('|')) {
        for (auto w = reader.hex(); w; w = reader.take('.') ? reader.hex() : std::nullopt) {
          if (*w == 0 || *w > 0xFFFF) return false;
          table.pool_.push_back(static_cast<std::uint16_t>(*w));
          ++length;
        }
      } else {
        table.pool_.push_back(kCommonWeight[level]);
        length = 1;
      }
      if (length > 0xFF) return false;
      weights.length[level] = static_cast<std::uint8_t>(length);
    }
    return true;
  };

  Reader runs(source.runs);
  std::uint32_t end = 0;
  while (!runs.done()) {
    Run run;
    run.first = end + runs.hex().value_or(0);
    run.count = runs.take(',') ? runs.hex().value_or(0) : 1;
    run.grows = runs.take('+');
    if (run.count == 0 || !runs.take(':') || !read_levels(runs, run.weights)) return table;
    if (run.grows && run.weights.length[0] == 0) return table;
    end = run.first + run.count;
    if (end > 0x110000) return table;
    table.runs_.push_back(run);
  }

  Reader contractions(source.contractions);
  while (!contractions.done()) {
    Contraction contraction;
    std::size_t size = 0;
    for (auto c = contractions.hex(); c; c = contractions.take('.') ? contractions.hex() : std::nullopt) {
      if (size == contraction.chars.size()) return table;
      contraction.chars[size++] = *c;
    }
    if (size < 2 || !contractions.take(':') || !read_levels(contractions, contraction.weights)) return table;
    table.longest_contraction_ = std::max(table.longest_contraction_, size);
    table.heads_.push_back(contraction.chars[0]);
    table.contractions_.push_back(contraction);
  }
  const auto by_chars = [](const Contraction& a, const Contraction& b) { return a.chars < b.chars; };
  std::sort(table.contractions_.begin(), table.contractions_.end(), by_chars);
  std::sort(table.heads_.begin(), table.heads_.end());
  table.heads_.erase(std::unique(table.heads_.begin(), table.heads_.end()), table.heads_.end());

  if (table.runs_.empty() || table.runs_.size() > 0xFFFF) return table;
  table.bmp_run_.assign(0x10000, 0);
  for (std::size_t i = 0; i < table.runs_.size(); ++i) {
    const Run& run = table.runs_[i];
    for (std::uint32_t cp = run.first; cp < run.first + run.count && cp < 0x10000; ++cp)
      table.bmp_run_[cp] = static_cast<std::uint16_t>(i);
  }
  // The space must weigh one weight per level, which PAD SPACE pads with.
  const Run* space = table.find_run(0x20);
  if (space == nullptr || space->first != 0x20) return table;
  for (unsigned level = 0; level < table.levels_; ++level) {
    if (space->weights.length[level] != 1) return table;
    std::uint32_t at = space->weights.offset;
    for (unsigned below = 0; below < level; ++below) at += space->weights.length[below];
    table.space_[level] = table.pool_[at];
  }
  table.ok_ = true;
  return table;
}

const UcaTable& UcaTable::get(UcaVersion version) {
  static const UcaTable unicode400 = parse(unicode400_source());
  static const UcaTable unicode520 = parse(unicode520_source());
  static const UcaTable uca1400 = parse(uca1400_source());
  static const UcaTable mysql0900 = parse(uca0900_source());
  switch (version) {
    case UcaVersion::unicode400:
      return unicode400;
    case UcaVersion::unicode520:
      return unicode520;
    case UcaVersion::uca1400:
      return uca1400;
    case UcaVersion::mysql0900:
      return mysql0900;
  }
  return uca1400;
}

const UcaTable::Run* UcaTable::find_run(std::uint32_t code_point) const noexcept {
  const Run* run = nullptr;
  if (code_point < 0x10000 && !bmp_run_.empty()) {
    run = &runs_[bmp_run_[code_point]];
  } else {
    const auto after = std::upper_bound(runs_.begin(), runs_.end(), code_point,
                                        [](std::uint32_t cp, const Run& r) { return cp < r.first; });
    if (after == runs_.begin()) return nullptr;
    run = &*(after - 1);
  }
  return code_point >= run->first && code_point - run->first < run->count ? run : nullptr;
}

const UcaTable::Contraction* UcaTable::find_contraction(std::span<const std::uint32_t> chars) const noexcept {
  Contraction wanted;
  std::copy(chars.begin(), chars.end(), wanted.chars.begin());
  const auto found =
      std::lower_bound(contractions_.begin(), contractions_.end(), wanted,
                       [](const Contraction& a, const Contraction& b) { return a.chars < b.chars; });
  return found != contractions_.end() && found->chars == wanted.chars ? &*found : nullptr;
}

void UcaTable::append_level(const Weights& weights, unsigned level, std::uint32_t growth,
                            std::vector<std::uint32_t>& out) const {
  std::uint32_t at = weights.offset;
  for (unsigned below = 0; below < level; ++below) at += weights.length[below];
  const std::uint32_t length = weights.length[level];
  for (std::uint32_t i = 0; i < length; ++i) {
    std::uint32_t w = pool_[at + i];
    if (level == 0 && i + 1 == length) w += growth;
    out.push_back(w);
  }
}

void UcaTable::append_weights(std::span<const std::uint32_t> chars, unsigned level,
                              std::vector<std::uint32_t>& out) const {
  std::size_t i = 0;
  while (i < chars.size()) {
    const std::uint32_t c = chars[i];
    if (std::binary_search(heads_.begin(), heads_.end(), c)) {
      std::size_t length = std::min(longest_contraction_, chars.size() - i);
      const Contraction* contraction = nullptr;
      while (length >= 2 && (contraction = find_contraction(chars.subspan(i, length))) == nullptr) --length;
      if (contraction != nullptr) {
        append_level(contraction->weights, level, 0, out);
        i += length;
        continue;
      }
    }
    if (const Run* run = find_run(c)) append_level(run->weights, level, run->grows ? c - run->first : 0, out);
    ++i;
  }
}

}  // namespace cdc::order::detail
