#include "output/converter.h"

#include <fmt/format.h>

#include "output/canal.h"
#include "output/debezium.h"
#include "output/mask.h"
#include "output/maxwell.h"

namespace cdc::output {

namespace {

// A converter's error, with the start of the line it met.
Unexpected at_line(const Error& error, std::string_view line) {
  constexpr std::size_t kShown = 80;
  return fail(error.with_context(
      fmt::format("output stage, line {}{}", line.substr(0, kShown), line.size() > kShown ? "..." : "")));
}

}  // namespace

Result<void> convert_row_line(Converter& converter, const RowLine& row, ndjson::Writer& out) {
  if (auto converted = converter.convert_row(row, out); !converted) return at_line(converted.error(), row.line);
  return {};
}

Result<void> convert_lines(Converter& converter, std::string_view lines, ndjson::Writer& out) {
  while (!lines.empty()) {
    const std::size_t end = lines.find('\n');
    const std::string_view line = lines.substr(0, end);
    if (auto converted = converter.convert(line, out); !converted) return at_line(converted.error(), line);
    if (end == std::string_view::npos) break;
    lines.remove_prefix(end + 1);
  }
  return {};
}

namespace {

Result<std::unique_ptr<Converter>> make_format_converter(const OutputOptions& options) {
  switch (options.format) {
    case Format::ndjson: return std::unique_ptr<Converter>();
    case Format::debezium: return make_debezium_converter(options);
    case Format::canal: return make_canal_converter(options);
    case Format::maxwell: return make_maxwell_converter(options);
  }
  return fail(Errc::internal, fmt::format("--format {}: no converter", format_name(options.format)));
}

}  // namespace

Result<std::unique_ptr<Converter>> make_converter(const OutputOptions& options) {
  auto format = make_format_converter(options);
  if (!format || options.masks.empty()) return format;
  // Masking comes first, on the canonical lines, so every format (and ndjson) carries the same
  // masked values.
  return make_masking_converter(options.masks, options.mask_keys, std::move(*format));
}

}  // namespace cdc::output
