// LiveRun's start-up: where the run starts (a saved state, --from as a position or a time) and
// where it stops (--until), checked against the server before anything is read.

#include <fmt/format.h>

#include <cstdlib>

#include "stream/live_run.h"
#include "stream/row_filter.h"
#include "stream/start_position.h"
#include "stream/time_position.h"

namespace cdc::stream {

Result<void> LiveRun::prepare() {
  const std::optional<records::StreamState>& saved = checkpoint_.loaded();
  if (!saved && !options_.from)
    return fail(Errc::usage, checkpoint_.has_state()
                                 ? fmt::format("{} does not exist yet: give --from (now, earliest, a GTID set or "
                                               "position, or FILE:OFFSET) for the first run",
                                               checkpoint_.state_path())
                                 : "give --from (now, earliest, a GTID set or position, or FILE:OFFSET), or a "
                                   "--state file to resume from");

  mysql::ConnectionOptions connection = options_.connection;
  connection.read_timeout_seconds = options_.heartbeat_seconds * 3 + 5;
  auto client = replication::BinlogClient::open(connection);
  if (!client) return fail(std::move(client).error());
  client_.emplace(std::move(*client));
  endpoint_ = client_->connection().endpoint();
  if (auto fits = check_wheres_now(client_->connection(), options_.wheres, options_.tables, options_.exclude,
                                   reporter_.warn);
      !fits)
    return fail(std::move(fits).error());
  if (options_.output.include_query && !client_->server().logs_statements) {
    const bool mariadb = client_->server().flavor == replication::Flavor::mariadb;
    const std::string_view variable = mariadb ? "binlog_annotate_row_events" : "binlog_rows_query_log_events";
    reporter_.warn(fmt::format("{}: {} is OFF: the server does not log the statements, so --include-query gives "
                               "\"query\":null (but for sessions that set it ON); fix: SET GLOBAL {} = ON, and "
                               "'{} = ON' under [mysqld] in my.cnf",
                               endpoint_, variable, variable, variable));
  }

  Position start;
  gtid::FilePosition start_file;
  std::string position_source = "--from";
  if (saved) {
    auto position = Position::parse(saved->position);
    if (!position)
      return fail(Errc::corrupt_input,
                  fmt::format("{}: \"position\": {}", checkpoint_.state_path(), position.error().message));
    start = std::move(*position);
    start_file = gtid::FilePosition{saved->file, saved->offset};
    last_gtid_ = saved->gtid;
    position_source = checkpoint_.state_path();
    if (auto same = check_saved_server(*client_, *saved, start, checkpoint_.state_path(), reporter_.warn); !same)
      return fail(std::move(same).error());
    if (options_.from)
      reporter_.notice(fmt::format("resuming from {} as {} says; --from {} is ignored", start.to_string(),
                                   checkpoint_.state_path(), *options_.from));
    else
      reporter_.notice(fmt::format("resuming from {} ({})", start.to_string(), checkpoint_.state_path()));
  } else if (looks_like_time(*options_.from)) {
    auto time = parse_time(*options_.from);
    if (!time) return fail(std::move(time).error());
    auto located = locate_time(options_.connection, *client_, *time);
    if (!located) return fail(std::move(located).error());
    reporter_.notice(describe_time_start("--from", *time, *located));
    start = std::move(located->position);
    start_file = std::move(located->at);
  } else {
    auto position = resolve_position(*client_, *options_.from, true);
    if (!position) return fail(std::move(position).error());
    start = std::move(*position);
  }
  if (start.kind == Position::Kind::mariadb_gtids)
    if (auto known = check_known_domains(*client_, start.mariadb_gtids, position_source); !known)
      return fail(std::move(known).error());
  if (start.kind == Position::Kind::file) {
    start_file = start.file;
    // A purged file may be in the archive: the dump's failure leads there (run()).
    if (auto there = check_file_position(*client_, start.file);
        !there && !(there.error().code == Errc::purged && source_dir_))
      return fail(std::move(there).error());
  }
  checkpoint_.set_server(endpoint_, client_->server().server_id);
  checkpoint_.start_at(std::move(start), std::move(start_file), last_gtid_);

  if (options_.until && looks_like_time(*options_.until)) {
    auto time = parse_time(*options_.until);
    if (!time) return fail(std::move(time).error());
    until_time_ = *time;
    until_text_ = format_time(*time);
    if (auto skew = server_clock_skew(); !skew) return fail(std::move(skew).error());
  } else if (options_.until) {
    auto position = resolve_position(*client_, *options_.until, false);
    if (!position) return fail(std::move(position).error());
    until_ = std::move(*position);
    until_text_ = until_->to_string();
    if (until_->kind != Position::Kind::file && checkpoint_.position().kind == Position::Kind::file &&
        !client_->server().gtids)
      return fail(Errc::usage, fmt::format("--until {} is a GTID position, but the server writes no GTIDs: give "
                                           "--until as FILE:OFFSET",
                                           until_->to_string()));
    if (until_->kind == Position::Kind::mariadb_gtids)
      if (auto known = check_known_domains(*client_, until_->mariadb_gtids, "--until"); !known)
        return fail(std::move(known).error());
  }
  server_id_ = options_.server_id.value_or(replication::default_server_id());
  if (auto unique = client_->check_server_id(server_id_); !unique) return fail(std::move(unique).error());
  auto primary = guard_.primary_at_start(client_->connection());
  if (!primary) return fail(std::move(primary).error());
  primary_at_start_ = *primary;
  row_metadata_full_ = client_->server().binlog_row_metadata == "FULL";
  if (client_->server().binlog_row_metadata != "FULL")
    reporter_.warn(fmt::format(
        "{} has binlog_row_metadata={}: column names, ENUM/SET labels and keys are not in "
        "the binlog and come from the catalog as it is now, so events from before a later "
        "schema change may be labelled with the new schema; set binlog_row_metadata=FULL",
        endpoint_,
        client_->server().binlog_row_metadata.empty() ? "(not supported)" : client_->server().binlog_row_metadata));
  return {};
}

Result<void> LiveRun::close_span_at_start() {
  if (checkpoint_.span_closed())
    return checkpoint_.commit(writer_, checkpoint_.position(), checkpoint_.file_position(), last_gtid_);
  const std::string position = checkpoint_.position().to_string();
  if (!checkpoint_.span_open()) writer_.write_span_start(position);
  const gtid::FilePosition& file = checkpoint_.file_position();
  writer_.write_span_end(position, file.file.empty() ? std::optional<gtid::FilePosition>{} : file, until_text_);
  return checkpoint_.commit(writer_, checkpoint_.position(), checkpoint_.file_position(), last_gtid_,
                            Checkpoint::Span::closed);
}

UtcTime LiveRun::server_now() const {
  const auto local =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch());
  return UtcTime{local.count() + clock_skew_micros_};
}

Result<void> LiveRun::server_clock_skew() {
  auto result = client_->connection().query("SELECT CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)");
  if (!result) return fail(std::move(result).error());
  if (result->rows.empty() || result->rows[0].empty() || !result->rows[0][0]) return {};
  const std::int64_t server = std::strtoll(result->rows[0][0]->c_str(), nullptr, 10);
  clock_skew_micros_ = server - server_now().micros + clock_skew_micros_;
  return {};
}

bool LiveRun::until_reached_at_start() const {
  return until_ && gtid::includes(checkpoint_.position(), *until_).value_or(false);
}

}  // namespace cdc::stream
