#include "binlog/event_type.h"

namespace cdc::binlog {

std::string_view event_type_name(EventType type) noexcept {
  switch (type) {
    case EventType::unknown: return "UNKNOWN_EVENT";
    case EventType::start_v3: return "START_EVENT_V3";
    case EventType::query: return "QUERY_EVENT";
    case EventType::stop: return "STOP_EVENT";
    case EventType::rotate: return "ROTATE_EVENT";
    case EventType::intvar: return "INTVAR_EVENT";
    case EventType::load: return "LOAD_EVENT";
    case EventType::slave: return "SLAVE_EVENT";
    case EventType::create_file: return "CREATE_FILE_EVENT";
    case EventType::append_block: return "APPEND_BLOCK_EVENT";
    case EventType::exec_load: return "EXEC_LOAD_EVENT";
    case EventType::delete_file: return "DELETE_FILE_EVENT";
    case EventType::new_load: return "NEW_LOAD_EVENT";
    case EventType::rand: return "RAND_EVENT";
    case EventType::user_var: return "USER_VAR_EVENT";
    case EventType::format_description: return "FORMAT_DESCRIPTION_EVENT";
    case EventType::xid: return "XID_EVENT";
    case EventType::begin_load_query: return "BEGIN_LOAD_QUERY_EVENT";
    case EventType::execute_load_query: return "EXECUTE_LOAD_QUERY_EVENT";
    case EventType::table_map: return "TABLE_MAP_EVENT";
    case EventType::pre_ga_write_rows: return "PRE_GA_WRITE_ROWS_EVENT";
    case EventType::pre_ga_update_rows: return "PRE_GA_UPDATE_ROWS_EVENT";
    case EventType::pre_ga_delete_rows: return "PRE_GA_DELETE_ROWS_EVENT";
    case EventType::write_rows_v1: return "WRITE_ROWS_EVENT_V1";
    case EventType::update_rows_v1: return "UPDATE_ROWS_EVENT_V1";
    case EventType::delete_rows_v1: return "DELETE_ROWS_EVENT_V1";
    case EventType::incident: return "INCIDENT_EVENT";
    case EventType::heartbeat: return "HEARTBEAT_LOG_EVENT";
    case EventType::ignorable: return "IGNORABLE_LOG_EVENT";
    case EventType::rows_query: return "ROWS_QUERY_LOG_EVENT";
    case EventType::write_rows_v2: return "WRITE_ROWS_EVENT";
    case EventType::update_rows_v2: return "UPDATE_ROWS_EVENT";
    case EventType::delete_rows_v2: return "DELETE_ROWS_EVENT";
    case EventType::gtid: return "GTID_LOG_EVENT";
    case EventType::anonymous_gtid: return "ANONYMOUS_GTID_LOG_EVENT";
    case EventType::previous_gtids: return "PREVIOUS_GTIDS_LOG_EVENT";
    case EventType::transaction_context: return "TRANSACTION_CONTEXT_EVENT";
    case EventType::view_change: return "VIEW_CHANGE_EVENT";
    case EventType::xa_prepare: return "XA_PREPARE_LOG_EVENT";
    case EventType::partial_update_rows: return "PARTIAL_UPDATE_ROWS_EVENT";
    case EventType::transaction_payload: return "TRANSACTION_PAYLOAD_EVENT";
    case EventType::heartbeat_v2: return "HEARTBEAT_LOG_EVENT_V2";
    case EventType::gtid_tagged: return "GTID_TAGGED_LOG_EVENT";
    case EventType::mariadb_annotate_rows: return "ANNOTATE_ROWS_EVENT";
    case EventType::mariadb_binlog_checkpoint: return "BINLOG_CHECKPOINT_EVENT";
    case EventType::mariadb_gtid: return "GTID_EVENT";
    case EventType::mariadb_gtid_list: return "GTID_LIST_EVENT";
    case EventType::mariadb_start_encryption: return "START_ENCRYPTION_EVENT";
    case EventType::mariadb_query_compressed: return "QUERY_COMPRESSED_EVENT";
    case EventType::mariadb_write_rows_compressed_v1: return "WRITE_ROWS_COMPRESSED_EVENT_V1";
    case EventType::mariadb_update_rows_compressed_v1: return "UPDATE_ROWS_COMPRESSED_EVENT_V1";
    case EventType::mariadb_delete_rows_compressed_v1: return "DELETE_ROWS_COMPRESSED_EVENT_V1";
    case EventType::mariadb_write_rows_compressed: return "WRITE_ROWS_COMPRESSED_EVENT";
    case EventType::mariadb_update_rows_compressed: return "UPDATE_ROWS_COMPRESSED_EVENT";
    case EventType::mariadb_delete_rows_compressed: return "DELETE_ROWS_COMPRESSED_EVENT";
  }
  return {};
}

}  // namespace cdc::binlog
