#pragma once

// Helpers for the cdc-merge tests: hand-written chunk outputs and cdc-stream lines in temp
// files, and a whole merge run with its stdout and stderr captured.

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "order/key_order.h"
#include "merge/run_merge.h"

namespace merge_test {

class TempFiles {
 public:
  TempFiles() {
    std::string pattern = (std::filesystem::temp_directory_path() / "cdc-merge-test.XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    dir_ = pattern;
  }
  ~TempFiles() { std::filesystem::remove_all(dir_); }
  TempFiles(const TempFiles&) = delete;
  TempFiles& operator=(const TempFiles&) = delete;

  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  [[nodiscard]] std::string read(const std::string& path) const {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  [[nodiscard]] const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

struct Outcome {
  cdc::Result<cdc::merge::Summary> result;
  std::string out;
  std::string err;
  [[nodiscard]] std::string message() const { return result ? std::string() : result.error().message; }
};

inline Outcome run_merge(const TempFiles& files, cdc::merge::Options options, const std::string& stdin_text = "") {
  if (options.spill_dir.empty()) options.spill_dir = files.dir();
  const std::string in_path = files.write("stdin.txt", stdin_text);
  const std::string out_path = files.dir() + "/stdout.txt";
  const std::string err_path = files.dir() + "/stderr.txt";
  const int in = ::open(in_path.c_str(), O_RDONLY);
  const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  auto result = cdc::merge::run(options, in, out, err);
  ::close(in);
  ::close(out);
  ::close(err);
  return Outcome{std::move(result), files.read(out_path), files.read(err_path)};
}

// The lines of text without the final op:"high" line's ts_ms (which is the time of the run).
inline std::string without_run_time(const std::string& text) {
  const std::size_t at = text.rfind(",\"ts_ms\":");
  const std::size_t high = text.rfind("{\"op\":\"high\"");
  if (at == std::string::npos || high == std::string::npos || at < high) return text;
  return text.substr(0, at);
}

// Only the op:"r" lines.
inline std::vector<std::string> row_lines(const std::string& text) {
  std::vector<std::string> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(R"({"op":"r")", 0) == 0) rows.push_back(line);
  return rows;
}

// Chunk output pieces, as cdc-snapshot writes them.
struct ChunkSpec {
  std::string db = "t";
  std::string table = "a";
  int index = 0;
  int count = 1;
  std::string low;   // position text
  std::string high;
  std::string key = R"(["id"])";
  std::string key_types = R"J(["int(11)"])J";
  std::string key_collations = "[0]";
  std::string start = "null";
  std::string end = "null";
  std::string identity = R"(["id"])";
  std::vector<std::string> rows;  // "key object|after object"
  std::uint64_t ts = 1000;
  bool rows_bytes = false;  // the high line says how many bytes the rows take, as cdc-snapshot now writes
};

inline std::string file_of(const std::string& position) {
  const std::size_t colon = position.rfind(':');
  if (colon != std::string::npos && position.rfind("binlog.", 0) == 0) return position.substr(0, colon);
  return "binlog.000001";
}
inline std::string offset_of(const std::string& position) {
  const std::size_t colon = position.rfind(':');
  if (colon != std::string::npos && position.rfind("binlog.", 0) == 0) return position.substr(colon + 1);
  return "4";
}

inline std::string row_line(const ChunkSpec& spec, const std::string& key, const std::string& after) {
  return fmt::format(R"({{"op":"r","v":1,"db":"{}","table":"{}","key":{},"before":null,"after":{},"ts_ms":{}}})",
                     spec.db, spec.table, key, after, spec.ts) +
         "\n";
}

inline std::string low_line(const ChunkSpec& c) {
  return fmt::format(
             R"({{"op":"low","v":1,"db":"{}","table":"{}","index":{},"count":{},"position":"{}","file":"{}","offset":{},"key":{},"key_types":{},"key_collations":{},"start":{},"end":{},"identity":{},"ts_ms":{}}})",
             c.db, c.table, c.index, c.count, c.low, file_of(c.low), offset_of(c.low), c.key, c.key_types,
             c.key_collations, c.start, c.end, c.identity, c.ts) +
         "\n";
}

// rows_bytes: written when given.
inline std::string high_line(const ChunkSpec& c, std::optional<std::uint64_t> rows_bytes = std::nullopt) {
  return fmt::format(
             R"({{"op":"high","v":1,"db":"{}","table":"{}","index":{},"count":{},"position":"{}","file":"{}","offset":{},"rows":{},{}"ts_ms":{}}})",
             c.db, c.table, c.index, c.count, c.high, file_of(c.high), offset_of(c.high), c.rows.size(),
             rows_bytes ? fmt::format(R"("rows_bytes":{},)", *rows_bytes) : std::string(), c.ts + 1) +
         "\n";
}

// A table line of t.a (id INT key, v VARCHAR), at `pos` ("null" in a chunk output).
inline std::string table_line(const std::string& pos = "null", std::uint64_t ts = 1000) {
  return fmt::format(
             R"J({{"op":"table","v":1,"db":"t","table":"a","columns":[{{"name":"id","type":"int(11)","nullable":false}},{{"name":"v","type":"varchar(8)","nullable":true,"charset":"utf8mb4","collation":"utf8mb4_general_ci"}}],"key":["id"],"pos":{},"ts_ms":{}}})J",
             pos, ts) +
         "\n";
}

// `described`: with the table line after the low line, as cdc-snapshot writes it.
inline std::string chunk_text(const ChunkSpec& c, bool described = false) {
  std::string text = low_line(c) + (described ? table_line() : std::string());
  const std::size_t rows_begin = text.size();
  for (const std::string& row : c.rows) {
    const std::size_t bar = row.find('|');
    text += row_line(c, row.substr(0, bar), row.substr(bar + 1));
  }
  if (!c.rows_bytes) return text + high_line(c);
  return text + high_line(c, text.size() - rows_begin);
}

// A cdc-stream data line. pos: gtid ("" = null), file, offset.
inline std::string change(const std::string& op, const std::string& before, const std::string& after,
                          const std::string& gtid, const std::string& file, std::uint64_t offset,
                          std::uint64_t ts = 5000, const std::string& db = "t", const std::string& table = "a") {
  return fmt::format(
             R"({{"op":"{}","v":1,"db":"{}","table":"{}","key":null,"before":{},"after":{},"pos":{{"file":"{}","offset":{},"index":0,"gtid":{}}},"server_id":1,"thread":null,"ts_ms":{}}})",
             op, db, table, before, after, file, offset, gtid.empty() ? "null" : "\"" + gtid + "\"", ts) +
         "\n";
}

inline std::string commit(const std::string& gtid, const std::string& position,
                          const std::string& file = "binlog.000001", std::uint64_t offset = 9) {
  return fmt::format(
             R"({{"op":"commit","v":1,"gtid":"{}","pos":{{"file":"{}","offset":{}}},"position":"{}","rows":1,"xid":7,"ts_ms":1}})",
             gtid, file, offset, position) +
         "\n";
}

// The first and last lines of a bounded cdc-stream output (--until).
inline std::string span_start(const std::string& position) {
  return fmt::format(R"({{"op":"span_start","v":1,"position":"{}"}})", position) + "\n";
}
inline std::string span_end(const std::string& position, const std::string& file = "binlog.999999",
                            std::uint64_t offset = 4) {
  return fmt::format(R"({{"op":"span_end","v":1,"position":"{}","pos":{{"file":"{}","offset":{}}},"until":"{}"}})",
                     position, file, offset, position) +
         "\n";
}

// Far before and after every watermark of these tests, per position form.
inline const std::string kEarliestMariadb = "0-1-1";
inline const std::string kLatestMariadb = "0-1-1000000,1-2-1000000,2-3-1000000";

// lines between span lines: deltas that cover any span of the tests (MariaDB positions by
// default).
inline std::string spanned(const std::string& lines, const std::string& from = kEarliestMariadb,
                           const std::string& until = kLatestMariadb) {
  return span_start(from) + lines + span_end(until);
}

// Options for a merge of inputs with deltas up to 0-1-99999, on threads within memory_limit.
inline cdc::merge::Options options_for(const std::vector<std::string>& inputs, const std::string& deltas,
                                       unsigned threads, std::uint64_t memory_limit) {
  cdc::merge::Options options;
  options.inputs = inputs;
  options.deltas = deltas;
  options.until = "0-1-99999";
  options.threads = threads;
  options.memory_limit = memory_limit;
  return options;
}

// The sort key of one JSON key value in order.
inline std::string key(const cdc::order::KeyColumnOrder& order, std::string_view json) {
  std::string out;
  auto done = order.append_sort_key(json, out);
  REQUIRE_MESSAGE(done.has_value(), done.error().message);
  return out;
}

}  // namespace merge_test
