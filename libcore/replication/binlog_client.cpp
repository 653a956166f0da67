#include "replication/binlog_client.h"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <functional>

namespace cdc::replication {

namespace {

// Command bytes of the protocol (include/my_command.h).
constexpr std::uint8_t kComBinlogDump = 0x12;
constexpr std::uint8_t kComRegisterSlave = 0x15;
constexpr std::uint8_t kComBinlogDumpGtid = 0x1e;
constexpr std::uint16_t kBinlogThroughGtid = 0x04;
constexpr std::uint16_t kBinlogDumpNonBlock = 0x01;  // an EOF packet at the binlog's end instead of waiting
// MariaDB's COM_BINLOG_DUMP flag for ANNOTATE_ROWS events (include/mysql_com.h
// BINLOG_SEND_ANNOTATE_ROWS_EVENT): without it the dump thread leaves them out.
constexpr std::uint16_t kBinlogSendAnnotateRows = 0x02;

// Server error numbers the run reacts to.
constexpr unsigned kErMasterFatalReadingBinlog = 1236;
constexpr unsigned kErServerShutdown = 1053;
constexpr unsigned kErConnectionKilled = 1927;  // MariaDB
constexpr unsigned kErQueryInterrupted = 1317;
constexpr unsigned kErSlaveSameId = 4052;  // MariaDB; MySQL says it in a 1236
constexpr unsigned kClientErrorsFirst = 2000;
constexpr unsigned kClientErrorsLast = 2999;

void put_u16(std::string& out, std::uint16_t value) {
  for (int i = 0; i < 2; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}
void put_u32(std::string& out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}
void put_u64(std::string& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

std::span<const std::uint8_t> bytes_of(const std::string& packet) {
  return {reinterpret_cast<const std::uint8_t*>(packet.data()), packet.size()};
}

// Quotes a value for a SET statement: positions are digits, '-', ',' and ':' only, but the
// quoting must not depend on that.
std::string sql_string(std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

}  // namespace

std::uint32_t default_server_id() {
  std::array<char, 256> host{};
  (void)::gethostname(host.data(), host.size() - 1);
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  std::size_t hash = std::hash<std::string_view>{}(std::string_view(host.data()));
  hash ^= std::hash<long long>{}(static_cast<long long>(::getpid())) + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2);
  hash ^= std::hash<long long>{}(static_cast<long long>(now)) + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2);
  return static_cast<std::uint32_t>((1U << 30) | (hash & ((1U << 30) - 1)));
}

Result<BinlogClient> BinlogClient::open(const mysql::ConnectionOptions& options) {
  auto connection = mysql::Connection::open(options);
  if (!connection) return fail(std::move(connection).error());
  BinlogClient client(std::move(*connection));
  if (auto info = client.read_server_info(); !info) return fail(std::move(info).error());
  return client;
}

Result<void> BinlogClient::read_server_info() {
  server_.version_text = connection_.server_version();
  server_.version = ServerVersion::parse(server_.version_text);
  server_.flavor = server_.version_text.find("MariaDB") != std::string::npos ? Flavor::mariadb : Flavor::mysql;
  auto variables = connection_.query(
      "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('log_bin', 'binlog_format', 'binlog_checksum', 'server_id', 'gtid_mode', "
      "'binlog_row_metadata', 'binlog_annotate_row_events', 'binlog_rows_query_log_events')");
  if (!variables) return fail(std::move(variables).error());
  for (const auto& row : variables->rows) {
    if (row.size() < 2 || !row[0] || !row[1]) continue;
    const std::string& name = *row[0];
    const std::string& value = *row[1];
    if (name == "log_bin") server_.log_bin = value == "ON" || value == "1";
    if (name == "binlog_format") server_.binlog_format = value;
    if (name == "binlog_checksum") server_.checksums = value == "CRC32";
    if (name == "server_id") server_.server_id = static_cast<std::uint32_t>(std::strtoul(value.c_str(), nullptr, 10));
    if (name == "gtid_mode") server_.gtids = value == "ON";
    if (name == "binlog_row_metadata") server_.binlog_row_metadata = value;
    const bool statements_variable = server_.flavor == Flavor::mariadb ? name == "binlog_annotate_row_events"
                                                                       : name == "binlog_rows_query_log_events";
    if (statements_variable) server_.logs_statements = value == "ON" || value == "1";
  }
  if (server_.flavor == Flavor::mariadb) server_.gtids = true;
  if (!server_.log_bin)
    return fail(Errc::config, fmt::format("{}: the server does not write a binlog (log_bin is OFF): start it with "
                                          "log_bin (and binlog_format=ROW); cdc-plan --check lists every setting",
                                          connection_.endpoint()));
  if (server_.binlog_format != "ROW")
    return fail(Errc::config, fmt::format("{}: binlog_format is '{}', want ROW: only row events carry the changed "
                                          "rows; fix: SET GLOBAL binlog_format = 'ROW' and binlog_format=ROW in "
                                          "my.cnf (cdc-plan --check lists every setting)",
                                          connection_.endpoint(), server_.binlog_format));
  return {};
}

Result<ServerEnd> BinlogClient::server_end() {
  const bool new_syntax = server_.flavor == Flavor::mysql && server_.version.at_least(8, 2);
  auto status = connection_.query(new_syntax ? "SHOW BINARY LOG STATUS" : "SHOW MASTER STATUS");
  if (!status) return fail(std::move(status).error());
  if (status->rows.empty() || status->rows[0].size() < 2 || !status->rows[0][0] || !status->rows[0][1])
    return fail(Errc::config, fmt::format("{}: SHOW MASTER STATUS is empty: the server writes no binlog",
                                          connection_.endpoint()));
  ServerEnd end;
  end.file.file = *status->rows[0][0];
  end.file.offset = std::strtoull(status->rows[0][1]->c_str(), nullptr, 10);
  if (server_.flavor == Flavor::mariadb) {
    auto pos = connection_.query("SELECT @@global.gtid_binlog_pos");
    if (!pos) return fail(std::move(pos).error());
    if (!pos->rows.empty() && pos->rows[0][0]) end.gtids = *pos->rows[0][0];
  } else if (server_.gtids) {
    for (std::size_t i = 0; i < status->columns.size(); ++i)
      if (status->columns[i] == "Executed_Gtid_Set" && status->rows[0][i]) end.gtids = *status->rows[0][i];
    // The server breaks long sets over lines.
    std::erase(end.gtids, '\n');
  }
  return end;
}

Result<std::string> BinlogClient::oldest_binlog() {
  auto files = binlog_files();
  if (!files) return fail(std::move(files).error());
  if (files->empty()) return fail(Errc::config, fmt::format("{}: SHOW BINARY LOGS is empty", connection_.endpoint()));
  return std::move(files->front().name);
}

Result<std::vector<BinlogClient::BinlogFile>> BinlogClient::binlog_files() {
  auto logs = connection_.query("SHOW BINARY LOGS");
  if (!logs) return fail(std::move(logs).error());
  std::vector<BinlogFile> files;
  for (const auto& row : logs->rows) {
    if (row.size() < 2 || !row[0] || !row[1]) continue;
    files.push_back(BinlogFile{*row[0], std::strtoull(row[1]->c_str(), nullptr, 10)});
  }
  return files;
}

Result<void> BinlogClient::check_server_id(std::uint32_t server_id) {
  if (server_id == server_.server_id)
    return fail(Errc::usage, fmt::format("--server-id {} is the server's own server_id; choose another", server_id));
  const bool new_syntax = server_.flavor == Flavor::mysql && server_.version.at_least(8, 4);
  auto hosts = connection_.query(new_syntax ? "SHOW REPLICAS" : "SHOW SLAVE HOSTS");
  if (!hosts) return {};  // not allowed to list replicas: nothing to check with
  for (const auto& row : hosts->rows) {
    if (row.empty() || !row[0]) continue;
    if (std::strtoul(row[0]->c_str(), nullptr, 10) == server_id)
      return fail(Errc::usage,
                  fmt::format("{}: a replica with server id {} is connected already{}{}; two replicas with one id "
                              "disconnect each other: give this run another --server-id",
                              connection_.endpoint(), server_id, row.size() > 1 && row[1] ? " from " : "",
                              row.size() > 1 && row[1] ? *row[1] : ""));
  }
  return {};
}

Result<void> BinlogClient::register_replica(std::uint32_t server_id) {
  std::string packet;
  put_u32(packet, server_id);
  packet.push_back(0);  // host name, user, password: empty, as replicas without report_host send
  packet.push_back(0);
  packet.push_back(0);
  put_u16(packet, 0);   // port
  put_u32(packet, 0);   // replication rank (unused)
  put_u32(packet, 0);   // source id (filled in by the server)
  return connection_.send_command(kComRegisterSlave, bytes_of(packet), true);
}

Result<void> BinlogClient::start_dump(const gtid::Position& start, std::uint32_t server_id,
                                      std::chrono::milliseconds heartbeat, DumpEnd end, bool every_event) {
  stops_at_end_ = end == DumpEnd::stop;
  const auto flags = static_cast<std::uint16_t>(
      (stops_at_end_ ? kBinlogDumpNonBlock : 0U) |
      (every_event && server_.flavor == Flavor::mariadb ? kBinlogSendAnnotateRows : 0U));
  // Without these the server refuses to send checksummed events (or strips them), and
  // MariaDB replaces its GTID and annotate events with dummies.
  std::string setup =
      "SET @master_binlog_checksum = @@global.binlog_checksum, @source_binlog_checksum = @@global.binlog_checksum";
  const auto nanoseconds = std::chrono::duration_cast<std::chrono::nanoseconds>(heartbeat).count();
  setup += fmt::format(", @master_heartbeat_period = {0}, @source_heartbeat_period = {0}", nanoseconds);
  if (server_.flavor == Flavor::mariadb) setup += ", @mariadb_slave_capability = 4";
  if (start.kind == gtid::Position::Kind::mariadb_gtids)
    setup += fmt::format(", @slave_connect_state = {}, @slave_gtid_strict_mode = 1, @slave_gtid_ignore_duplicates = 0",
                         sql_string(start.mariadb_gtids.to_string()));
  if (auto set = connection_.query(setup); !set) return fail(std::move(set).error());
  if (auto registered = register_replica(server_id); !registered) return fail(std::move(registered).error());

  std::string packet;
  switch (start.kind) {
    case gtid::Position::Kind::mysql_gtids: {
      if (server_.flavor == Flavor::mariadb)
        return fail(Errc::usage, fmt::format("{} is a MariaDB server, and '{}' a MySQL GTID set: give a MariaDB GTID "
                                             "position (domain-server-seq) or FILE:OFFSET",
                                             connection_.endpoint(), start.to_string()));
      put_u16(packet, kBinlogThroughGtid | flags);
      put_u32(packet, server_id);
      put_u32(packet, 0);  // no file name: the server finds the first file the set needs
      put_u64(packet, 4);
      std::string encoded;
      start.mysql_gtids.encode(encoded);
      put_u32(packet, static_cast<std::uint32_t>(encoded.size()));
      packet += encoded;
      return connection_.send_command(kComBinlogDumpGtid, bytes_of(packet), false);
    }
    case gtid::Position::Kind::mariadb_gtids:
      if (server_.flavor != Flavor::mariadb)
        return fail(Errc::usage, fmt::format("{} is a MySQL server, and '{}' a MariaDB GTID position: give a MySQL "
                                             "GTID set (uuid:1-5) or FILE:OFFSET",
                                             connection_.endpoint(), start.to_string()));
      // With @slave_connect_state set, an empty file name at offset 4 means "by GTID".
      put_u32(packet, 4);
      put_u16(packet, flags);
      put_u32(packet, server_id);
      return connection_.send_command(kComBinlogDump, bytes_of(packet), false);
    case gtid::Position::Kind::file:
      if (start.file.offset > 0xffffffffULL)
        return fail(Errc::usage, fmt::format("offset {} is beyond what COM_BINLOG_DUMP can ask for (4 GiB)",
                                             start.file.offset));
      put_u32(packet, static_cast<std::uint32_t>(start.file.offset));
      put_u16(packet, flags);
      put_u32(packet, server_id);
      packet += start.file.file;
      return connection_.send_command(kComBinlogDump, bytes_of(packet), false);
  }
  return fail(Errc::internal, "unknown position kind");
}

Result<std::span<const std::uint8_t>> BinlogClient::next_event() {
  auto packet = connection_.read_packet();
  if (!packet) return fail(std::move(packet).error());
  if (packet->empty())
    return fail(Errc::corrupt_input, fmt::format("{}: empty packet in the binlog stream", connection_.endpoint()));
  const std::uint8_t marker = (*packet)[0];
  if (marker == 0xfe && packet->size() < 9 && stops_at_end_) return std::span<const std::uint8_t>{};
  if (marker == 0xfe && packet->size() < 9)
    return fail(Errc::unavailable, fmt::format("{}: the server ended the binlog stream", connection_.endpoint()));
  if (marker != 0x00)
    return fail(Errc::corrupt_input, fmt::format("{}: unexpected packet {:#04x} ({} bytes) in the binlog stream",
                                                 connection_.endpoint(), marker, packet->size()));
  return packet->subspan(1);
}

DumpFailure BinlogClient::classify_failure(const Error& error) const {
  const unsigned number = connection_.last_error_number();
  if (number == 0) return DumpFailure::none;
  if (number >= kClientErrorsFirst && number <= kClientErrorsLast) return DumpFailure::lost;
  if (number == kErSlaveSameId ||
      (number == kErMasterFatalReadingBinlog && error.message.find("same server_uuid") != std::string::npos))
    return DumpFailure::same_server_id;
  if (number == kErServerShutdown || number == kErConnectionKilled || number == kErQueryInterrupted)
    return DumpFailure::lost;
  // 1236 covers every reason the dump thread gives up; these are the "not there any more"
  // ones (MySQL: first log file / purged GTIDs; MariaDB: GTID state not in any binlog).
  if (number == kErMasterFatalReadingBinlog &&
      (error.message.find("purged") != std::string::npos ||
       error.message.find("Could not find first log") != std::string::npos))
    return DumpFailure::purged;
  return DumpFailure::other;
}

}  // namespace cdc::replication
