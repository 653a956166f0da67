#!/usr/bin/env bash
# cdc-stream live mode and its ends: an idle stream (heartbeats every second) stays up, and
# SIGTERM or SIGINT ends it at once with exit 0 and its state saved; a rerun from that state
# writes only what came after; a reader that goes away (| head -1) ends it quietly: exit 0,
# nothing on stderr. --stats writes stats lines on stderr.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$source_dir/scripts/lib/throwaway_mariadb.sh"
stream="$tools_dir/cdc-stream"
srv="$work/srv"
bg_pids=()
trap 'for p in "${bg_pids[@]}"; do kill -9 "$p" 2>/dev/null; done; throwaway_stop "$srv"; rm -rf "$work"' EXIT

if ! "$stream" --help 2>/dev/null | grep -q -- '--from'; then
  echo "FAIL cdc-stream has no live mode: its --help does not list --from"
  exit 1
fi
throwaway_start "$srv" || exit 1

root() { mariadb --no-defaults --default-character-set=utf8mb4 -S "$THROWAWAY_SOCKET" -uroot "$@"; }
live() { MYSQL_PWD=$THROWAWAY_CDC_PASSWORD timeout -k 5 60 "$stream" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc "$@"; }
live_bg() { MYSQL_PWD=$THROWAWAY_CDC_PASSWORD exec "$stream" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc "$@"; }
gtid_pos() { root -N -e 'SELECT @@gtid_binlog_pos'; }
wait_for_text() {
  local i
  for ((i = 0; i < $3 * 10; i++)); do
    grep -q -F -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
# ends_within PID SECONDS: waits for PID to end; sets status (or "still-running", then kills it).
ends_within() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$1" 2>/dev/null; then
    status=still-running
    kill -9 "$1"
    wait "$1" 2>/dev/null
  else
    wait "$1"
    status=$?
  fi
}

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
  ends_within "$pid" 3
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
assert "it wrote exactly the one new transaction" jq -e -s '[.[] | "\(.op) \(.key.id)"] == ["c 7", "commit null"]' "$work/out"

# A reader that goes away: the next write gets EPIPE, and the stream ends quietly.
mkfifo "$work/pipe"
head -1 <"$work/pipe" >"$work/first.ndjson" &
head_pid=$!
bg_pids+=("$head_pid")
live_bg --from earliest >"$work/pipe" 2>"$work/epipe.err" &
pid=$!
bg_pids+=("$pid")
ends_within "$head_pid" 15
assert "| head -1: head got its line (got $status)" test "$status" == 0
for ((i = 100; i < 150; i++)); do
  kill -0 "$pid" 2>/dev/null || break
  root -e "INSERT INTO t.s VALUES ($i)" || exit 1
  sleep 0.2
done
ends_within "$pid" 1
bg_pids=()
assert "| head -1: the stream ends once the reader is gone and a change comes (got $status)" test "$status" != still-running
assert "| head -1: exit 0 (got $status)" test "$status" == 0
assert "| head -1: nothing on stderr (got: $(head -c 200 "$work/epipe.err"))" test ! -s "$work/epipe.err"
assert "| head -1: head got one line" jq -e . "$work/first.ndjson"

finish
