#include "metrics/text_format.h"

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "util/fd_io.h"

namespace cdc::metrics {

namespace {

// HELP text escapes backslash and newline; label values also the double quote.
void append_escaped(std::string_view text, bool quote, std::string& out) {
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out.push_back(c);
    }
  }
}

}  // namespace

void TextWriter::family(std::string_view name, std::string_view type, std::string_view help) {
  text_ += "# HELP ";
  text_ += name;
  text_.push_back(' ');
  append_escaped(help, false, text_);
  text_ += "\n# TYPE ";
  text_ += name;
  text_.push_back(' ');
  text_ += type;
  text_.push_back('\n');
}

void TextWriter::labels(std::initializer_list<Label> labels) {
  if (labels.size() == 0) return;
  text_.push_back('{');
  bool first = true;
  for (const Label& label : labels) {
    if (!first) text_.push_back(',');
    first = false;
    text_ += label.name;
    text_ += "=\"";
    append_escaped(label.value, true, text_);
    text_.push_back('"');
  }
  text_.push_back('}');
}

void TextWriter::sample(std::string_view name, std::uint64_t value, std::initializer_list<Label> labels) {
  text_ += name;
  this->labels(labels);
  text_.push_back(' ');
  text_ += fmt::format_int(value).c_str();
  text_.push_back('\n');
}

void TextWriter::sample(std::string_view name, double value, std::initializer_list<Label> labels) {
  text_ += name;
  this->labels(labels);
  text_.push_back(' ');
  if (std::isnan(value)) {
    text_ += "NaN";
  } else if (std::isinf(value)) {
    text_ += value > 0 ? "+Inf" : "-Inf";
  } else {
    fmt::format_to(std::back_inserter(text_), "{}", value);
  }
  text_.push_back('\n');
}

Result<void> replace_file(const std::string& path, std::string_view text) {
  const std::string temporary = path + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno_error("cannot write the metrics file", temporary);
  auto written = write_all(fd, text, temporary);
  if (::close(fd) != 0 && written) return errno_error("cannot write the metrics file", temporary);
  if (!written) return fail(std::move(written).error());
  if (::rename(temporary.c_str(), path.c_str()) != 0) return errno_error("cannot rename the metrics file to", path);
  return {};
}

void MetricsFile::publish(std::string_view text) {
  if (!path_) return;
  last_ = std::chrono::steady_clock::now();
  if (auto written = replace_file(*path_, text); !written) {
    if (!failing_) warn_(fmt::format("--metrics: {}; {}", written.error().message, goes_on_));
    failing_ = true;
  } else {
    failing_ = false;
  }
}

}  // namespace cdc::metrics
