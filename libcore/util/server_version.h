#pragma once

#include <charconv>
#include <string_view>

namespace cdc {

// The leading "major.minor.patch" of a server version text ("8.0.36", "10.11.6-MariaDB-log");
// parts that are missing or not numbers stay 0.
struct ServerVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;

  [[nodiscard]] static ServerVersion parse(std::string_view text) noexcept {
    ServerVersion version;
    int* parts[] = {&version.major, &version.minor, &version.patch};
    const char* p = text.data();
    const char* end = text.data() + text.size();
    for (int* part : parts) {
      const auto [next, ec] = std::from_chars(p, end, *part);
      if (ec != std::errc{}) break;
      p = next;
      if (p == end || *p != '.') break;
      ++p;
    }
    return version;
  }

  [[nodiscard]] bool at_least(int major_wanted, int minor_wanted, int patch_wanted = 0) const noexcept {
    if (major != major_wanted) return major > major_wanted;
    if (minor != minor_wanted) return minor > minor_wanted;
    return patch >= patch_wanted;
  }
};

}  // namespace cdc
