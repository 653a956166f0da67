#!/usr/bin/env bash
# cdc-sync rerun with other --tables on a running sync (Flink CDC's newly added tables),
# under the proof's random writer load (proof_lib.sh) on the old tables and the new ones,
# against a throwaway MariaDB of its own:
#   wider, --output   a sync of src.a is stopped (SIGTERM) and run again with src.a,src.b: only
#                     src.b's chunks are read (into DIR/add.1; DIR/chunks untouched), the stream
#                     of src.a goes on into the file while they are read, the phases come in
#                     order, and DIR/snapshot.ndjson + DIR/add.1/snapshot.ndjson + the file
#                     replay into copies equal to both sources, row for row;
#   wider, stdout     the same with src.c on stdout, the old stream frozen (SIGSTOP) while the
#                     new snapshot is read, so that it stops before the new tables' high
#                     watermark and must run on to it first: everything printed by the three
#                     runs replays into the sources;
#   kill -9           an addition stopped by SIGTERM (exit 75, or 0 in the final stream), then
#                     its rerun's process group killed (SIGKILL), each at a random moment, then
#                     once more in the switch-over, then run again: the same replay holds; a rerun with yet other tables while an
#                     addition is unfinished is refused (exit 2);
#   narrower          --tables src.a after src.a,src.b: the stream resumes from its state with
#                     src.a only (src.b's change made meanwhile is not streamed), no snapshot;
#                     'src.b*' after src.b,src.c: planned, nothing new, src.c's changes leave;
#   refused           another --chunk-size is still refused (exit 2).
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
source "$(dirname "$0")/proof_lib.sh"
require_live_mode
proof_require_tools
throwaway_start "$srv" || exit 1
sync_bin="$tools_dir/cdc-sync"
export CDC_TOOLS_DIR=$tools_dir
seed=${PROOF_SEED:-$((RANDOM % 1000 + 1))}
echo "# seed $seed (PROOF_SEED=$seed reproduces the loads and the kill's moment)"

proof_create int src.a 2000 "$seed" || exit 1
proof_create int src.b 1500 "$((seed + 1))" || exit 1
proof_create varbinary src.c 3000 "$((seed + 2))" || exit 1

connection=(-h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc)
# sync ARGS...: cdc-sync to its end (a hang fails as 124).
sync() { MYSQL_PWD=$THROWAWAY_CDC_PASSWORD timeout -k 5 120 "$sync_bin" "${connection[@]}" "$@"; }
# sync_bg ARGS...: unbounded, exec'd: run it with & and $! is cdc-sync.
sync_bg() { MYSQL_PWD=$THROWAWAY_CDC_PASSWORD exec "$sync_bin" "${connection[@]}" "$@"; }
# stop_sync PID NAME: SIGTERM, and it must end with exit 0 (its stream stopped cleanly).
stop_sync() {
  kill -TERM "$1"
  wait_exit "$1" 20
  assert "$2: SIGTERM ends it with exit 0 (got $status)" test "$status" == 0
}
# wait_phase FILE PHASE: until cdc-sync's stderr FILE announces PHASE (60 s at most).
wait_phase() { wait_for_text "$1" "phase $2 position" 60; }
# load TABLE KIND SEED SECONDS: the proof's writer load, at most 150 transactions a second.
# table_locked DB.TABLE: a LOCK TABLES ... WRITE on it is held (the server lists it in use).
table_locked() {
  test "$(root -N -e "SHOW OPEN TABLES FROM ${1%%.*} WHERE \`Table\` = '${1#*.}' AND In_use > 0" | wc -l)" -gt 0
}
load() { proof_load_bg "$2" "$1" "$3" "$4" --max-rate 150; }
# section NAME: a heading with the seconds so far.
section() { echo "# $1 (at ${SECONDS}s)"; }
# sigterm_pending PID: a SIGTERM waits for the (stopped) process PID.
sigterm_pending() {
  local line
  while read -r line; do
    case $line in
      SigPnd:* | ShdPnd:*) (((16#${line##*[[:space:]]} & 16#4000) != 0)) && return 0 ;;
    esac
  done <"/proc/$1/status"
  return 1
}
# settle: every writer done, so that the stream's --until now covers all of it.
settle() { proof_wait_load || { fail "a load failed"; }; }
# replay_equals NAME COPY TABLES FILES...: FILES applied in order into empty copies, each of
# TABLES (db.t) equal to its source.
replay_equals() {
  local name=$1 copy=$2 tables=$3
  shift 3
  if ! proof_replay "$copy" "$@" 2>"$work/replay.err"; then
    fail "$name: the replay failed: $(head -c 600 "$work/replay.err")"
    return
  fi
  local table
  for table in $tables; do proof_compare "$table" "$copy"; done
}

# ---- wider --tables, the stream in a file ------------------------------------------------------
dir1=$work/d1
out1=$work/d1.ndjson
section "wider --tables, the stream in a file"
load src.a int "$((seed + 10))" 10
load src.b int "$((seed + 11))" 10
sync_bg --tables src.a --dir "$dir1" --chunk-size 100 -j 2 --output "$out1" --no-progress \
  >/dev/null 2>"$work/d1.first.err" &
pid=$!
bg_pids+=("$pid")
assert "first sync of src.a reaches its stream" wait_phase "$work/d1.first.err" stream_start
sleep 1
stop_sync "$pid" "first sync"
touch "$work/stamp1"
sleep 1.1
# The hook of the addition: the phases in order; while add_snapshot_start's runs (2 s), the
# stream of src.a, in the background, goes on writing the file.
cat >"$work/hook.sh" <<EOF
#!/usr/bin/env bash
echo "\$1 \$2" >>"\$HOOK_LOG"
if [[ \$1 == add_snapshot_start ]]; then
  wc -c <"$out1" >"\$HOOK_LOG.before"
  sleep 2
  wc -c <"$out1" >"\$HOOK_LOG.after"
fi
EOF
chmod +x "$work/hook.sh"
HOOK_LOG=$work/d1.phases sync_bg --tables src.a,src.b --dir "$dir1" --chunk-size 100 -j 2 --output "$out1" \
  --no-progress --on-phase "$work/hook.sh" --metrics "$work/d1.prom" >"$work/d1.stdout" 2>"$work/d1.second.err" &
pid=$!
bg_pids+=("$pid")
# Once the new table's span (its high watermark H) is known, cdc-sync itself is held until
# the stream of src.a, its child, has written a transaction past H, so that it stops after H
# and the new table's changes from H on must follow its snapshot. (A fixed pause was not
# enough for a sanitized build under load: its stream was still behind H.) Should the load
# have ended before H, a few more of its transactions give the stream something past H.
until [[ -e $dir1/add.1/span ]] || ! kill -0 "$pid" 2>/dev/null; do sleep 0.005; done
kill -STOP "$pid"
read -r _ span_high <"$dir1/add.1/span"
past_high() {
  grep -o '"op":"commit","v":1,"gtid":"[0-9]*-[0-9]*-[0-9]*"' "$out1" | sed 's/.*-\([0-9]*\)"$/\1/' |
    awk -v h="${span_high##*-}" '$1 > h { found = 1 } END { exit !found }'
}
for ((i = 0; i < 600; i++)); do
  past_high && break
  if ((i % 50 == 49)); then
    "$proof_load_tool" --socket "$THROWAWAY_SOCKET" --kind int --table src.a --seed "$((seed + 12 + i))" \
      --transactions 3 2>>"$work/load.extra.err"
  fi
  sleep 0.1
done
assert "wider --tables: the stream of src.a passed the new table's high watermark $span_high" past_high
kill -CONT "$pid"
assert "wider --tables: the final stream starts" wait_phase "$work/d1.second.err" stream_start
settle
stop_sync "$pid" "wider --tables"
expect "wider --tables: a rerun --until now to the end: exit 0" 0 sync --tables src.a,src.b --dir "$dir1" \
  --chunk-size 100 --output "$out1" --until now
phases=$(cut -d' ' -f1 "$work/d1.phases" | tr '\n' ' ')
assert "wider --tables: phases add_snapshot_start, add_snapshot_end, stream_start (got: $phases)" \
  test "$phases" == "add_snapshot_start add_snapshot_end stream_start "
high=$(jq -r 'select(.op == "high").position' "$dir1/add.1/snapshot.ndjson")
assert "wider --tables: add_snapshot_end at the new tables' high watermark ($high)" \
  test "$(sed -n 's/^add_snapshot_end //p' "$work/d1.phases")" == "$high"
assert "wider --tables: nothing on stdout (--output)" test ! -s "$work/d1.stdout"
assert "wider --tables: the plan of the addition holds src.b only" \
  jq -e -s 'length > 3 and (map("\(.db).\(.table)") | unique) == ["src.b"]' "$dir1/add.1/plan.ndjson"
chunk_files=$(find "$dir1/add.1/chunks" -name '*.ndjson' | wc -l)
assert "wider --tables: src.b's chunks were read into DIR/add.1 ($chunk_files files), no other table's" \
  test "$chunk_files" -gt 3 -a -z "$(find "$dir1/add.1/chunks" -name '*.ndjson' ! -name 'src.b.*')"
assert "wider --tables: src.a's chunks were not read again (DIR/chunks untouched)" \
  test -z "$(find "$dir1/chunks" "$dir1/snapshot.ndjson" -newer "$work/stamp1")"
before=$(cat "$work/d1.phases.before" 2>/dev/null || echo 0)
after=$(cat "$work/d1.phases.after" 2>/dev/null || echo 0)
assert "wider --tables: the stream of src.a went on during the addition ($before -> $after bytes)" \
  test "$after" -gt "$before"
assert "wider --tables: ... with src.a's changes only" \
  jq -e -s 'map(select(.op == "c" or .op == "u" or .op == "d") | .table) | unique == ["a"]' \
  <(tail -c +"$((before + 1))" "$out1" | head -c "$((after - before))" | sed '$d')
assert "wider --tables: the settings now name both tables" grep -qx 'tables=src.a,src.b' "$dir1/settings"
assert "wider --tables: DIR/add.1 is done" test -e "$dir1/add.1/done"
assert "wider --tables: the stream stopped after the high watermark; the new table's changes up to there followed" \
  grep -q "the new tables' changes from their high watermark to" "$work/d1.second.err"
assert "--metrics: the phase is stream at the end" \
  test "$(metric_value "$work/d1.prom" cdc_sync_phase phase=stream) $(metric_value "$work/d1.prom" cdc_sync_phase phase=add_snapshot)" == "1 0"
replay_equals "wider --tables" copy1 "src.a src.b" "$dir1/snapshot.ndjson" "$dir1/add.1/snapshot.ndjson" "$out1"

# ---- wider --tables on stdout; the old stream behind the new snapshot -------------------------
dir2=$work/d2
section "wider --tables on stdout"
load src.a int "$((seed + 20))" 8
load src.c varbinary "$((seed + 21))" 8
sync_bg --tables src.a --dir "$dir2" --chunk-size 100 --no-progress >"$work/d2.1.ndjson" 2>"$work/d2.first.err" &
pid=$!
bg_pids+=("$pid")
assert "stdout: the first sync reaches its stream" wait_phase "$work/d2.first.err" stream_start
sleep 1
stop_sync "$pid" "stdout, first sync"
# src.c's plan and snapshot wait for this lock until the stream of src.a is frozen below, so
# that the freeze comes before anything of src.c is read, whatever the machine's speed (a quick
# snapshot once ended before the freeze, and the stream then stopped after the high watermark
# instead; a lock held for a fixed 3 s was over too soon on a loaded machine). The lock goes
# with its connection, which unlock_src_c kills.
root -e "LOCK TABLES src.c WRITE; SELECT SLEEP(120) AS holding_src_c; UNLOCK TABLES" >/dev/null 2>&1 &
lock_pid=$!
bg_pids+=("$lock_pid")
unlock_src_c() {
  local id
  id=$(root -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(120) AS holding_src_c%'")
  [[ -n $id ]] && root -e "KILL $id"
  wait "$lock_pid" 2>/dev/null
}
assert "stdout: src.c is locked (its reads wait)" wait_until 10 table_locked src.c
sync_bg --tables src.a,src.c --dir "$dir2" --chunk-size 100 -j 1 --no-progress >"$work/d2.2.ndjson" \
  2>"$work/d2.second.err" &
pid=$!
bg_pids+=("$pid")
# The stream of src.a, resumed before src.c is planned: frozen (SIGSTOP) while src.c is read,
# and until cdc-sync has sent it SIGTERM for the switch-over: it stops before src.c's high
# watermark.
old_stream_started() { pgrep -P "$pid" -f -- "--state=$dir2/stream.state" >/dev/null; }
assert "stdout: the stream of src.a runs beside the addition" wait_until 30 old_stream_started
old_stream=$(pgrep -P "$pid" -f -- "--state=$dir2/stream.state" | head -1)
if [[ -n $old_stream ]]; then
  kill -STOP "$old_stream"
  assert "stdout: src.c was still locked when the stream froze" table_locked src.c
  unlock_src_c
  assert "stdout: the addition begins" wait_phase "$work/d2.second.err" add_snapshot_start
  assert "stdout: cdc-sync stops the stream for the switch-over (SIGTERM)" wait_until 60 sigterm_pending "$old_stream"
  kill -CONT "$old_stream"
else
  unlock_src_c
fi
assert "stdout: the final stream starts" wait_phase "$work/d2.second.err" stream_start
assert "stdout: the stream stopped before the high watermark runs on to it first" \
  grep -q "before the new tables' high watermark" "$work/d2.second.err"
settle
stop_sync "$pid" "stdout, wider"
expect "stdout: a rerun --until now: exit 0" 0 sync --tables src.a,src.c --dir "$dir2" --chunk-size 100 --until now
cp "$work/out" "$work/d2.3.ndjson"
assert "stdout: the new tables' snapshot went out once, on stdout, between the streams" \
  test "$(grep -c '"op":"r"' "$work/d2.2.ndjson")" == "$(grep -c '"op":"r"' "$dir2/add.1/snapshot.ndjson")"
replay_equals "stdout" copy2 "src.a src.c" "$work/d2.1.ndjson" "$work/d2.2.ndjson" "$work/d2.3.ndjson"

# ---- kill -9 during an addition ------------------------------------------------------------------
dir3=$work/d3
out3=$work/d3.ndjson
section "kill -9 during an addition"
load src.b int "$((seed + 30))" 8
load src.c varbinary "$((seed + 31))" 8
sync_bg --tables src.b --dir "$dir3" --chunk-size 10 --output "$out3" --no-progress >/dev/null 2>"$work/d3.first.err" &
pid=$!
bg_pids+=("$pid")
assert "kill -9: the first sync reaches its stream" wait_phase "$work/d3.first.err" stream_start
stop_sync "$pid" "kill -9, first sync"
RANDOM=$seed
# SIGTERM at a random moment of the addition: exit 75 (a step cut short: rerun resumes), or 0
# once the final stream runs.
term_after="0.$((RANDOM % 7))"
sync_bg --tables 'src.b,src.c' --dir "$dir3" --chunk-size 10 -j 1 --output "$out3" --no-progress >/dev/null \
  2>"$work/d3.termed.err" &
pid=$!
bg_pids+=("$pid")
wait_phase "$work/d3.termed.err" add_snapshot_start
sleep "$term_after"
kill -TERM "$pid"
wait_exit "$pid" 20
assert "SIGTERM ${term_after}s after add_snapshot_start: exit 75 or 0 (got $status)" test "$status" == 75 -o "$status" == 0
echo "  # it had begun: $(grep -o 'phase [a-z_]*\|notice: [a-z ]*' "$work/d3.termed.err" | tr '\n' ';' | cut -c1-300)"
# kill -9 of its process group (setsid) at a random moment of the rerun.
kill_after="$((RANDOM % 2)).$((RANDOM % 10))"
MYSQL_PWD=$THROWAWAY_CDC_PASSWORD setsid "$sync_bin" "${connection[@]}" --tables 'src.b,src.c' --dir "$dir3" \
  --chunk-size 10 -j 1 --output "$out3" --no-progress >/dev/null 2>"$work/d3.killed.err" &
pid=$!
bg_pids+=("$pid")
sleep "$kill_after"
while ! kill -9 -- "-$pid" 2>/dev/null && kill -0 "$pid" 2>/dev/null; do sleep 0.01; done
wait "$pid" 2>/dev/null
echo "  # cdc-sync killed after ${kill_after}s; it had begun: $(grep -o 'phase [a-z_]*\|notice: [a-z ]*' "$work/d3.killed.err" | tr '\n' ';' | cut -c1-300)"
# Once more, killed in the switch-over, by its add_snapshot_end hook (SIGKILL to the process
# group, the hook's too): the old stream stopped, the new tables' changes not yet caught up.
if [[ ! -e $dir3/add.1/done ]]; then
  MYSQL_PWD=$THROWAWAY_CDC_PASSWORD setsid "$sync_bin" "${connection[@]}" --tables 'src.b,src.c' --dir "$dir3" \
    --chunk-size 10 -j 1 --output "$out3" --no-progress --on-phase 'f() { [[ $1 != add_snapshot_end ]] || kill -9 0; }; f' \
    >/dev/null 2>"$work/d3.killed2.err" &
  pid=$!
  bg_pids+=("$pid")
  status=0
  wait "$pid" 2>/dev/null || status=$?
  assert "killed in the switch-over (got $status): the snapshot merged, the addition not done" \
    test "$status" == 137 -a -e "$dir3/add.1/snapshot.ndjson" -a ! -e "$dir3/add.1/done"
fi
if [[ -d $dir3/add.1 && ! -e $dir3/add.1/done ]]; then
  expect "kill -9: yet other tables while the addition is unfinished: exit 2" 2 sync --tables src.b \
    --dir "$dir3" --chunk-size 10 --output "$out3"
  assert "kill -9: ... saying an addition is in progress" grep -q "is adding tables" "$work/err"
fi
settle
expect "kill -9: the rerun to the end: exit 0" 0 sync --tables 'src.b,src.c' --dir "$dir3" --chunk-size 10 \
  --output "$out3" --until now
assert "kill -9: the addition is done" test -e "$dir3/add.1/done"
replay_equals "kill -9" copy3 "src.b src.c" "$dir3/snapshot.ndjson" "$dir3/add.1/snapshot.ndjson" "$out3"

# ---- narrower --tables; another chunk size ------------------------------------------------------
section "narrower --tables"
# Told from the patterns (a table dropped from the list): the stream resumes from its state
# with the new filter, so src.b's change made while cdc-sync was stopped is not streamed.
size=$(wc -c <"$out1")
root -e "UPDATE src.a SET k = k + 1 ORDER BY id LIMIT 3; UPDATE src.b SET k = k + 1 ORDER BY id LIMIT 3" || exit 1
expect "narrower --tables: exit 0" 0 sync --tables src.a --dir "$dir1" --chunk-size 100 --output "$out1" --until now
assert "narrower --tables: nothing to read (no DIR/add.2)" test ! -e "$dir1/add.2"
assert "narrower --tables: src.a's changes stay in the stream, src.b's leave it" \
  jq -e -s 'map(select(.op == "c" or .op == "u" or .op == "d") | .table) | unique == ["a"]' \
  <(tail -c +"$((size + 1))" "$out1")
assert "narrower --tables: the settings name src.a only" grep -qx 'tables=src.a' "$dir1/settings"
# Not told from the patterns (a glob): planned, and no table is new; the stream goes on with
# the new filter after the switch-over.
expect "narrower glob: exit 0" 0 sync --tables 'src.b*' --dir "$dir3" --chunk-size 10 --output "$out3" --until now
assert "narrower glob: planned, and nothing to read (DIR/add.2's plan is empty)" \
  test -e "$dir3/add.2/done" -a ! -s "$dir3/add.2/plan.ndjson"
size=$(wc -c <"$out3")
root -e "UPDATE src.c SET n = n + 1 ORDER BY id LIMIT 2; UPDATE src.b SET k = k + 1 ORDER BY id LIMIT 2" || exit 1
expect "narrower glob, rerun: exit 0" 0 sync --tables 'src.b*' --dir "$dir3" --chunk-size 10 --output "$out3" \
  --until now
assert "narrower glob: src.b's changes stay in the stream, src.c's leave it" \
  jq -e -s 'map(select(.op == "c" or .op == "u" or .op == "d") | .table) | unique == ["b"]' \
  <(tail -c +"$((size + 1))" "$out3")
expect "another --chunk-size: refused, exit 2" 2 sync --tables src.a --dir "$dir1" --chunk-size 77 --output "$out1"
assert "another --chunk-size: says what differs" grep -q "was: chunk-size=100" "$work/err"

section "done"
finish
