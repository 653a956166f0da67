#include "output/converter.h"

#include <fmt/format.h>

#include "output/debezium.h"

namespace cdc::output {

Result<void> convert_lines(Converter& converter, std::string_view lines, ndjson::Writer& out) {
  while (!lines.empty()) {
    const std::size_t end = lines.find('\n');
    const std::string_view line = lines.substr(0, end);
    if (auto converted = converter.convert(line, out); !converted) {
      constexpr std::size_t kShown = 80;
      return fail(converted.error().with_context(
          fmt::format("output stage, line {}{}", line.substr(0, kShown), line.size() > kShown ? "..." : "")));
    }
    if (end == std::string_view::npos) break;
    lines.remove_prefix(end + 1);
  }
  return {};
}

Result<std::unique_ptr<Converter>> make_converter(const OutputOptions& options) {
  // Masking (output/mask.h) wraps the format's converter; it is the masking work's and not in
  // this build yet.
  if (!options.masks.empty()) return fail(Errc::unsupported, "--mask: not built yet");
  switch (options.format) {
    case Format::ndjson: return std::unique_ptr<Converter>();
    case Format::debezium: return make_debezium_converter(options);
    case Format::canal:
    case Format::maxwell: break;
  }
  return fail(Errc::unsupported, fmt::format("--format {}: not built yet", format_name(options.format)));
}

}  // namespace cdc::output
