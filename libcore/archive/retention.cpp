#include "archive/retention.h"

#include <fmt/format.h>

#include <limits>

#include "util/text.h"

namespace cdc::archive {

namespace {

constexpr std::string_view kForms =
    "give an age (a number and s, min, h, d or w: 36h, 7d) or a size (a number and K, M, G or T: 500M, 50G)";

struct Unit {
  std::string_view suffix;
  std::uint64_t factor;
  bool is_size;
};

// Sizes are powers of 1024 ("G" is GiB), as du -h and ls -h print them; each may end in B or iB,
// in either case.
constexpr Unit kUnits[] = {
    {"s", 1, false},
    {"min", 60, false},
    {"h", 3600, false},
    {"d", 86400, false},
    {"w", 7 * 86400, false},
    {"K", std::uint64_t{1} << 10, true},
    {"M", std::uint64_t{1} << 20, true},
    {"G", std::uint64_t{1} << 30, true},
    {"T", std::uint64_t{1} << 40, true},
};

std::string size_text(std::uint64_t bytes) {
  constexpr std::string_view kSuffixes[] = {"T", "G", "M", "K"};
  for (int i = 0; i < 4; ++i) {
    const std::uint64_t factor = std::uint64_t{1} << (10 * (4 - i));
    if (bytes % factor == 0) return fmt::format("{}{}", bytes / factor, kSuffixes[i]);
  }
  return fmt::format("{} bytes", bytes);
}

std::string age_text(std::int64_t seconds) {
  constexpr std::pair<std::int64_t, std::string_view> kAges[] = {
      {7 * 86400, "w"}, {86400, "d"}, {3600, "h"}, {60, "min"}, {1, "s"}};
  for (const auto& [factor, suffix] : kAges)
    if (seconds % factor == 0) return fmt::format("{}{}", seconds / factor, suffix);
  return fmt::format("{}s", seconds);
}

}  // namespace

std::string Retention::to_string() const {
  if (max_age_seconds && max_bytes) return age_text(*max_age_seconds) + " and " + size_text(*max_bytes);
  if (max_age_seconds) return age_text(*max_age_seconds);
  if (max_bytes) return size_text(*max_bytes);
  return "everything";
}

Result<void> add_limit(Retention& retention, std::string_view text) {
  const std::string_view value = trim(text);
  std::size_t digits = 0;
  while (digits < value.size() && is_digit(value[digits])) ++digits;
  if (digits == 0)
    return fail(Errc::usage, fmt::format("--archive-keep '{}': {}", text, kForms));
  std::string_view suffix = value.substr(digits);
  if (suffix.empty())
    return fail(Errc::usage, fmt::format("--archive-keep '{}': a number needs its unit; {}", text, kForms));
  if (suffix == "m")
    return fail(Errc::usage, fmt::format("--archive-keep '{}': m could be minutes or megabytes; write {}min or {}M",
                                         text, value.substr(0, digits), value.substr(0, digits)));
  const Unit* unit = nullptr;
  for (const Unit& candidate : kUnits) {
    std::string_view rest = suffix;
    if (candidate.is_size) {
      if (rest.empty() || to_upper(rest[0]) != candidate.suffix[0]) continue;
      rest.remove_prefix(1);
      if (rest.empty() || iequals(rest, "B") || iequals(rest, "iB")) unit = &candidate;
    } else if (rest == candidate.suffix) {
      unit = &candidate;
    }
    if (unit) break;
  }
  if (!unit) return fail(Errc::usage, fmt::format("--archive-keep '{}': unknown unit '{}'; {}", text, suffix, kForms));
  std::uint64_t number = 0;
  for (const char c : value.substr(0, digits)) {
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (number > (std::numeric_limits<std::uint64_t>::max() - digit) / 10)
      return fail(Errc::usage, fmt::format("--archive-keep '{}': too large", text));
    number = number * 10 + digit;
  }
  if (number == 0)
    return fail(Errc::usage, fmt::format("--archive-keep '{}': must be more than 0 (leave the option out to keep "
                                         "every file)",
                                         text));
  // Ages up to about 290 billion years and sizes up to 16 EiB fit; more is a typo.
  if (number > std::numeric_limits<std::uint64_t>::max() / unit->factor ||
      (!unit->is_size && number * unit->factor > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())))
    return fail(Errc::usage, fmt::format("--archive-keep '{}': too large", text));
  if (unit->is_size) {
    if (retention.max_bytes)
      return fail(Errc::usage, fmt::format("--archive-keep '{}': a size is given already ({}); give at most one age "
                                           "and one size",
                                           text, size_text(*retention.max_bytes)));
    retention.max_bytes = number * unit->factor;
  } else {
    if (retention.max_age_seconds)
      return fail(Errc::usage, fmt::format("--archive-keep '{}': an age is given already ({}); give at most one age "
                                           "and one size",
                                           text, age_text(*retention.max_age_seconds)));
    retention.max_age_seconds = static_cast<std::int64_t>(number * unit->factor);
  }
  return {};
}

Result<Retention> parse_retention(const std::vector<std::string>& values) {
  Retention retention;
  for (const auto& value : values)
    if (auto added = add_limit(retention, value); !added) return fail(std::move(added).error());
  return retention;
}

std::vector<std::string> files_to_delete(const std::vector<CompleteFile>& files, std::uint64_t in_progress_bytes,
                                         const Retention& retention, std::int64_t now) {
  std::uint64_t total = in_progress_bytes;
  for (const auto& file : files) total += file.size;
  std::vector<std::string> doomed;
  for (const auto& file : files) {
    const bool too_old = retention.max_age_seconds && now - file.mtime > *retention.max_age_seconds;
    const bool too_big = retention.max_bytes && total > *retention.max_bytes;
    if (!too_old && !too_big) break;
    doomed.push_back(file.name);
    total -= file.size;
  }
  return doomed;
}

}  // namespace cdc::archive
