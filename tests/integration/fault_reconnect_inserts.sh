#!/usr/bin/env bash
# The reconnect case of issue 11: `cdc-stream --from now --state st.json --output out.ndjson
# --tables 'db.*'` while 3,000 single-row autocommit INSERTs run, and the server kills the
# stream's binlog dump thread (KILL of the 'Binlog Dump' thread) five times, as the inserts pass
# 500, 1,000, 1,500, 2,000 and 2,500 rows. The file must hold each of the 3,000 inserts exactly
# once (the lost and doubled ids are named), and each transaction's GTID once.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
throwaway_start "$srv" || exit 1
inserts=3000

root -e 'CREATE DATABASE db; CREATE TABLE db.t (id INT PRIMARY KEY, v VARCHAR(40)) ENGINE=InnoDB' || exit 1
live_bg --from now --state "$work/st.json" --output "$work/out.ndjson" --tables 'db.*' 2>"$work/stream.err" &
stream_pid=$!
bg_pids+=("$stream_pid")
assert "the stream connects (one Binlog Dump thread)" wait_dump_threads 1

# The inserts: one client, one autocommit INSERT a statement, 2 ms apart (so that the kills
# below come while they run: unpaced, 3,000 take well under a second).
for ((i = 1; i <= inserts; i++)); do
  echo "INSERT INTO db.t VALUES ($i, 'row $i'); DO SLEEP(0.002);"
done >"$work/inserts.sql"
root <"$work/inserts.sql" 2>"$work/inserts.err" &
writer_pid=$!
bg_pids+=("$writer_pid")

# The kills: each once the table has passed the next threshold (polled; the writer goes on).
rows() { root -N -e 'SELECT COUNT(*) FROM db.t'; }
kills=0
dump_ids=()
for threshold in 500 1000 1500 2000 2500; do
  wait_until 60 bash -c "(( \$(mariadb --no-defaults -S '$THROWAWAY_SOCKET' -uroot -N -e 'SELECT COUNT(*) FROM db.t') >= $threshold ))" ||
    break
  id=$(root -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%' LIMIT 1")
  if [[ -n $id ]] && root -e "KILL $id" 2>/dev/null; then
    kills=$((kills + 1))
    dump_ids+=("$id")
    echo "  killed the Binlog Dump thread $id at $(rows) rows"
  fi
done
status=0
wait "$writer_pid" || status=$?
assert "the $inserts inserts ran (exit $status)" test "$status" == 0
assert "the dump thread was killed at least 3 times while the inserts ran ($kills: ${dump_ids[*]})" test "$kills" -ge 3
assert "the table has $inserts rows" test "$(rows)" == "$inserts"

end_pos=$(gtid_pos)
assert "the stream reaches the end ($end_pos) after the kills" \
  wait_for_text "$work/out.ndjson" "\"position\":\"$end_pos\"" 60
kill -TERM "$stream_pid"
wait_exit "$stream_pid" 30
bg_pids=()
assert "SIGTERM exits 0 (got $status)" test "$status" == 0
echo "  stream stderr: $(head -c 600 "$work/stream.err" | tr '\n' ' ')"

# Each id once: the inserts in the file, by id.
grep '"op":"c"' "$work/out.ndjson" | sed -n 's/.*"key":{"id":\([0-9]*\)}.*/\1/p' | sort -n >"$work/ids"
got=$(wc -l <"$work/ids")
distinct=$(sort -u -n "$work/ids" | wc -l)
missing=$(comm -23 <(seq 1 "$inserts" | sort) <(sort -u "$work/ids") | sort -n)
doubled=$(uniq -d "$work/ids")
if [[ $got == "$inserts" && $distinct == "$inserts" && -z $missing ]]; then
  passes=$((passes + 1))
  echo "ok   out.ndjson holds each of the $inserts inserts exactly once"
else
  fail "out.ndjson holds $got inserts, $distinct distinct, of $inserts"
  [[ -n $missing ]] && echo "  $(wc -l <<<"$missing") lost: ids $(head -20 <<<"$missing" | tr '\n' ' ')..."
  [[ -n $doubled ]] && echo "  $(wc -l <<<"$doubled") twice: ids $(head -20 <<<"$doubled" | tr '\n' ' ')..."
fi
assert "no commit GTID twice" test -z "$(commit_gtids "$work/out.ndjson" | sort | uniq -d)"
finish
