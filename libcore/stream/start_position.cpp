#include "stream/start_position.h"

#include <fmt/format.h>

#include <set>

namespace cdc::stream {

using gtid::Position;

Error purged_binlog(std::string_view position, std::string_view oldest) {
  return Error{Errc::purged,
               fmt::format("the server no longer has the binlog for {} (the oldest binlog there is {}): the changes "
                           "in between are gone from this server; take a new snapshot and start again from its "
                           "position, or --from earliest to accept the gap",
                           position, oldest)};
}

Error dump_error(const replication::BinlogClient& client, const Error& error,
                 const mysql::ConnectionOptions& connection, std::string_view position, std::uint32_t server_id,
                 std::string_view run) {
  switch (client.classify_failure(error)) {
    case replication::DumpFailure::purged: {
      std::string oldest = "(unknown: cannot list the binlogs)";
      if (auto other = replication::BinlogClient::open(connection))
        if (auto name = other->oldest_binlog()) oldest = *name;
      return purged_binlog(position, fmt::format("{}; the server said: {}", oldest, error.message));
    }
    case replication::DumpFailure::same_server_id:
      return Error{Errc::usage,
                   fmt::format("another replica registered with server id {}, and the server dropped this {} for it "
                               "({}): give every run its own --server-id, or leave it out for a generated one",
                               server_id, run, error.message)};
    case replication::DumpFailure::lost:
      return Error{Errc::unavailable, error.message};
    case replication::DumpFailure::none:
    case replication::DumpFailure::other:
      break;
  }
  if (error.code == Errc::unavailable) return Error{Errc::unavailable, error.message};
  return error;
}

Result<Position> resolve_position(replication::BinlogClient& client, const std::string& text, bool for_start) {
  const std::string endpoint = client.connection().endpoint();
  if (text == "now") {
    auto end = client.server_end();
    if (!end) return fail(std::move(end).error());
    if (!end->gtids.empty()) return Position::parse(end->gtids);
    Position position;
    position.kind = Position::Kind::file;
    position.file = end->file;
    return position;
  }
  if (text == "earliest") {
    if (!for_start) return fail(Errc::usage, "--until earliest means nothing: give now or a position");
    auto oldest = client.oldest_binlog();
    if (!oldest) return fail(std::move(oldest).error());
    Position position;
    position.kind = Position::Kind::file;
    position.file = gtid::FilePosition{*oldest, 4};
    return position;
  }
  auto parsed = Position::parse(text);
  if (!parsed) return fail(std::move(parsed).error());
  const bool mariadb = client.server().flavor == replication::Flavor::mariadb;
  if (parsed->kind == Position::Kind::mysql_gtids && mariadb)
    return fail(Errc::usage, fmt::format("{} is MariaDB, and '{}' is a MySQL GTID set: give a MariaDB GTID "
                                         "position (domain-server-seq) or FILE:OFFSET",
                                         endpoint, text));
  if (parsed->kind == Position::Kind::mariadb_gtids && !mariadb)
    return fail(Errc::usage, fmt::format("{} is MySQL, and '{}' is a MariaDB GTID position: give a MySQL GTID set "
                                         "(uuid:1-5) or FILE:OFFSET",
                                         endpoint, text));
  return parsed;
}

Result<void> check_file_position(replication::BinlogClient& client, const gtid::FilePosition& position) {
  const std::string endpoint = client.connection().endpoint();
  auto files = client.binlog_files();
  if (!files) return fail(std::move(files).error());
  if (files->empty()) return fail(Errc::config, fmt::format("{}: SHOW BINARY LOGS is empty", endpoint));
  for (const auto& file : *files) {
    if (file.name != position.file) continue;
    if (position.offset > file.size)
      return fail(Errc::usage, fmt::format("{}:{} is beyond the end of {} ({} bytes on {})", position.file,
                                           position.offset, position.file, file.size, endpoint));
    return {};
  }
  if (gtid::FilePosition{position.file, 0} < gtid::FilePosition{files->front().name, 0})
    return fail(purged_binlog(fmt::format("{}:{}", position.file, position.offset), files->front().name));
  return fail(Errc::usage, fmt::format("{} has no binlog named {} (it has {} to {}): give a name SHOW BINARY LOGS "
                                       "lists",
                                       endpoint, position.file, files->front().name, files->back().name));
}

Result<void> check_known_domains(replication::BinlogClient& client, const gtid::MariadbGtidPos& position,
                                 std::string_view given) {
  if (position.empty()) return {};
  auto result = client.connection().query("SELECT @@global.gtid_binlog_state");
  if (!result) return fail(std::move(result).error());
  std::string state_text;
  if (!result->rows.empty() && result->rows[0][0]) state_text = *result->rows[0][0];
  // The binlog state holds the last GTID of every (domain, server) pair: several per domain.
  std::set<std::uint32_t> domains;
  std::size_t start = 0;
  while (start < state_text.size()) {
    std::size_t comma = state_text.find(',', start);
    if (comma == std::string::npos) comma = state_text.size();
    if (auto gtid = gtid::MariadbGtid::parse(std::string_view(state_text).substr(start, comma - start)))
      domains.insert(gtid->domain_id);
    start = comma + 1;
  }
  for (const auto& gtid : position.gtids()) {
    if (domains.contains(gtid.domain_id)) continue;
    std::string known;
    for (const std::uint32_t domain : domains) known += (known.empty() ? "" : ", ") + std::to_string(domain);
    return fail(Errc::usage,
                fmt::format("{} {}: domain {} ({}) is not in the binlog of {} (its domains: {}): the position is "
                            "from another server or replication topology, and the stream would carry the domain "
                            "forever; remove {} from the position, or give one this server printed",
                            given, position.to_string(), gtid.domain_id, gtid.to_string(),
                            client.connection().endpoint(), known.empty() ? "none yet" : known, gtid.to_string()));
  }
  return {};
}

Result<void> check_saved_server(const replication::BinlogClient& client, const records::StreamState& saved,
                                const Position& position, std::string_view state_path,
                                const std::function<void(std::string_view)>& warn) {
  if (position.kind != Position::Kind::file) return {};
  const std::uint32_t server_id = client.server().server_id;
  if (saved.server_id) {
    if (*saved.server_id == server_id || server_id == 0) return {};
    return fail(Errc::usage,
                fmt::format("{} holds {}, a place in the binlog of server id {} ({}), and {} is server id {}: a "
                            "binlog offset means nothing on another server; point --host at the server the state "
                            "came from, or start a new --state from a GTID position",
                            state_path, position.to_string(), *saved.server_id,
                            saved.server.empty() ? "address not saved" : saved.server,
                            client.connection().endpoint(), server_id));
  }
  // A state from before server ids were saved: only the address is known, and one server
  // has many addresses, so this is a warning.
  const std::string endpoint = client.connection().endpoint();
  if (!saved.server.empty() && saved.server != endpoint)
    warn(fmt::format("{} holds {}, saved against {}, and this run reads {}: if that is another server, the offset "
                     "names unrelated bytes; stop and start a new --state if so",
                     state_path, position.to_string(), saved.server, endpoint));
  return {};
}

}  // namespace cdc::stream
