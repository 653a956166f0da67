// cdc-test-replay: applies the data lines of NDJSON files to copies of their tables, strictly.
//
// db.table becomes INTO.table (the tables must exist: CREATE TABLE INTO.t LIKE db.t). op r and
// c insert the after row, u updates every column of after where the primary key equals
// before's, d deletes where it equals before's (a table without a primary key: one row whose
// every column is before's, LIMIT 1); c, u and d are applied at their transaction's
// commit line, and a discard line drops those held since the last commit line; other ops are
// ignored. An insert that hits a
// duplicate key, or an update or delete that matches no row, is an error (exit 1) naming the
// line: that is how a doubled or lost change shows. The connection sets CLIENT_FOUND_ROWS so
// that an update to identical values still counts as matching its row.
//
// Values go back to SQL by the target column's type (information_schema.COLUMNS): numbers as
// written (DOUBLE/FLOAT with an exponent, so they parse as doubles), BINARY/VARBINARY/BLOB from
// base64 to X'..', GEOMETRY from base64 SRID+WKB, TIMESTAMP without its 'Z' (the session runs
// in UTC), other strings as exact _utf8mb4 X'..' literals, JSON objects and arrays as their
// text, null as NULL.
//
// For speed, consecutive inserts into one table become multi-row INSERTs, statements go to the
// server many at a time (multi-statements), and a COMMIT follows about every 1000 changes.

#include <mysql.h>
#include <simdjson.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mysql/sql_text.h"

namespace {

constexpr unsigned kErDupEntry = 1062;  // ER_DUP_ENTRY
constexpr std::size_t kMaxInsertRows = 500;
constexpr std::size_t kMaxPendingStatements = 200;
constexpr std::size_t kMaxPendingBytes = std::size_t{2} << 20;
constexpr std::uint64_t kChangesPerTransaction = 1000;

[[noreturn]] void fatal(std::string_view message) {
  fmt::print(stderr, "cdc-test-replay: {}\n", message);
  std::exit(1);
}



std::optional<std::string> base64_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t buffer = 0;
  int bits = 0;
  std::size_t i = 0;
  for (; i < text.size() && text[i] != '='; ++i) {
    const char c = text[i];
    std::uint32_t value = 0;
    if (c >= 'A' && c <= 'Z')
      value = static_cast<std::uint32_t>(c - 'A');
    else if (c >= 'a' && c <= 'z')
      value = static_cast<std::uint32_t>(c - 'a' + 26);
    else if (c >= '0' && c <= '9')
      value = static_cast<std::uint32_t>(c - '0' + 52);
    else if (c == '+')
      value = 62;
    else if (c == '/')
      value = 63;
    else
      return std::nullopt;
    buffer = (buffer << 6) | value;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  for (; i < text.size(); ++i)
    if (text[i] != '=') return std::nullopt;
  return out;
}

// A JSON value of a row image, kept as the text that becomes a SQL literal.
struct Value {
  enum class Type { null, number, string, boolean, json };
  Type type = Type::null;
  std::string text;  // number: as written; string: unescaped UTF-8; boolean: true/false; json: raw text
};
using Row = std::vector<std::pair<std::string, Value>>;

struct Change {
  char op = 0;  // r, c, u, d
  std::string db;
  std::string table;
  std::string key_json;
  Row before;
  Row after;
};

Row parse_row(simdjson::ondemand::value value) {
  Row row;
  if (value.is_null()) return row;
  for (auto field : value.get_object()) {
    std::string name(field.unescaped_key().value());
    simdjson::ondemand::value v = field.value();
    Value out;
    switch (v.type()) {
      case simdjson::ondemand::json_type::null: out.type = Value::Type::null; break;
      case simdjson::ondemand::json_type::number: {
        out.type = Value::Type::number;
        std::string_view token = v.raw_json_token();
        while (!token.empty() && (token.back() == ' ' || token.back() == '\t' || token.back() == '\r'))
          token.remove_suffix(1);
        out.text = std::string(token);
        break;
      }
      case simdjson::ondemand::json_type::string:
        out.type = Value::Type::string;
        out.text = std::string(std::string_view(v.get_string()));
        break;
      case simdjson::ondemand::json_type::boolean:
        out.type = Value::Type::boolean;
        out.text = v.get_bool() ? "true" : "false";
        break;
      case simdjson::ondemand::json_type::object: {
        out.type = Value::Type::json;
        simdjson::ondemand::object object = v.get_object();
        out.text = std::string(std::string_view(object.raw_json()));
        break;
      }
      case simdjson::ondemand::json_type::array: {
        out.type = Value::Type::json;
        simdjson::ondemand::array array = v.get_array();
        out.text = std::string(std::string_view(array.raw_json()));
        break;
      }
    }
    row.emplace_back(std::move(name), std::move(out));
  }
  return row;
}

// The data line's change, or nullopt for every other op. Throws simdjson_error on bad JSON.
std::optional<Change> parse_change(simdjson::ondemand::parser& parser, const simdjson::padded_string_view line) {
  simdjson::ondemand::document doc = parser.iterate(line);
  Change change;
  for (auto field : doc.get_object()) {
    const std::string_view name = field.unescaped_key();
    simdjson::ondemand::value v = field.value();
    if (name == "op") {
      const std::string_view op = v.get_string();
      if (op != "r" && op != "c" && op != "u" && op != "d") return std::nullopt;
      change.op = op[0];
    } else if (name == "db") {
      change.db = std::string(std::string_view(v.get_string()));
    } else if (name == "table") {
      change.table = std::string(std::string_view(v.get_string()));
    } else if (name == "key") {
      if (v.is_null()) continue;  // a table without a key: rows are found by their values
      simdjson::ondemand::object key = v.get_object();
      change.key_json = std::string(std::string_view(key.raw_json()));
    } else if (name == "before") {
      change.before = parse_row(v);
    } else if (name == "after") {
      change.after = parse_row(v);
    }
  }
  if (change.op == 0) return std::nullopt;
  return change;
}

struct Column {
  std::string name;
  std::string data_type;  // information_schema.COLUMNS.DATA_TYPE, lower case
};

struct Table {
  std::string source;  // db.table, for messages
  std::string target;  // `into`.`table`
  std::map<std::string, Column, std::less<>> columns;
  std::vector<std::string> primary_key;
};

bool is_one_of(std::string_view type, std::initializer_list<std::string_view> types) {
  for (const auto t : types)
    if (type == t) return true;
  return false;
}

// The SQL literal for value in column, or an error text.
std::optional<std::string> literal(const Column& column, const Value& value, std::string& problem) {
  const std::string_view type = column.data_type;
  switch (value.type) {
    case Value::Type::null: return "NULL";
    case Value::Type::boolean: return value.text == "true" ? "TRUE" : "FALSE";
    case Value::Type::number:
      if (is_one_of(type, {"double", "float", "real"}) && value.text.find_first_of("eE") == std::string::npos)
        return value.text + "e0";
      return value.text;
    case Value::Type::json: return cdc::mysql::text_literal(value.text);
    case Value::Type::string: break;
  }
  if (is_one_of(type, {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})) {
    const auto bytes = base64_decode(value.text);
    if (!bytes) {
      problem = fmt::format("column {} ({}): not base64: {:.80}", column.name, type, value.text);
      return std::nullopt;
    }
    return cdc::mysql::bytes_literal(*bytes);
  }
  if (is_one_of(type, {"geometry", "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon",
                       "geometrycollection"})) {
    const auto bytes = base64_decode(value.text);
    if (!bytes || bytes->size() < 4) {
      problem = fmt::format("column {} ({}): not base64 of SRID+WKB: {:.80}", column.name, type, value.text);
      return std::nullopt;
    }
    std::uint32_t srid = 0;
    for (int i = 3; i >= 0; --i) srid = (srid << 8) | static_cast<unsigned char>((*bytes)[static_cast<std::size_t>(i)]);
    return fmt::format("ST_GeomFromWKB(X'{}', {})", cdc::mysql::hex_digits(std::string_view(*bytes).substr(4)), srid);
  }
  std::string_view text = value.text;
  if (type == "timestamp" && !text.empty() && text.back() == 'Z') text.remove_suffix(1);
  return cdc::mysql::text_literal(text);
}

class Connection {
 public:
  Connection(const std::string& socket, const std::string& host, unsigned port, const std::string& user) {
    mysql_ = mysql_init(nullptr);
    if (mysql_ == nullptr) fatal("mysql_init failed");
    mysql_options(mysql_, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    const char* password = std::getenv("MYSQL_PWD");
    if (mysql_real_connect(mysql_, host.empty() ? nullptr : host.c_str(), user.c_str(), password, nullptr, port,
                           socket.empty() ? nullptr : socket.c_str(),
                           CLIENT_FOUND_ROWS | CLIENT_MULTI_STATEMENTS) == nullptr)
      fatal(fmt::format("cannot connect: {}", mysql_error(mysql_)));
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() { mysql_close(mysql_); }

  MYSQL* handle() { return mysql_; }

  void exec(const std::string& sql) {
    if (mysql_real_query(mysql_, sql.data(), sql.size()) != 0)
      fatal(fmt::format("error {}: {} in: {:.300}", mysql_errno(mysql_), mysql_error(mysql_), sql));
    drain();
  }

  std::vector<std::vector<std::string>> rows(const std::string& sql) {
    if (mysql_real_query(mysql_, sql.data(), sql.size()) != 0)
      fatal(fmt::format("error {}: {} in: {:.300}", mysql_errno(mysql_), mysql_error(mysql_), sql));
    std::vector<std::vector<std::string>> out;
    MYSQL_RES* result = mysql_store_result(mysql_);
    if (result == nullptr) fatal(fmt::format("no result set: {} in: {:.300}", mysql_error(mysql_), sql));
    while (MYSQL_ROW row = mysql_fetch_row(result)) {
      const unsigned long* lengths = mysql_fetch_lengths(result);
      auto& values = out.emplace_back();
      for (unsigned i = 0; i < mysql_num_fields(result); ++i)
        values.emplace_back(row[i] == nullptr ? std::string() : std::string(row[i], lengths[i]));
    }
    mysql_free_result(result);
    drain();
    return out;
  }

  std::string string_literal(std::string_view text) {
    std::string out(text.size() * 2 + 1, '\0');
    const auto length = mysql_real_escape_string(mysql_, out.data(), text.data(), static_cast<unsigned long>(text.size()));
    out.resize(length);
    return "'" + out + "'";
  }

  // Discards any further results of a multi-statement query.
  void drain() {
    while (mysql_more_results(mysql_)) {
      if (mysql_next_result(mysql_) > 0)
        fatal(fmt::format("error {}: {}", mysql_errno(mysql_), mysql_error(mysql_)));
      if (MYSQL_RES* result = mysql_store_result(mysql_)) mysql_free_result(result);
    }
  }

 private:
  MYSQL* mysql_ = nullptr;
};

// One row of a batched INSERT, remembered for the diagnosis of a duplicate key.
struct InsertRow {
  std::string location;
  std::string key_json;
  std::string values;  // "(v1, v2, ...)"
};

// A statement waiting to be sent.
struct Statement {
  char op = 0;  // i (insert batch), u, d
  const Table* table = nullptr;
  std::string sql;
  std::string location;  // FILE:LINE
  std::string key_json;
  std::string insert_prefix;  // op i: "INSERT INTO t (cols) VALUES "
  std::vector<InsertRow> rows;  // op i
};

class Replayer {
 public:
  Replayer(Connection& db, std::string into) : db_(db), into_(std::move(into)) {}

  void apply(const Change& change, const std::string& location) {
    const Table& table = table_for(change.db, change.table);
    std::string key_json = change.key_json;
    if (change.op == 'r' || change.op == 'c') {
      std::vector<std::string> names;
      std::vector<std::string> values;
      for (const auto& [name, value] : change.after) {
        names.push_back(cdc::mysql::quote_identifier(name));
        values.push_back(value_literal(table, name, value, location));
      }
      std::string prefix = fmt::format("INSERT INTO {} ({}) VALUES ", table.target, fmt::join(names, ", "));
      if (insert_.op == 0 || insert_.table != &table || insert_.insert_prefix != prefix ||
          insert_.rows.size() >= kMaxInsertRows)
        end_insert_batch();
      if (insert_.op == 0) {
        insert_.op = 'i';
        insert_.table = &table;
        insert_.location = location;
        insert_.insert_prefix = std::move(prefix);
      }
      insert_.rows.push_back({location, key_json, fmt::format("({})", fmt::join(values, ", "))});
      ++inserts_;
      return;
    }
    end_insert_batch();
    Statement statement;
    statement.op = change.op;
    statement.table = &table;
    statement.location = location;
    statement.key_json = key_json.empty() ? row_key_json(table, change.before) : key_json;
    const std::string where = key_condition(table, change.before, location);
    if (change.op == 'u') {
      std::vector<std::string> sets;
      for (const auto& [name, value] : change.after)
        sets.push_back(cdc::mysql::quote_identifier(name) + " = " + value_literal(table, name, value, location));
      statement.sql = fmt::format("UPDATE {} SET {} WHERE {}{}", table.target, fmt::join(sets, ", "), where,
                                  table.primary_key.empty() ? " LIMIT 1" : "");
      ++updates_;
    } else {
      statement.sql = fmt::format("DELETE FROM {} WHERE {}{}", table.target, where,
                                  table.primary_key.empty() ? " LIMIT 1" : "");
      ++deletes_;
    }
    queue(std::move(statement));
  }

  void finish() {
    end_insert_batch();
    send();
    db_.exec("COMMIT");
  }

  void summary(std::uint64_t lines, double seconds) const {
    fmt::print(stderr, "cdc-test-replay: {} lines: {} inserts, {} updates, {} deletes applied to {} in {:.2f} s\n",
               lines, inserts_, updates_, deletes_, into_, seconds);
  }

 private:
  const Table& table_for(const std::string& db, const std::string& name) {
    const std::string source = db + "." + name;
    if (const auto found = tables_.find(source); found != tables_.end()) return found->second;
    Table table;
    table.source = source;
    table.target = cdc::mysql::quote_identifier(into_) + "." + cdc::mysql::quote_identifier(name);
    const std::string schema = db_.string_literal(into_);
    const std::string table_name = db_.string_literal(name);
    for (auto& row : db_.rows(fmt::format(
             "SELECT COLUMN_NAME, LOWER(DATA_TYPE) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = {} AND "
             "TABLE_NAME = {} ORDER BY ORDINAL_POSITION",
             schema, table_name)))
      table.columns.emplace(row[0], Column{row[0], row[1]});
    if (table.columns.empty())
      fatal(fmt::format("table {}.{} does not exist (create it with CREATE TABLE {}.{} LIKE {})", into_, name,
                        cdc::mysql::quote_identifier(into_), cdc::mysql::quote_identifier(name), source));
    for (auto& row : db_.rows(fmt::format(
             "SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = {} AND TABLE_NAME = {} AND "
             "INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX",
             schema, table_name)))
      table.primary_key.push_back(row[0]);
    // Without a primary key a row is its values: updates and deletes find one row with the
    // whole before image (LIMIT 1: identical rows are interchangeable).
    return tables_.emplace(source, std::move(table)).first->second;
  }

  std::string value_literal(const Table& table, const std::string& name, const Value& value,
                            const std::string& location) const {
    const auto column = table.columns.find(name);
    if (column == table.columns.end())
      fatal(fmt::format("{}: column {} of {} is not in {}", location, name, table.source, table.target));
    std::string problem;
    auto text = literal(column->second, value, problem);
    if (!text) fatal(fmt::format("{}: {}: {}", location, table.source, problem));
    return std::move(*text);
  }

  std::string key_condition(const Table& table, const Row& before, const std::string& location) const {
    std::vector<std::string> parts;
    if (table.primary_key.empty()) {
      for (const auto& [name, value] : before)
        parts.push_back(cdc::mysql::quote_identifier(name) + " <=> " + value_literal(table, name, value, location));
      return fmt::format("{}", fmt::join(parts, " AND "));
    }
    for (const auto& key : table.primary_key) {
      const Value* value = nullptr;
      for (const auto& [name, v] : before)
        if (name == key) value = &v;
      if (value == nullptr)
        fatal(fmt::format("{}: {}: the before image has no primary-key column {}", location, table.source, key));
      parts.push_back(cdc::mysql::quote_identifier(key) + " = " + value_literal(table, key, *value, location));
    }
    return fmt::format("{}", fmt::join(parts, " AND "));
  }

  static std::string row_key_json(const Table& table, const Row& row) {
    std::vector<std::string> parts;
    for (const auto& [name, v] : row)
      if (table.primary_key.empty())
        parts.push_back(fmt::format("\"{}\":{}", name, v.type == Value::Type::string ? "\"" + v.text + "\"" : v.text));
    for (const auto& key : table.primary_key)
      for (const auto& [name, v] : row)
        if (name == key) parts.push_back(fmt::format("\"{}\":{}", name, v.type == Value::Type::string ? "\"" + v.text + "\"" : v.text));
    return fmt::format("{{{}}}", fmt::join(parts, ","));
  }

  void end_insert_batch() {
    if (insert_.op == 0) return;
    insert_.sql = insert_.insert_prefix;
    for (std::size_t i = 0; i < insert_.rows.size(); ++i) {
      if (i != 0) insert_.sql += ',';
      insert_.sql += insert_.rows[i].values;
    }
    queue(std::move(insert_));
    insert_ = Statement{};
  }

  void queue(Statement statement) {
    pending_bytes_ += statement.sql.size() + 1;
    pending_.push_back(std::move(statement));
    if (pending_.size() >= kMaxPendingStatements || pending_bytes_ >= kMaxPendingBytes) send();
  }

  // Sends the pending statements as one multi-statement query and checks each one's result.
  void send() {
    if (pending_.empty()) return;
    std::string sql;
    sql.reserve(pending_bytes_);
    for (const auto& statement : pending_) {
      if (!sql.empty()) sql += ';';
      sql += statement.sql;
    }
    MYSQL* mysql = db_.handle();
    int status = mysql_real_query(mysql, sql.data(), sql.size());
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      if (status != 0) fail(pending_[i], mysql_errno(mysql), mysql_error(mysql));
      if (MYSQL_RES* result = mysql_store_result(mysql)) mysql_free_result(result);
      const std::uint64_t affected = mysql_affected_rows(mysql);
      const Statement& statement = pending_[i];
      const std::uint64_t want = statement.op == 'i' ? statement.rows.size() : 1;
      if (affected != want) {
        if (affected == 0) {
          fatal(fmt::format("{}: {} {} key {}", statement.location,
                            statement.op == 'u' ? "UPDATE matched no row in" : "DELETE matched no row in",
                            statement.table->source, statement.key_json));
        }
        fatal(fmt::format("{}: {} changed {} rows of {}, expected {} (key {})", statement.location,
                          statement.op == 'i' ? "INSERT" : statement.op == 'u' ? "UPDATE" : "DELETE", affected,
                          statement.table->source, want, statement.key_json));
      }
      changes_since_commit_ += want;
      if (i + 1 < pending_.size()) {
        status = mysql_next_result(mysql);
        if (status == -1) fatal("the server answered fewer statements than were sent");
      }
    }
    db_.drain();
    pending_.clear();
    pending_bytes_ = 0;
    if (changes_since_commit_ >= kChangesPerTransaction) {
      db_.exec("COMMIT");
      changes_since_commit_ = 0;
    }
  }

  // A statement failed: name the line. A duplicate key in a batched INSERT is found by
  // inserting the batch's rows one at a time (the failed statement changed nothing).
  [[noreturn]] void fail(const Statement& statement, unsigned number, const std::string& message) {
    if (number == kErDupEntry && statement.op == 'i') {
      for (const auto& row : statement.rows) {
        const std::string single = statement.insert_prefix + row.values;
        if (mysql_real_query(db_.handle(), single.data(), single.size()) != 0) {
          if (mysql_errno(db_.handle()) == kErDupEntry)
            fatal(fmt::format("{}: INSERT duplicate key {} key {}", row.location, statement.table->source,
                              row.key_json));
          fatal(fmt::format("{}: error {}: {} inserting into {} key {}", row.location, mysql_errno(db_.handle()),
                            mysql_error(db_.handle()), statement.table->source, row.key_json));
        }
      }
    }
    if (number == kErDupEntry)
      fatal(fmt::format("{}: {} duplicate key {} key {} ({})", statement.location,
                        statement.op == 'i' ? "INSERT" : "UPDATE", statement.table->source, statement.key_json,
                        message));
    fatal(fmt::format("{}: error {}: {} ({} {} key {}; statement: {:.300})", statement.location, number, message,
                      statement.op == 'i' ? "INSERT into" : statement.op == 'u' ? "UPDATE of" : "DELETE from",
                      statement.table->source, statement.key_json, statement.sql));
  }

  Connection& db_;
  std::string into_;
  std::map<std::string, Table> tables_;
  Statement insert_;
  std::vector<Statement> pending_;
  std::size_t pending_bytes_ = 0;
  std::uint64_t changes_since_commit_ = 0;
  std::uint64_t inserts_ = 0;
  std::uint64_t updates_ = 0;
  std::uint64_t deletes_ = 0;
};

// Reads one input line by line and applies its data lines. Returns the lines read.
std::uint64_t replay_input(const std::string& path, Replayer& replayer, simdjson::ondemand::parser& parser) {
  const bool is_stdin = path == "-";
  const std::string name = is_stdin ? "stdin" : path;
  std::FILE* file = is_stdin ? stdin : std::fopen(path.c_str(), "rb");
  if (file == nullptr) fatal(fmt::format("{}: cannot open", path));
  char* buffer = nullptr;
  std::size_t capacity = 0;
  std::string line;
  std::uint64_t number = 0;
  ssize_t length = 0;
  std::vector<std::pair<Change, std::string>> held;
  while ((length = getline(&buffer, &capacity, file)) >= 0) {
    ++number;
    auto size = static_cast<std::size_t>(length);
    while (size > 0 && (buffer[size - 1] == '\n' || buffer[size - 1] == '\r')) --size;
    if (size == 0) continue;
    line.assign(buffer, size);
    line.reserve(size + simdjson::SIMDJSON_PADDING);
    const std::string location = fmt::format("{}:{}", name, number);
    std::optional<Change> change;
    try {
      change = parse_change(parser, simdjson::padded_string_view(line.data(), line.size(), line.capacity()));
    } catch (const simdjson::simdjson_error& error) {
      fatal(fmt::format("{}: malformed line: {}", location, error.what()));
    }
    if (change) {
      if (change->db.empty() || change->table.empty()) fatal(fmt::format("{}: data line without db or table", location));
      // Changes wait for their commit line: a discard line (cdc-stream on stdout after a
      // lost connection) drops those since the last commit, which then come again in full.
      if (change->op == 'r')
        replayer.apply(*change, location);
      else
        held.emplace_back(std::move(*change), location);
    } else if (line.starts_with(R"({"op":"commit",)")) {
      for (const auto& [pending, at] : held) replayer.apply(pending, at);
      held.clear();
    } else if (line.starts_with(R"({"op":"discard",)")) {
      held.clear();
    }
  }
  // A last transaction without its commit line (a stream stopped inside it) is applied as
  // it stands, as before.
  for (const auto& [pending, at] : held) replayer.apply(pending, at);
  const bool failed = std::ferror(file) != 0;
  std::free(buffer);
  if (!is_stdin) std::fclose(file);
  if (failed) fatal(fmt::format("{}: read failed", name));
  return number;
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket;
  std::string host;
  unsigned port = 0;
  std::string user = "root";
  std::string into;
  std::vector<std::string> files;
  CLI::App app{
      "cdc-test-replay - apply the data lines of cdc NDJSON to copies of their tables, strictly (test tool, not "
      "installed).\nA duplicate key on insert, or an update or delete matching no row, is an error naming the "
      "line (exit 1)."};
  app.add_option("-S,--socket", socket, "Server socket");
  app.add_option("--host", host, "Server host (instead of --socket)");
  app.add_option("-P,--port", port, "Server port");
  app.add_option("-u,--user", user, "User (password from MYSQL_PWD). Default: root");
  app.add_option("--into", into, "Database holding the copies: db.table is applied to INTO.table")->required();
  app.add_option("files", files, "NDJSON files, in order (none or -: stdin)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : 2;
  }
  if (files.empty()) files.emplace_back("-");

  const auto started = std::chrono::steady_clock::now();
  Connection db(socket, host, port, user);
  db.exec("SET time_zone = '+00:00', sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION,NO_AUTO_VALUE_ON_ZERO', "
          "foreign_key_checks = 0, autocommit = 0");
  Replayer replayer(db, into);
  simdjson::ondemand::parser parser;
  std::uint64_t lines = 0;
  for (const auto& file : files) lines += replay_input(file, replayer, parser);
  replayer.finish();
  replayer.summary(lines, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return 0;
}
