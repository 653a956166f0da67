// Fuzz target: the output stage (libcore/output) on arbitrary canonical lines. cdc-merge passes
// lines of the chunk outputs it is given to the converter, so a converter reads bytes a user
// can hand it. The first input byte picks the format and a set of options (--key, --topic,
// --flink, schemas.enable, transaction metadata, per-row Canal messages, Maxwell's output
// flags, a mask of every string column); the rest is split into lines, each converted, then
// the converter is finished, with a drop_held() after every commit line when the byte says so.
// Errors are fine; crashes, hangs and sanitizer reports are not.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ndjson/writer.h"
#include "output/converter.h"
#include "output/format.h"

namespace {

cdc::output::OutputOptions options_for(std::uint8_t choice) {
  using cdc::output::Format;
  cdc::output::OutputOptions options;
  static constexpr Format kFormats[] = {Format::ndjson, Format::debezium, Format::canal, Format::maxwell};
  options.format = kFormats[choice & 3U];
  const bool keyed = (choice & 4U) != 0;
  options.kafka_key = keyed && options.format != Format::ndjson;
  options.topic_field = (choice & 8U) != 0 && options.format != Format::ndjson;
  options.flink = (choice & 16U) != 0 && options.format != Format::ndjson;
  if ((choice & 32U) != 0) {
    const char* const extra[] = {"schemas.enable=true", "message=row", "output_xoffset=true"};
    (void)cdc::output::set_format_option(options, extra[(choice & 3U) % 3]);
    (void)cdc::output::set_format_option(options, "provide.transaction.metadata=true");
    (void)cdc::output::set_format_option(options, "output_ddl=true");
  }
  if ((choice & 64U) != 0) {
    if (auto rule = cdc::output::parse_mask_rule("*.*.*=hash:SHA-256:salt")) options.masks.push_back(*rule);
    options.mask_keys = keyed;
  }
  return options;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t choice = data[0];
  auto converter = cdc::output::make_converter(options_for(choice));
  if (!converter || !*converter) return 0;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  cdc::ndjson::Writer out;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!(*converter)->convert(line, out)) continue;
    if ((choice & 128U) != 0 && line.find(R"("op":"commit")") != std::string_view::npos) (*converter)->drop_held();
    if (out.bytes_buffered() > (1U << 20)) out.clear();
  }
  (void)(*converter)->finish(out);
  return 0;
}
