// The archive directory's names and listing (archive/archive_dir.h): which files are binlogs
// and in what order, the file in progress, and what a directory holds.
#include "archive/archive_dir.h"

#include <dirent.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>

#include "util/fd_io.h"
#include "util/text.h"

namespace cdc::archive {

namespace {

constexpr std::string_view kPartialSuffix = ".partial";

std::string_view base_of(std::string_view name) { return name.substr(0, name.rfind('.')); }

}  // namespace

bool is_binlog_name(std::string_view name) {
  const std::size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == name.size() || name[0] == '.') return false;
  return std::all_of(name.begin() + static_cast<std::ptrdiff_t>(dot) + 1, name.end(), is_digit);
}

bool binlog_name_before(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

std::string in_progress_name(std::string_view file) {
  std::string name = ".";
  name.append(file).append(kPartialSuffix);
  return name;
}

std::string next_binlog_name(std::string_view file) {
  if (!is_binlog_name(file)) return {};
  std::string next(file);
  const std::size_t first_digit = next.rfind('.') + 1;
  std::size_t i = next.size();
  while (i > first_digit) {
    --i;
    if (next[i] != '9') {
      ++next[i];
      return next;
    }
    next[i] = '0';
  }
  next.insert(first_digit, "1");
  return next;
}

Result<Listing> list_directory(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return errno_error("cannot read the archive directory", path);
  Listing listing;
  std::vector<std::string> partials;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name.size() > 1 + kPartialSuffix.size() && name[0] == '.' && name.ends_with(kPartialSuffix)) {
      const std::string_view file = name.substr(1, name.size() - 1 - kPartialSuffix.size());
      if (is_binlog_name(file)) partials.emplace_back(file);
      continue;
    }
    if (!is_binlog_name(name)) continue;  // a README, lost+found: not ours
    struct stat info {};
    const std::string full = path + "/" + std::string(name);
    if (::stat(full.c_str(), &info) != 0) {
      ::closedir(dir);
      return errno_error("cannot read", full);
    }
    if (!S_ISREG(info.st_mode)) continue;
    listing.complete.push_back(CompleteFile{std::string(name), static_cast<std::uint64_t>(info.st_size),
                                            static_cast<std::int64_t>(info.st_mtime)});
  }
  ::closedir(dir);
  std::sort(listing.complete.begin(), listing.complete.end(),
            [](const CompleteFile& a, const CompleteFile& b) { return binlog_name_before(a.name, b.name); });
  std::sort(partials.begin(), partials.end(), binlog_name_before);
  if (partials.size() > 1)
    return fail(Errc::corrupt_input,
                fmt::format("{} holds {} files in progress ({} and {}), where one run leaves one: it was written by two "
                            "runs at once or by hand; keep the newer, move the other away",
                            path, partials.size(), in_progress_name(partials[0]), in_progress_name(partials[1])));
  if (!partials.empty()) listing.in_progress = partials[0];
  // One archive holds one server's binlog: one base name.
  const std::string_view base =
      listing.in_progress ? base_of(*listing.in_progress)
                          : (listing.complete.empty() ? std::string_view{} : base_of(listing.complete[0].name));
  for (const auto& file : listing.complete)
    if (base_of(file.name) != base)
      return fail(Errc::corrupt_input,
                  fmt::format("{} holds binlogs of two names ({}.* and {}.*): one archive directory belongs to one "
                              "server's binlog; move the other files away",
                              path, base, base_of(file.name)));
  if (listing.in_progress && !listing.complete.empty() && !binlog_name_before(listing.complete.back().name, *listing.in_progress))
    return fail(Errc::corrupt_input,
                fmt::format("{} holds {} and the complete file {}, which is not older: the file in progress must be "
                            "the newest; move one of them away",
                            path, in_progress_name(*listing.in_progress), listing.complete.back().name));
  return listing;
}

}  // namespace cdc::archive
