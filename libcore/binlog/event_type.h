#pragma once

#include <cstdint>
#include <string_view>

namespace cdc::binlog {

// Event type codes as the servers write them (MySQL libbinlogevents/include/binlog_event.h
// Log_event_type; MariaDB sql/log_event.h). The numbers are on the wire.
enum class EventType : std::uint8_t {
  unknown = 0,
  start_v3 = 1,                    // START_EVENT_V3
  query = 2,                       // QUERY_EVENT
  stop = 3,                        // STOP_EVENT
  rotate = 4,                      // ROTATE_EVENT
  intvar = 5,                      // INTVAR_EVENT
  load = 6,                        // LOAD_EVENT
  slave = 7,                       // SLAVE_EVENT
  create_file = 8,                 // CREATE_FILE_EVENT
  append_block = 9,                // APPEND_BLOCK_EVENT
  exec_load = 10,                  // EXEC_LOAD_EVENT
  delete_file = 11,                // DELETE_FILE_EVENT
  new_load = 12,                   // NEW_LOAD_EVENT
  rand = 13,                       // RAND_EVENT
  user_var = 14,                   // USER_VAR_EVENT
  format_description = 15,         // FORMAT_DESCRIPTION_EVENT
  xid = 16,                        // XID_EVENT
  begin_load_query = 17,           // BEGIN_LOAD_QUERY_EVENT
  execute_load_query = 18,         // EXECUTE_LOAD_QUERY_EVENT
  table_map = 19,                  // TABLE_MAP_EVENT
  pre_ga_write_rows = 20,          // PRE_GA_WRITE_ROWS_EVENT (5.1.0-5.1.15)
  pre_ga_update_rows = 21,         // PRE_GA_UPDATE_ROWS_EVENT
  pre_ga_delete_rows = 22,         // PRE_GA_DELETE_ROWS_EVENT
  write_rows_v1 = 23,              // WRITE_ROWS_EVENT_V1
  update_rows_v1 = 24,             // UPDATE_ROWS_EVENT_V1
  delete_rows_v1 = 25,             // DELETE_ROWS_EVENT_V1
  incident = 26,                   // INCIDENT_EVENT
  heartbeat = 27,                  // HEARTBEAT_LOG_EVENT
  ignorable = 28,                  // IGNORABLE_LOG_EVENT
  rows_query = 29,                 // ROWS_QUERY_LOG_EVENT
  write_rows_v2 = 30,              // WRITE_ROWS_EVENT
  update_rows_v2 = 31,             // UPDATE_ROWS_EVENT
  delete_rows_v2 = 32,             // DELETE_ROWS_EVENT
  gtid = 33,                       // GTID_LOG_EVENT
  anonymous_gtid = 34,             // ANONYMOUS_GTID_LOG_EVENT
  previous_gtids = 35,             // PREVIOUS_GTIDS_LOG_EVENT
  transaction_context = 36,        // TRANSACTION_CONTEXT_EVENT
  view_change = 37,                // VIEW_CHANGE_EVENT
  xa_prepare = 38,                 // XA_PREPARE_LOG_EVENT
  partial_update_rows = 39,        // PARTIAL_UPDATE_ROWS_EVENT
  transaction_payload = 40,        // TRANSACTION_PAYLOAD_EVENT
  heartbeat_v2 = 41,               // HEARTBEAT_LOG_EVENT_V2
  gtid_tagged = 42,                // GTID_TAGGED_LOG_EVENT (MySQL 8.3+)
  mariadb_annotate_rows = 160,     // ANNOTATE_ROWS_EVENT
  mariadb_binlog_checkpoint = 161, // BINLOG_CHECKPOINT_EVENT
  mariadb_gtid = 162,              // GTID_EVENT
  mariadb_gtid_list = 163,         // GTID_LIST_EVENT
  mariadb_start_encryption = 164,  // START_ENCRYPTION_EVENT
  mariadb_query_compressed = 165,  // QUERY_COMPRESSED_EVENT
  mariadb_write_rows_compressed_v1 = 166,   // WRITE_ROWS_COMPRESSED_EVENT_V1
  mariadb_update_rows_compressed_v1 = 167,  // UPDATE_ROWS_COMPRESSED_EVENT_V1
  mariadb_delete_rows_compressed_v1 = 168,  // DELETE_ROWS_COMPRESSED_EVENT_V1
  mariadb_write_rows_compressed = 169,      // WRITE_ROWS_COMPRESSED_EVENT
  mariadb_update_rows_compressed = 170,     // UPDATE_ROWS_COMPRESSED_EVENT
  mariadb_delete_rows_compressed = 171,     // DELETE_ROWS_COMPRESSED_EVENT
};

// The server's name for the type ("WRITE_ROWS_EVENT"), or "UNKNOWN_EVENT(<n>)"-style text is
// left to the caller: this returns an empty view for codes no server defines.
[[nodiscard]] std::string_view event_type_name(EventType type) noexcept;
[[nodiscard]] inline std::string_view event_type_name(std::uint8_t code) noexcept {
  return event_type_name(static_cast<EventType>(code));
}

}  // namespace cdc::binlog
