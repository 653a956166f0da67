#pragma once

// Metrics for monitoring (--metrics FILE): the Prometheus text exposition format, version
// 0.0.4, written whole into a file that node_exporter's textfile collector (or anything that
// reads the format) picks up. The file is replaced at once (written beside it, then renamed),
// so a reader never sees half of it.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "util/result.h"

namespace cdc::metrics {

struct Label {
  std::string_view name;
  std::string_view value;
};

class TextWriter {
 public:
  // A metric family's HELP and TYPE lines ("counter" or "gauge"); its samples follow. name
  // follows Prometheus' conventions (snake case, unit suffix, _total on counters); help is
  // one line.
  void family(std::string_view name, std::string_view type, std::string_view help);
  // One sample of the family last begun: name (the family's), its labels, its value.
  void sample(std::string_view name, std::uint64_t value, std::initializer_list<Label> labels = {});
  void sample(std::string_view name, double value, std::initializer_list<Label> labels = {});

  [[nodiscard]] std::string_view text() const noexcept { return text_; }
  void clear() noexcept { text_.clear(); }

 private:
  void labels(std::initializer_list<Label> labels);

  std::string text_;
};

// Replaces the file at path with text: text goes to path + ".tmp", which is then renamed.
// Errc::io naming the file.
[[nodiscard]] Result<void> replace_file(const std::string& path, std::string_view text);

}  // namespace cdc::metrics
