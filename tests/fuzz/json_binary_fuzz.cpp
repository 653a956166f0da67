// Fuzz target: MySQL binary JSON documents and partial-update diff vectors.

#include <cstddef>
#include <cstdint>
#include <span>

#include "ndjson/writer.h"
#include "rowimage/json_binary.h"
#include "rowimage/json_diff.h"
#include "util/byte_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static cdc::ndjson::Writer out;
  if (size == 0) return 0;
  // First byte: where the document ends and a diff vector begins.
  const std::size_t split = data[0] * (size - 1) / 255;
  const std::span<const std::uint8_t> document(data + 1, split);
  (void)cdc::rowimage::decode_json_binary(document, 1, out);
  out.clear();
  cdc::ByteReader diffs(data + 1 + split, size - 1 - split, 1 + split);
  (void)cdc::rowimage::decode_json_partial_update(document, 1, diffs, out);
  out.clear();
  return 0;
}
