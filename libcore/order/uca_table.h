#pragma once

// The Unicode Collation Algorithm collations key_order.cpp reproduces: MariaDB's
// utf8mb4_unicode_ci (UCA 4.0.0), utf8mb4_unicode_520_ci (UCA 5.2.0) and utf8mb4_uca1400_*
// (UCA 14.0.0), whose weights scripts/gen_uca_weights.sh reads from a live MariaDB
// (uca_weights.cpp), and MySQL 8's utf8mb4_0900_* (UCA 9.0.0), whose weights
// scripts/gen_uca0900_weights.py derives from the Unicode data files the way MySQL's own
// generator does (uca0900_weights.cpp; no MySQL server has checked them).
//
// A string weighs, at each level, the weights of its characters one after the other, except
// that a contraction (a sequence of characters with weights of its own, as Catalan "l·") weighs
// as one; the longest contraction starting at a character wins, as in the server's scanner.
// Ignorable characters weigh nothing at a level. Levels: 0 primary (base letters), 1 secondary
// (accents), 2 tertiary (case).

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace cdc::order::detail {

enum class UcaVersion : std::uint8_t { unicode400, unicode520, uca1400, mysql0900 };

// One table as the generators write it (the format is uca_table.cpp's).
struct UcaSource {
  unsigned levels = 0;
  std::string_view runs;
  std::string_view contractions;
};

[[nodiscard]] UcaSource uca1400_source() noexcept;     // uca_weights.cpp
[[nodiscard]] UcaSource unicode400_source() noexcept;  // uca_weights.cpp
[[nodiscard]] UcaSource unicode520_source() noexcept;  // uca_weights.cpp
[[nodiscard]] UcaSource uca0900_source() noexcept;     // uca0900_weights.cpp

class UcaTable {
 public:
  // The table of a version, parsed on first use. ok() is false when its text is malformed.
  [[nodiscard]] static const UcaTable& get(UcaVersion version);
  [[nodiscard]] static UcaTable parse(const UcaSource& source);

  [[nodiscard]] bool ok() const noexcept { return ok_; }
  [[nodiscard]] unsigned levels() const noexcept { return levels_; }
  // The one weight of U+0020 at a level (PAD SPACE pads with it).
  [[nodiscard]] std::uint32_t space_weight(unsigned level) const noexcept { return space_[level]; }

  // Appends the non-zero weights at `level` of the text's characters to out.
  void append_weights(std::span<const std::uint32_t> chars, unsigned level, std::vector<std::uint32_t>& out) const;

 private:
  // Weights of a code point or contraction: lengths per level, stored one level after the
  // other in pool_ from offset.
  struct Weights {
    std::uint32_t offset = 0;
    std::array<std::uint8_t, 3> length{};
  };
  // Code points first..first+count-1; with grows, the last level-0 weight is larger by one for
  // each code point after first (implicit weights, most alphabets).
  struct Run {
    std::uint32_t first = 0;
    std::uint32_t count = 0;
    Weights weights;
    bool grows = false;
  };
  struct Contraction {
    std::array<std::uint32_t, 3> chars{};  // unused ones 0
    Weights weights;
  };

  [[nodiscard]] const Run* find_run(std::uint32_t code_point) const noexcept;
  [[nodiscard]] const Contraction* find_contraction(std::span<const std::uint32_t> chars) const noexcept;
  void append_level(const Weights& weights, unsigned level, std::uint32_t growth, std::vector<std::uint32_t>& out) const;

  bool ok_ = false;
  unsigned levels_ = 0;
  std::array<std::uint32_t, 3> space_{};
  std::vector<std::uint16_t> pool_;
  std::vector<Run> runs_;                     // sorted by first
  std::vector<std::uint16_t> bmp_run_;        // BMP code point -> index in runs_
  std::vector<Contraction> contractions_;     // sorted by chars
  std::vector<std::uint32_t> heads_;          // first characters of contractions, sorted
  std::size_t longest_contraction_ = 0;
};

}  // namespace cdc::order::detail
