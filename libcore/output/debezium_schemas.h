#pragma once

// The Kafka Connect schemas of Debezium's MySQL connector's events, as JsonConverter writes
// them with schemas.enable=true (cdc-formats(7), DEBEZIUM): a table's envelope and key, the
// source block, and the schema change and transaction metadata events' own.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "output/debezium_values.h"

namespace cdc::output {

inline constexpr std::string_view kSourceSchema =
    R"({"type":"struct","fields":[{"type":"string","optional":false,"field":"version"},)"
    R"({"type":"string","optional":false,"field":"connector"},{"type":"string","optional":false,"field":"name"},)"
    R"({"type":"int64","optional":false,"field":"ts_ms"},)"
    R"({"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":)"
    R"({"allowed":"true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"},)"
    R"("default":"false","field":"snapshot"},{"type":"string","optional":false,"field":"db"},)"
    R"({"type":"string","optional":true,"field":"sequence"},{"type":"int64","optional":true,"field":"ts_us"},)"
    R"({"type":"int64","optional":true,"field":"ts_ns"},{"type":"string","optional":true,"field":"table"},)"
    R"({"type":"int64","optional":false,"field":"server_id"},{"type":"string","optional":true,"field":"gtid"},)"
    R"({"type":"string","optional":false,"field":"file"},{"type":"int64","optional":false,"field":"pos"},)"
    R"({"type":"int32","optional":false,"field":"row"},{"type":"int64","optional":true,"field":"thread"},)"
    R"({"type":"string","optional":true,"field":"query"}],"optional":false,)"
    R"("name":"io.debezium.connector.mysql.Source","field":"source"})";

inline constexpr std::string_view kTransactionBlockSchema =
    R"({"type":"struct","fields":[{"type":"string","optional":false,"field":"id"},)"
    R"({"type":"int64","optional":false,"field":"total_order"},)"
    R"({"type":"int64","optional":false,"field":"data_collection_order"}],"optional":true,"name":"event.block",)"
    R"("version":1,"field":"transaction"})";

inline constexpr std::string_view kEnvelopeTail =
    R"({"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"},)"
    R"({"type":"int64","optional":true,"field":"ts_us"},{"type":"int64","optional":true,"field":"ts_ns"})";

inline constexpr std::string_view kSchemaChangeKeySchema =
    R"({"type":"struct","fields":[{"type":"string","optional":false,"field":"databaseName"}],"optional":false,)"
    R"("name":"io.debezium.connector.mysql.SchemaChangeKey","version":1})";

// tableChanges' element: io.debezium.connector.schema.Change (ConnectTableChangeSerializer).
inline constexpr std::string_view kSchemaChangeValueTail =
    R"({"type":"int64","optional":false,"field":"ts_ms"},{"type":"string","optional":true,"field":"databaseName"},)"
    R"({"type":"string","optional":true,"field":"schemaName"},{"type":"string","optional":true,"field":"ddl"},)"
    R"({"type":"array","items":{"type":"struct","fields":[{"type":"string","optional":false,"field":"type"},)"
    R"({"type":"string","optional":false,"field":"id"},{"type":"struct","fields":[)"
    R"({"type":"string","optional":true,"field":"defaultCharsetName"},)"
    R"({"type":"array","items":{"type":"string","optional":false},"optional":true,"field":"primaryKeyColumnNames"},)"
    R"({"type":"array","items":{"type":"struct","fields":[{"type":"string","optional":false,"field":"name"},)"
    R"({"type":"int32","optional":false,"field":"jdbcType"},{"type":"int32","optional":true,"field":"nativeType"},)"
    R"({"type":"string","optional":false,"field":"typeName"},{"type":"string","optional":true,"field":"typeExpression"},)"
    R"({"type":"string","optional":true,"field":"charsetName"},{"type":"int32","optional":true,"field":"length"},)"
    R"({"type":"int32","optional":true,"field":"scale"},{"type":"int32","optional":false,"field":"position"},)"
    R"({"type":"boolean","optional":true,"field":"optional"},{"type":"boolean","optional":true,"field":"autoIncremented"},)"
    R"({"type":"boolean","optional":true,"field":"generated"},{"type":"string","optional":true,"field":"comment"},)"
    R"({"type":"string","optional":true,"field":"defaultValueExpression"},)"
    R"({"type":"array","items":{"type":"string","optional":false},"optional":true,"field":"enumValues"}],)"
    R"("optional":false,"name":"io.debezium.connector.schema.Column","version":1},"optional":false,"field":"columns"},)"
    R"({"type":"string","optional":true,"field":"comment"}],"optional":true,"name":"io.debezium.connector.schema.Table",)"
    R"("version":1,"field":"table"}],"optional":false,"name":"io.debezium.connector.schema.Change","version":1},)"
    R"("optional":false,"field":"tableChanges"}],"optional":false,"name":"io.debezium.connector.mysql.SchemaChangeValue",)"
    R"("version":1})";

inline constexpr std::string_view kTransactionKeySchema =
    R"({"type":"struct","fields":[{"type":"string","optional":false,"field":"id"}],"optional":false,)"
    R"("name":"io.debezium.connector.common.TransactionMetadataKey","version":1})";

inline constexpr std::string_view kTransactionValueSchema =
    R"({"type":"struct","fields":[{"type":"string","optional":false,"field":"status"},)"
    R"({"type":"string","optional":false,"field":"id"},{"type":"int64","optional":true,"field":"event_count"},)"
    R"({"type":"array","items":{"type":"struct","fields":[{"type":"string","optional":false,"field":"data_collection"},)"
    R"({"type":"int64","optional":false,"field":"event_count"}],"optional":false},"optional":true,)"
    R"("field":"data_collections"},{"type":"int64","optional":false,"field":"ts_ms"}],"optional":false,)"
    R"("name":"io.debezium.connector.common.TransactionMetadataValue","version":1})";

// A table's envelope (io.debezium.connector.mysql Envelope, version 2) and key structs, named
// after name ("<topic.prefix>.<db>.<table>"); each column's field schema is Column::schema.
[[nodiscard]] std::string envelope_schema(std::string_view name, std::span<const Column> columns);
[[nodiscard]] std::string key_schema(std::string_view name, std::span<const Column> columns,
                                     std::span<const std::size_t> key_columns);
// SchemaChangeValue: the source block, then kSchemaChangeValueTail.
[[nodiscard]] std::string schema_change_value_schema();

}  // namespace cdc::output
