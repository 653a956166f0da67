#pragma once

// Debezium's MySQL connector's change events, as Kafka Connect's JsonConverter writes them.
// (Owned by the Debezium work; the options grow there.)

#include <string>

namespace cdc::output {

struct DebeziumOptions {
  std::string topic_prefix = "cdc";  // topic.prefix: source.name, schema and topic names
};

}  // namespace cdc::output
