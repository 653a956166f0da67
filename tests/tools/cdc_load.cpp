// cdc-test-load: a deterministic write load on one table, for the proof-under-load tests.
//
// With --create it (re)creates the table with the schema of its --kind and fills it with
// --rows rows; then it runs transactions of 1-5 random statements (inserts, updates of
// non-key columns, deletes, primary-key moves across the key space, multi-row updates),
// about 5% of them rolled back, until --seconds or --transactions. Everything random comes
// from one std::mt19937_64 seeded with --seed, and the rows picked for an update or delete
// are read from the table, so a run is reproducible given the same seed and starting table.
//
// Any SQL error is fatal (exit 1, one line on stderr), except a duplicate key when inserting
// a new key or moving a row to one: the statement is retried with another random key; a
// deadlock or a lock wait timeout (another session's LOCK TABLES, as a test may hold, meeting
// this transaction's locks): the transaction is rolled back and the load goes on, as an
// application retries; and, with --survive-disconnects, a lost connection (the server killed,
// restarted, or the connection killed): the load reconnects and goes on with the next
// transaction (the one interrupted may or may not have committed; the proof compares with the
// table as it is). The connection and those errors: load_connection.h.

#include <mysql.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

#include "load_connection.h"
#include "mysql/sql_text.h"

namespace {

using cdc::test_load::Connection;
using cdc::test_load::Disconnected;
using cdc::test_load::fatal;
using cdc::test_load::LockConflict;

constexpr unsigned kErDupEntry = 1062;  // ER_DUP_ENTRY
constexpr std::size_t kInsertBatchRows = 1000;
constexpr int kMaxKeyAttempts = 200;


class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}
  // Uniform in [lo, hi].
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(engine_);
  }
  std::uint64_t bits() { return engine_(); }
  bool chance(int percent) { return between(0, 99) < percent; }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(engine_); }
  std::string bytes(std::size_t min_length, std::size_t max_length) {
    const auto length = static_cast<std::size_t>(
        between(static_cast<std::int64_t>(min_length), static_cast<std::int64_t>(max_length)));
    std::string out(length, '\0');
    for (auto& c : out) c = static_cast<char>(between(0, 255));
    return out;
  }
  // Up to max_pieces pieces of at most 2 characters each, from pieces.
  std::string text(std::span<const std::string_view> pieces, int max_pieces) {
    std::string out;
    const auto count = between(0, max_pieces);
    for (std::int64_t i = 0; i < count; ++i)
      out += pieces[static_cast<std::size_t>(between(0, static_cast<std::int64_t>(pieces.size()) - 1))];
    return out;
  }

 private:
  std::mt19937_64 engine_;
};

// Characters every charset of the int kind's default-charset column can hold (latin1 too),
// quotes and backslash included, and for the utf8mb4 column CJK and an emoji as well.
constexpr std::array<std::string_view, 14> kLatinPieces = {"a", "b", "z", "Q", "0", "7", " ", "é", "ü", "ß",
                                                           "'", "\"", "\\", "-"};
constexpr std::array<std::string_view, 18> kUtf8Pieces = {"a", "b", "z", "Q", "0", "7", " ", "é", "ü",
                                                          "ß", "'", "\\", "日本", "語", "😀", "🎉", "ñ", "\t"};

// Letters spelled four ways that utf8mb4_uca1400_ai_ci finds equal (case and accents do not
// count, and ß is ss): the uca kind's keys are made of them, so that a key moves between
// spellings of one value and inserts meet keys equal to theirs under the collation.
constexpr std::array<std::array<std::string_view, 4>, 6> kUcaLetters = {{{"a", "A", "á", "Á"},
                                                                         {"e", "E", "é", "È"},
                                                                         {"o", "O", "ö", "Ô"},
                                                                         {"n", "N", "ñ", "Ñ"},
                                                                         {"c", "C", "ç", "Ç"},
                                                                         {"ss", "ß", "SS", "sS"}}};

std::string maybe_null(Random& random, std::string literal) {
  return random.chance(15) ? std::string("NULL") : std::move(literal);
}

std::string decimal_literal(Random& random) {  // DECIMAL(10,2)
  const std::int64_t cents = random.between(-9'999'999'999, 9'999'999'999);
  const std::uint64_t magnitude = static_cast<std::uint64_t>(cents < 0 ? -cents : cents);
  return fmt::format("{}{}.{:02}", cents < 0 ? "-" : "", magnitude / 100, magnitude % 100);
}

std::string datetime3_literal(Random& random) {
  return fmt::format("'{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}'", random.between(1000, 9999), random.between(1, 12),
                     random.between(1, 28), random.between(0, 23), random.between(0, 59), random.between(0, 59),
                     random.between(0, 999));
}

// TIMESTAMP(6), in UTC (the session's time_zone is +00:00): 1970-01-01 00:00:01 to
// 2038-01-19 03:14:07.
std::string timestamp6_literal(Random& random) {
  const auto seconds = static_cast<std::time_t>(random.between(1, 2'147'483'646));
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("'{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:06}'", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, random.between(0, 999'999));
}

// A double as a SQL double literal (the exponent makes the server parse it as a double, not
// as a DECIMAL): small and huge magnitudes, negatives, extremes, integers, negative zero.
std::string double_literal(Random& random) {
  double value = 0;
  switch (random.between(0, 9)) {
    case 0: value = static_cast<double>(random.between(-1000, 1000)); break;
    case 1: value = random.chance(50) ? std::numeric_limits<double>::max() : -std::numeric_limits<double>::min(); break;
    case 2: value = random.chance(50) ? 0.1 : -0.0; break;
    case 3:
    case 4:
    case 5: value = random.real(-1e6, 1e6); break;
    default: value = random.real(-10, 10) * std::pow(10.0, static_cast<double>(random.between(-300, 297))); break;
  }
  std::string text = fmt::format("{}", value);
  if (text.find_first_of("eE") == std::string::npos) text += "e0";
  return text;
}

enum class Kind { int_key, composite, varbinary, keyless, uca };

// How a fetched key value becomes a SQL literal again.
enum class KeyLiteral { number, bytes, text };

// What the load needs to know about one kind of table.
struct Schema {
  std::vector<std::string> key_columns;
  std::vector<std::string> other_columns;
  std::vector<KeyLiteral> key_literals;  // per key column
  std::string create_body;
};

Schema schema_of(Kind kind) {
  switch (kind) {
    case Kind::int_key:
      return {{"id"},
              {"k", "c", "amount", "at", "blob_col", "ts"},
              {KeyLiteral::number},
              "id INT NOT NULL PRIMARY KEY, k INT NOT NULL, c VARCHAR(40) NULL, amount DECIMAL(10,2) NULL, "
              "at DATETIME(3) NULL, blob_col VARBINARY(32) NULL, ts TIMESTAMP(6) NULL"};
    case Kind::composite:
      return {{"region", "code", "seq"},
              {"note", "v"},
              {KeyLiteral::number, KeyLiteral::bytes, KeyLiteral::number},
              "region INT NOT NULL, code VARBINARY(8) NOT NULL, seq BIGINT UNSIGNED NOT NULL, "
              "note VARCHAR(40) CHARACTER SET utf8mb4 NULL, v DOUBLE NULL, PRIMARY KEY(region, code, seq)"};
    case Kind::varbinary:
      return {{"id"},
              {"payload", "n"},
              {KeyLiteral::bytes},
              "id VARBINARY(16) NOT NULL PRIMARY KEY, payload VARCHAR(60) NULL, n BIGINT NULL"};
    case Kind::keyless:
      // No index at all: rows are told apart by nothing but their values, and identical rows
      // are made on purpose. grp finds rows (by a scan), and can be a --chunk-key.
      return {{"grp"},
              {"note", "n", "at"},
              {KeyLiteral::number},
              "grp INT NOT NULL, note VARCHAR(40) CHARACTER SET utf8mb4 NULL, n BIGINT NULL, at DATETIME(3) NULL"};
    case Kind::uca:
      return {{"name"},
              {"note", "n"},
              {KeyLiteral::text},
              "name VARCHAR(16) CHARACTER SET utf8mb4 COLLATE utf8mb4_uca1400_ai_ci NOT NULL PRIMARY KEY, "
              "note VARCHAR(40) CHARACTER SET utf8mb4 NULL, n BIGINT NULL"};
  }
  return {};
}

using Key = std::vector<std::string>;  // SQL literals of the key columns, in key order


struct Options {
  std::string socket;
  std::string host;
  unsigned port = 0;
  std::string user = "root";
  std::string table;
  std::string kind_name;
  std::uint64_t seed = 0;
  bool create = false;
  std::uint64_t rows = 0;
  std::optional<double> seconds;
  std::optional<std::uint64_t> transactions;
  std::optional<std::uint64_t> key_space;
  std::optional<double> survive_disconnects;
  std::optional<double> max_rate;
};

struct Counters {
  std::uint64_t committed = 0;
  std::uint64_t rolled_back = 0;
  std::uint64_t statements = 0;
  std::uint64_t rows_changed = 0;  // in committed transactions
  std::uint64_t interrupted = 0;   // cut by a lost connection: committed or not
  std::uint64_t lock_conflicts = 0;  // rolled back after a deadlock or lock wait timeout (in rolled_back)
};

class Load {
 public:
  Load(Connection& db, Kind kind, std::string table, std::uint64_t seed)
      : db_(db), kind_(kind), schema_(schema_of(kind)), table_(std::move(table)), random_(seed) {
    key_list_ = fmt::format("{}", fmt::join(schema_.key_columns, ", "));
  }

  void create(const std::string& database, std::uint64_t rows) {
    db_.exec(fmt::format("CREATE DATABASE IF NOT EXISTS {}", cdc::mysql::quote_identifier(database)));
    db_.exec(fmt::format("DROP TABLE IF EXISTS {}", table_));
    db_.exec(fmt::format("CREATE TABLE {} ({}) ENGINE=InnoDB", table_, schema_.create_body));
    std::unordered_set<std::string> used;
    std::string sql;
    std::string last_row;
    std::size_t in_batch = 0;
    for (std::uint64_t i = 0; i < rows; ++i) {
      Key key;
      std::string identity;  // what tells keys apart: the letters, not their spelling, for uca
      do {
        key = kind_ == Kind::uca ? Key{cdc::mysql::text_literal(uca_text(&identity))} : random_key();
        if (kind_ != Kind::uca) identity = fmt::format("{}", fmt::join(key, ","));
      } while (kind_ != Kind::keyless && !used.insert(identity).second);
      sql += in_batch == 0 ? fmt::format("INSERT INTO {} ({}, {}) VALUES ", table_, key_list_,
                                         fmt::join(schema_.other_columns, ", "))
                           : std::string(",");
      // A keyless table gets whole duplicate rows too: every tenth row repeats the one before.
      std::string row = fmt::format("({}, {})", fmt::join(key, ", "), fmt::join(random_values(), ", "));
      if (kind_ == Kind::keyless && i % 10 == 9) row = last_row;
      last_row = row;
      sql += row;
      if (++in_batch == kInsertBatchRows || i + 1 == rows) {
        db_.exec(sql);
        sql.clear();
        in_batch = 0;
      }
    }
  }

  void set_key_space(std::uint64_t key_space) { key_space_ = std::max<std::uint64_t>(key_space, 1); }

  void transaction(Counters& counters) {
    db_.exec("START TRANSACTION");
    std::uint64_t rows = 0;
    const auto statements = random_.between(1, 5);
    for (std::int64_t i = 0; i < statements; ++i) {
      rows += statement();
      ++counters.statements;
    }
    if (random_.chance(5)) {
      db_.exec("ROLLBACK");
      ++counters.rolled_back;
    } else {
      db_.exec("COMMIT");
      ++counters.committed;
      counters.rows_changed += rows;
    }
  }

 private:
  // One random statement; returns the rows it changed.
  std::uint64_t statement() {
    const auto pick = random_.between(0, 99);
    if (pick < 30) return insert_new();
    const auto existing = existing_key();
    if (!existing) return insert_new();  // empty table
    // Without a key, one of the rows of that grp (LIMIT 1), and sometimes a copy of it.
    const char* one = kind_ == Kind::keyless ? " LIMIT 1" : "";
    if (kind_ == Kind::keyless && pick < 40) {
      db_.exec(fmt::format("INSERT INTO {0} SELECT * FROM {0} WHERE {1} LIMIT 1", table_, key_equals(*existing)));
      return db_.affected_rows();
    }
    if (pick < 55) {
      db_.exec(fmt::format("UPDATE {} SET {} WHERE {}{}", table_, assignments(), key_equals(*existing), one));
      return db_.affected_rows();
    }
    if (pick < 70) {
      db_.exec(fmt::format("DELETE FROM {} WHERE {}{}", table_, key_equals(*existing), one));
      return db_.affected_rows();
    }
    if (kind_ == Kind::uca && pick < 78) {  // the key is spelled anew: 'a' becomes 'Á', the same key
      const auto spelled = existing_values();
      if (!spelled || !spelled->front()) return 0;
      db_.exec(fmt::format("UPDATE {} SET name = {} WHERE {}", table_,
                           cdc::mysql::text_literal(respelled(*spelled->front())), key_equals(*existing)));
      return db_.affected_rows();
    }
    if (kind_ == Kind::keyless && pick < 85) {  // grp moves anywhere
      db_.exec(fmt::format("UPDATE {} SET grp = {} WHERE {}{}", table_, random_key().front(), key_equals(*existing), one));
      return db_.affected_rows();
    }
    if (pick < 85) {  // the primary key moves anywhere in the key space
      for (int attempt = 0; attempt < kMaxKeyAttempts; ++attempt) {
        const Key to = random_key();
        std::vector<std::string> sets;
        for (std::size_t i = 0; i < to.size(); ++i) sets.push_back(schema_.key_columns[i] + " = " + to[i]);
        if (db_.exec(fmt::format("UPDATE {} SET {} WHERE {}", table_, fmt::join(sets, ", "), key_equals(*existing)),
                     kErDupEntry) == 0)
          return db_.affected_rows();
      }
      return 0;
    }
    return multi_row_update();
  }

  std::uint64_t insert_new() {
    for (int attempt = 0; attempt < kMaxKeyAttempts; ++attempt) {
      if (db_.exec(fmt::format("INSERT INTO {} ({}, {}) VALUES ({}, {})", table_, key_list_,
                               fmt::join(schema_.other_columns, ", "), fmt::join(random_key(), ", "),
                               fmt::join(random_values(), ", ")),
                   kErDupEntry) == 0)
        return db_.affected_rows();
    }
    return 0;  // the key space is full
  }

  std::uint64_t multi_row_update() {
    std::string sql;
    switch (kind_) {
      case Kind::int_key: {
        const auto from = random_.between(0, static_cast<std::int64_t>(key_space_) - 1);
        sql = fmt::format("UPDATE {} SET k = k + 1, c = {} WHERE id BETWEEN {} AND {}", table_, c_value(), from,
                          from + 20);
        break;
      }
      case Kind::composite:
        sql = fmt::format("UPDATE {} SET v = {}, note = {} WHERE {} ORDER BY {} LIMIT 20", table_,
                          maybe_null(random_, double_literal(random_)), note_value(), key_at_least(random_key()),
                          key_list_);
        break;
      case Kind::varbinary:
        sql = fmt::format("UPDATE {} SET n = IFNULL(n, 0) - 1, payload = {} WHERE {} ORDER BY {} LIMIT 20", table_,
                          payload_value(), key_at_least(random_key()), key_list_);
        break;
      case Kind::uca:
        sql = fmt::format("UPDATE {} SET n = IFNULL(n, 0) + 1, note = {} WHERE {} ORDER BY {} LIMIT 20", table_,
                          note_value(), key_at_least(random_key()), key_list_);
        break;
      case Kind::keyless: {  // every row of three adjacent groups, identical ones alike
        const auto from = random_.between(0, static_cast<std::int64_t>(key_space_ / 4));
        sql = fmt::format("UPDATE {} SET n = IFNULL(n, 0) + 1, note = {} WHERE grp BETWEEN {} AND {}", table_,
                          note_value(), from, from + 2);
        break;
      }
    }
    db_.exec(sql);
    return db_.affected_rows();
  }

  // An existing row's key: the first at or after a random key, else the first of all. Its
  // values as fetched are kept in existing_values().
  std::optional<Key> existing_key() {
    auto row = db_.first_row(fmt::format("SELECT {0} FROM {1} WHERE {2} ORDER BY {0} LIMIT 1", key_list_, table_,
                                         key_at_least(random_key())));
    if (!row) row = db_.first_row(fmt::format("SELECT {0} FROM {1} ORDER BY {0} LIMIT 1", key_list_, table_));
    existing_values_ = row;
    if (!row) return std::nullopt;
    Key key;
    for (std::size_t i = 0; i < row->size(); ++i) {
      const auto& value = (*row)[i];
      if (!value) fatal("a key column is NULL");
      switch (schema_.key_literals[i]) {
        case KeyLiteral::number: key.push_back(*value); break;
        case KeyLiteral::bytes: key.push_back(cdc::mysql::bytes_literal(*value)); break;
        case KeyLiteral::text: key.push_back(cdc::mysql::text_literal(*value)); break;
      }
    }
    return key;
  }
  [[nodiscard]] const std::optional<std::vector<std::optional<std::string>>>& existing_values() const {
    return existing_values_;
  }

  // 1-6 letters of kUcaLetters, each in a random spelling; identity (when given) gets the
  // letters' indexes, the same for every spelling.
  std::string uca_text(std::string* identity = nullptr) {
    std::string out;
    if (identity != nullptr) identity->clear();
    const auto length = random_.between(1, 6);
    for (std::int64_t i = 0; i < length; ++i) {
      const auto letter =
          static_cast<std::size_t>(random_.between(0, static_cast<std::int64_t>(kUcaLetters.size()) - 1));
      out += kUcaLetters[letter][static_cast<std::size_t>(random_.between(0, 3))];
      if (identity != nullptr) identity->push_back(static_cast<char>('0' + letter));
    }
    return out;
  }

  // The same letters as text (a uca key), each spelled anew.
  std::string respelled(std::string_view text) {
    std::string out;
    while (!text.empty()) {
      std::size_t letter = kUcaLetters.size();
      std::size_t length = 0;
      for (std::size_t l = 0; l < kUcaLetters.size(); ++l)
        for (const std::string_view spelling : kUcaLetters[l])
          if (text.starts_with(spelling) && spelling.size() > length) letter = l, length = spelling.size();
      if (letter == kUcaLetters.size()) fatal(fmt::format("a uca key holds a letter it was not made of: {}", text));
      out += kUcaLetters[letter][static_cast<std::size_t>(random_.between(0, 3))];
      text.remove_prefix(length);
    }
    return out;
  }

  Key random_key() {
    switch (kind_) {
      case Kind::int_key: return {fmt::format("{}", random_.between(0, static_cast<std::int64_t>(key_space_) - 1))};
      case Kind::composite:
        return {fmt::format("{}", random_.between(0, 3)), cdc::mysql::bytes_literal(random_.bytes(1, 8)),
                fmt::format("{}", random_.bits())};
      case Kind::varbinary: return {cdc::mysql::bytes_literal(random_.bytes(16, 16))};
      case Kind::uca: return {cdc::mysql::text_literal(uca_text())};
      // A quarter of the key space: several rows per group.
      case Kind::keyless: return {fmt::format("{}", random_.between(0, static_cast<std::int64_t>(key_space_ / 4)))};
    }
    return {};
  }

  std::vector<std::string> random_values() {
    switch (kind_) {
      case Kind::int_key:
        return {fmt::format("{}", random_.between(-1'000'000'000, 1'000'000'000)),
                c_value(),
                maybe_null(random_, decimal_literal(random_)),
                maybe_null(random_, datetime3_literal(random_)),
                maybe_null(random_, cdc::mysql::bytes_literal(random_.bytes(0, 32))),
                maybe_null(random_, timestamp6_literal(random_))};
      case Kind::composite: return {note_value(), maybe_null(random_, double_literal(random_))};
      case Kind::uca:
        return {note_value(), maybe_null(random_, fmt::format("{}", random_.between(-1000, 1000)))};
      case Kind::varbinary:
        return {payload_value(),
                maybe_null(random_, fmt::format("{}", random_.between(-(std::int64_t{1} << 62), std::int64_t{1} << 62)))};
      case Kind::keyless:
        return {note_value(), maybe_null(random_, fmt::format("{}", random_.between(-1000, 1000))),
                maybe_null(random_, datetime3_literal(random_))};
    }
    return {};
  }

  std::string c_value() { return maybe_null(random_, cdc::mysql::text_literal(random_.text(kLatinPieces, 40))); }
  std::string note_value() { return maybe_null(random_, cdc::mysql::text_literal(random_.text(kUtf8Pieces, 20))); }
  std::string payload_value() { return maybe_null(random_, cdc::mysql::text_literal(random_.text(kLatinPieces, 60))); }

  // "col = value, ..." for every non-key column.
  std::string assignments() {
    const auto values = random_values();
    std::vector<std::string> sets;
    for (std::size_t i = 0; i < values.size(); ++i) sets.push_back(schema_.other_columns[i] + " = " + values[i]);
    return fmt::format("{}", fmt::join(sets, ", "));
  }

  std::string key_equals(const Key& key) const {
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < key.size(); ++i) parts.push_back(schema_.key_columns[i] + " = " + key[i]);
    return fmt::format("{}", fmt::join(parts, " AND "));
  }

  // (k1, k2, k3) >= (v1, v2, v3), spelled out so that the range optimizer uses the index.
  std::string key_at_least(const Key& key) const {
    std::string condition = fmt::format("{} >= {}", schema_.key_columns.back(), key.back());
    for (std::size_t i = key.size() - 1; i-- > 0;)
      condition = fmt::format("{0} > {1} OR ({0} = {1} AND ({2}))", schema_.key_columns[i], key[i], condition);
    return condition;
  }

  Connection& db_;
  Kind kind_;
  Schema schema_;
  std::string table_;
  std::string key_list_;
  Random random_;
  std::uint64_t key_space_ = 1000;
  std::optional<std::vector<std::optional<std::string>>> existing_values_;
};

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{
      "cdc-test-load - a reproducible write load on one table (test tool, not installed).\n"
      "--create (re)creates the table with the schema of --kind and inserts --rows rows; then transactions of "
      "1-5 random statements run until --seconds or --transactions (neither: create only)."};
  app.add_option("-S,--socket", options.socket, "Server socket");
  app.add_option("--host", options.host, "Server host (instead of --socket)");
  app.add_option("-P,--port", options.port, "Server port");
  app.add_option("-u,--user", options.user, "User (password from MYSQL_PWD). Default: root");
  app.add_option("--table", options.table, "DB.TABLE")->required();
  app.add_option("--kind", options.kind_name, "Schema and key shape")
      ->required()
      ->check(CLI::IsMember({"int", "composite", "varbinary", "keyless", "uca"}));
  app.add_option("--seed", options.seed, "Seed of every random choice")->required();
  app.add_flag("--create", options.create, "CREATE DATABASE IF NOT EXISTS, DROP and CREATE TABLE, insert --rows");
  app.add_option("--rows", options.rows, "Rows inserted by --create. Default: 0");
  app.add_option("--seconds", options.seconds, "Run the load this long");
  app.add_option("--transactions", options.transactions, "Run this many transactions");
  app.add_option("--key-space", options.key_space,
                 "int keys are drawn from 0..K-1. Default: 4 * rows (--rows, else the rows in the table), at least "
                 "1000");
  app.add_option("--survive-disconnects", options.survive_disconnects,
                 "On a lost connection, reconnect (trying for up to SECONDS) and go on with the next transaction");
  app.add_option("--max-rate", options.max_rate, "At most this many transactions a second (evenly spaced)")
      ->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : 2;
  }
  const auto dot = options.table.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == options.table.size()) {
    fmt::print(stderr, "cdc-test-load: --table wants DB.TABLE, got '{}'\n", options.table);
    return 2;
  }
  const std::string database = options.table.substr(0, dot);
  const std::string table = cdc::mysql::quote_identifier(database) + "." + cdc::mysql::quote_identifier(options.table.substr(dot + 1));
  const Kind kind = options.kind_name == "int"         ? Kind::int_key
                    : options.kind_name == "composite" ? Kind::composite
                    : options.kind_name == "keyless"   ? Kind::keyless
                    : options.kind_name == "uca"       ? Kind::uca
                                                       : Kind::varbinary;

  Connection db(options.socket, options.host, options.port, options.user);
  db.exec("SET time_zone = '+00:00'");
  Load load(db, kind, table, options.seed);
  std::uint64_t rows = options.rows;
  if (!options.create) {
    const auto count = db.first_row(fmt::format("SELECT COUNT(*) FROM {}", table));
    rows = count && (*count)[0] ? std::stoull(*(*count)[0]) : 0;
  }
  const std::uint64_t key_space = options.key_space.value_or(std::max<std::uint64_t>(4 * rows, 1000));
  if (kind == Kind::int_key && key_space < rows) {
    fmt::print(stderr, "cdc-test-load: --key-space {} cannot hold {} rows\n", key_space, rows);
    return 2;
  }
  load.set_key_space(key_space);
  if (options.create) load.create(database, options.rows);
  if (!options.seconds && !options.transactions) return 0;
  db.exec("SET autocommit = 0");
  if (options.survive_disconnects) db.survive_disconnects();

  Counters counters;
  const auto started = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  while (true) {
    const std::uint64_t done = counters.committed + counters.rolled_back;
    if (options.transactions && done >= *options.transactions) break;
    if (options.seconds && elapsed() >= *options.seconds) break;
    if (options.max_rate) {
      const double due = static_cast<double>(done) / *options.max_rate;
      if (const double ahead = due - elapsed(); ahead > 0)
        std::this_thread::sleep_for(std::chrono::duration<double>(ahead));
    }
    // Disconnected is only thrown with --survive-disconnects.
    const auto reconnect = [&] {
      ++counters.interrupted;
      db.reconnect(*options.survive_disconnects, {"SET time_zone = '+00:00'", "SET autocommit = 0"});
    };
    try {
      load.transaction(counters);
    } catch (const Disconnected&) {
      reconnect();
    } catch (const LockConflict&) {
      // InnoDB rolled a deadlock's transaction back already; a timeout or a metadata-lock
      // deadlock only the statement: nothing of the transaction may commit.
      try {
        db.exec("ROLLBACK");
      } catch (const Disconnected&) {
        reconnect();
      }
      ++counters.rolled_back;
      ++counters.lock_conflicts;
    }
  }
  const double seconds = elapsed();
  const std::uint64_t done = counters.committed + counters.rolled_back;
  fmt::print(stderr,
             "cdc-test-load: {}: {} transactions committed, {} rolled back ({} on a lock conflict), {} statements, "
             "{} rows changed (committed), {} cut by a lost connection, in {:.2f} s ({:.0f} transactions/s)\n",
             options.table, counters.committed, counters.rolled_back, counters.lock_conflicts, counters.statements,
             counters.rows_changed, counters.interrupted, seconds, seconds > 0 ? static_cast<double>(done) / seconds : 0.0);
  return 0;
}
