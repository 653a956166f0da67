#pragma once

// The inside of output/maxwell.cpp, shared by the two files that implement the converter:
// maxwell.cpp writes Maxwell's messages (rows, updates with "old", bootstrap markers, DDL),
// maxwell_values.cpp each value as Maxwell writes it (numbers, dates, binary, ENUM, SET,
// GEOMETRY). Not an interface: output/maxwell.h is.

#include "output/maxwell.h"

#include <array>
#include <charconv>
#include <iterator>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "binlog/ddl_target.h"
#include "ndjson/writer.h"
#include "output/change_rows.h"
#include "output/converter.h"
#include "output/format.h"
#include "output/spill_buffer.h"
#include "output/table_columns.h"
#include "output/value_text.h"
#include "records/kinds.h"
#include "records/row.h"
#include "util/base64.h"

namespace cdc::output::maxwell_inside {

struct BoolOption {
  std::string_view name;
  bool MaxwellOptions::*member;
};

inline constexpr std::array<BoolOption, 11> kBoolOptions = {{
    {"output_binlog_position", &MaxwellOptions::output_binlog_position},
    {"output_gtid_position", &MaxwellOptions::output_gtid_position},
    {"output_xoffset", &MaxwellOptions::output_xoffset},
    {"output_commit_info", &MaxwellOptions::output_commit_info},
    {"output_server_id", &MaxwellOptions::output_server_id},
    {"output_thread_id", &MaxwellOptions::output_thread_id},
    {"output_primary_keys", &MaxwellOptions::output_primary_keys},
    {"output_primary_key_columns", &MaxwellOptions::output_primary_key_columns},
    {"output_nulls", &MaxwellOptions::output_nulls},
    {"output_null_zerodates", &MaxwellOptions::output_null_zerodates},
    {"output_ddl", &MaxwellOptions::output_ddl},
}};

inline constexpr auto kOptionNames = [] {
  std::array<std::string_view, kBoolOptions.size()> names{};
  for (std::size_t i = 0; i < kBoolOptions.size(); ++i) names[i] = kBoolOptions[i].name;
  return names;
}();

// Maxwell's DDL types (DDLMap); statements Maxwell does not report (TRUNCATE, views,
// grants...) give "".
inline std::string_view maxwell_ddl_type(binlog::DdlTarget::Kind kind) {
  using Kind = binlog::DdlTarget::Kind;
  switch (kind) {
    case Kind::create_table: return "table-create";
    case Kind::alter_table:
    case Kind::rename_table:
    case Kind::create_index:
    case Kind::drop_index: return "table-alter";
    case Kind::drop_table: return "table-drop";
    case Kind::create_database: return "database-create";
    case Kind::alter_database: return "database-alter";
    case Kind::drop_database: return "database-drop";
    default: return "";
  }
}

class MaxwellConverter final : public Converter {
 public:
  explicit MaxwellConverter(const OutputOptions& options)
      : options_(options.maxwell),
        flink_(options.flink),
        with_key_(options.kafka_key),
        with_topic_(options.topic_field),
        // Rows wait for their commit line only when it adds something to them.
        hold_rows_(options.maxwell.output_commit_info || options.maxwell.output_xoffset),
        held_(options.maxwell.spill_threshold_bytes) {}

  Result<void> convert(std::string_view line, ndjson::Writer& out) override;

  Result<void> finish(ndjson::Writer& out) override;

  void drop_held() noexcept override { held_.clear(); }

 private:
  // An update's, for "old"; the other changes' images are mostly copied whole (copy_image in
  // row_change), and noting values costs the reading thread, whose time bounds the stream's.
  bool uses_image_values(char op) const noexcept override { return op == 'u'; }

  // A change line from the tool that wrote it: read from its members, not parsed.
  Result<void> convert_row(const RowLine& row, ndjson::Writer& out) override;

  Result<void> row(simdjson::dom::object record, std::string_view line, ndjson::Writer& out);

  Result<void> row_change(const ChangeLine& change, ndjson::Writer& out);

  // Writes the held rows of a transaction: xid on each (when known), xoffset on all but the
  // last, commit:true on the last (RowMap.toJSON). xid null: the commit line had none (a
  // COMMIT query event), or the rows end without one.
  Result<void> write_held(const std::uint64_t* xid, ndjson::Writer& out);

  // "data": the image's columns, then (an update of a minimal row image) the columns only the
  // before image has, in Maxwell's order: after the after image's (writeOldData appends them).
  void write_data(const TableInfo& table, const std::vector<ValueSlot>& slots, ndjson::Writer& out) const;

  // The present columns of slots, those absent from except when it is given.
  void write_columns(const TableInfo& table, const std::vector<ValueSlot>& slots, const std::vector<ValueSlot>* except,
                     ndjson::Writer& out) const;

  // Column at of the row's "data": data's, or the before image's when an update's minimal
  // after image does not hold it.
  const ValueSlot& data_value(const std::vector<ValueSlot>& data, std::size_t at) const;

  // "old": the before-values of the columns whose converted values differ; absent when none
  // does (Maxwell), {} then with --flink (maxwell-json needs "old" on every update). NULLs
  // follow output_nulls, so a change from NULL may leave "old":{} as in Maxwell.
  void write_old(const TableInfo& table);

  // Maxwell's Kafka key (kafka_key_format=hash): {"database":..,"table":..,"pk.<col>":..}
  // with the key names lower-cased; a table without a key gets "_uuid", here derived from
  // the row's position (or, for snapshot rows, the table and the row's number) so that the
  // same input gives the same keys.
  void append_key(const TableInfo& table, const std::vector<ValueSlot>& data, const ChangeLine& change);

  // prefix_ = the topic and a TAB with --topic; the key and its TAB follow with --key.
  void start_prefix(std::string_view db, std::string_view table);

  // Maxwell's key object up to its key columns: {"database":..,"table":.. (no table: a
  // database statement).
  void begin_key(std::string_view db, std::string_view table);

  void end_key();

  // The message built in message_, after prefix_.
  void write_prefixed(ndjson::Writer& out);

  void write_marker(std::string_view type, ndjson::Writer& out);

  void end_bootstrap(ndjson::Writer& out);

  Result<void> ddl(simdjson::dom::object record, ndjson::Writer& out);

  // Whether value() writes every value of the table's columns as its canonical text.
  bool values_verbatim(const TableInfo& table) const;

  // json = the JSON Maxwell writes for the canonical value raw (cdc-formats(7), MAXWELL).
  bool value(const ColumnInfo& column, std::string_view raw, std::string& json);

  // BINARY(n): the server pads a value with zero bytes to n, and the binary log carries it
  // without the trailing zero bytes (Field_string::pack), which is what Maxwell writes; the
  // canonical value is padded again, so a change's loses them here. A snapshot row keeps them:
  // Maxwell's bootstrap SELECTs the padded value.
  bool binary_value(std::string_view raw, std::string& json);

  // ENUM: the member; the empty value of an invalid member is null (EnumColumnDef).
  bool enumeration(const ColumnInfo& column, std::string_view raw, bool is_string, std::string& json);

  // SET: an array of the members (SetColumnDef).
  bool set(const ColumnInfo& column, std::string_view raw, bool is_string, std::string& json);

  const MaxwellOptions options_;
  const bool flink_;
  const bool with_key_;
  const bool with_topic_;
  const bool hold_rows_;
  simdjson::dom::parser parser_;
  TableCatalog catalog_;
  SpillBuffer held_;

  bool from_binlog_ = true;         // the row being converted is a change, not a snapshot row
  bool merge_before_only_ = false;  // the update's data takes the columns only its before image has
  const TableInfo* bootstrap_table_ = nullptr;  // the table whose snapshot rows are being written
  std::int64_t bootstrap_ts_ms_ = 0;
  std::uint64_t snapshot_rows_ = 0;

  // Per table described: whether value() keeps every value as it is (values_verbatim).
  std::unordered_map<const TableInfo*, bool> verbatim_;
  // The message's first members, as last written, and what they were written for.
  std::string head_members_;
  const TableInfo* head_table_ = nullptr;
  std::string_view head_type_;
  std::int64_t head_ts_ = -1;

  std::vector<ValueSlot> before_;
  std::vector<ValueSlot> after_;
  ndjson::Writer message_;
  ndjson::Writer key_;
  ndjson::Writer scratch_;
  std::string prefix_;
  std::string text_;
  std::string bytes_;  // a BINARY(n) value's bytes (binary_value)
  std::string uuid_;

};

}  // namespace cdc::output::maxwell_inside
