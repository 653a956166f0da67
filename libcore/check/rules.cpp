// The prerequisites of man/cdc-plan.1 ("The checks, by name"), one rule each. Every
// rule is a pure function of ServerFacts so tests can feed it any server's answers.

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "check/grants.h"
#include "check/server_check.h"
#include "util/server_version.h"
#include "util/text.h"

namespace cdc::check {

namespace {

std::optional<std::string> variable(const ServerFacts& facts, const std::string& name) {
  if (const auto found = facts.variables.find(name); found != facts.variables.end()) return found->second;
  return std::nullopt;
}

bool is_on(std::string_view value) { return value == "ON" || value == "1" || value == "TRUE"; }

// A setting that can be changed at runtime: the statement for now, the line for restarts.
std::string set_and_persist(std::string_view name, std::string_view value) {
  return fmt::format("SET GLOBAL {0} = '{1}'; and add '{0} = {1}' under [mysqld] in my.cnf "
                     "(running sessions keep the old value: reconnect writers)",
                     name, value);
}

std::string quoted_account(const ServerFacts& facts) {
  const std::size_t at = facts.current_user.rfind('@');
  if (at == std::string::npos) return fmt::format("'{}'", facts.current_user);
  return fmt::format("'{}'@'{}'", facts.current_user.substr(0, at), facts.current_user.substr(at + 1));
}

std::string describe_duration(long long seconds) {
  const auto count = [](long long n, std::string_view unit) {
    return fmt::format("{} {}{}", n, unit, n == 1 ? "" : "s");
  };
  if (seconds % 86400 == 0) return count(seconds / 86400, "day");
  if (seconds % 3600 == 0) return count(seconds / 3600, "hour");
  return count(seconds, "second");
}

CheckLine server_line(const ServerFacts& facts, Flavor flavor, ServerVersion version) {
  CheckLine line{"server", Status::ok, {}, "MySQL 5.6+ or MariaDB 10.0+", {}, {}};
  line.value = fmt::format("{} {}", flavor == Flavor::mariadb ? "MariaDB" : "MySQL", facts.version);
  const bool supported = flavor == Flavor::mariadb ? version.at_least(10, 0) : version.at_least(5, 6);
  if (!supported) {
    line.status = Status::fail;
    line.message = "this server is too old for row-based CDC with GTIDs";
    line.fix = "upgrade the server";
  }
  return line;
}

CheckLine log_bin_line(const ServerFacts& facts) {
  CheckLine line{"log_bin", Status::ok, variable(facts, "log_bin").value_or("(unknown)"), "ON", {}, {}};
  if (!is_on(line.value)) {
    line.status = Status::fail;
    line.message = "the binary log is off, so there are no changes to capture";
    line.fix = "add 'log_bin = mysql-bin' and 'server_id = <unique number>' under [mysqld] in my.cnf "
               "and restart the server (log_bin cannot be changed at runtime)";
  }
  return line;
}

CheckLine must_equal(const ServerFacts& facts, const std::string& name, std::string_view want,
                     std::string_view why) {
  CheckLine line{name, Status::ok, variable(facts, name).value_or("(unknown)"), std::string(want), {}, {}};
  if (to_upper(line.value) != want) {
    line.status = Status::fail;
    line.message = std::string(why);
    line.fix = set_and_persist(name, want);
  }
  return line;
}

CheckLine row_metadata_line(const ServerFacts& facts) {
  const auto value = variable(facts, "binlog_row_metadata");
  CheckLine line{"binlog_row_metadata", Status::ok, value.value_or("(not available)"), "FULL", {}, {}};
  if (!value) {
    line.status = Status::warn;
    line.message = "this server cannot log column names (MySQL 8.0.1+ and MariaDB 10.5+ can); they will "
                   "come from information_schema, which can disagree with older events after a DDL";
    line.fix = "upgrade the server, then set binlog_row_metadata = FULL";
  } else if (to_upper(*value) != "FULL") {
    line.status = Status::warn;
    line.message = "column names and ENUM/SET strings are not in the binlog; they will come from "
                   "information_schema, which can disagree with older events after a DDL";
    line.fix = set_and_persist("binlog_row_metadata", "FULL");
  }
  return line;
}

CheckLine row_value_options_line(const ServerFacts& facts, Flavor flavor) {
  const auto value = variable(facts, "binlog_row_value_options");
  CheckLine line{"binlog_row_value_options", Status::ok, value.value_or(""), "''", {}, {}};
  if (!value) {
    line.value = flavor == Flavor::mariadb ? "(not on MariaDB)" : "(not available)";
    line.message = "JSON updates are always logged as whole documents";
  } else if (!value->empty()) {
    line.status = Status::warn;
    line.message = "JSON updates are logged as partial diffs (PARTIAL_UPDATE_ROWS); they can only be "
                   "rebuilt from a FULL before image";
    line.fix = "SET GLOBAL binlog_row_value_options = ''; and add \"binlog_row_value_options = ''\" "
               "under [mysqld] in my.cnf";
  }
  return line;
}

void gtid_lines(const ServerFacts& facts, Flavor flavor, std::vector<CheckLine>& out) {
  if (flavor == Flavor::mysql) {
    CheckLine line{"gtid_mode", Status::ok, variable(facts, "gtid_mode").value_or("(not available)"), "ON",
                   {}, {}};
    if (to_upper(line.value) != "ON") {
      line.status = Status::warn;
      line.message = "without GTIDs positions are FILE:OFFSET, which do not survive a failover to another server";
      line.fix = "SET GLOBAL enforce_gtid_consistency = ON; then SET GLOBAL gtid_mode = OFF_PERMISSIVE, "
                 "ON_PERMISSIVE, ON in turn; and add 'gtid_mode = ON' and 'enforce_gtid_consistency = ON' "
                 "under [mysqld] in my.cnf";
    }
    out.push_back(std::move(line));
    return;
  }
  CheckLine strict{"gtid_strict_mode", Status::ok, variable(facts, "gtid_strict_mode").value_or("(unknown)"),
                   "ON", {}, {}};
  if (!is_on(to_upper(strict.value))) {
    strict.status = Status::warn;
    strict.message = "without strict mode a domain's sequence numbers can go backwards, so a GTID "
                     "position may not name one point in the binlog";
    strict.fix = set_and_persist("gtid_strict_mode", "ON");
  }
  out.push_back(std::move(strict));
  CheckLine position{"gtid_binlog_pos", Status::ok, variable(facts, "gtid_binlog_pos").value_or(""),
                     "any", {}, {}};
  if (position.value.empty()) position.message = "no GTID transaction logged yet";
  out.push_back(std::move(position));
}

// The binlog retention in force, in seconds; 0: never purged automatically.
long long retention_seconds(const ServerFacts& facts) {
  const auto seconds_text = variable(facts, "binlog_expire_logs_seconds");
  const auto days_text = variable(facts, "expire_logs_days");
  const long long seconds = seconds_text ? std::atoll(seconds_text->c_str()) : 0;
  const double days = days_text ? std::atof(days_text->c_str()) : 0.0;
  // MySQL 8 lets binlog_expire_logs_seconds win when both are set; MariaDB 10.6+ keeps them in
  // step. Either way a non-zero seconds value is the one in force.
  return seconds > 0 ? seconds : static_cast<long long>(days * 86400.0);
}

// "3 h 20 min", "12 min", "40 s": a rough duration for people.
std::string rough_duration(std::uint64_t seconds) {
  if (seconds >= 86400) return fmt::format("{} d {} h", seconds / 86400, seconds % 86400 / 3600);
  if (seconds >= 3600) return fmt::format("{} h {} min", seconds / 3600, seconds % 3600 / 60);
  if (seconds >= 60) return fmt::format("{} min", (seconds + 30) / 60);
  return fmt::format("{} s", seconds);
}

// cdc-plan --check --tables: the snapshot must end before the binlog it starts from is
// purged, or the stream after it cannot start (exit 5). Its length is estimated from the
// tables' sizes at the assumed rates; the retention wanted is three times that and an hour.
CheckLine snapshot_length_line(const ServerFacts& facts) {
  const ServerFacts::Tables& tables = *facts.tables;
  const std::uint64_t estimate = std::max(tables.rows / kAssumedSnapshotRowsPerSecond,
                                          tables.bytes / kAssumedSnapshotBytesPerSecond);
  const std::uint64_t wanted = 3 * estimate + 3600;
  CheckLine line{"snapshot_length", Status::ok, {}, {}, {}, {}};
  line.value = fmt::format("{} table(s), about {} rows and {} MiB: about {} for one cdc-snapshot at {} rows/s or "
                           "{} MiB/s",
                           tables.count, tables.rows, tables.bytes >> 20, rough_duration(estimate),
                           kAssumedSnapshotRowsPerSecond, kAssumedSnapshotBytesPerSecond >> 20);
  line.want = fmt::format("a binlog retention of at least {} (three times that, and an hour)", rough_duration(wanted));
  const long long retention = retention_seconds(facts);
  if (tables.count == 0) {
    line.status = Status::warn;
    line.message = "--tables selects no table on this server";
    line.fix = "check the patterns: DB.TABLE globs, e.g. 'shop.*'";
  } else if (retention != 0 && static_cast<std::uint64_t>(retention) < wanted) {
    line.status = Status::warn;
    line.message = fmt::format("the binlog is kept {}: a snapshot that outlasts it loses its start position, and the "
                               "stream after it cannot start (exit 5)",
                               describe_duration(retention));
    const std::uint64_t days = (wanted + 86399) / 86400;
    line.fix = fmt::format("SET GLOBAL binlog_expire_logs_seconds = {0}; and add 'binlog_expire_logs_seconds = {0}' "
                           "under [mysqld] in my.cnf",
                           days * 86400);
  }
  return line;
}

CheckLine retention_line(const ServerFacts& facts) {
  const long long effective = retention_seconds(facts);
  CheckLine line{"binlog_retention", Status::ok, {}, "at least 1 day", {}, {}};
  line.value = effective == 0 ? "never purged automatically" : describe_duration(effective);
  constexpr long long kOneDay = 86400;
  if (effective == 0) {
    line.message = "binlogs are kept until someone purges them; watch the disk";
  } else if (effective < kOneDay) {
    line.status = Status::warn;
    line.message = "a snapshot, or a stopped stream, that takes longer than this loses its start position";
    line.fix = "SET GLOBAL binlog_expire_logs_seconds = 604800; and add 'binlog_expire_logs_seconds = "
               "604800' under [mysqld] in my.cnf";
  }
  return line;
}

CheckLine server_id_line(const ServerFacts& facts) {
  CheckLine line{"server_id", Status::ok, variable(facts, "server_id").value_or("(unknown)"), "non-zero", {},
                 {}};
  if (line.value == "0") {
    line.status = Status::fail;
    line.message = "a server with server_id 0 refuses replication clients";
    line.fix = "SET GLOBAL server_id = <unique number>; and add 'server_id = <unique number>' under "
               "[mysqld] in my.cnf";
  }
  return line;
}

CheckLine checksum_line(const ServerFacts& facts) {
  CheckLine line{"binlog_checksum", Status::ok, variable(facts, "binlog_checksum").value_or("NONE"),
                 "CRC32 or NONE", {}, {}};
  const std::string value = to_upper(line.value);
  if (value != "CRC32" && value != "NONE") {
    line.status = Status::warn;
    line.message = "unknown checksum algorithm";
    line.fix = set_and_persist("binlog_checksum", "CRC32");
  }
  return line;
}

// The statement text before each statement's rows (cdc-stream --include-query): MariaDB's
// ANNOTATE_ROWS events (binlog_annotate_row_events, ON by default since 10.2.4), MySQL's
// ROWS_QUERY events (binlog_rows_query_log_events, OFF by default). Nothing else needs them, so
// a server without them warns only when the statements are wanted.
CheckLine statements_line(const ServerFacts& facts, Flavor flavor, const CheckWants& wants) {
  const std::string name =
      flavor == Flavor::mariadb ? "binlog_annotate_row_events" : "binlog_rows_query_log_events";
  const auto value = variable(facts, name);
  CheckLine line{name, Status::ok, value.value_or("(not available)"), "ON, for --include-query", {}, {}};
  if (value && is_on(to_upper(*value))) {
    // A MariaDB replica writes the statements of the changes it applies only with this too.
    const auto replicated = variable(facts, "replicate_annotate_row_events");
    if (flavor == Flavor::mariadb && replicated && !is_on(to_upper(*replicated)))
      line.message = "replicate_annotate_row_events is OFF: on a replica, the changes it applies have no statement "
                     "(\"query\":null with --include-query); it takes a restart with "
                     "'replicate_annotate_row_events = ON' under [mysqld] in my.cnf";
    return line;
  }
  if (wants.statements) line.status = Status::warn;
  if (!value) {
    line.message = "this server cannot log the statement behind row changes (MySQL 5.6+ and MariaDB can): "
                   "--include-query gives \"query\":null";
    line.fix = "upgrade the server";
    return line;
  }
  line.message = "the statement behind each row change is not logged: --include-query gives \"query\":null "
                 "(but for sessions that set it ON); nothing else needs it";
  line.fix = set_and_persist(name, "ON");
  return line;
}

void grant_lines(const ServerFacts& facts, Flavor flavor, ServerVersion version, std::vector<CheckLine>& out) {
  const Grants grants = parse_grants(facts.grants);
  const std::string account = quoted_account(facts);
  const std::string roles_note =
      grants.roles.empty() ? "" : " (privileges of roles count only while the role is active)";

  CheckLine replica{"grant_replication_slave", Status::ok, "held", "REPLICATION SLAVE ON *.*", {}, {}};
  if (!grants.has_global("REPLICATION SLAVE")) {
    replica.status = Status::fail;
    replica.value = "missing";
    replica.message = "cdc-stream reads the binlog as a replica" + roles_note;
    replica.fix = fmt::format("GRANT REPLICATION SLAVE ON *.* TO {};", account);
  }
  out.push_back(std::move(replica));

  // MariaDB 10.5 split REPLICATION CLIENT into BINLOG MONITOR (which SHOW MASTER STATUS needs)
  // and SLAVE MONITOR; SHOW GRANTS prints the new name.
  const bool binlog_monitor_name = flavor == Flavor::mariadb && version.at_least(10, 5);
  const std::string monitor = binlog_monitor_name ? "BINLOG MONITOR" : "REPLICATION CLIENT";
  CheckLine client{"grant_" + std::string(binlog_monitor_name ? "binlog_monitor" : "replication_client"),
                   Status::ok, "held", monitor + " ON *.*", {}, {}};
  if (!grants.has_global("REPLICATION CLIENT") && !grants.has_global("BINLOG MONITOR") &&
      !grants.has_global("SUPER")) {
    client.status = Status::fail;
    client.value = "missing";
    client.message = "cdc-snapshot reads the binlog position around each chunk" + roles_note;
    client.fix = fmt::format("GRANT {} ON *.* TO {};", monitor, account);
  }
  out.push_back(std::move(client));

  CheckLine select{"grant_select", Status::ok, "held on *.*", "SELECT on the captured tables", {}, {}};
  if (!grants.has_global("SELECT")) {
    if (grants.select_objects.empty()) {
      select.status = Status::fail;
      select.value = "missing";
      select.message = "cdc-plan and cdc-snapshot read the tables" + roles_note;
      select.fix = fmt::format("GRANT SELECT ON <database>.* TO {}; for each captured database", account);
    } else {
      select.status = Status::warn;
      select.value = "held on " + fmt::format("{}", fmt::join(grants.select_objects, ", "));
      select.message = "tables outside these cannot be planned or snapshotted";
      select.fix = fmt::format("GRANT SELECT ON <database>.* TO {}; for any other captured database", account);
    }
  }
  out.push_back(std::move(select));

  CheckLine show{"grant_show_databases", Status::ok, "held", "SHOW DATABASES ON *.*", {}, {}};
  if (!grants.has_global("SHOW DATABASES")) {
    show.status = Status::warn;
    show.value = "missing";
    show.message = "cdc-plan only discovers databases this account holds a privilege in";
    show.fix = fmt::format("GRANT SHOW DATABASES ON *.* TO {};", account);
  }
  out.push_back(std::move(show));
}

}  // namespace

Flavor flavor_of(const ServerFacts& facts) {
  const auto contains_mariadb = [](std::string_view text) {
    return to_upper(text).find("MARIADB") != std::string::npos;
  };
  return contains_mariadb(facts.version) || contains_mariadb(facts.version_comment) ? Flavor::mariadb
                                                                                    : Flavor::mysql;
}

Report evaluate(const ServerFacts& facts, const CheckWants& wants) {
  Report report;
  report.flavor = flavor_of(facts);
  const ServerVersion version = ServerVersion::parse(facts.version);
  auto& lines = report.lines;
  lines.push_back(server_line(facts, report.flavor, version));
  lines.push_back(log_bin_line(facts));
  lines.push_back(must_equal(facts, "binlog_format", "ROW",
                             "only row events carry the changed rows; STATEMENT and MIXED log SQL text"));
  lines.push_back(must_equal(facts, "binlog_row_image", "FULL",
                             "merging and keys need every column of the before and after images"));
  lines.push_back(row_metadata_line(facts));
  lines.push_back(row_value_options_line(facts, report.flavor));
  lines.push_back(statements_line(facts, report.flavor, wants));
  gtid_lines(facts, report.flavor, lines);
  lines.push_back(retention_line(facts));
  if (facts.tables) lines.push_back(snapshot_length_line(facts));
  lines.push_back(server_id_line(facts));
  lines.push_back(checksum_line(facts));
  grant_lines(facts, report.flavor, version, lines);
  return report;
}

bool Report::usable() const {
  for (const CheckLine& line : lines)
    if (line.status == Status::fail) return false;
  return true;
}

}  // namespace cdc::check
