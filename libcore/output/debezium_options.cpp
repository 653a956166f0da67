// --format-option NAME=VALUE for --format debezium: Debezium's (and JsonConverter's) property
// names and values (cdc-formats(7), DEBEZIUM).

#include <initializer_list>
#include <string_view>
#include <type_traits>

#include "output/debezium.h"
#include "output/format.h"

namespace cdc::output {

Result<void> set_debezium_option(DebeziumOptions& options, std::string_view name, std::string_view value) {
  const auto choose = [&](auto& field, std::initializer_list<std::string_view> choices) -> Result<void> {
    auto index = option_choice(name, value, choices);
    if (!index) return fail(index.error());
    field = static_cast<std::remove_reference_t<decltype(field)>>(*index);
    return {};
  };
  const auto flag = [&](bool& field) -> Result<void> {
    auto set = option_flag(name, value);
    if (!set) return fail(set.error());
    field = *set;
    return {};
  };
  if (name == "topic.prefix") {
    if (value.empty()) return fail(Errc::usage, "--format-option topic.prefix=: give a prefix, e.g. topic.prefix=shop");
    options.topic_prefix = value;
    return {};
  }
  if (name == "schemas.enable") return flag(options.schemas_enable);
  if (name == "decimal.handling.mode") return choose(options.decimal_handling, {"precise", "string", "double"});
  if (name == "time.precision.mode")
    return choose(options.time_precision, {"adaptive_time_microseconds", "connect"});
  if (name == "bigint.unsigned.handling.mode") return choose(options.bigint_unsigned, {"long", "precise"});
  if (name == "binary.handling.mode")
    return choose(options.binary_handling, {"bytes", "base64", "base64-url-safe", "hex"});
  if (name == "decimal.format") return choose(options.decimal_format, {"base64", "numeric"});
  if (name == "tombstones.on.delete") return flag(options.tombstones_on_delete);
  if (name == "provide.transaction.metadata") return flag(options.provide_transaction_metadata);
  if (name == "include.schema.changes") return flag(options.include_schema_changes);
  return unknown_format_option(name, Format::debezium,
                               {"topic.prefix", "schemas.enable", "decimal.handling.mode", "time.precision.mode",
                                "bigint.unsigned.handling.mode", "binary.handling.mode", "decimal.format",
                                "tombstones.on.delete", "provide.transaction.metadata", "include.schema.changes"});
}

}  // namespace cdc::output
