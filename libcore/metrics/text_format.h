#pragma once

// Metrics for monitoring (--metrics FILE): the Prometheus text exposition format, version
// 0.0.4, written whole into a file that node_exporter's textfile collector (or anything that
// reads the format) picks up. The file is replaced at once (written beside it, then renamed),
// so a reader never sees half of it.

#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
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

// A tool's --metrics file: rewritten every kInterval (due()) and when the tool ends. A file
// that cannot be written is not an error: one warning, "--metrics: <error>; <goes_on>", until
// it can be written again, and the tool goes on.
class MetricsFile {
 public:
  static constexpr std::chrono::seconds kInterval{5};

  MetricsFile(std::optional<std::string> path, std::function<void(std::string_view)> warn, std::string goes_on)
      : path_(std::move(path)), warn_(std::move(warn)), goes_on_(std::move(goes_on)) {}

  [[nodiscard]] bool enabled() const noexcept { return path_.has_value(); }
  // Enabled, and kInterval since the last publish().
  [[nodiscard]] bool due() const { return path_ && std::chrono::steady_clock::now() - last_ >= kInterval; }
  void publish(std::string_view text);

 private:
  std::optional<std::string> path_;
  std::function<void(std::string_view)> warn_;
  std::string goes_on_;
  std::chrono::steady_clock::time_point last_{};
  bool failing_ = false;
};

}  // namespace cdc::metrics
