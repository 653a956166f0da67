#pragma once

// What --format and its options ask for (cdc-stream(1), cdc-merge(1), cdc-sync(1), FORMATS).

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "output/canal.h"
#include "output/debezium.h"
#include "output/mask.h"
#include "output/maxwell.h"
#include "util/result.h"

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
  // --include-query (cdc-stream, cdc-sync): each change line carries the statement that made
  // it, from the binlog's ANNOTATE_ROWS / ROWS_QUERY events. The converters need no switch:
  // they write what the lines carry.
  bool include_query = false;
};

// "ndjson", "debezium", "canal", "maxwell"; nullopt for another name.
[[nodiscard]] std::optional<Format> format_named(std::string_view name) noexcept;
[[nodiscard]] std::string_view format_name(Format format) noexcept;

// One --format-option NAME=VALUE for options.format, under the original tool's property name.
// Errc::usage naming the option and listing the names (or values) the format knows.
[[nodiscard]] Result<void> set_format_option(OutputOptions& options, std::string_view name_value);

// For the formats' option setters: the index of value in choices, or Errc::usage
// "--format-option NAME=VALUE: VALUE is not one of a, b, c".
[[nodiscard]] Result<std::size_t> option_choice(std::string_view name, std::string_view value,
                                                std::initializer_list<std::string_view> choices);
// true|false, the same error otherwise.
[[nodiscard]] Result<bool> option_flag(std::string_view name, std::string_view value);
// Errc::usage "--format-option NAME: not an option of --format F (its options: a, b, c)".
[[nodiscard]] Unexpected unknown_format_option(std::string_view name, Format format,
                                               std::initializer_list<std::string_view> known);

}  // namespace cdc::output
