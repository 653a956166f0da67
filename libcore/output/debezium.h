#pragma once

// Debezium's MySQL connector's change events, as Kafka Connect's JsonConverter writes them
// (cdc-formats(7), DEBEZIUM). The options carry Debezium's (and JsonConverter's) property
// names; the defaults are theirs, except schemas.enable (off here, as most pipelines set it).

#include <memory>
#include <string>
#include <string_view>

#include "util/result.h"

namespace cdc::output {

class Converter;
struct OutputOptions;

enum class DecimalHandling { precise, string, double_value };
enum class TimePrecision { adaptive_time_microseconds, connect };
enum class BigintUnsignedHandling { long_value, precise };
enum class BinaryHandling { bytes, base64, base64_url_safe, hex };
enum class DecimalFormat { base64, numeric };  // JsonConverter's decimal.format

struct DebeziumOptions {
  std::string topic_prefix = "cdc";  // topic.prefix: source.name, schema and topic names
  bool schemas_enable = false;       // JsonConverter's schemas.enable (key and value)
  DecimalHandling decimal_handling = DecimalHandling::precise;
  TimePrecision time_precision = TimePrecision::adaptive_time_microseconds;
  BigintUnsignedHandling bigint_unsigned = BigintUnsignedHandling::long_value;
  BinaryHandling binary_handling = BinaryHandling::bytes;
  DecimalFormat decimal_format = DecimalFormat::base64;
  bool tombstones_on_delete = true;  // only with --key: a tombstone is a key with no value
  bool provide_transaction_metadata = false;
  bool include_schema_changes = true;
};

// --format-option NAME=VALUE for --format debezium.
[[nodiscard]] Result<void> set_debezium_option(DebeziumOptions& options, std::string_view name,
                                               std::string_view value);

[[nodiscard]] std::unique_ptr<Converter> make_debezium_converter(const OutputOptions& options);

}  // namespace cdc::output
