#!/usr/bin/env bash
# cdc-stream --metrics: the file parses with Prometheus' own Python parser (Debian's
# python3-prometheus-client), and its numbers agree with the source and the output: rows per
# table and op as committed, transactions as the output's commit lines, the output's size,
# the position of its last commit line, the reconnects after the server kills the dump thread
# under load (the transactions read again count once), and 0 s behind once caught up. A metrics file that
# cannot be written is a warning, and the stream goes on.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
throwaway_start "$srv" || exit 1

# metric NAME [LABELS]: the sample's value in the file (metric_value, live_lib.sh).
metric() { metric_value "$work/metrics.prom" "$@"; }

# metric_is NAME VALUE: for wait_until, which runs it again until it holds.
metric_is() { [[ $(metric "$1") == "$2" ]]; }

root <<'SQL' || exit 1
CREATE DATABASE m;
CREATE TABLE m.a (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;
CREATE TABLE m.b (id INT PRIMARY KEY) ENGINE=InnoDB;
SQL

live_bg --from now --state "$work/s.state" --output "$work/out.ndjson" --metrics "$work/metrics.prom" \
  --heartbeat 1 2>"$work/err" &
pid=$!
bg_pids+=("$pid")
wait_dump_threads 1

# 30 transactions of 10 inserts into a, one update of 100 rows, one delete of 50, 20 inserts
# into b in one transaction.
{
  for ((t = 0; t < 30; t++)); do
    values=$(seq $((t * 10 + 1)) $((t * 10 + 10)) | sed 's/.*/(&, 0)/' | paste -sd,)
    echo "INSERT INTO m.a VALUES $values;"
  done
  echo "UPDATE m.a SET v = 1 WHERE id <= 100;"
  echo "DELETE FROM m.a WHERE id > 250;"
  echo "INSERT INTO m.b SELECT seq FROM m.seq_1_to_20;"
} | root || exit 1
pos=$(gtid_pos)
assert "the stream has the last transaction" wait_for_text "$work/out.ndjson" "\"position\":\"$pos\"" 15
assert "within 5 s the metrics file parses and counts the 33 transactions" \
  wait_until 8 metric_is cdc_stream_transactions_total 33
assert "caught up (a heartbeat came): 0 s behind" wait_until 8 metric_is cdc_stream_seconds_behind_server 0

# The server kills the dump thread twice while 200 single-row transactions commit: the
# transactions the stream reads again after each reconnect count once.
for ((i = 100; i < 300; i++)); do echo "INSERT INTO m.b VALUES ($i); DO SLEEP(0.01);"; done | root &
writer=$!
bg_pids+=("$writer")
for kill_at in 0.5 1.0; do
  sleep "$kill_at"
  dump_id=$(root -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'")
  [[ -n $dump_id ]] && root -e "KILL $dump_id"
  wait_dump_threads 1
done
wait "$writer"
pos=$(gtid_pos)
assert "the stream has the last insert after the reconnects" wait_for_text "$work/out.ndjson" "\"position\":\"$pos\"" 15
assert "it reconnected twice" test "$(grep -c 'reconnected to' "$work/err")" == 2

kill -TERM "$pid"
wait_exit "$pid" 10
bg_pids=()
assert "SIGTERM: exit 0 (got $status)" test "$status" == 0

# The file written at the end, against the source and the output.
rows() { metric cdc_stream_rows_total "database=m,table=$1,op=$2"; }
expect_equal() { assert "$1: $2 (got $3)" test "$3" == "$2"; }
expect_equal "m.a inserts" 300 "$(rows a insert)"
expect_equal "m.a updates" 100 "$(rows a update)"
expect_equal "m.a deletes" 50 "$(rows a delete)"
expect_equal "m.b inserts" 220 "$(rows b insert)"
expect_equal "m.b deletes" 0 "$(rows b delete)"
expect_equal "transactions: the output's commit lines" "$(grep -c '"op":"commit"' "$work/out.ndjson")" \
  "$(metric cdc_stream_transactions_total)"
expect_equal "output bytes: the output file's size" "$(stat -c %s "$work/out.ndjson")" \
  "$(metric cdc_stream_output_bytes_total)"
last_commit=$(grep '"op":"commit"' "$work/out.ndjson" | tail -1)
expect_equal "position offset: the last commit line's" "$(jq -r .pos.offset <<<"$last_commit")" \
  "$(metric cdc_stream_position_offset_bytes)"
file_number=$(jq -r .pos.file <<<"$last_commit" | sed 's/.*\.0*//')
expect_equal "position file number: the last commit line's file" "$file_number" \
  "$(metric cdc_stream_position_file_number)"
expect_equal "reconnects" 2 "$(metric cdc_stream_reconnects_total)"
started=$(metric cdc_stream_start_time_seconds)
assert "the last error's time is after the start" test "$(metric cdc_stream_last_error_timestamp_seconds)" -ge "$started"
assert "events and bytes were read" test "$(metric cdc_stream_binlog_read_bytes_total)" -gt "$(metric cdc_stream_events_total)"
assert "no temporary file is left beside it" test ! -e "$work/metrics.prom.tmp"
echo "  the file:"
grep -v '^#' "$work/metrics.prom" | sed 's/^/    /'

# A metrics file in a directory that does not exist: a warning, once, and the stream works.
root -e "INSERT INTO m.b VALUES (1000)" || exit 1
expect "an unwritable --metrics file: the run still ends at --until now with exit 0" 0 \
  live --from earliest --until now --metrics "$work/missing/metrics.prom"
assert "a warning names it, once (got $(grep -c 'metrics' "$work/err"))" test "$(grep -c -- '--metrics' "$work/err")" == 1
assert "the stream wrote the insert" grep -q '"id":1000' "$work/out"

finish
