#!/usr/bin/env bash
# cdc-stream live mode resumes exactly: while a writer commits a few hundred transactions of
# varying size (some of thousands of rows), one stream with --state and --output and one
# with --state writing to a pipe are killed with SIGKILL at random moments and restarted each
# time. The --output file must end up byte for byte equal to one uninterrupted run over the
# same range; the pipe's outputs may repeat at most one transaction per restart and lose none.
# Also: the state file is mode 0600 and valid JSON, and with an existing state --from is
# ignored with a notice.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
throwaway_start "$srv" || exit 1

writer_table_sql | root || exit 1
from=$(gtid_pos)

# The writer: 300 transactions, mostly of 1 to 20 rows, every 50th of 2,000 to 5,000 rows,
# with multi-row updates and deletes between.
seed=${STREAM_RESUME_SEED:-$((RANDOM * 32768 + RANDOM))}
echo "random seed $seed (STREAM_RESUME_SEED=$seed reproduces the writer and the kill times)"
RANDOM=$seed
writer_sql 1 300 0.04 >"$work/writer.sql"
root <"$work/writer.sql" >"$work/writer.log" 2>&1 &
writer=$!
bg_pids+=("$writer")

# a: --state + --output; b: --state, NDJSON into a pipe, one segment file per run.
runs_b=0
start_a() { live_bg --from "$from" --state "$work/a.state" --output "$work/a.ndjson" 2>>"$work/a.err" & pid_a=$!; bg_pids+=("$pid_a"); }
start_b() {
  runs_b=$((runs_b + 1))
  live_bg --from "$from" --state "$work/b.state" 2>>"$work/b.err" > >(cat >"$work/b.$runs_b.ndjson") &
  pid_b=$!
  bg_pids+=("$pid_b")
}
start_a
start_b
kills_a=0 kills_b=0 bad_states=0 sizes=""
while ((kills_a < 15)); do
  sleep "0.$((3 + RANDOM % 8))"
  if kill -0 "$pid_a" 2>/dev/null; then
    kill -9 "$pid_a"
    wait "$pid_a" 2>/dev/null
    kills_a=$((kills_a + 1))
    sizes+=" $(stat -c %s "$work/a.ndjson" 2>/dev/null || echo 0)"
    if [[ -e $work/a.state ]] && ! jq -e . "$work/a.state" >/dev/null 2>&1; then bad_states=$((bad_states + 1)); fi
  else
    echo "  stream a ended by itself: $(tail -c 300 "$work/a.err")"
    break
  fi
  start_a
  if ((RANDOM % 2)) && kill -0 "$pid_b" 2>/dev/null; then
    kill -9 "$pid_b"
    wait "$pid_b" 2>/dev/null
    kills_b=$((kills_b + 1))
    start_b
  fi
done
echo "killed stream a $kills_a times (output bytes at each kill:$sizes), stream b $kills_b times"
wait "$writer"
assert "the writer committed everything" test ! -s "$work/writer.log"
until_pos=$(gtid_pos)
echo "range: $from .. $until_pos"
assert "stream a was killed 15 times" test "$kills_a" == 15
assert "the state file was valid JSON after every kill" test "$bad_states" == 0

# Let both finish the range with --until, from their states.
kill -9 "$pid_a" "$pid_b" 2>/dev/null
wait "$pid_a" "$pid_b" 2>/dev/null
bg_pids=()
expect "stream a: the last run with --until exits 0" 0 live --from "$from" --state "$work/a.state" --output "$work/a.ndjson" --until "$until_pos"
runs_b=$((runs_b + 1))
expect "stream b: the last run with --until exits 0" 0 live --from "$from" --state "$work/b.state" --until "$until_pos"
cp "$work/out" "$work/b.$runs_b.ndjson"

expect "an uninterrupted run over the same range exits 0" 0 live --from "$from" --until "$until_pos"
cp "$work/out" "$work/ref.ndjson"
assert "the range holds the writer's transactions (at least 300 commits)" \
  test "$(grep -c '"op":"commit"' "$work/ref.ndjson")" -ge 300
assert "the range holds the big transactions (more than 10,000 rows)" \
  test "$(grep -c -v '"op":"commit"' "$work/ref.ndjson")" -gt 10000
# Only the last run of stream a had --until, so its span_start is where that run began; the
# uninterrupted run's is at --from. Everything between the span lines is the same.
assert "--output ends with the span_end line" test "$(tail -n 1 "$work/a.ndjson" | head -c 20)" == '{"op":"span_end","v"'
# Each run describes the tables again before its first change of them (cdc-ndjson(5), table):
# but for those table lines, the same bytes.
table_lines_checked "--output after 15 SIGKILLs" "$work/a.ndjson"
grep -v -e '^{"op":"span_' -e '^{"op":"table",' "$work/ref.ndjson" >"$work/ref.changes"
grep -v -e '^{"op":"span_' -e '^{"op":"table",' "$work/a.ndjson" >"$work/a.changes"
same_file "--output after 15 SIGKILLs equals the uninterrupted run byte for byte" "$work/ref.changes" "$work/a.changes"

# The state file.
state=$work/a.state
assert "the state file is mode 0600 (is $(stat -c %a "$state" 2>/dev/null))" test "$(stat -c %a "$state" 2>/dev/null)" == 600
assert "the state file is one JSON object with v 1" jq -e -s 'length == 1 and .[0].v == 1' "$state"
assert "the state's position is the end of the range" jq -e --arg p "$until_pos" '.position == $p' "$state"
assert "the state's gtid is the last transaction's" jq -e --arg g "${until_pos##*,}" '.gtid == $g' "$state"
assert "the state names the binlog file and offset" jq -e '(.file | test("^binlog\\.[0-9]+$")) and (.offset | type == "number")' "$state"
assert "the state's output_bytes is the output file's length" \
  jq -e --argjson n "$(stat -c %s "$work/a.ndjson")" '.output_bytes == $n' "$state"
assert "the state names the server" jq -e --arg s "127.0.0.1:$THROWAWAY_PORT" '.server == $s' "$state"
echo "  state: $(cat "$state")"

# With a state file, --from is ignored, with a notice on stderr.
expect "a rerun with --state and another --from exits 0" 0 \
  live --from earliest --state "$state" --output "$work/a.ndjson" --until "$until_pos"
assert "it says that --from is ignored" grep -q -e '--from' "$work/err"
grep -v -e '^{"op":"span_' -e '^{"op":"table",' "$work/a.ndjson" >"$work/a.changes"
same_file "it wrote nothing more" "$work/ref.changes" "$work/a.changes"

# Pipe mode: segments repeat at most one transaction per restart, lose none.
: >"$work/b.gtids"
dups=0 worst=0
for ((i = 1; i <= runs_b; i++)); do
  commit_gtids "$work/b.$i.ndjson" >"$work/seg.gtids"
  repeated=$(grep -c -x -F -f "$work/b.gtids" "$work/seg.gtids")
  [[ -s $work/b.gtids ]] || repeated=0
  ((repeated > worst)) && worst=$repeated
  dups=$((dups + repeated))
  cat "$work/seg.gtids" >>"$work/b.gtids"
done
echo "pipe mode: $runs_b runs, $dups transactions repeated in all, at most $worst by one run"
assert "pipe mode: no run repeats more than one transaction" test "$worst" -le 1
awk '!seen[$0]++' "$work/b.gtids" >"$work/b.unique"
commit_gtids "$work/ref.ndjson" >"$work/ref.gtids"
same_file "pipe mode: every transaction arrived, in order" "$work/ref.gtids" "$work/b.unique"

finish
