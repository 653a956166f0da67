#include "apply/run_apply.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include <fmt/format.h>

#include "apply/follow.h"
#include "apply/mariadb_target.h"
#include "apply/postgres_target.h"
#include "ndjson/reader.h"
#include "postgres/connection.h"
#include "records/position.h"
#include "util/unique_fd.h"

namespace cdc::apply {

namespace {

// --follow ends at SIGTERM or SIGINT: the follower stops passing lines, the applier commits the
// whole transactions it has and the run ends with exit 0.
std::atomic<bool> stop_following{false};

void on_stop_signal(int) { stop_following = true; }

void stop_on_signals() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

}  // namespace

Result<ApplyOptions> apply_options(const RunOptions& options) {
  if (options.follow && (options.inputs.empty() || options.inputs.back() == "-"))
    return fail(Errc::usage, "--follow reads a file on as it grows: name the file (standard input waits for more "
                             "lines by itself)");
  ApplyOptions out;
  out.dialect = options.postgres ? Dialect::postgres : Dialect::mariadb;
  if (options.postgres && options.postgres->empty())
    return fail(Errc::usage, "--postgres: give a connection string, such as 'host=/run/postgresql dbname=copy'");
  out.database = options.database;
  if (out.database && out.database->empty()) return fail(Errc::usage, "--database: the name is empty");
  out.create_tables = options.create_tables;
  out.batch_rows = options.batch_rows;
  if (out.batch_rows == 0) return fail(Errc::usage, "--batch-rows: give at least 1");
  if (options.on_ddl == "stop")
    out.on_ddl = OnDdl::stop;
  else if (options.on_ddl == "apply")
    out.on_ddl = OnDdl::apply;
  else if (options.on_ddl == "ignore")
    out.on_ddl = OnDdl::ignore;
  else
    return fail(Errc::usage, fmt::format("--on-ddl {}: give stop, apply or ignore", options.on_ddl));
  if (out.on_ddl == OnDdl::apply && options.postgres)
    return fail(Errc::usage, "--on-ddl apply: a DDL of the MySQL source cannot run on a PostgreSQL target; give "
                             "--on-ddl stop (and change the target by hand) or ignore");
  if (options.until) {
    auto until = gtid::Position::parse(*options.until);
    if (!until) return fail(Errc::usage, fmt::format("--until: {}", until.error().message));
    out.until = std::move(*until);
  }
  return out;
}

Result<PositionTable> position_table_name(const RunOptions& options) {
  std::string name(kDefaultPositionTable);
  std::optional<std::string> database = options.database;
  if (options.position_table) {
    const std::string& given = *options.position_table;
    const std::size_t dot = given.find('.');
    if (dot == std::string::npos) {
      name = given;
    } else {
      database = given.substr(0, dot);
      name = given.substr(dot + 1);
    }
    if (name.empty() || (database && database->empty()))
      return fail(Errc::usage, fmt::format("--position-table {}: give NAME or DB.NAME", given));
  }
  if (!database) {
    const std::string_view db = options.postgres ? "SCHEMA" : "DB";
    return fail(Errc::usage, fmt::format("where to keep the applied position: give --database {0} (the position table "
                                         "goes there too) or --position-table {0}.NAME",
                                         db));
  }
  const Dialect dialect = options.postgres ? Dialect::postgres : Dialect::mariadb;
  return PositionTable{*database, quote_name(dialect, *database) + '.' + quote_name(dialect, name)};
}

std::string version_report(std::string text) {
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text + ", " + postgres::library_version() + '\n';
}

Result<RunOutcome> run(const RunOptions& options) {
  auto apply = apply_options(options);
  if (!apply) return fail(apply.error());
  auto table = position_table_name(options);
  if (!table) return fail(table.error());
  // Every input is opened before the target is touched: a mistyped name changes nothing.
  std::vector<std::string> names = options.inputs;
  if (names.empty()) names.emplace_back("-");
  std::vector<UniqueFd> files;
  for (const std::string& name : names) {
    if (name == "-") {
      files.emplace_back();
      continue;
    }
    const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(Errc::io, fmt::format("{}: cannot open: {}", name, std::strerror(errno)));
    files.emplace_back(fd);
  }
  const std::optional<std::string> create_namespace =
      options.create_tables ? std::optional<std::string>(table->database) : std::nullopt;
  std::unique_ptr<Target> target;
  Result<AppliedState> state = AppliedState{};
  if (options.postgres) {
    auto opened = PostgresTarget::open(*options.postgres, table->qualified, create_namespace);
    if (!opened) return fail(opened.error());
    state = (*opened)->load_state();
    target = std::move(*opened);
  } else {
    auto opened = MariadbTarget::open(options.connection, table->qualified, create_namespace);
    if (!opened) return fail(opened.error());
    state = (*opened)->load_state();
    target = std::move(*opened);
  }
  if (!state) return fail(state.error());
  const auto started = std::chrono::steady_clock::now();
  Applier applier(*target, std::move(*apply), std::move(*state));
  RunOutcome outcome;
  std::unique_ptr<FileFollower> follower;
  if (options.follow) {
    stop_on_signals();
    auto started_follower = FileFollower::start(std::move(files.back()), names.back(), stop_following);
    if (!started_follower) return fail(started_follower.error());
    follower = std::move(*started_follower);
  }
  for (std::size_t i = 0; i < names.size() && outcome.stop == Stop::end_of_input; ++i) {
    const bool from_stdin = names[i] == "-";
    const bool followed = follower && i + 1 == names.size();
    ndjson::Reader reader(followed ? follower->fd() : from_stdin ? STDIN_FILENO : files[i].get(),
                          from_stdin ? "stdin" : names[i]);
    auto stop = applier.read(reader);
    if (!stop) return fail(stop.error());
    outcome.stop = *stop;
  }
  if (outcome.stop == Stop::end_of_input) {
    if (auto done = applier.finish(); !done) return fail(done.error());
  }
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  outcome.stats = applier.stats();
  outcome.state = applier.state();
  outcome.stop_reason = applier.stop_reason();
  return outcome;
}

}  // namespace cdc::apply
