#!/usr/bin/env bash
# Issue 13's proof: what cdc-sync writes with --format debezium|canal|maxwell --flink is read by
# Flink's debezium-json, canal-json and maxwell-json decoders into the source table. For each
# format, two tables (the int and composite kinds of tests/integration/proof_lib.sh: INT,
# VARCHAR, DECIMAL, DATETIME(3), VARBINARY, TIMESTAMP(6); a VARBINARY and BIGINT UNSIGNED key,
# utf8mb4 text, DOUBLE) are snapshot and streamed by cdc-sync under the proof's random load;
# tests/tools/flink_decode.py applies the decoder's rules (FORMATS
# §3) with the Flink columns a user declares for the MySQL types, replays the +I/-U/+U/-D rows
# into a table keyed by the primary key (strictly: a wrong before image, from Canal's or
# Maxwell's old, fails), and the result must equal the source read through the same parsing.
# Then masking: a row's hashed column reads the same in the snapshot and in the stream, in
# ndjson and debezium, and in cdc-merge's output of the same chunks, and equals Debezium's
# column.mask.hash.v2; a masked key column is refused unless --mask-keys.
#
# The run: cdc-sync in initial mode on standard output (snapshot, then stream) while the load
# runs; SIGTERM once the load is over and the stream has started (it stops cleanly after a
# transaction, state saved); then a second run with --until now appends the rest.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
source "$(dirname "$0")/proof_lib.sh"

decoder=(python3 "$source_dir/tests/tools/flink_decode.py")
sync_tool=$tools_dir/cdc-sync
export CDC_TOOLS_DIR=$tools_dir
rows_initial=${FLINK_PROOF_ROWS:-1200}
load_seconds=${FLINK_PROOF_LOAD_SECONDS:-2}
# Transactions a second per table: the stream then has a few thousand to catch up on, which keeps
# the test near 30 s on a busy machine.
load_rate=${FLINK_PROOF_LOAD_RATE:-400}
proof_require_tools
# Until the formats are wired into cdc-sync (issue 13's Debezium work) there is nothing to prove.
if ! "$sync_tool" --help 2>/dev/null | grep -- '--format' >/dev/null; then
  echo "skipped: cdc-sync has no --format in this build"
  exit 77
fi
throwaway_start "$srv" || exit 1
connection=(-h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc)

sync_as() { MYSQL_PWD=$THROWAWAY_CDC_PASSWORD timeout -k 5 120 "$sync_tool" "${connection[@]}" "$@"; }

# primary_key DB.T: the key's columns, comma-separated, in key order.
primary_key() {
  root -N -e "SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) FROM information_schema.STATISTICS
              WHERE TABLE_SCHEMA = '${1%%.*}' AND TABLE_NAME = '${1#*.}' AND INDEX_NAME = 'PRIMARY'"
}

# sync_under_load FORMAT OUT TABLES... -- FLAGS...: cdc-sync of TABLES into OUT while each runs its
# kind's load (the kind is the table name's first part after "src."), as described above.
sync_under_load() {
  local format=$1 out=$2
  shift 2
  local tables=() table
  while [[ $1 != -- ]]; do tables+=("$1"); shift; done
  shift
  local dir="$work/sync_$format" list
  list=$(IFS=,; echo "${tables[*]}")
  for table in "${tables[@]}"; do
    local kind=${table#src.}
    kind=${kind%%_*}
    proof_create "$kind" "$table" "$rows_initial" 41 || return 1
    proof_load_bg "$kind" "$table" 41 "$load_seconds" --max-rate "$load_rate"
  done
  sleep 0.3
  MYSQL_PWD=$THROWAWAY_CDC_PASSWORD setsid "$sync_tool" "${connection[@]}" --tables "$list" --dir "$dir" \
    --mode initial -j 2 --chunk-size 100 --no-progress "$@" >"$out" 2>"$work/sync_$format.err" &
  local sync_pid=$!
  bg_pids+=("$sync_pid")
  proof_wait_load || return 1
  local waited=0
  until grep -q 'phase stream_start' "$work/sync_$format.err" || ((waited > 600)); do
    sleep 0.1
    waited=$((waited + 1))
    kill -0 "$sync_pid" 2>/dev/null || break
  done
  kill -TERM "$sync_pid" 2>/dev/null
  local status=0
  wait "$sync_pid" || status=$?
  if ((status != 0)); then
    echo "  cdc-sync --format $format under load: exit $status"
    sed 's/^/    /' "$work/sync_$format.err" | tail -5
    return 1
  fi
  sync_as --tables "$list" --dir "$dir" --mode initial -j 2 --chunk-size 100 --no-progress --until now "$@" \
    >>"$out" \
    2>"$work/sync_${format}_rerun.err" || status=$?
  if ((status != 0)); then
    echo "  cdc-sync --format $format --until now: exit $status"
    sed 's/^/    /' "$work/sync_${format}_rerun.err" | tail -5
    return 1
  fi
}

# replay_and_compare FORMAT OUT DB.T PREFIX_FIELDS [TOPIC]: the Flink replay of DB.T's messages in OUT
# (each after PREFIX_FIELDS TAB-separated fields: --topic, --key) against DB.T.
replay_and_compare() {
  local format=$1 out=$2 table=$3 prefix_fields=$4 topic=${5:-}
  local columns key
  columns=$("${decoder[@]}" declare --format "$format" --socket "$THROWAWAY_SOCKET" --table "$table") || return 1
  key=$(primary_key "$table")
  local topic_args=()
  [[ -n $topic ]] && topic_args=(--topic "$topic")
  if ! "${decoder[@]}" replay --format "$format" --columns "$columns" --key "$key" --table "$table" \
    --prefix-fields "$prefix_fields" "${topic_args[@]}" "$out" >"$work/replayed" 2>"$work/replay.err"; then
    fail "$format-json cannot read $table's messages: $(head -c 600 "$work/replay.err")"
    return 1
  fi
  "${decoder[@]}" source --socket "$THROWAWAY_SOCKET" --table "$table" --columns "$columns" >"$work/source" || return 1
  if cmp -s "$work/replayed" "$work/source"; then
    passes=$((passes + 1))
    echo "ok   $format-json replays $table as the source ($(wc -l <"$work/source") rows; $(cat "$work/replay.err"))"
  else
    fail "$format-json replay of $table differs from the source ($columns):"
    diff "$work/replayed" "$work/source" | head -8 | sed 's/^/    /'
  fi
}

# Kafka lines (--key --topic) for Debezium and Maxwell; Canal's messages bare (without --key, one
# message per rows event unless --flink makes it one per row, which Flink's canal-json needs).
for format in debezium canal maxwell; do
  flags=(--format "$format" --flink --key --topic)
  prefix_fields=2
  [[ $format == canal ]] && flags=(--format canal --flink) prefix_fields=0
  echo "# ${flags[*]}, under load"
  out="$work/$format.out"
  int_table="src.int_$format" composite_table="src.composite_$format"
  if ! sync_under_load "$format" "$out" "$int_table" "$composite_table" -- "${flags[@]}"; then
    fail "cdc-sync ${flags[*]}"
    continue
  fi
  for table in "$int_table" "$composite_table"; do
    topic=
    [[ $format == debezium ]] && topic="cdc.$table"  # topic.prefix "cdc": <prefix>.<db>.<table>
    replay_and_compare "$format" "$out" "$table" "$prefix_fields" "$topic"
  done
done

# Masking, snapshot against stream: src.masked's row 1 read by the snapshot (an "r" line) and
# changed afterwards (a "u" line) carries one hash in both, Debezium's for the same salt.
echo "# --mask: the snapshot and the stream hash a value alike"
root -e "CREATE DATABASE IF NOT EXISTS src; DROP TABLE IF EXISTS src.masked;
         CREATE TABLE src.masked (id INT PRIMARY KEY, email VARCHAR(40) NOT NULL, n INT NOT NULL);
         INSERT INTO src.masked VALUES (1, 'alice@example.com', 0), (2, 'bob@example.com', 0)"
want=$(printf '%s' 'saltalice@example.com' | sha256sum | cut -c1-40)
for format in ndjson debezium; do
  dir="$work/masked_$format" out="$work/masked_$format.out"
  mask=(--mask 'src.masked.email=hash:SHA-256:salt' --mask 'src.masked.n=drop')
  [[ $format == debezium ]] && mask+=(--format debezium)
  sync_as --tables src.masked --dir "$dir" --mode initial --no-progress --until now "${mask[@]}" >"$out" \
    2>"$work/masked.err" || echo "  cdc-sync (snapshot): exit $?: $(tail -2 "$work/masked.err")"
  root -e "UPDATE src.masked SET n = n + 1 WHERE id = 1"
  sync_as --tables src.masked --dir "$dir" --mode initial --no-progress --until now "${mask[@]}" >>"$out" \
    2>"$work/masked.err" || echo "  cdc-sync (stream): exit $?: $(tail -2 "$work/masked.err")"
  # Every email of row 1 in the output: the snapshot's, then the stream's before and after.
  emails=$(jq -r 'select(.op == "r" or .op == "u")
                  | [.before, .after] | .[] | select(. != null and .id == 1) | .email' "$out" | sort | uniq -c)
  assert "$format: row 1's email is hashed alike in the snapshot and the stream ($(echo $emails))" \
    test "$(echo $emails)" = "3 $want"
  assert "$format: the dropped column is in no line" test "$(grep -c '"n":' "$out")" = 0
  assert "$format: no clear text leaves" test "$(grep -c 'alice' "$out")" = 0
done
# cdc-merge's output stage: the same chunks and deltas merged again by hand, masked alike.
merged=$("$tools_dir/cdc-merge" "$work/masked_ndjson/chunks/"*.ndjson --deltas "$work/masked_ndjson/deltas.ndjson" \
  --mask 'src.masked.email=hash:SHA-256:salt' | jq -r 'select(.op == "r" and .after.id == 1) | .after.email')
assert "cdc-merge --mask: row 1's email hashed as in the sync ($merged)" test "$merged" = "$want"

# A rule on a key column is refused at the table line, naming it, unless --mask-keys.
root -e "DROP TABLE IF EXISTS src.masked_key; CREATE TABLE src.masked_key (code VARCHAR(10) PRIMARY KEY, n INT);
         INSERT INTO src.masked_key VALUES ('k1', 1)"
expect "--mask on a key column is refused (exit 78)" 78 sync_as --tables src.masked_key --dir "$work/masked_key" \
  --mode initial --no-progress --until now --mask 'src.masked_key.code=hash:MD5:s'
assert "  ... naming the column and --mask-keys" grep -q 'key column src.masked_key.code.*--mask-keys' "$work/err"
expect "--mask-keys allows it" 0 sync_as --tables src.masked_key --dir "$work/masked_keys" --mode initial \
  --no-progress --until now --mask 'src.masked_key.code=hash:MD5:s' --mask-keys
assert "  ... and the key is hashed, cut to VARCHAR(10)" \
  grep -q "\"key\":{\"code\":\"$(printf sk1 | md5sum | cut -c1-10)\"}" "$work/out"

finish
