#pragma once

// The inside of output/debezium.cpp, shared by the two files that implement the converter:
// debezium.cpp reads the canonical lines (their members, table lines, row images and keys);
// debezium_events.cpp writes Debezium's events (the envelope and its source block, snapshot
// rows, changes and tombstones, transaction metadata, schema changes). Not an interface:
// output/debezium.h is.

#include "output/debezium.h"

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <simdjson.h>

#include "ndjson/json_scan.h"
#include "ndjson/writer.h"
#include "output/converter.h"
#include "output/debezium_schemas.h"
#include "output/debezium_values.h"
#include "output/format.h"
#include "output/type_text.h"
#include "util/text.h"

namespace cdc::output::debezium_inside {

// The Debezium release whose events these reproduce (FORMATS: envelope and source of 2.7+).
inline constexpr std::string_view kVersion = "3.6.1.Final";

struct Table {
  std::string db;
  std::string name;
  std::vector<Column> columns;
  std::vector<std::size_t> key_columns;  // indexes into columns, in key order
  bool has_key = false;
  // Every column's value is the same JSON in Debezium's row struct as in the canonical image
  // (Kind::verbatim): a change line's images and key objects are copied as they are.
  bool verbatim = true;
  std::string topic;
  std::string quoted_db;
  std::string quoted_table;
  // The table line's pos, as JSON: a merged snapshot's source.file and source.pos.
  std::string snapshot_file = "\"\"";
  std::string snapshot_pos = "0";
  std::string value_schema;  // the envelope's Connect schema (schemas.enable)
  std::string key_schema;
};

// The members of one canonical line the converter reads, as raw JSON text; before and after
// of a row line already converted (DebeziumConverter::scan_line).
struct LineParts {
  std::string_view op;
  std::string_view db;
  std::string_view table;
  std::string_view before;
  std::string_view after;
  std::string_view pos;
  std::string_view server_id;
  std::string_view thread;
  std::string_view ts_ms;
  std::string_view sql;
  std::string_view query;  // --include-query's statement, JSON text
  const RowLine* row = nullptr;  // the writer's view of a change line: pos's members known
};

// Topic names: characters outside [A-Za-z0-9._-] become '_' (DefaultTopicNamingStrategy).
inline std::string topic_name(std::string_view text) {
  std::string topic(text);
  for (char& c : topic) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '.' || c == '_' ||
                         c == '-';
    if (!allowed) c = '_';
  }
  return topic.substr(0, 249);
}

class DebeziumConverter final : public Converter {
 public:
  explicit DebeziumConverter(const OutputOptions& options)
      : options_(options.debezium),
        key_(options.kafka_key),
        topic_(options.topic_field),
        values_(options.debezium, options.flink) {
    source_head_ = fmt::format("\"version\":\"{}\",\"connector\":\"mysql\",\"name\":{}", kVersion,
                               ndjson::quoted(options_.topic_prefix));
    transaction_topic_ = topic_name(options_.topic_prefix + ".transaction");
    schema_topic_ = topic_name(options_.topic_prefix);
  }

  Result<void> convert(std::string_view line, ndjson::Writer& out) override;

  // A change line from the tool that wrote it (stream::ChangeWriter): its members need no
  // scan, and a verbatim table's images and keys are copied. The writer's lines are whole and
  // match their table line, which the scanning path checks member by member.
  Result<void> convert_row(const RowLine& row, ndjson::Writer& out) override;

  bool uses_before_key() const noexcept override { return true; }

  Result<void> finish(ndjson::Writer& out) override;

  void drop_held() noexcept override;

 private:
  struct Transaction {
    bool open = false;
    std::string id;
    std::string quoted_id;  // id as a JSON string, once per transaction
    std::uint64_t total = 0;
    std::vector<std::pair<std::string, std::uint64_t>> per_table;  // "db.table", count
    void reset() {
      open = false;
      total = 0;
      per_table.clear();
    }
  };

  static bool is_row_op(std::string_view op) noexcept;

  // The members the converter reads. A row line's images are converted as they are met (into
  // before_writer_ and after_writer_, their key columns noted), so that each is scanned once:
  // "op", "db" and "table" come before them (cdc-ndjson(5)).
  Result<void> scan_line(std::string_view line, LineParts& parts);

  // ---- table lines ----

  Result<void> read_table_line(std::string_view line);

  void build_schemas(Table& table) const;

  Result<Table*> table_of(const LineParts& parts);

  // One row image as Debezium's row struct; the key columns' converted values are noted in
  // key_spans (offsets into out's buffer) for the key struct.
  // raw starts with the image (the rest of the line may follow); returns the image's length.
  Result<std::size_t> write_image(const Table& table, std::string_view raw, ndjson::Writer& out,
                                  std::vector<std::pair<std::size_t, std::size_t>>& key_spans);

  // {"id":7} from the key columns' values in image (a Writer holding one image).
  void write_key(const Table& table, const ndjson::Writer& image,
                 const std::vector<std::pair<std::size_t, std::size_t>>& spans, std::string& key);

  // ---- the envelope ----

  struct Source {
    std::string_view ts_ms = "0";
    std::string_view server_id = "0";
    std::string_view gtid = "null";
    std::string_view file = "\"\"";
    std::string_view pos = "0";
    std::string_view row = "0";
    std::string_view thread = "null";
    std::string_view table = "null";
    std::string_view db;
    std::string_view query = "null";  // include.query: only with --include-query, never on snapshot rows
  };

  // A change's or DDL's "pos" object: source.file, pos (the event's offset), gtid, row.
  static void read_pos(std::string_view pos, Source& source);

  // source: version, connector, name, ts_ms, snapshot, db, sequence, ts_us, ts_ns, table,
  // server_id, gtid, file, pos, row, thread, query. Returns where the snapshot marker's value
  // begins in out's buffer.
  std::size_t write_source(const Source& source, std::string_view snapshot, ndjson::Writer& out);

  // ts_us and ts_ns from a millisecond count, as Debezium derives them when the source has
  // milliseconds only. Built once per distinct ts_ms: the events of one second share it.
  void write_scaled_times(std::string_view ts_ms, ndjson::Writer& out);

  // The envelope: before, after, source, transaction, op, ts_ms, ts_us, ts_ns. The
  // connector's processing time is the change's own time here, so that the same input gives
  // the same bytes (a rerun cut back to its state writes what the first run wrote).
  std::size_t write_envelope(std::string_view before, std::string_view after, const Source& source,
                             std::string_view snapshot, std::string_view op, const std::string* transaction_block,
                             ndjson::Writer& out);

  // One output line: [TOPIC<TAB>][KEY<TAB>]VALUE, or [TOPIC<TAB>]KEY<TAB> for a tombstone
  // (value nullopt). Returns where value begins in line_.
  // key: "" for a table without a key (an empty key: kcat -Z sends it as null).
  std::size_t compose(std::string_view topic, std::string_view key, std::string_view key_schema,
                      std::optional<std::string_view> value, std::string_view value_schema);

  static void put_line(std::string_view line, ndjson::Writer& out);

  // ---- snapshot rows ----

  Result<void> snapshot_row(const LineParts& parts, ndjson::Writer& out);

  // The held snapshot row, now that what follows is known: another row of `next` (nullptr:
  // no further row). Markers as RelationalSnapshotChangeEventSource sets them.
  void release_held(ndjson::Writer& out, const Table* next);

  // ---- changes ----

  // keys_given: key_text_ (d, u) and after_key_text_ (c, u) hold the key structs already.
  Result<void> change(const LineParts& parts, ndjson::Writer& out, bool keys_given);

  void emit_change(const Table& table, const Source& source, std::string_view before, std::string_view after,
                   std::string_view op, std::string_view key, ndjson::Writer& out);

  void tombstone(const Table& table, std::string_view key, ndjson::Writer& out);

  // ---- transaction metadata ----

  // The data event's transaction block, after the BEGIN event when it is the transaction's
  // first. The id is the GTID, or file=F,pos=N of the first change without GTIDs.
  const std::string& transaction_event(const Table& table, const Source& source, ndjson::Writer& out);

  void transaction_status(std::string_view status, std::string_view ts_ms, ndjson::Writer& out);

  void end_transaction(const LineParts& parts, ndjson::Writer& out);

  // ---- schema changes ----

  // A DDL as Debezium's schema change event on topic <prefix>, keyed by the database.
  // tableChanges is empty: the new description arrives as the table line before the next
  // change, after the DDL (cdc-formats(7) says so).
  Result<void> schema_change(const LineParts& parts, ndjson::Writer& out);

  DebeziumOptions options_;
  bool key_;
  bool topic_;
  DebeziumValues values_;
  std::string source_head_;  // "version":..,"connector":"mysql","name":<topic.prefix>
  std::string transaction_topic_;
  std::string schema_topic_;
  std::string schema_change_schema_;
  simdjson::dom::parser parser_;
  std::unordered_map<std::string, Table> tables_;
  Table* last_table_ = nullptr;
  std::string id_;
  // Reused per line.
  ndjson::Writer before_writer_;
  ndjson::Writer after_writer_;
  ndjson::Writer value_writer_;
  ndjson::Writer key_writer_;
  std::vector<std::pair<std::size_t, std::size_t>> key_spans_;
  std::vector<std::pair<std::size_t, std::size_t>> after_key_spans_;
  std::string key_text_;
  std::string after_key_text_;
  std::string key_text_scratch_;
  std::string times_of_;  // the ts_ms that times_ holds "ts_us":..,"ts_ns":.. of
  std::string times_;
  std::string line_;
  std::string text_;
  std::string block_;
  // The snapshot row held back until the next line tells its marker.
  std::string held_;
  std::size_t held_marker_at_ = 0;
  const Table* held_table_ = nullptr;
  const Table* previous_snapshot_table_ = nullptr;
  bool held_first_ = false;
  bool held_first_in_table_ = false;
  bool snapshot_seen_ = false;
  Transaction transaction_;

};

}  // namespace cdc::output::debezium_inside
