#!/usr/bin/env bash
# cdc-stream --watch-dns: the stream stops with exit 4, state saved, when its host name
# resolves to other addresses than at start (the DNS name moved to a new primary). The name
# is made to move with a line of our own in /etc/hosts, restored on exit; where /etc/hosts
# cannot be written (not root), the test reports itself skipped.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$source_dir/scripts/lib/throwaway_mariadb.sh"
stream="$tools_dir/cdc-stream"
if [[ ! -w /etc/hosts ]]; then
  echo "skipped: /etc/hosts is not writable (run as root to test --watch-dns)"
  exit 77
fi
srv="$work/srv"
name="cdc-watch-dns-test-$$.invalid"
cp /etc/hosts "$work/hosts.orig"
# cat > rather than mv: /etc/hosts is often a bind mount in containers.
restore_hosts() { grep -v -F "$name" "$work/hosts.orig" >"$work/hosts.clean"; cat "$work/hosts.clean" >/etc/hosts; }
stream_pid=
trap '[[ -n $stream_pid ]] && kill -9 "$stream_pid" 2>/dev/null; restore_hosts; throwaway_stop "$srv"; rm -rf "$work"' EXIT
throwaway_start "$srv" || exit 1
root() { mariadb --no-defaults -S "$THROWAWAY_SOCKET" -uroot "$@"; }

{ cat "$work/hosts.orig"; echo "127.0.0.1 $name"; } >/etc/hosts
root -e "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY)" || exit 1
MYSQL_PWD=$THROWAWAY_CDC_PASSWORD "$stream" -h "$name" -P "$THROWAWAY_PORT" -u cdc --from now --watch-dns \
  --heartbeat 1 --state "$work/state" >"$work/lines" 2>"$work/err" &
stream_pid=$!
sleep 1.5
root -e "INSERT INTO d.t VALUES (1)" || exit 1
for ((i = 0; i < 50; i++)); do grep -q '"op":"commit"' "$work/lines" && break; sleep 0.1; done
assert "the stream runs while the name stays" grep -q '"op":"c"' "$work/lines"

# The name moves (127.0.0.2 is loopback too; the open connection is not affected).
{ cat "$work/hosts.orig"; echo "127.0.0.2 $name"; } >/etc/hosts
status=0
for ((i = 0; i < 100; i++)); do kill -0 "$stream_pid" 2>/dev/null || break; sleep 0.1; done
wait "$stream_pid" || status=$?
stream_pid=
assert "exit 4 within 10 s of the change ($status)" test "$status" == 4
assert "stderr names the host and both answers" grep -q -- "--watch-dns: $name now resolves to 127.0.0.2 (it was 127.0.0.1)" "$work/err"
assert "the state is saved at the last transaction" grep -q "\"position\":\"$(root -N -e 'SELECT @@gtid_binlog_pos')\"" "$work/state"

finish
