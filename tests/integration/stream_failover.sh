#!/usr/bin/env bash
# cdc-stream live mode survives a switchover by GTID: two throwaway MariaDB servers, A the
# primary and B its replica (GTID replication, log_slave_updates). While a writer commits a few
# hundred transactions of varying size on A, a stream with --require-read-only, --state and
# --output follows B. The stream is paused (SIGSTOP) mid-way, so that it lags; then the
# switchover: A turns read-only, B catches up, stops replicating and turns writable (it is
# promoted), A becomes B's replica. Resumed, the stream on B must exit 4 with its state saved.
# Rerun with the same --state and --output against A (the new replica, no --from), it must
# resume by GTID while a second writer commits on B, replicated to A. In the end the --output
# file must equal one uninterrupted `--from START --until now` run against A byte for byte,
# except the binary log file and offset of "pos", which name a server's own binlog: every
# transaction once, in order, none missing.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
srv_a="$srv/a"
srv_b="$srv/b"
throwaway_start "$srv_a" --log-slave-updates || exit 1
port_a=$THROWAWAY_PORT sock_a=$THROWAWAY_SOCKET
throwaway_start "$srv_b" --server-id=2 --log-slave-updates || exit 1
port_b=$THROWAWAY_PORT sock_b=$THROWAWAY_SOCKET
repl_password=repl-test-secret

root_a() { mariadb_root "$sock_a" "$@"; }
root_b() { mariadb_root "$sock_b" "$@"; }
# without_binlog_coordinates FILE: the lines with "pos"'s file and offset and the commits' xid
# (each server numbers its own) taken out, and the commits' ts_ms (the XID event's time, a
# second apart on a replica now and then: a run saw 0-1-23 at ...591000 on A, ...590000 on
# B), the rest of every line kept byte for byte; without the table lines, which a stream that
# switched servers writes again (table_lines_checked).
without_binlog_coordinates() {
  sed -e 's/"pos":{"file":"[^"]*","offset":[0-9]*,\{0,1\}/"pos":{/' -e 's/,"xid":[0-9]*,/,"xid":,/' \
    -e '/^{"op":"commit",/s/,"ts_ms":[0-9]*}$/,"ts_ms":}/' "$1" |
    grep -v '^{"op":"table",'
}
# wait_gtid ROOT_FN POSITION: the server has applied POSITION (20 s at most).
wait_gtid() { [[ $("$1" -N -e "SELECT MASTER_GTID_WAIT('$2', 20)") == 0 ]]; }
# wait_state_position FILE POSITION SECONDS
wait_state_position() { wait_until "$3" jq -e --arg p "$2" '.position == $p' "$1" >/dev/null 2>&1; }

assert "the two servers have server ids 1 and 2" \
  test "$(root_a -N -e 'SELECT @@server_id'):$(root_b -N -e 'SELECT @@server_id')" == 1:2

# A replication account on both servers, kept out of the binlogs; B starts from A's end, with
# an empty binlog of its own (throwaway_start's account statements are not A's history).
for root in root_a root_b; do
  "$root" <<SQL || exit 1
SET sql_log_bin = 0;
CREATE USER 'repl'@'127.0.0.1' IDENTIFIED BY '$repl_password';
GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1';
SQL
done
root_b <<SQL || exit 1
RESET MASTER;
SET GLOBAL gtid_slave_pos = '$(gtid_pos root_a)';
CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = $port_a, MASTER_USER = 'repl',
  MASTER_PASSWORD = '$repl_password', MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1;
START SLAVE;
SET GLOBAL read_only = ON;
SQL

writer_table_sql | root_a || exit 1
from=$(gtid_pos root_a)
if ! wait_gtid root_b "$from"; then
  echo "FAIL B does not replicate A: $(root_b -e 'SHOW SLAVE STATUS\G' | grep -i -e error -e running)"
  exit 1
fi
echo "start position $from (B: $(gtid_pos root_b))"

seed=${STREAM_FAILOVER_SEED:-$((RANDOM * 32768 + RANDOM))}
echo "random seed $seed (STREAM_FAILOVER_SEED=$seed reproduces the writers)"
RANDOM=$seed
writer_sql 1 200 0.02 >"$work/writer1.sql"
writer_sql 201 320 0.02 >"$work/writer2.sql"

# 1. The stream follows the replica B while the writer commits on A.
state=$work/s.state
output=$work/o.ndjson
live_bg_at "$port_b" --require-read-only --from "$from" --state "$state" --output "$output" --heartbeat 1 \
  2>"$work/b.err" &
pid=$!
bg_pids+=("$pid")
root_a <"$work/writer1.sql" >"$work/writer1.log" 2>&1 &
writer=$!
bg_pids+=("$writer")
for ((i = 0; i < 200; i++)); do
  n=$(grep -c '"op":"commit"' "$output" 2>/dev/null)
  ((${n:-0} >= 20)) && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.05
done
assert "the stream on B is running" kill -0 "$pid"
kill -STOP "$pid"   # it lags from here on
commits_at_pause=$(grep -c '"op":"commit"' "$output" 2>/dev/null)
commits_at_pause=${commits_at_pause:-0}
assert "the stream on B has written transactions ($commits_at_pause) when it is paused" test "$commits_at_pause" -gt 0
wait "$writer"
assert "the writer on A committed everything" test ! -s "$work/writer1.log"
end1=$(gtid_pos root_a)

# 2. The switchover: A read-only, B caught up, B promoted, A its replica.
root_a -e 'SET GLOBAL read_only = ON' || exit 1
assert "B has every transaction of A" wait_gtid root_b "$end1"
root_b -e 'STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only = OFF' || exit 1
root_a <<SQL || exit 1
SET GLOBAL gtid_slave_pos = @@gtid_binlog_pos;
CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = $port_b, MASTER_USER = 'repl',
  MASTER_PASSWORD = '$repl_password', MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1;
START SLAVE;
SQL
kill -CONT "$pid"
promoted=$SECONDS
wait_exit "$pid" 20
bg_pids=()
echo "  the stream on B ended $((SECONDS - promoted)) s after it was resumed, B promoted"
echo "  stderr: $(head -c 500 "$work/b.err")"
assert "B promoted: the stream exits 4 (got $status)" test "$status" == 4
assert "B promoted: stderr says it turned writable" grep -q -i 'read.only' "$work/b.err"
assert "B promoted: the state is valid JSON with a GTID position" \
  jq -e '.position | test("^0-[12]-[0-9]+$")' "$state"
saved=$(jq -r .position "$state")
last_commit=$(grep '"op":"commit"' "$output" | tail -1)
assert "B promoted: the state's position is the last commit line's" \
  jq -e --arg p "$saved" '.position == $p' <<<"$last_commit"
assert "B promoted: the state's output_bytes is the output file's length" \
  jq -e --argjson n "$(stat -c %s "$output")" '.output_bytes == $n' "$state"
assert "B promoted: the state names B" jq -e --arg s "127.0.0.1:$port_b" '.server == $s' "$state"
commits_b=$(grep -c '"op":"commit"' "$output")
echo "  state: $(cat "$state")"
echo "  from B: $commits_b transactions ($commits_at_pause when paused); A's end was $end1"
assert "B promoted: the stream had not read all of A's transactions (${saved##*-} < ${end1##*-})" \
  test "${saved##*-}" -lt "${end1##*-}"
lines_b=$(wc -l <"$output")

# 3. Against A, the new replica, with the same state and output; the writer now commits on B.
live_bg_at "$port_a" --require-read-only --state "$state" --output "$output" --heartbeat 1 2>"$work/a.err" &
pid=$!
bg_pids+=("$pid")
root_b <"$work/writer2.sql" >"$work/writer2.log" 2>&1 &
writer=$!
bg_pids+=("$writer")
wait "$writer"
assert "the writer on B committed everything" test ! -s "$work/writer2.log"
end=$(gtid_pos root_b)
assert "A has every transaction of B" wait_gtid root_a "$end"
assert "the stream on A reaches the end ($end)" wait_state_position "$state" "$end" 30
assert "the stream on A is still running" kill -0 "$pid"
kill -TERM "$pid"
wait_exit "$pid" 20
bg_pids=()
assert "the stream on A: SIGTERM exits 0 (got $status)" test "$status" == 0
echo "  stderr: $(head -c 500 "$work/a.err")"
assert "the stream on A: the state names A" jq -e --arg s "127.0.0.1:$port_a" '.server == $s' "$state"

# 4. One uninterrupted run over the same range against A, and (a check of the setup) against B.
expect "an uninterrupted run against A exits 0" 0 live_at "$port_a" --from "$from" --until now
span_checked "$work/out"
cp "$work/out" "$work/ref_a.ndjson"
expect "an uninterrupted run against B exits 0" 0 live_at "$port_b" --from "$from" --until now
span_checked "$work/out"
cp "$work/out" "$work/ref_b.ndjson"
without_binlog_coordinates "$work/ref_a.ndjson" >"$work/ref_a.cmp"
without_binlog_coordinates "$work/ref_b.ndjson" >"$work/ref_b.cmp"
without_binlog_coordinates "$output" >"$work/o.cmp"
assert "the range holds both writers' transactions (320 commits)" \
  test "$(grep -c '"op":"commit"' "$work/ref_a.ndjson")" == 320
assert "the range holds the big transactions (more than 10,000 rows)" \
  test "$(grep -c -v '"op":"commit"' "$work/ref_a.ndjson")" -gt 10000
same_file "the setup: A's and B's binlogs hold the same lines but for the binlog coordinates" \
  "$work/ref_a.cmp" "$work/ref_b.cmp"
assert "every line of the output is JSON" jq -e -s 'length > 0' "$output"
same_file "the output across the switchover equals the uninterrupted run, but for the binlog coordinates" \
  "$work/ref_a.cmp" "$work/o.cmp"
assert "the lines written from B are B's own, byte for byte" \
  cmp -s <(head -n "$lines_b" "$output") <(head -n "$lines_b" "$work/ref_b.ndjson")
assert "the lines written from A are A's own, byte for byte (the table lines it writes again aside)" \
  cmp -s <(tail -n +$((lines_b + 1)) "$output" | grep -v '^{"op":"table",') \
    <(tail -n +$((lines_b + 1)) "$work/ref_a.ndjson" | grep -v '^{"op":"table",')
table_lines_checked "the output across the switchover" "$output"

# Every transaction once, in order.
commit_gtids "$output" >"$work/o.gtids"
commit_gtids "$work/ref_a.ndjson" >"$work/ref.gtids"
same_file "the output's commit gtids are the range's" "$work/ref.gtids" "$work/o.gtids"
first_seq=$((${from##*-} + 1))
last_seq=${end##*-}
assert "the commit gtids' sequence numbers run $first_seq..$last_seq, each once, in order" \
  cmp -s <(sed 's/.*-//' "$work/o.gtids") <(seq "$first_seq" "$last_seq")
assert "transactions from both server ids, 0-1 then 0-2" \
  cmp -s <(sed 's/-[0-9]*$//' "$work/o.gtids" | uniq) <(printf '0-1\n0-2\n')

finish
