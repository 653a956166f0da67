#pragma once

// cdc-test-load's connection: SQL statements whose errors end the program (fatal), except the
// ones a load goes on after: a lost connection (Disconnected, with --survive-disconnects) and
// a lock given up to another session (LockConflict), thrown for the load's loop to handle.

#include <mysql.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace cdc::test_load {

[[noreturn]] inline void fatal(std::string_view message) {
  fmt::print(stderr, "cdc-test-load: {}\n", message);
  std::exit(1);
}

// Thrown instead of a fatal error when the connection was lost and --survive-disconnects is on.
struct Disconnected {
  unsigned number;
};
// CR_CONNECTION_ERROR, CR_CONN_HOST_ERROR, CR_SERVER_GONE_ERROR, CR_SERVER_LOST,
// ER_SERVER_SHUTDOWN, ER_CONNECTION_KILLED, ER_QUERY_INTERRUPTED (a KILL of the connection
// can first interrupt the statement).
inline bool is_disconnect(unsigned number) {
  return number == 2002 || number == 2003 || number == 2006 || number == 2013 || number == 1053 ||
         number == 1927 || number == 1317;
}

// Thrown when the server chose this transaction to give up a lock: ER_LOCK_WAIT_TIMEOUT, or
// ER_LOCK_DEADLOCK (InnoDB's, or the metadata locks': a statement of a transaction that holds
// the table's lock asks for another kind of it while a LOCK TABLES waits for the first).
struct LockConflict {
  unsigned number;
};
inline bool is_lock_conflict(unsigned number) { return number == 1205 || number == 1213; }
class Connection {
 public:
  Connection(const std::string& socket, const std::string& host, unsigned port, const std::string& user)
      : socket_(socket), host_(host), port_(port), user_(user) {
    if (!connect()) fatal(fmt::format("cannot connect: {}", mysql_error(mysql_)));
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() { mysql_close(mysql_); }

  // Lost connections throw Disconnected instead of ending the program.
  void survive_disconnects() { survive_ = true; }
  // A new connection, tried every 100 ms for up to `seconds`; then `setup` statements again.
  void reconnect(double seconds, const std::vector<std::string>& setup) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!connect()) {
      if (std::chrono::steady_clock::now() >= deadline)
        fatal(fmt::format("cannot reconnect within {} s: {}", seconds, mysql_error(mysql_)));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (const auto& sql : setup) exec(sql);
  }

  // Runs sql; an error is fatal unless its number is `tolerated`, which is then returned
  // (0: success).
  unsigned exec(const std::string& sql, unsigned tolerated = 0) {
    if (mysql_real_query(mysql_, sql.data(), sql.size()) != 0) {
      const unsigned number = mysql_errno(mysql_);
      if (tolerated != 0 && number == tolerated) return number;
      if (survive_ && is_disconnect(number)) throw Disconnected{number};
      if (is_lock_conflict(number)) throw LockConflict{number};
      fatal(fmt::format("error {}: {} in: {:.300}", number, mysql_error(mysql_), sql));
    }
    if (MYSQL_RES* result = mysql_store_result(mysql_)) mysql_free_result(result);
    return 0;
  }
  [[nodiscard]] std::uint64_t affected_rows() { return mysql_affected_rows(mysql_); }

  // The first row of a query (values as bytes, NULL as nullopt), or nullopt when empty.
  std::optional<std::vector<std::optional<std::string>>> first_row(const std::string& sql) {
    if (mysql_real_query(mysql_, sql.data(), sql.size()) != 0) {
      if (survive_ && is_disconnect(mysql_errno(mysql_))) throw Disconnected{mysql_errno(mysql_)};
      if (is_lock_conflict(mysql_errno(mysql_))) throw LockConflict{mysql_errno(mysql_)};
      fatal(fmt::format("error {}: {} in: {:.300}", mysql_errno(mysql_), mysql_error(mysql_), sql));
    }
    MYSQL_RES* result = mysql_store_result(mysql_);
    if (result == nullptr && survive_ && is_disconnect(mysql_errno(mysql_))) throw Disconnected{mysql_errno(mysql_)};
    if (result == nullptr) fatal(fmt::format("no result set: {} in: {:.300}", mysql_error(mysql_), sql));
    std::optional<std::vector<std::optional<std::string>>> out;
    if (MYSQL_ROW row = mysql_fetch_row(result)) {
      const unsigned long* lengths = mysql_fetch_lengths(result);
      out.emplace();
      for (unsigned i = 0; i < mysql_num_fields(result); ++i) {
        if (row[i] == nullptr)
          out->emplace_back(std::nullopt);
        else
          out->emplace_back(std::string(row[i], lengths[i]));
      }
    }
    mysql_free_result(result);
    return out;
  }

 private:
  bool connect() {
    if (mysql_ != nullptr) mysql_close(mysql_);
    mysql_ = mysql_init(nullptr);
    if (mysql_ == nullptr) fatal("mysql_init failed");
    mysql_options(mysql_, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    const char* password = std::getenv("MYSQL_PWD");
    return mysql_real_connect(mysql_, host_.empty() ? nullptr : host_.c_str(), user_.c_str(), password, nullptr, port_,
                              socket_.empty() ? nullptr : socket_.c_str(), 0) != nullptr;
  }

  std::string socket_;
  std::string host_;
  unsigned port_;
  std::string user_;
  bool survive_ = false;
  MYSQL* mysql_ = nullptr;
};
}  // namespace cdc::test_load
