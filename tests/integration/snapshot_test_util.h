#pragma once

// What the cdc-snapshot tests against the live server share: connections as root, the chunk
// line cdc-plan would write for a table, one chunk read through a ChunkReader into a string,
// and reading members back out of the lines as they were written.

#include <doctest/doctest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "mysql/connection.h"
#include "ndjson/writer.h"
#include "records/chunk.h"
#include "snapshot/chunk.h"
#include "snapshot/run_snapshot.h"
#include "test_server.h"

namespace snapshot_test {

// The text of one member's value in a JSON line as it was written (no re-serialization).
inline std::string raw_member(std::string_view line, std::string_view name) {
  const std::string key = "\"" + std::string(name) + "\":";
  const auto at = line.find(key);
  REQUIRE(at != std::string_view::npos);
  std::size_t i = at + key.size();
  const std::size_t from = i;
  int depth = 0;
  bool in_string = false;
  for (; i < line.size(); ++i) {
    const char c = line[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') ++depth;
    else if (c == '}' || c == ']') {
      if (depth == 0) break;
      if (--depth == 0) { ++i; break; }
    } else if (c == ',' && depth == 0) {
      break;
    }
  }
  return std::string(line.substr(from, i - from));
}

inline cdc::mysql::Connection root() {
  auto connection = cdc::mysql::Connection::open(cdc::test::root_account());
  REQUIRE_MESSAGE(connection.has_value(), connection.error().message);
  return std::move(*connection);
}

inline cdc::mysql::QueryResult run(cdc::mysql::Connection& connection, const std::string& sql) {
  auto done = connection.query(sql);
  REQUIRE_MESSAGE(done.has_value(), done.error().message);
  return std::move(*done);
}

// The chunk line cdc-plan would write for db.table, from information_schema.
inline std::string chunk_line(cdc::mysql::Connection& connection, const std::string& db, const std::string& table,
                       const std::string& start = "null", const std::string& end = "null", int index = 0,
                       int count = 1, const std::string& key_type_override = "") {
  const auto info = run(connection,
                        "SELECT c.COLUMN_NAME, c.COLUMN_TYPE, COALESCE(co.ID, 0) FROM information_schema.COLUMNS c "
                        "LEFT JOIN information_schema.COLLATIONS co ON co.COLLATION_NAME = c.COLLATION_NAME "
                        "WHERE c.TABLE_SCHEMA = '" + db + "' AND c.TABLE_NAME = '" + table +
                            "' ORDER BY c.ORDINAL_POSITION");
  REQUIRE(!info.rows.empty());
  cdc::ndjson::Writer w;
  w.begin_object();
  w.field("op", "chunk");
  w.field("v", 1);
  w.field("db", db);
  w.field("table", table);
  w.key("key");
  w.begin_array();
  w.string(*info.rows[0][0]);
  w.end_array();
  w.key("key_types");
  w.begin_array();
  w.string(key_type_override.empty() ? *info.rows[0][1] : key_type_override);
  w.end_array();
  w.key("start");
  w.raw_number("0");  // placeholder, replaced below
  w.key("end");
  w.raw_number("0");
  w.field("index", index);
  w.field("count", count);
  w.key("columns");
  w.begin_array();
  for (const auto& r : info.rows) {
    w.begin_object();
    w.field("name", *r[0]);
    w.field("type", *r[1]);
    w.field("collation_id", std::stoi(*r[2]));
    w.end_object();
  }
  w.end_array();
  w.field("rows_estimate", 0);
  w.end_object();
  std::string line(w.buffered());
  line.replace(line.find("\"start\":0"), 9, "\"start\":" + start);
  line.replace(line.find("\"end\":0"), 7, "\"end\":" + end);
  return line;
}

inline cdc::records::Chunk parse(const std::string& line) {
  simdjson::dom::parser parser;
  simdjson::dom::object record;
  REQUIRE(parser.parse(line).get_object().get(record) == simdjson::SUCCESS);
  auto chunk = cdc::records::parse_chunk(record);
  REQUIRE_MESSAGE(chunk.has_value(), chunk.error().message);
  auto checked = cdc::snapshot::check_bounds(*chunk);
  REQUIRE_MESSAGE(checked.has_value(), checked.error().message);
  return std::move(*chunk);
}

struct Collected {
  std::string text;
  int flushes = 0;
  std::size_t max_capacity = 0;
};

// The high line that ends a chunk's lines says how many bytes its "r" lines take, which is what
// cdc-merge relies on to skip them (merge/chunk_input.cpp).
inline void check_rows_bytes(std::string_view lines) {
  std::uint64_t rows_bytes = 0;
  std::string_view high;
  while (!lines.empty()) {
    const std::size_t end = lines.find('\n');
    REQUIRE(end != std::string_view::npos);
    const std::string_view line = lines.substr(0, end);
    if (line.starts_with(R"({"op":"r",)")) rows_bytes += line.size() + 1;
    if (line.starts_with(R"({"op":"high",)")) high = line;
    lines.remove_prefix(end + 1);
  }
  REQUIRE(!high.empty());
  CHECK(raw_member(high, "rows_bytes") == std::to_string(rows_bytes));
}

// One chunk read into out; on_flush, when given, runs at each flush (while rows are still
// being fetched). Checks the high line's "rows_bytes".
inline cdc::Result<cdc::snapshot::ChunkResult> read(cdc::mysql::Connection& connection, const cdc::records::Chunk& chunk,
                                                    Collected& out, cdc::snapshot::ChunkReader* reader = nullptr,
                                                    const std::function<void()>& on_flush = {}) {
  const std::size_t from = out.text.size();
  cdc::ndjson::Writer writer;
  cdc::snapshot::ChunkReader one_off(cdc::test::cdc_account());
  auto result = (reader != nullptr ? *reader : one_off).read(
      connection, chunk, writer,
      [&](cdc::ndjson::Writer& w, std::uint64_t) -> cdc::Result<void> {
        if (on_flush) on_flush();
        out.text += w.buffered();
        out.max_capacity = std::max(out.max_capacity, w.capacity());
        ++out.flushes;
        w.clear();
        return {};
      });
  out.text += writer.buffered();
  if (result) check_rows_bytes(std::string_view(out.text).substr(from));
  return result;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline std::string op_of(const std::string& line) { return raw_member(line, "op"); }

// The sequence number of domain 0 in a MariaDB GTID position ("0-1-17,1-2-5" -> 17), 0 without.
inline std::uint64_t domain0_seq(const std::string& position) {
  std::istringstream parts(position);
  for (std::string part; std::getline(parts, part, ',');) {
    if (!part.starts_with("0-")) continue;
    return std::stoull(part.substr(part.rfind('-') + 1));
  }
  return 0;
}

}  // namespace snapshot_test
