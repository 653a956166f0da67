#include "output/converter.h"

#include <fmt/format.h>

#include "output/canal.h"
#include "output/debezium.h"
#include "output/maxwell.h"

namespace cdc::output {

Result<std::unique_ptr<Converter>> make_converter(const OutputOptions& options) {
  // Masking (output/mask.h) wraps the format's converter; it is the masking work's and not in
  // this build yet.
  if (!options.masks.empty()) return fail(Errc::unsupported, "--mask: not built yet");
  switch (options.format) {
    case Format::ndjson: return std::unique_ptr<Converter>();
    case Format::debezium: return make_debezium_converter(options);
    case Format::canal: return make_canal_converter(options);
    case Format::maxwell: return make_maxwell_converter(options);
  }
  return fail(Errc::internal, fmt::format("--format {}: no converter", format_name(options.format)));
}

}  // namespace cdc::output
