// cdc-test-where: the --where evaluator (libcore/filter) on a snapshot's rows, for the
// differential test against the server (tests/integration/filter_differential.py).
//
//   cdc-test-where --rows SNAPSHOT.ndjson --expressions FILE [--key id]
//
// SNAPSHOT.ndjson: a cdc-snapshot output of one table (its table line, then "r" lines).
// FILE: one expression a line. For each, one line on stdout:
//   MATCH <key> <key> ...   the key column's value (raw JSON text) of each row the filter is TRUE on
//   ERROR <message>         the expression was refused (parse or bind)
//   SQL <sql>               (after MATCH) the expression as filter::to_sql writes it
// Exit 0 when every input read, 65 on an input it cannot read.

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <simdjson.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "filter/evaluate.h"
#include "filter/expression.h"
#include "records/table_line.h"

namespace {

struct Row {
  std::vector<std::string> values;  // raw JSON text, in the table line's column order
  std::string key;
};

bool read_lines(const std::string& path, std::vector<std::string>& lines) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return false;
  std::string text;
  char buffer[65536];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
  std::fclose(file);
  std::size_t from = 0;
  while (from < text.size()) {
    std::size_t end = text.find('\n', from);
    if (end == std::string::npos) end = text.size();
    lines.emplace_back(text.substr(from, end - from));
    from = end + 1;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"the --where evaluator on a snapshot's rows (a test tool)"};
  std::string rows_path;
  std::string expressions_path;
  std::string key_column = "id";
  app.add_option("--rows", rows_path)->required();
  app.add_option("--expressions", expressions_path)->required();
  app.add_option("--key", key_column);
  CLI11_PARSE(app, argc, argv);

  std::vector<std::string> lines;
  if (!read_lines(rows_path, lines)) {
    std::fprintf(stderr, "cdc-test-where: cannot read %s\n", rows_path.c_str());
    return 65;
  }
  simdjson::dom::parser parser;
  cdc::records::TableLine table;
  bool have_table = false;
  std::vector<Row> rows;
  for (const std::string& line : lines) {
    if (line.empty()) continue;
    simdjson::dom::object object;
    if (parser.parse(line).get(object) != simdjson::SUCCESS) {
      std::fprintf(stderr, "cdc-test-where: not JSON: %.80s\n", line.c_str());
      return 65;
    }
    std::string_view op;
    if (object["op"].get(op) != simdjson::SUCCESS) continue;
    if (op == "table") {
      auto parsed = cdc::records::parse_table_line(object);
      if (!parsed) {
        std::fprintf(stderr, "cdc-test-where: %s\n", parsed.error().message.c_str());
        return 65;
      }
      table = std::move(*parsed);
      have_table = true;
    } else if (op == "r") {
      if (!have_table) {
        std::fprintf(stderr, "cdc-test-where: an r line before the table line\n");
        return 65;
      }
      simdjson::dom::object after;
      if (object["after"].get(after) != simdjson::SUCCESS) return 65;
      Row row;
      for (const auto& column : table.columns) {
        simdjson::dom::element value;
        row.values.push_back(after[column.name].get(value) == simdjson::SUCCESS ? simdjson::minify(value) : "null");
        if (column.name == key_column) row.key = row.values.back();
      }
      rows.push_back(std::move(row));
    }
  }

  std::vector<std::string> expressions;
  if (!read_lines(expressions_path, expressions)) {
    std::fprintf(stderr, "cdc-test-where: cannot read %s\n", expressions_path.c_str());
    return 65;
  }
  std::string out;
  std::vector<std::string_view> values;
  for (const std::string& text : expressions) {
    if (text.empty()) continue;
    auto expression = cdc::filter::parse_expression(text);
    if (!expression) {
      out += fmt::format("ERROR {}\n", expression.error().message);
      continue;
    }
    auto bound = cdc::filter::BoundFilter::bind(*expression, table.columns);
    if (!bound) {
      out += fmt::format("ERROR {}\n", bound.error().message);
      continue;
    }
    out += "MATCH";
    for (const Row& row : rows) {
      values.clear();
      for (const std::size_t column : bound->columns()) values.push_back(row.values[column]);
      auto truth = bound->evaluate(values);
      if (!truth) {
        std::fprintf(stderr, "cdc-test-where: %s\n", truth.error().message.c_str());
        return 65;
      }
      if (*truth == cdc::filter::Truth::is_true) out += " " + row.key;
    }
    out += fmt::format("\nSQL {}\n", cdc::filter::to_sql(*expression));
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}
