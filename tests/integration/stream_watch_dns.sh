#!/usr/bin/env bash
# cdc-stream --watch-dns: the stream stops with exit 4, state saved, when its host name
# resolves to other addresses than at start (the DNS name moved to a new primary). The name
# is made to move with a line of our own in /etc/hosts, restored on exit; where /etc/hosts
# cannot be written (not root), the test reports itself skipped.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
if [[ ! -w /etc/hosts ]]; then
  echo "skipped: /etc/hosts is not writable (run as root to test --watch-dns)"
  exit 77
fi
name="cdc-watch-dns-test-$$.invalid"
cp /etc/hosts "$work/hosts.orig"
# cat > rather than mv: /etc/hosts is often a bind mount in containers.
restore_hosts() { grep -v -F "$name" "$work/hosts.orig" >"$work/hosts.clean"; cat "$work/hosts.clean" >/etc/hosts; }
trap 'exit_status=$?; live_cleanup; restore_hosts; remove_work' EXIT
throwaway_start "$srv" || exit 1

{ cat "$work/hosts.orig"; echo "127.0.0.1 $name"; } >/etc/hosts
root -e "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY)" || exit 1
MYSQL_PWD=$THROWAWAY_CDC_PASSWORD "$stream" -h "$name" -P "$THROWAWAY_PORT" -u cdc --from now --watch-dns \
  --heartbeat 1 --state "$work/state" >"$work/lines" 2>"$work/err" &
stream_pid=$!
bg_pids+=("$stream_pid")
sleep 1.5
root -e "INSERT INTO d.t VALUES (1)" || exit 1
wait_for_text "$work/lines" '"op":"commit"' 5
assert "the stream runs while the name stays" grep -q '"op":"c"' "$work/lines"

# The name moves (127.0.0.2 is loopback too; the open connection is not affected).
{ cat "$work/hosts.orig"; echo "127.0.0.2 $name"; } >/etc/hosts
wait_exit "$stream_pid" 10
bg_pids=()
assert "exit 4 within 10 s of the change ($status)" test "$status" == 4
assert "stderr names the host and both answers" grep -q -- "--watch-dns: $name now resolves to 127.0.0.2 (it was 127.0.0.1)" "$work/err"
assert "the state is saved at the last transaction" grep -q "\"position\":\"$(gtid_pos)\"" "$work/state"

finish
