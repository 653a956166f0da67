#pragma once

// What --format and its options ask for (cdc-stream(1), cdc-merge(1), cdc-sync(1), FORMATS).

#include <string>
#include <vector>

#include "output/canal.h"
#include "output/debezium.h"
#include "output/mask.h"
#include "output/maxwell.h"

namespace cdc::output {

enum class Format { ndjson, debezium, canal, maxwell };

struct OutputOptions {
  Format format = Format::ndjson;
  // --key: each message as KEY<TAB>VALUE for `kcat -P -K '\t'` (a tombstone as KEY<TAB>).
  bool kafka_key = false;
  // --topic: each message preceded by its topic name and a TAB, for a splitter that routes
  // lines to one kcat per topic.
  bool topic_field = false;
  // --flink: the per-format choices that Flink's debezium-json, canal-json and maxwell-json
  // decoders need to read every column type (FORMATS in cdc-stream(1)).
  bool flink = false;
  DebeziumOptions debezium;
  CanalOptions canal;
  MaxwellOptions maxwell;
  std::vector<MaskRule> masks;  // --mask, in the order given
  bool mask_keys = false;       // --mask-keys: masking a key column is allowed
};

}  // namespace cdc::output
