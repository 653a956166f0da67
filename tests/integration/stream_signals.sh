#!/usr/bin/env bash
# cdc-stream live mode and its ends: an idle stream (heartbeats every second) stays up, and
# SIGTERM or SIGINT ends it at once with exit 0 and its state saved; a rerun from that state
# writes only what came after; a reader that goes away (| head -1) ends it quietly: exit 0,
# nothing on stderr. --stats writes stats lines on stderr.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
throwaway_start "$srv" || exit 1

root -e 'CREATE DATABASE t; CREATE TABLE t.s (id INT PRIMARY KEY) ENGINE=InnoDB' || exit 1

for sig in TERM INT; do
  state=$work/$sig.state
  live_bg --from now --state "$state" --heartbeat 1 --stats 1 >"$work/$sig.ndjson" 2>"$work/$sig.err" &
  pid=$!
  bg_pids+=("$pid")
  sleep 1
  root -e "INSERT INTO t.s VALUES (${#sig}00)" || exit 1
  pos=$(gtid_pos)
  assert "SIG$sig: the insert is streamed" wait_for_text "$work/$sig.ndjson" "\"position\":\"$pos\"" 10
  sleep 3.5
  assert "SIG$sig: the idle stream stays up through heartbeats" kill -0 "$pid"
  kill -"$sig" "$pid"
  wait_exit "$pid" 3
  bg_pids=()
  assert "SIG$sig while idle: exit 0 within 3 s (got $status)" test "$status" == 0
  assert "SIG$sig: the state is saved at the last transaction" jq -e --arg p "$pos" '.position == $p' "$state"
  assert "SIG$sig: the state file is mode 0600" test "$(stat -c %a "$state")" == 600
  assert "SIG$sig: --stats 1 wrote a stats line with the lag every second on stderr" \
    test "$(grep -i 'stats' "$work/$sig.err" | grep -c -i -E 'lag|behind')" -ge 3
done
echo "  stats lines look like: $(grep -i -m1 stats "$work/TERM.err")"

# A rerun from the state writes only what came after.
root -e 'INSERT INTO t.s VALUES (7)' || exit 1
expect "a rerun from the state exits 0 at --until now" 0 live --state "$work/INT.state" --until now
span_checked "$work/out"
assert "it wrote exactly the one new transaction, its table described first" \
  jq -e -s '[.[] | "\(.op) \(.key | if type == "array" then .[0] else .id end)"] == ["table id", "c 7", "commit null"]' \
  "$work/out"

# A reader that goes away: the next write gets EPIPE, and the stream ends quietly.
mkfifo "$work/pipe"
head -1 <"$work/pipe" >"$work/first.ndjson" &
head_pid=$!
bg_pids+=("$head_pid")
live_bg --from earliest >"$work/pipe" 2>"$work/epipe.err" &
pid=$!
bg_pids+=("$pid")
wait_exit "$head_pid" 15
assert "| head -1: head got its line (got $status)" test "$status" == 0
for ((i = 100; i < 150; i++)); do
  kill -0 "$pid" 2>/dev/null || break
  root -e "INSERT INTO t.s VALUES ($i)" || exit 1
  sleep 0.2
done
wait_exit "$pid" 1
bg_pids=()
assert "| head -1: the stream ends once the reader is gone and a change comes (got $status)" test "$status" != still-running
assert "| head -1: exit 0 (got $status)" test "$status" == 0
assert "| head -1: nothing on stderr (got: $(head -c 200 "$work/epipe.err"))" test ! -s "$work/epipe.err"
assert "| head -1: head got one line" jq -e . "$work/first.ndjson"

finish
