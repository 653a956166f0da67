#!/usr/bin/env bash
# cdc-sync and the tools it runs (issue 11), against a throwaway MariaDB of its own:
#   password  -pSECRET and --password=SECRET reach the tools in MYSQL_PWD: a running tool's
#             command line (what ps shows every user) does not hold the password, its
#             environment does, and it logs in with it;
#   retry     a tool that exits 69 (server unavailable) is run again after a notice (a stop
#             while it waits: exit 75), and the
#             run ends as if nothing had failed; one that keeps failing is given up after
#             --retry-for, with exit 69; its error and cdc-sync's notice are said once, not
#             once per run (and the last run's error again when cdc-sync gives up);
#   deltas    deltas.ndjson that fails cdc-merge's check (here: cut before its span_end line,
#             with deltas.done there) is read again from FROM, once, and the snapshot is the
#             same; a merge that fails for a chunk does not read them again; deltas that fail
#             again stop cdc-sync with exit 65 and a clear error.
# The tools are wrapped (CDC_TOOLS_DIR) to fail on demand: $work/tools/TOOL.fails holds how
# many more runs of TOOL exit 69 at once, $work/tools/TOOL.runs counts its runs,
# $work/tools/cdc-stream.cut makes cdc-stream drop the last line of its --output file, and
# $work/tools/cdc-stream.slow holds the seconds the final stream (no --until) waits to start.
#   signal    SIGTERM as the final stream starts, before cdc-stream can handle it: a clean
#             stop, exit 0, and the rerun goes on from there.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
throwaway_start "$srv" || exit 1
sync_bin="$tools_dir/cdc-sync"

root <<'SQL' >/dev/null || exit 1
CREATE DATABASE s;
USE s;
CREATE TABLE s.items (id INT PRIMARY KEY AUTO_INCREMENT, v INT NOT NULL) ENGINE=InnoDB;
INSERT INTO s.items (v) SELECT seq FROM seq_1_to_200;
SQL

wrapped=$work/tools
mkdir -p "$wrapped"
for tool in cdc-plan cdc-snapshot cdc-merge cdc-stream; do
  cat >"$wrapped/$tool" <<EOF
#!/usr/bin/env bash
runs=\$(( \$(cat "$wrapped/$tool.runs" 2>/dev/null || echo 0) + 1 ))
echo "\$runs" >"$wrapped/$tool.runs"
fails=\$(cat "$wrapped/$tool.fails" 2>/dev/null || echo 0)
if (( fails > 0 )); then
  echo \$((fails - 1)) >"$wrapped/$tool.fails"
  echo "$tool: error: cannot connect to 127.0.0.1 (a test's stand-in failure)" >&2
  exit 69
fi
if [[ $tool == cdc-stream && -e "$wrapped/cdc-stream.cut" ]]; then
  status=0
  "$tools_dir/$tool" "\$@" || status=\$?
  for arg in "\$@"; do
    [[ \$arg == --output=* ]] && sed -i '\$d' "\${arg#--output=}"
  done
  exit "\$status"
fi
# A slow start of the final stream (no --until): a signal meets cdc-stream before its handler.
if [[ $tool == cdc-stream && -e "$wrapped/cdc-stream.slow" ]] && ! grep -q -- '--until' <<<"\$*"; then
  # A wait of bash's own (read on a FIFO no one writes): a child such as sleep would outlive
  # the signal and hold the dir's lock, which the tools inherit.
  read -r -t "\$(cat "$wrapped/cdc-stream.slow")" <>"$wrapped/never.fifo" || true
fi
exec "$tools_dir/$tool" "\$@"
EOF
  chmod +x "$wrapped/$tool"
done
mkfifo "$wrapped/never.fifo"
runs_of() { cat "$wrapped/$1.runs" 2>/dev/null || echo 0; }
reset_runs() { rm -f "$wrapped"/*.runs "$wrapped"/*.fails "$wrapped/cdc-stream.cut" "$wrapped/cdc-stream.slow"; }

# sync ARGS...: cdc-sync as the cdc user through the wrapped tools, the password in MYSQL_PWD
# (a hang fails as 124).
sync() {
  MYSQL_PWD=$THROWAWAY_CDC_PASSWORD CDC_TOOLS_DIR=$wrapped timeout -k 5 120 \
    "$sync_bin" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc "$@"
}
# final_stream_of PID: the pid of PID's cdc-stream child that has no --until (the final stream).
final_stream_of() {
  local pid args
  for pid in $(pgrep -P "$1" -x cdc-stream); do
    args=$(ps -o args= -p "$pid") || continue
    [[ -n $args && $args != *--until* ]] || continue
    echo "$pid"
    return 0
  done
  return 1
}
# without_run_time FILE: FILE without the merge's time (the high line's ts_ms).
without_run_time() { sed 's/^\({"op":"high".*\)"ts_ms":[0-9]*/\1/' "$1"; }

# ---- the password never on a tool's command line ---------------------------------------------
for form in "-p$THROWAWAY_CDC_PASSWORD" "--password=$THROWAWAY_CDC_PASSWORD"; do
  label=-pSECRET
  [[ $form == --* ]] && label=--password=SECRET
  dir=$work/pw${form:1:1}
  env -u MYSQL_PWD CDC_TOOLS_DIR="$tools_dir" "$sync_bin" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc "$form" \
    --tables s.items --dir "$dir" --mode no_data >"$work/pw.out" 2>"$work/pw.err" &
  sync_pid=$!
  bg_pids+=("$sync_pid")
  # The final stream runs once its start is pinned (stream.state): it logged in. The pinning
  # run (--until=now) is a cdc-stream child too, gone a moment later: not the one to look at.
  wait_until 30 test -s "$dir/stream.state"
  wait_until 30 final_stream_of "$sync_pid" >/dev/null
  child=$(final_stream_of "$sync_pid")
  assert "$label: cdc-stream runs under cdc-sync" test -n "$child"
  args=$(ps -o args= -p "${child:-0}")
  assert "$label: ps shows the tool's command line ($args)" grep -q -- '--state=' <<<"$args"
  assert "$label: ps does not show the password in it" bash -c '! grep -q -F -- "$1" <<<"$2"' _ \
    "$THROWAWAY_CDC_PASSWORD" "$args"
  assert "$label: the tool has it in MYSQL_PWD" \
    grep -q -x -F "MYSQL_PWD=$THROWAWAY_CDC_PASSWORD" <(tr '\0' '\n' <"/proc/${child:-0}/environ")
  kill -TERM "$sync_pid"
  wait_exit "$sync_pid" 20
  bg_pids=()
  assert "$label: SIGTERM stops it cleanly (exit $status)" test "$status" == 0
done
assert "the password reached the server: no login error" bash -c '! grep -q "Access denied" "$1"' _ "$work/pw.err"

# ---- a signal as the final stream starts ----------------------------------------------------
reset_runs
echo 5 >"$wrapped/cdc-stream.slow"
MYSQL_PWD=$THROWAWAY_CDC_PASSWORD CDC_TOOLS_DIR=$wrapped "$sync_bin" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc \
  --tables s.items --dir "$work/startstop" --mode initial --chunk-size 50 >"$work/startstop.out" \
  2>"$work/startstop.err" &
sync_pid=$!
bg_pids+=("$sync_pid")
wait_until 60 grep -q 'phase stream_start' "$work/startstop.err"
kill -TERM "$sync_pid"
wait_exit "$sync_pid" 20
bg_pids=()
assert "SIGTERM as the final stream starts: a clean stop (exit $status)" test "$status" == 0
assert "it says how to go on" grep -q 'stopped by SIGTERM; run the same command again to resume' \
  "$work/startstop.err"
rm -f "$wrapped/cdc-stream.slow"
root -e 'INSERT INTO s.items (v) VALUES (1001)' || exit 1
expect "the rerun streams from there: exit 0" 0 sync --tables s.items --dir "$work/startstop" --mode initial \
  --chunk-size 50 --until now
assert "the snapshot's 200 rows, then the insert after it" \
  test "$(cat "$work/startstop.out" "$work/out" | jq -r 'select(.op == "r" or .op == "c") | .op' | uniq -c | xargs)" \
  == "200 r 1 c"
root -e 'DELETE FROM s.items WHERE v = 1001' || exit 1

# ---- a tool that exits 69 is run again ------------------------------------------------------
reset_runs
echo 1 >"$wrapped/cdc-stream.fails"
expect "no_data, cdc-stream fails once with 69: exit 0" 0 sync --tables s.items --dir "$work/retry" \
  --mode no_data --until now
assert "the failure is announced on stderr" \
  grep -q 'cdc-sync: notice: cdc-stream exited 69 (server unavailable); running it again in 1s' "$work/err"
assert "cdc-stream ran three times: the failed pin, the pin, the stream ($(runs_of cdc-stream))" \
  test "$(runs_of cdc-stream)" == 3

reset_runs
echo 1000 >"$wrapped/cdc-stream.fails"
started=$SECONDS
expect "cdc-stream fails every time: exit 69 after --retry-for" 69 sync --tables s.items --dir "$work/giveup" \
  --mode no_data --until now --retry-for 2
assert "giving up is announced" grep -q 'giving up (--retry-for 2)' "$work/err"
assert "it gave up within --retry-for and a pause ($((SECONDS - started)) s)" test $((SECONDS - started)) -le 10

# A stop while cdc-sync waits to run a tool again is a stop (exit 75, resumable), not the
# server's failure (69).
reset_runs
echo 1000 >"$wrapped/cdc-plan.fails"
MYSQL_PWD=$THROWAWAY_CDC_PASSWORD CDC_TOOLS_DIR=$wrapped "$sync_bin" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc \
  --tables s.items --dir "$work/waiting" --mode initial_only >/dev/null 2>"$work/waiting.err" &
sync_pid=$!
bg_pids+=("$sync_pid")
wait_until 30 grep -q 'notice: cdc-plan exited 69' "$work/waiting.err"
kill -TERM "$sync_pid"
wait_exit "$sync_pid" 20
bg_pids=()
assert "SIGTERM while cdc-sync waits to rerun a tool: exit 75 ($status)" test "$status" == 75
assert "SIGTERM while cdc-sync waits to rerun a tool: it says it stopped" \
  grep -q 'stopped by SIGTERM; run the same command again to resume' "$work/waiting.err"

reset_runs
echo 2 >"$wrapped/cdc-plan.fails"
echo 1 >"$wrapped/cdc-snapshot.fails"
expect "initial_only, cdc-plan fails twice and cdc-snapshot once: exit 0" 0 sync --tables s.items \
  --dir "$work/only" --mode initial_only -j 1 --chunk-size 50
cp "$work/out" "$work/only.ndjson"
assert "cdc-plan ran three times ($(runs_of cdc-plan))" test "$(runs_of cdc-plan)" == 3
assert "cdc-plan's two failures: its error shown once, not once per run" \
  test "$(grep -c '^cdc-plan: error: cannot connect' "$work/err")" == 1
assert "cdc-plan's two failures: one notice that it runs again" \
  test "$(grep -c 'notice: cdc-plan exited 69' "$work/err")" == 1
assert "cdc-snapshot's failure is retried too" grep -q 'notice: cdc-snapshot exited 69' "$work/err"
assert "initial_only: every row is in the snapshot ($(grep -c '"op":"r"' "$work/only.ndjson"))" \
  test "$(grep -c '"op":"r"' "$work/only.ndjson")" == 200

# Nothing listening on the port: cdc-plan's error and cdc-sync's notice once, then, when it
# gives up, the last run's error and a notice that says so; not two lines per run.
status=0
timeout -k 5 60 "$sync_bin" -h 127.0.0.1 -P 1 -u cdc --tables s.items --dir "$work/nowhere" --retry-for 4 \
  </dev/null >/dev/null 2>"$work/nowhere.err" || status=$?
assert "nothing on the port: exit 69 ($status)" test "$status" == 69
assert "nothing on the port: gives up after three runs" grep -q \
  '^cdc-sync: notice: cdc-plan exited 69 (server unavailable) again after [0-9]*s of retrying (3 runs); giving up (--retry-for 4)$' \
  "$work/nowhere.err"
assert "nothing on the port: the first run's error and the last one's, not every run's" \
  test "$(grep -c '^cdc-plan: error: cannot connect to 127.0.0.1:1: ' "$work/nowhere.err")" == 2
assert "nothing on the port: four lines in all ($(wc -l <"$work/nowhere.err"))" test "$(wc -l <"$work/nowhere.err")" == 4

# ---- deltas are trusted through cdc-merge's check -------------------------------------------
only=$work/only
assert "the deltas end with cdc-stream's span_end line" \
  test "$(tail -n 1 "$only/deltas.ndjson" | jq -r .op)" == span_end
# Deltas cut back before their span_end line, though cdc-stream once reached UNTIL.
sed -i '$d' "$only/deltas.ndjson"
rm -f "$only/snapshot.ndjson" "$only/snapshot.emitted"
reset_runs
expect "deltas without their span_end line: exit 0" 0 sync --tables s.items --dir "$only" --mode initial_only \
  --chunk-size 50
assert "the failed check is announced" \
  grep -q "notice: $only/deltas.ndjson fails cdc-merge's check (.*span_end.*); reading the deltas again from" \
  "$work/err"
assert "the deltas were read again: cdc-stream ran once ($(runs_of cdc-stream))" test "$(runs_of cdc-stream)" == 1
same_file "deltas read again: the same snapshot" <(without_run_time "$work/only.ndjson") \
  <(without_run_time "$work/out")
assert "the deltas read again end with span_end" \
  test "$(tail -n 1 "$only/deltas.ndjson" | jq -r .op)" == span_end

# A merge that fails for a chunk's sake does not read the deltas again.
victim=$(ls "$only"/chunks/*.ndjson | head -n 1)
cp "$victim" "$work/victim.ndjson"
sed -i '$d' "$victim"
rm -f "$only/snapshot.ndjson" "$only/snapshot.emitted"
reset_runs
expect "a chunk without its high line: exit 65" 65 sync --tables s.items --dir "$only" --mode initial_only \
  --chunk-size 50
assert "cdc-merge names the chunk" grep -q "cdc-merge: error: $victim:1: .* has no high line" "$work/err"
assert "the deltas are not read again for it ($(runs_of cdc-stream) runs)" test "$(runs_of cdc-stream)" == 0
assert "and no notice says so" bash -c '! grep -q "reading the deltas again" "$1"' _ "$work/err"
cp "$work/victim.ndjson" "$victim"

# Deltas that fail again: a clear error, and no snapshot.
sed -i '$d' "$only/deltas.ndjson"
rm -f "$only/snapshot.ndjson" "$only/snapshot.emitted"
reset_runs
touch "$wrapped/cdc-stream.cut"
expect "deltas that fail the check twice: exit 65" 65 sync --tables s.items --dir "$only" --mode initial_only \
  --chunk-size 50
assert "the error says the deltas read again still fail" \
  grep -q "cdc-sync: error: the deltas read again from .* still fail cdc-merge's check" "$work/err"
assert "cdc-merge's own message names the deltas file" grep -q "cdc-merge: error: $only/deltas.ndjson:" "$work/err"
assert "no snapshot is left behind" test ! -e "$only/snapshot.ndjson"

finish
