#!/usr/bin/env bash
# cdc-apply's exactly-once under faults that coincide (issue 32): a random load runs on the
# source while cdc-sync --output streams it and two `cdc-apply --follow` feed on that file, one
# into a MariaDB server of its own, one into a throwaway PostgreSQL. The load is apply_lib.sh's
# (a.t over most types, a.c with a composite key, a.k without a key) and, beside it, the type
# proof's tables (apply_types.py make-source: type_differential.py's table of every type as
# a.ty_t and its keyless copy a.ty_k, the system-versioned a.ty_sv, the long-UNIQUE a.ty_hu, the
# sequence a.ty_sq; random and edge values both targets can hold, no zero dates), whose rows are
# inserted, updated, moved to other keys and deleted during the rounds. Every round of a seeded
# schedule makes two faults at once, drawn from: kill -9 of cdc-sync (which cuts its output back
# and writes it again when it runs again), SIGTERM to it, kill -9 of either cdc-apply, the
# MariaDB target killed (kill -9) and started again (InnoDB recovers it), PostgreSQL stopped with
# -m immediate and started again, the MariaDB applier's connection killed on the server, and the
# PostgreSQL applier's backend terminated. The MariaDB applier runs without
# --retry-for (a lost connection is exit 69), the PostgreSQL one with it (it reconnects and
# commits again, never ends). After each round every process that ended is checked (kill -9, 0
# after SIGTERM, 69 after the MariaDB applier's connection or server went; anything else fails the test
# with its message) and run again as the same command. Once the load is done,
# cdc-sync runs to its end, the appliers stop at SIGTERM and run once more to the end; then
#   both targets equal the source row for row (PostgreSQL through cdc-apply(1)'s mapping, as
#   apply_postgres.sh compares), and both position tables hold the stream's last commit;
#   the type proof's tables too, as apply_types.py compare renders them: each server writes
#   every value (PostgreSQL through SQL that follows cdc-apply(1)'s mapping), and the column
#   types PostgreSQL got are those the mapping names.
# CDC_APPLY_SEED replays a run (the schedule and the load); CDC_APPLY_ROUNDS sets the rounds;
# CDC_APPLY_TYPE_ROWS (default 60) and CDC_APPLY_TYPE_TRANSACTIONS (default 25 a part, 8 parts)
# size the type tables and their changes.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$source_dir/scripts/lib/throwaway_postgres.sh"
pg_throwaway_bin >/dev/null || { echo "skipped: PostgreSQL is not installed (Debian's postgresql)" && exit 77; }
command -v python3 >/dev/null || { echo "skipped: python3 (the load) is not installed" && exit 77; }
source "$(dirname "$0")/live_lib.sh"
pg="$work/pg"
tgt="$work/tgt"
trap 'exit_status=$?; live_cleanup; throwaway_stop "$tgt"; pg_throwaway_stop "$pg"; remove_work' EXIT
require_live_mode
# The MariaDB target first, on a server of its own that the faults kill; then the source, whose
# port and socket the rest of the test (and lib.sh's helpers) use.
throwaway_start "$tgt" || exit 1
tgt_port=$THROWAWAY_PORT tgt_socket=$THROWAWAY_SOCKET
mapfile -d '' -t tgt_argv <"/proc/$(cat "$tgt/launcher.pid")/cmdline"
disown "$(cat "$tgt/launcher.pid")" 2>/dev/null  # killed on purpose: no job report for it
throwaway_start "$srv" || exit 1
pg_throwaway_start "$pg" || exit 1
target() { mariadb_root "$tgt_socket" "$@"; }
seed=${CDC_APPLY_SEED:-$RANDOM}
rounds=${CDC_APPLY_ROUNDS:-12}
echo "     seed $seed (CDC_APPLY_SEED=$seed replays it), $rounds rounds of two faults"
RANDOM=$seed
source "$(dirname "$0")/apply_lib.sh"
psql_copy() { pg_throwaway_psql "$pg" -A -t -F $'\t' -P null=NULL "$@"; }

apply_source_schema
apply_write_load
python3 "$work/load.py" "$seed" 0 0 0 | root >/dev/null || fail "the initial load"
for part in 1 2 3 4 5 6 7 8; do python3 "$work/load.py" "$seed" "$part" 120 0 >"$work/load.$part.sql"; done
# The type proof's tables beside them (a.ty_t, a.ty_k, a.ty_sv, a.ty_hu, a.ty_sq), with values
# both targets can hold, and their changes in as many parts as the load's.
types_py=$source_dir/tests/integration/apply_types.py
python3 "$types_py" make-source --socket "$THROWAWAY_SOCKET" --db a --prefix ty_ --seed "$seed" \
  --rows "${CDC_APPLY_TYPE_ROWS:-60}" --parts 8 --transactions "${CDC_APPLY_TYPE_TRANSACTIONS:-25}" \
  --out "$work/types" | sed 's/^/     /' || fail "the type proof's tables"

# The processes, each run again as the same command: cdc-sync, and the two appliers.
stream=$work/stream.ndjson
declare -A pid started
start_sync() {
  MYSQL_PWD=$THROWAWAY_CDC_PASSWORD CDC_TOOLS_DIR=$tools_dir "$sync_bin" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc \
    --tables 'a.*' --dir "$work/dir" --chunk-size 40 --output "$stream" >>"$work/sync.out" 2>>"$work/sync.err" &
  pid[sync]=$!
}
target -e "CREATE USER applier@'127.0.0.1' IDENTIFIED BY 'applier-secret'; GRANT ALL ON *.* TO applier@'127.0.0.1'"
start_maria() {
  MYSQL_PWD=applier-secret "$apply_bin" -h 127.0.0.1 -P "$tgt_port" -u applier --database b --create-tables --batch-rows 3 --follow \
    "$work/dir/snapshot.ndjson" "$stream" >/dev/null 2>>"$work/maria.err" &
  pid[maria]=$!
}
start_pg() {
  "$apply_bin" --postgres "$PG_THROWAWAY_CONNINFO" --database b --create-tables --batch-rows 3 --follow --retry-for 60 \
    "$work/dir/snapshot.ndjson" "$stream" >/dev/null 2>>"$work/pg.err" &
  pid[pg]=$!
}
start() { "start_$1"; started[$1]=$((${started[$1]:-0} + 1)); bg_pids+=("${pid[$1]}"); }

# The load, in parts with pauses, beside everything else; the type tables' changes beside it.
(for part in 1 2 3 4 5 6 7 8; do root <"$work/load.$part.sql" >/dev/null || exit 1; sleep 0.4; done) \
  2>"$work/load.err" &
loader=$!
(for part in 1 2 3 4 5 6 7 8; do root <"$work/types.$part.sql" >/dev/null || exit 1; sleep 0.4; done) \
  2>"$work/types.err" &
types_loader=$!
bg_pids+=("$loader" "$types_loader")
start sync
wait_until 60 test -s "$work/dir/snapshot.ndjson" || fail "cdc-sync wrote no snapshot: $(tail -3 "$work/sync.err")"
wait_until 10 test -e "$stream" || fail "cdc-sync wrote no stream file"
start maria
start pg

# A process that ended: how is fine, by the faults made to it since it started (kill -9: 137;
# SIGTERM: 0 or 143; its target gone: 69); a process no fault reached must not end.
declare -A expected_end
reap() {  # reap NAME: when NAME has ended, checks how, and runs it again
  local name=$1 status=0
  kill -0 "${pid[$name]}" 2>/dev/null && return 0
  wait "${pid[$name]}" 2>/dev/null || status=$?
  if [[ " ${expected_end[$name]:-} " != *" $status "* ]]; then
    fail "$name ended with exit $status in round $round (fine: ${expected_end[$name]:-none}): $(tail -2 "$work/$name.err")"
  fi
  expected_end[$name]=
  start "$name"
}
# The MariaDB applier's connection: the applier account's (cdc-sync and the load use others).
kill_maria_connection() {
  target -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'applier'" 2>/dev/null |
    while read -r id; do target -e "KILL $id" 2>/dev/null; done
}
# The MariaDB target killed and started again as it was; back once it answers.
restart_maria_target() {
  local launcher i
  launcher=$(cat "$tgt/launcher.pid")
  kill -9 "$launcher" 2>/dev/null
  for ((i = 0; i < 100; i++)); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.05; done
  "${tgt_argv[@]}" >>"$tgt/stdout.log" 2>&1 &
  echo $! >"$tgt/launcher.pid"
  disown $!
  for ((i = 0; i < 600; i++)); do
    mariadb-admin --no-defaults --socket="$tgt_socket" -uroot ping >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "the MariaDB target did not start again: $(tail -5 "$tgt/error.log")" >&2
  return 1
}
faults=(kill_sync term_sync kill_maria kill_pg restart_maria restart_pg maria_connection pg_backend)
fault() {  # fault NAME: makes it, and says what each process may end with
  case $1 in
    kill_sync) kill -9 "${pid[sync]}" 2>/dev/null; expected_end[sync]+=" 137" ;;
    term_sync) kill -TERM "${pid[sync]}" 2>/dev/null; expected_end[sync]+=" 0 143" ;;
    kill_maria) kill -9 "${pid[maria]}" 2>/dev/null; expected_end[maria]+=" 137" ;;
    kill_pg) kill -9 "${pid[pg]}" 2>/dev/null; expected_end[pg]+=" 137" ;;
    # Without --retry-for the MariaDB applier ends with 69 when its server goes.
    restart_maria) restart_maria_target || fail "the MariaDB target restarts"; expected_end[maria]+=" 69" ;;
    # The PostgreSQL applier runs with --retry-for: it reconnects and goes on, never ends.
    restart_pg) pg_throwaway_restart "$pg" immediate >/dev/null || fail "PostgreSQL restarts" ;;
    maria_connection) kill_maria_connection; expected_end[maria]+=" 69" ;;
    pg_backend)
      psql_copy -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'cdc-apply'" \
        >/dev/null 2>&1 ;;
  esac
}
made=()
for ((round = 1; round <= rounds; round++)); do
  sleep "0.$((RANDOM % 6 + 2))"
  first=${faults[RANDOM % ${#faults[@]}]}
  second=${faults[RANDOM % ${#faults[@]}]}
  while [[ $second == "$first" ]]; do second=${faults[RANDOM % ${#faults[@]}]}; done
  fault "$first"
  fault "$second"
  made+=("$first+$second")
  # A process whose target went away may notice only when it next writes: what it may end
  # with stays allowed until it has ended and run again.
  sleep 0.5
  for name in sync maria pg; do reap "$name"; done
done
echo "     faults: ${made[*]}"
wait "$loader" || fail "the load: $(head -c 300 "$work/load.err")"
wait "$types_loader" || fail "the type tables' changes: $(head -c 300 "$work/types.err")"
until=$(gtid_pos)

# To the end: cdc-sync past the load, then each applier stopped (SIGTERM: exit 0) and run once
# more without --follow, to the end of the stream.
kill -TERM "${pid[sync]}" 2>/dev/null
wait "${pid[sync]}" 2>/dev/null
sync --tables 'a.*' --dir "$work/dir" --chunk-size 40 --output "$stream" --until "$until" >/dev/null 2>>"$work/sync.err"
assert "cdc-sync reaches the end of the load (exit 0)" test "$?" == 0 || tail -3 "$work/sync.err"
for name in maria pg; do
  wait_until 30 grep -q -F "\"position\":\"$until\"" "$stream"
  kill -TERM "${pid[$name]}" 2>/dev/null
  status=0
  wait "${pid[$name]}" 2>/dev/null || status=$?
  assert "the $name applier stops at SIGTERM (exit 0, or 69 if a fault had just cut it off), got $status" \
    test "$status" == 0 -o "$status" == 69
done
bg_pids=()
expect "the MariaDB applier, once more to the end: exit 0" 0 \
  env MYSQL_PWD=applier-secret "$apply_bin" -h 127.0.0.1 -P "$tgt_port" -u applier --database b \
  "$work/dir/snapshot.ndjson" "$stream"
expect "the PostgreSQL applier, once more to the end: exit 0" 0 \
  "$apply_bin" --postgres "$PG_THROWAWAY_CONNINFO" --database b "$work/dir/snapshot.ndjson" "$stream"
echo "     started: cdc-sync ${started[sync]} times, the MariaDB applier ${started[maria]}, the PostgreSQL one" \
  "${started[pg]} (which reconnected $(grep -c 'reconnecting in' "$work/pg.err") times, --retry-for)"
echo "     $(grep -c '"op":"r"' "$work/dir/snapshot.ndjson") snapshot rows, $(grep -c '"op":"[cud]"' "$stream") changes in" \
  "$(grep -c '"op":"commit"' "$stream") transactions ($(grep '"op":"[cud]"' "$stream" | grep -c '"table":"ty_') changes" \
  "of the type tables)"

last=$(grep '"op":"commit"' "$stream" | tail -1 | jq -r .position)
maria_same() {
  local table=$1 order=$2
  [[ "$(root -N -e "SELECT * FROM a.$table ORDER BY $order")" == "$(target -N -e "SELECT * FROM b.$table ORDER BY $order")" ]]
}
assert "MariaDB: a.t == b.t, row for row, every column" maria_same t id
assert "MariaDB: a.c == b.c (composite key)" maria_same c "k1, k2"
assert "MariaDB: a.k == b.k as a multiset (no key)" maria_same k "v, w, f"
assert "MariaDB: the position table holds the last commit's position ($last)" \
  test "$(target -N -e "SELECT position FROM b.cdc_apply_position")" == "$last"
pg_check_target "PostgreSQL"
assert "PostgreSQL: the position table holds the last commit's position ($last)" \
  test "$(psql_copy -c "SELECT position FROM b.cdc_apply_position")" == "$last"
assert "the source tables are not empty" test "$(root -N -e 'SELECT COUNT(*) FROM a.t')" -gt 100
# The type proof's tables: each server renders every value (apply_types.py's comparison).
if python3 "$types_py" compare --socket "$THROWAWAY_SOCKET" --db a --prefix ty_ --target-socket "$tgt_socket" \
    --target-db b --pg-admin "host=$PG_THROWAWAY_SOCKET_DIR port=$PG_THROWAWAY_PORT dbname=copy user=postgres" \
    --psql "$(pg_throwaway_bin)/psql" --pg-schema b | sed 's/^/     /'; then
  passes=$((passes + 1))
  echo "ok   MariaDB and PostgreSQL: the type proof's tables equal the source, every value as the servers render it"
else
  fail "a target's type proof tables differ from the source (above)"
fi
finish
