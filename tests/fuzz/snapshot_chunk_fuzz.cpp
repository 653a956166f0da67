// Fuzz target: a chunk line as cdc-snapshot reads it (fields, names, key types, bounds) and the
// SELECT built from it, its --where expression included. Whatever parses must give a statement; the rest a clean error.

#include <cstddef>
#include <cstdint>
#include <string>

#include <simdjson.h>

#include "filter/where_option.h"
#include "records/chunk.h"
#include "snapshot/chunk.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  simdjson::dom::parser parser;
  simdjson::padded_string text(reinterpret_cast<const char*>(data), size);
  simdjson::dom::object record;
  if (parser.parse(text).get_object().get(record) != simdjson::SUCCESS) return 0;
  const auto chunk = cdc::records::parse_chunk(record);
  if (!chunk) {
    if (chunk.error().message.empty()) __builtin_trap();
    return 0;
  }
  // A name no table can have is a clean error too.
  if (const auto named = cdc::snapshot::check_table_name(*chunk); !named && named.error().message.empty())
    __builtin_trap();
  const auto checked = cdc::snapshot::check_bounds(*chunk);
  const auto where = cdc::filter::chunk_where_sql(*chunk);
  const auto sql = cdc::snapshot::select_sql(*chunk);
  // Bounds that check_bounds() accepts and a "where" that checks always render; a chunk that
  // fails either fails to render too.
  if ((checked.has_value() && where.has_value()) != sql.has_value()) __builtin_trap();
  if (!sql) {
    if (sql.error().message.empty()) __builtin_trap();
    return 0;
  }
  if (sql->empty()) __builtin_trap();
  (void)chunk->describe();
  return 0;
}
