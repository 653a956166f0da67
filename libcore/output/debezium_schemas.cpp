#include "output/debezium_schemas.h"

#include <fmt/format.h>

#include "ndjson/writer.h"

namespace cdc::output {

std::string envelope_schema(std::string_view name, std::span<const Column> columns) {
  std::string fields;
  for (const Column& column : columns) {
    if (!fields.empty()) fields += ',';
    fields += column.schema;
  }
  const std::string row = fmt::format(R"({{"type":"struct","fields":[{}],"optional":true,"name":{})", fields,
                                      ndjson::quoted(std::string(name) + ".Value"));
  return fmt::format(R"({{"type":"struct","fields":[{},"field":"before"}},{},"field":"after"}},{},{},{}],"optional":false,"name":{},"version":2}})",
                     row, row, kSourceSchema, kTransactionBlockSchema, kEnvelopeTail,
                     ndjson::quoted(std::string(name) + ".Envelope"));
}

std::string key_schema(std::string_view name, std::span<const Column> columns, std::span<const std::size_t> key_columns) {
  std::string fields;
  for (const std::size_t index : key_columns) {
    if (!fields.empty()) fields += ',';
    fields += columns[index].schema;
  }
  return fmt::format(R"({{"type":"struct","fields":[{}],"optional":false,"name":{}}})", fields,
                     ndjson::quoted(std::string(name) + ".Key"));
}

std::string schema_change_value_schema() {
  return fmt::format(R"({{"type":"struct","fields":[{},{})", kSourceSchema, kSchemaChangeValueTail);
}

}  // namespace cdc::output
