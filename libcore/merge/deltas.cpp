#include "merge/deltas.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cstdint>
#include <string>
#include <unordered_map>

#include "binlog/ddl_target.h"
#include "merge/json_scan.h"
#include "merge/positions.h"
#include "ndjson/writer.h"

namespace cdc::merge {

namespace {

constexpr std::string_view kOpPrefix = R"({"op":")";

// Which table a line is for, by the raw quoted names: quoted db, '.', quoted table.
std::string table_key(std::string_view quoted_db, std::string_view quoted_table) {
  std::string key;
  key.reserve(quoted_db.size() + 1 + quoted_table.size());
  key.append(quoted_db).push_back('.');
  key.append(quoted_table);
  return key;
}

// The raw values of a table's key and identity columns in one row image.
struct ImageValues {
  std::vector<std::string_view> key;
  std::vector<std::string_view> identity;
};

class Applier {
 public:
  Applier(LineReader& reader, const DeltaContext& context, EffectStore& effects)
      : reader_(reader), context_(context), effects_(effects) {
    for (std::size_t t = 0; t < context.tables.size(); ++t)
      by_name_.emplace(table_key(context.tables[t].quoted_db, context.tables[t].quoted_table), t);
  }

  Result<DeltaSummary> run() {
    for (;;) {
      auto more = reader_.next();
      if (!more) return fail(more.error());
      if (!*more) break;
      if (auto done = line(reader_.line()); !done) return fail(done.error());
    }
    return summary_;
  }

 private:
  Result<void> line(std::string_view text) {
    std::string_view op;
    if (text.substr(0, kOpPrefix.size()) == kOpPrefix) {
      const std::size_t end = text.find('"', kOpPrefix.size());
      if (end != std::string_view::npos) op = text.substr(kOpPrefix.size(), end - kOpPrefix.size());
    }
    if (op == "commit" || op == "incident") return {};
    if (op == "c" || op == "u" || op == "d") {
      // db and table come right after op and v: find them without parsing the line.
      MemberScanner scanner(text);
      std::string_view key;
      std::string_view value;
      std::string_view db;
      std::string_view table;
      for (int i = 0; i < 6 && (db.empty() || table.empty()) && scanner.next(key, value); ++i) {
        if (key == "\"db\"") db = value;
        if (key == "\"table\"") table = value;
      }
      if (!db.empty() && !table.empty()) {
        scratch_ = table_key(db, table);
        const auto found = by_name_.find(scratch_);
        if (found == by_name_.end()) return {};
        return parse_and_apply(text, found->second);
      }
    } else if (trim_json_space(text).empty()) {
      return {};
    }
    return parse_and_apply(text, SIZE_MAX);
  }

  // table_index: the table, when the prefix scan found it; SIZE_MAX to look it up.
  Result<void> parse_and_apply(std::string_view text, std::size_t table_index) {
    simdjson::dom::object record;
    if (const auto error = parser_.parse(text.data(), text.size(), true).get_object().get(record); error) {
      if (!reader_.terminated())
        return fail(reader_.error_here("torn last line: the input ends mid-record (the writer was probably interrupted)"));
      return fail(reader_.error_here(fmt::format("malformed JSON: {}", simdjson::error_message(error))));
    }
    std::string_view op;
    if (record["op"].get_string().get(op) != simdjson::SUCCESS)
      return fail(reader_.error_here("no \"op\" string: not a cdc-stream output line"));
    if (op == "ddl") return ddl(record);
    if (op != "c" && op != "u" && op != "d") return {};  // commit, incident, future kinds
    std::string_view db;
    std::string_view table_name;
    if (record["db"].get_string().get(db) != simdjson::SUCCESS ||
        record["table"].get_string().get(table_name) != simdjson::SUCCESS)
      return fail(reader_.error_here("a change without \"db\" and \"table\" strings"));
    if (table_index == SIZE_MAX) {
      const auto found = by_name_.find(table_key(ndjson::quoted(db), ndjson::quoted(table_name)));
      if (found == by_name_.end()) return {};
      table_index = found->second;
    }
    const TableInfo& table = context_.tables[table_index];
    bool partial = false;
    if (record["partial"].get_bool().get(partial) == simdjson::SUCCESS && partial)
      return fail(reader_.error_here(fmt::format(
          "{}.{}: the change has a partial row image: cdc-merge needs full images (binlog_row_image=FULL)", db,
          table_name)));
    auto position = event_position(record);
    if (!position) return fail(position.error());
    if (is_after(*position, gtids_, context_.high)) {
      ++summary_.changes_after_high;
      return {};
    }
    if (!is_after(*position, gtids_, table.min_low)) return {};
    // One scan of the line: the raw images, the key and identity values inside them, ts_ms.
    std::string_view before;
    std::string_view after;
    std::string_view ts_ms;
    MemberScanner scanner(text);
    std::string_view key;
    while (scanner.next_key(key)) {
      const bool is_before = key == "\"before\"";
      if ((is_before || key == "\"after\"") && scanner.value_text().substr(0, 1) == "{") {
        ImageValues& values = is_before ? before_values_ : after_values_;
        auto image = image_values(scanner.value_text(), table, values);
        if (!image) return fail(image.error());
        (is_before ? before : after) = *image;
        scanner.value_done(image->size());
        continue;
      }
      std::string_view value;
      if (!scanner.take_value(value)) break;
      if (key == "\"ts_ms\"") ts_ms = value;
    }
    if (scanner.failed()) return fail(reader_.error_here("not a JSON object"));
    if (ts_ms.empty()) return fail(reader_.error_here("a change without \"ts_ms\""));
    bool applied = false;
    if (op != "c") {
      auto side = remove_side(before, table, *position);
      if (!side) return fail(side.error());
      applied = applied || *side;
    }
    if (op != "d") {
      auto side = put_side(after, table, *position, ts_ms);
      if (!side) return fail(side.error());
      applied = applied || *side;
    }
    if (applied) ++summary_.changes_applied;
    return {};
  }

  Result<EventPosition> event_position(simdjson::dom::object record) {
    simdjson::dom::object pos;
    if (record["pos"].get_object().get(pos) != simdjson::SUCCESS)
      return fail(reader_.error_here("\"pos\" is missing or not an object"));
    EventPosition position;
    simdjson::dom::element gtid;
    if (pos["gtid"].get(gtid) == simdjson::SUCCESS && !gtid.is_null()) {
      if (gtid.get_string().get(position.gtid) != simdjson::SUCCESS)
        return fail(reader_.error_here("\"pos\".\"gtid\" is not a string"));
    }
    if (pos["file"].get_string().get(position.file) != simdjson::SUCCESS ||
        pos["offset"].get_uint64().get(position.offset) != simdjson::SUCCESS)
      return fail(reader_.error_here("\"pos\" lacks \"file\" or \"offset\""));
    if (context_.high.kind != gtid::Position::Kind::file)
      if (auto set = gtids_.set(context_.high.kind, position.gtid); !set)
        return fail(reader_.error_here(set.error().message));
    return position;
  }

  // Scans the image at the start of text: the raw values of the key and identity columns;
  // returns the image's text.
  Result<std::string_view> image_values(std::string_view text, const TableInfo& table, ImageValues& values) {
    values.key.assign(table.quoted_key.size(), {});
    values.identity.assign(table.quoted_identity.size(), {});
    MemberScanner scanner(text);
    std::string_view key;
    std::string_view value;
    while (scanner.next(key, value)) {
      for (std::size_t i = 0; i < table.quoted_key.size(); ++i)
        if (key == table.quoted_key[i]) values.key[i] = value;
      for (std::size_t i = 0; i < table.quoted_identity.size(); ++i)
        if (key == table.quoted_identity[i]) values.identity[i] = value;
    }
    if (scanner.failed()) return fail(reader_.error_here("a row image is not a JSON object"));
    return text.substr(0, scanner.consumed());
  }

  // Error when an image lacks a key or identity column.
  Result<void> check_values(const ImageValues& values, std::string_view which, const TableInfo& table) {
    const auto missing = [&](const std::vector<std::string_view>& got, const std::vector<std::string>& names,
                             std::string_view role) -> Result<void> {
      for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i].empty())
          return fail(reader_.error_here(fmt::format(
              "{}.{}: the {} image has no column \"{}\" ({}): cdc-merge needs full row images "
              "(binlog_row_image=FULL) with column names (binlog_row_metadata=FULL)",
              table.db, table.table, which, names[i], role)));
      return {};
    };
    if (auto checked = missing(values.key, table.key, "a chunk key column"); !checked) return checked;
    if (table.identity)
      if (auto checked = missing(values.identity, *table.identity, "an identity column"); !checked) return checked;
    return {};
  }

  // The group the row belongs to, when the change is after that chunk's low.
  Result<std::optional<std::uint32_t>> group_for(const TableInfo& table, const ImageValues& values,
                                                 const EventPosition& position) {
    auto chunk = find_chunk(table, values.key, sort_key_);
    if (!chunk) return fail(reader_.error_here(chunk.error().message));
    if (!*chunk) return std::optional<std::uint32_t>{};
    if (!is_after(position, gtids_, context_.chunks[**chunk].low)) return std::optional<std::uint32_t>{};
    return std::optional<std::uint32_t>{context_.chunk_group[**chunk]};
  }

  void identity_text(const TableInfo& table, const ImageValues& values, std::string_view image) {
    identity_.clear();
    if (!table.identity)
      identity_.append(image);
    else
      append_object(table.quoted_identity, values.identity, identity_);
  }

  Result<bool> remove_side(std::string_view image, const TableInfo& table, const EventPosition& position) {
    if (image.empty() || image.front() != '{')
      return fail(reader_.error_here("the before image is missing or not an object"));
    if (auto got = check_values(before_values_, "before", table); !got) return fail(got.error());
    auto group = group_for(table, before_values_, position);
    if (!group) return fail(group.error());
    if (!*group) return false;
    identity_text(table, before_values_, image);
    if (table.identity) {
      if (auto set = effects_.set_absent(**group, identity_); !set) return fail(set.error());
    } else if (auto set = effects_.add_count(**group, identity_, -1, {}); !set) {
      return fail(set.error());
    }
    return true;
  }

  Result<bool> put_side(std::string_view image, const TableInfo& table, const EventPosition& position,
                        std::string_view ts_ms) {
    if (image.empty() || image.front() != '{')
      return fail(reader_.error_here("the after image is missing or not an object"));
    if (auto got = check_values(after_values_, "after", table); !got) return fail(got.error());
    auto group = group_for(table, after_values_, position);
    if (!group) return fail(group.error());
    if (!*group) return false;
    identity_text(table, after_values_, image);
    // The row as cdc-snapshot would have written it.
    line_.clear();
    line_.append(R"({"op":"r","v":1,"db":)").append(table.quoted_db);
    line_.append(R"(,"table":)").append(table.quoted_table).append(R"(,"key":)");
    append_object(table.quoted_key, after_values_.key, line_);
    line_.append(R"(,"before":null,"after":)");
    if (table.identity) {
      // The image, most of the line, is read back from the mapped deltas when they are a file.
      const std::uint64_t image_offset =
          reader_.line_offset() + static_cast<std::uint64_t>(image.data() - reader_.line().data());
      if (effects_.has_source(image_offset, image.size())) {
        tail_.assign(R"(,"ts_ms":)").append(ts_ms).append("}\n");
        if (auto set = effects_.set_present_split(**group, identity_, line_, image_offset, image.size(), tail_); !set)
          return fail(set.error());
        return true;
      }
    }
    line_.append(image);
    line_.append(R"(,"ts_ms":)").append(ts_ms).append("}\n");
    if (table.identity) {
      if (auto set = effects_.set_present(**group, identity_, line_); !set) return fail(set.error());
    } else if (auto set = effects_.add_count(**group, identity_, 1, line_); !set) {
      return fail(set.error());
    }
    return true;
  }

  Result<void> ddl(simdjson::dom::object record) {
    std::string_view db;
    std::string_view sql;
    if (record["db"].get_string().get(db) != simdjson::SUCCESS ||
        record["sql"].get_string().get(sql) != simdjson::SUCCESS)
      return fail(reader_.error_here("a ddl line without \"db\" and \"sql\" strings"));
    const binlog::DdlTarget target = binlog::ddl_target(sql, db);
    std::vector<const TableInfo*> hit;
    for (const TableInfo& table : context_.tables) {
      bool names = false;
      for (const auto& changed : target.tables)
        if (changed.database == table.db && changed.table == table.table) names = true;
      if (target.parsed && target.tables.empty() && target.database == table.db) names = true;
      if (names) hit.push_back(&table);
    }
    if (hit.empty()) return {};
    auto position = event_position(record);
    if (!position) return fail(position.error());
    if (is_after(*position, gtids_, context_.high)) return {};
    for (const TableInfo* table : hit) {
      if (!is_after(*position, gtids_, table->min_low)) continue;
      std::string shown(sql.substr(0, 200));
      if (sql.size() > 200) shown += "...";
      return fail(reader_.error_here(fmt::format("DDL on {}.{} during the snapshot ({}): snapshot the table again",
                                                 table->db, table->table, shown)));
    }
    return {};
  }

  LineReader& reader_;
  const DeltaContext& context_;
  EffectStore& effects_;
  std::unordered_map<std::string, std::size_t> by_name_;
  simdjson::dom::parser parser_;
  EventGtidCache gtids_;
  DeltaSummary summary_;
  ImageValues before_values_;
  ImageValues after_values_;
  std::string scratch_;
  std::string sort_key_;
  std::string identity_;
  std::string line_;
  std::string tail_;
};

}  // namespace

void append_object(std::span<const std::string> quoted_names, std::span<const std::string_view> values,
                   std::string& out) {
  out.push_back('{');
  for (std::size_t i = 0; i < quoted_names.size(); ++i) {
    if (i > 0) out.push_back(',');
    out.append(quoted_names[i]).push_back(':');
    out.append(values[i]);
  }
  out.push_back('}');
}

Result<DeltaSummary> read_deltas(LineReader& reader, const DeltaContext& context, EffectStore& effects) {
  Applier applier(reader, context, effects);
  return applier.run();
}

}  // namespace cdc::merge
