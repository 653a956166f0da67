#!/usr/bin/env bash
# cdc-stream --state --output under faults, and the lines that let a reader prove what a
# bounded run covers:
# - 3,000 single-row autocommit INSERTs while the server kills the stream's binlog dump thread
#   again and again: every insert is in --output exactly once (the output, the state and the
#   resume point move together; a reconnect resumes where the output was cut back to);
# - a first run killed before its first transaction, its output holding a torn line: the rerun
#   cuts the file back (the first run saved its state before writing);
# - --until writes span_start first and span_end last; a rerun of a finished bounded run
#   writes nothing; a start that already includes --until writes just the two lines; the same
#   with --until TIME, whose rerun writes nothing until a later time asks for more;
# - a MariaDB GTID position naming a domain the server never logged is refused (exit 2);
# - a FILE:OFFSET state saved against another server id is refused (exit 2), and resumes
#   against its own server.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
throwaway_start "$srv" || exit 1

root <<'SQL' || exit 1
CREATE DATABASE t;
CREATE TABLE t.k (id INT PRIMARY KEY, note VARCHAR(20)) ENGINE=InnoDB;
CREATE DATABASE other;
CREATE TABLE other.x (id INT PRIMARY KEY) ENGINE=InnoDB;
SQL

seed=${STREAM_OUTPUT_FAULTS_SEED:-$((RANDOM * 32768 + RANDOM))}
echo "random seed $seed (STREAM_OUTPUT_FAULTS_SEED=$seed reproduces the kill times)"
RANDOM=$seed

# ---- 1. dump thread killed again and again during 3,000 autocommit inserts --------------
from=$(gtid_pos)
live_bg --from now --state "$work/k.state" --output "$work/k.ndjson" --tables 't.*' 2>"$work/k.err" &
stream_pid=$!
bg_pids+=("$stream_pid")
wait_dump_threads 1 || echo "  (no dump thread after 10 s)"
seq 1 3000 | awk '{printf "INSERT INTO t.k VALUES (%d, \"n%d\");\n", $1, $1}' >"$work/inserts.sql"
root t <"$work/inserts.sql" >"$work/writer.log" 2>&1 &
writer=$!
bg_pids+=("$writer")
kills=0
while kill -0 "$writer" 2>/dev/null || ((kills < 6)); do
  sleep "0.$((2 + RANDOM % 5))"
  id=$(root -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%' LIMIT 1")
  if [[ -n $id ]] && root -e "KILL $id" 2>/dev/null; then kills=$((kills + 1)); fi
  ((kills >= 40)) && break
done
wait "$writer"
assert "the writer committed all 3,000 inserts" test ! -s "$work/writer.log"
last=$(gtid_pos)
echo "killed the dump thread $kills times while 3,000 inserts ran ($from .. $last)"
assert "the dump thread was killed at least 6 times" test "$kills" -ge 6
# The stream catches up after the last kill; then SIGTERM ends it cleanly.
wait_until 60 grep -q -F "\"gtid\":\"$last\"" "$work/k.ndjson"
kill -TERM "$stream_pid"
wait_exit "$stream_pid" 20
bg_pids=()
assert "the stream exits 0 on SIGTERM (exit $status)" test "$status" == 0
assert "it reconnected after the kills" grep -q 'reconnected to' "$work/k.err"
grep -o '"op":"c","v":1,"db":"t","table":"k".*' "$work/k.ndjson" | grep -o '"after":{"id":[0-9]*' | sort >"$work/ids"
seq 1 3000 | sed 's/^/"after":{"id":/' | sort >"$work/want_ids"
got_rows=$(wc -l <"$work/ids")
got_unique=$(sort -u "$work/ids" | wc -l)
echo "  $got_rows insert lines, $got_unique distinct ids"
same_file "every one of the 3,000 inserts is in --output exactly once" "$work/want_ids" "$work/ids"
assert "no transaction is in --output twice" test -z "$(commit_gtids "$work/k.ndjson" | sort | uniq -d)"
assert "the state's output_bytes is the file's length" \
  jq -e --argjson n "$(stat -c %s "$work/k.ndjson")" '.output_bytes == $n' "$work/k.state"

# ---- 2. a first run stopped before its first transaction, with a torn line -------------
live_bg --from now --state "$work/f.state" --output "$work/f.ndjson" --tables 't.*' 2>"$work/f.err" &
first=$!
bg_pids+=("$first")
assert "a first run saves its state before it writes anything" wait_until 10 test -s "$work/f.state"
kill -9 "$first"
wait "$first" 2>/dev/null
bg_pids=()
printf '{"op":"c","v":1,"db":"t","table":"k","pos":{"file":"torn' >>"$work/f.ndjson"
live_bg --state "$work/f.state" --output "$work/f.ndjson" --tables 't.*' 2>"$work/f2.err" &
rerun=$!
bg_pids+=("$rerun")
wait_dump_threads 1
root -e "INSERT INTO t.k VALUES (5001, 'after restart')"
one=$(gtid_pos)
wait_until 20 grep -q -F "\"gtid\":\"$one\"" "$work/f.ndjson"
kill -TERM "$rerun"
wait_exit "$rerun" 20
bg_pids=()
assert "the rerun exits 0 (exit $status; stderr: $(head -c 300 "$work/f2.err"))" test "$status" == 0
assert "it says it cut the file back" grep -q 'cutting' "$work/f2.err"
assert "the torn line is gone: the file is the one insert, its table line and its commit" \
  test "$(grep -c . "$work/f.ndjson")" == 3 -a "$(grep -c '"id":5001' "$work/f.ndjson")" == 1 \
  -a "$(grep -c '^{"op":"table",' "$work/f.ndjson")" == 1
assert "every line of the file is JSON" jq -e . "$work/f.ndjson"

# ---- 3. span lines ---------------------------------------------------------------------
p1=$(gtid_pos)
root -e "INSERT INTO t.k VALUES (6001, 'span'); INSERT INTO other.x VALUES (1); INSERT INTO t.k VALUES (6002, 'span')"
p2=$(gtid_pos)
expect "a bounded run with --output exits 0" 0 \
  live --from "$p1" --until "$p2" --state "$work/s.state" --output "$work/s.ndjson" --tables 't.*'
assert "its first line is span_start at --from" \
  jq -e -s --arg p "$p1" '.[0] == {"op":"span_start","v":1,"position":$p}' "$work/s.ndjson"
assert "its last line is span_end at --until, with the position reached and the binlog offset" \
  jq -e -s --arg p "$p2" '.[-1] | .op == "span_end" and .until == $p and .position == $p
    and (.pos.file | test("^binlog")) and (.pos.offset > 4)' "$work/s.ndjson"
assert "the span holds the two inserts of t.k and their commits" \
  jq -e -s '[.[] | select(.op == "c")] | length == 2' "$work/s.ndjson"
assert "the state records the closed span" jq -e '.span == "closed"' "$work/s.state"
cp "$work/s.ndjson" "$work/s.before"
expect "rerunning the finished bounded run exits 0" 0 \
  live --from "$p1" --until "$p2" --state "$work/s.state" --output "$work/s.ndjson" --tables 't.*'
same_file "and writes nothing" "$work/s.before" "$work/s.ndjson"
expect "a start that includes --until exits 0" 0 live --from "$p2" --until "$p2" --tables 't.*'
assert "and writes span_start and span_end (pos null: nothing read), nothing else" \
  jq -e -s --arg p "$p2" '. == [{"op":"span_start","v":1,"position":$p},
    {"op":"span_end","v":1,"position":$p,"pos":null,"until":$p}]' "$work/out"
expect "a bounded run on stdout exits 0" 0 \
  live --from "$p1" --until now --tables 't.*'
assert "on stdout, a bounded run writes its span lines too" \
  test "$(head -c 22 "$work/out")" == '{"op":"span_start","v"'
# The same with --until TIME, which is known reached only when the first transaction after
# the start commits at or after it, or when an idle server's clock is past it.
p3=$(gtid_pos)
root -e "INSERT INTO t.k VALUES (6003, 'time')"
t1=$(date -u -d '+2 seconds' +%Y-%m-%dT%H:%M:%SZ)
expect "a bounded run to a time exits 0" 0 \
  live --from "$p3" --until "$t1" --state "$work/t.state" --output "$work/t.ndjson" --tables 't.*'
assert "it holds the insert, between span_start and span_end at the time" \
  jq -e -s --arg t "$t1" '.[0].op == "span_start" and .[-1].op == "span_end" and .[-1].until == $t
    and ([.[] | select(.op == "c") | .after.id] == [6003])' "$work/t.ndjson"
cp "$work/t.ndjson" "$work/t.before"
expect "rerunning it on an idle server exits 0" 0 \
  live --from "$p3" --until "$t1" --state "$work/t.state" --output "$work/t.ndjson" --tables 't.*'
same_file "and writes nothing (no empty span)" "$work/t.before" "$work/t.ndjson"
assert "and says so" grep -q "nothing to do: --until $t1 was reached again" "$work/err"
root -e "INSERT INTO t.k VALUES (6004, 'after')"
expect "rerunning it after a commit past the time exits 0" 0 \
  live --from "$p3" --until "$t1" --state "$work/t.state" --output "$work/t.ndjson" --tables 't.*'
same_file "and writes nothing either" "$work/t.before" "$work/t.ndjson"
t2=$(date -u -d '+2 seconds' +%Y-%m-%dT%H:%M:%SZ)
expect "a later --until on the same state exits 0" 0 \
  live --from "$p3" --until "$t2" --state "$work/t.state" --output "$work/t.ndjson" --tables 't.*'
assert "and appends one span with the insert made since" \
  jq -e -s --arg t1 "$t1" --arg t2 "$t2" '[.[] | select(.op | startswith("span")) | [.op, .until]]
    == [["span_start", null], ["span_end", $t1], ["span_start", null], ["span_end", $t2]]
    and ([.[] | select(.op == "c") | .after.id] == [6003, 6004])' "$work/t.ndjson"

# ---- 4. a GTID position with a domain the server never logged --------------------------
expect "--from with an unknown domain exits 2" 2 live --from "$p2,77-1-5" --until now
assert "the message names the domain" grep -q 'domain 77' "$work/err"
expect "--until with an unknown domain exits 2" 2 live --from "$p2" --until "$p2,77-1-5"
assert "the message names the domain" grep -q 'domain 77' "$work/err"

# ---- 5. a FILE:OFFSET state of another server -------------------------------------------
binlog=$(root -N -e 'SHOW BINARY LOGS' | head -1 | cut -f1)
server_id=$(root -N -e 'SELECT @@server_id')
printf '{"v":1,"position":"%s:4","server":"10.9.9.9:3306","server_id":%d}\n' "$binlog" $((server_id + 98)) >"$work/o.state"
expect "a FILE:OFFSET state of another server id exits 2" 2 live --state "$work/o.state" --until "$p2"
assert "the message names both server ids" grep -q "server id $((server_id + 98)).*server id $server_id" "$work/err"
printf '{"v":1,"position":"%s:4","server":"10.9.9.9:3306","server_id":%d}\n' "$binlog" "$server_id" >"$work/o.state"
expect "the same state with this server's id resumes (exit 0)" 0 live --state "$work/o.state" --until "$p2" --tables 't.*'
assert "and streams from the file's start" grep -q '"id":6002' "$work/out"
printf '{"v":1,"position":"%s:4","server":"10.9.9.9:3306"}\n' "$binlog" >"$work/o.state"
expect "an older state without server_id but another address resumes (exit 0)" 0 \
  live --state "$work/o.state" --until "$p2" --tables 't.*'
assert "with a warning naming the address" grep -q 'warning: .*10.9.9.9:3306' "$work/err"

finish
