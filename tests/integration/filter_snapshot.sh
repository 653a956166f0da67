#!/usr/bin/env bash
# cdc-plan --where and cdc-snapshot (issue 31), against a throwaway MariaDB of its own: the
# filter goes into every chunk line of its table, and the chunks read together hold exactly the
# rows the server's own SELECT ... WHERE EXPR returns (the server is the oracle), for filters of
# each kind (text under a case- and accent-insensitive collation, non-ASCII literals, NULLs,
# DECIMAL, DATETIME, IN, BETWEEN, NOT, OR); other tables' chunk lines have none. Bad input: an
# expression outside the subset, an unknown column, a literal that does not fit, a --where that
# selects no planned table, two for one table (exit 2, naming the character or the table); a
# chunk line whose "where" does not bind (cdc-snapshot exit 65). Filtered chunks read at
# different moments under updates that move rows into and out of the filter merge with their
# deltas into exactly the server's SELECT ... WHERE at H*; chunks of two filters do not.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
throwaway_start "$srv" || exit 1
plan_tool=$tools_dir/cdc-plan
snapshot_tool=$tools_dir/cdc-snapshot
connection=(-h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc)
export MYSQL_PWD=$THROWAWAY_CDC_PASSWORD

root -e "CREATE DATABASE w;
  CREATE TABLE w.t (id INT PRIMARY KEY, status VARCHAR(12) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci,
                    amount DECIMAL(8,2), created DATETIME(3), note VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin);
  CREATE TABLE w.other (id INT PRIMARY KEY, v INT);
  INSERT INTO w.other SELECT seq, seq FROM w.seq_1_to_50;
  INSERT INTO w.t SELECT seq,
    ELT(1 + seq % 6, 'open', 'OPEN', 'Ärger', 'arger', 'closed', NULL),
    IF(seq % 11 = 0, NULL, (seq * 37 % 1000) / 4),
    IF(seq % 13 = 0, NULL, '2026-01-01 00:00:00' + INTERVAL (seq * 7919 % 100000) MINUTE),
    ELT(1 + seq % 4, 'x', 'X', 'ß', 'ss')
    FROM w.seq_1_to_3000;" || exit 1

# the ids of the r lines of FILE, sorted
ids_of() { jq -r 'select(.op == "r") | .after.id' "$1" | sort -n; }

check_filter() {
  local expression=$1
  local name="--where '$expression'"
  "$plan_tool" "${connection[@]}" --tables 'w.*' --chunk-size 200 --where "w.t:$expression" >"$work/plan" 2>"$work/plan.err"
  local status=$?
  if ((status != 0)); then
    fail "$name: cdc-plan exited $status: $(head -c 300 "$work/plan.err")"
    return
  fi
  "$snapshot_tool" "${connection[@]}" "$work/plan" >"$work/rows" 2>"$work/snapshot.err" || {
    fail "$name: cdc-snapshot failed: $(head -c 300 "$work/snapshot.err")"
    return
  }
  jq -r 'select(.table == "t") | .where' "$work/plan" | sort -u >"$work/wheres"
  assert "$name: every chunk line of w.t carries it" test "$(cat "$work/wheres")" == "$expression"
  assert "$name: no chunk line of w.other does" test \
    "$(jq -r 'select(.table == "other") | has("where")' "$work/plan" | sort -u)" == false
  jq -r 'select(.op == "r" and .table == "t") | .after.id' "$work/rows" | sort -n >"$work/got"
  root -N -e "SET time_zone = '+00:00'; SELECT id FROM w.t WHERE $expression ORDER BY id" >"$work/want"
  if cmp -s "$work/got" "$work/want"; then
    passes=$((passes + 1))
    echo "ok   $name: the $(wc -l <"$work/want") rows the server selects, no other"
  else
    fail "$name: $(wc -l <"$work/got") rows, the server selects $(wc -l <"$work/want"); first difference: $(diff "$work/want" "$work/got" | sed -n 2p)"
  fi
  assert "$name: w.other whole" test "$(jq -r 'select(.op == "r" and .table == "other")' "$work/rows" | jq -s length)" == 50
}

check_filter "status = 'open'"
check_filter "status = 'ARGER' OR note = 'ss'"
check_filter "status IS NULL OR amount IS NULL"
check_filter "amount BETWEEN 10.5 AND 100 AND NOT status IN ('closed', NULL)"
check_filter "amount BETWEEN 10.5 AND 100 AND status NOT IN ('closed', 'open')"
check_filter "created >= '2026-02-01' AND created < '2026-02-15 12:00:00.5'"
check_filter "note <> 'X' AND (amount > 200 OR id <= 10)"
check_filter "id IN (1, 2, 3, 2999, 4000)"

# Bad input: exit 2 with the place named, nothing on stdout.
bad_plan() {
  local want=$1 label=$2
  shift 2
  "$plan_tool" "${connection[@]}" --tables 'w.*' "$@" >"$work/bad.out" 2>"$work/bad.err"
  local status=$?
  assert "$label: exit 2 ($status)" test "$status" == 2
  assert "$label: says '$want'" grep -q -F -- "$want" "$work/bad.err"
  assert "$label: writes nothing" test ! -s "$work/bad.out"
}
bad_plan "--where 'w.t:status LIKE 'o%'': at character 8: expected an operator" "outside the subset" \
  --where "w.t:status LIKE 'o%'"
bad_plan "no column \`nope\` in the table" "an unknown column" --where "w.t:nope = 1"
bad_plan "column \`amount\` is decimal(8,2): compare it with a number, without quotes" "a literal that does not fit" \
  --where "w.t:amount = '5'"
bad_plan "--where 'w.missing:id = 1' selects none of the planned tables" "a table not planned" \
  --where "w.missing:id = 1"
bad_plan "w.t is selected by two --where options" "two for one table" --where "w.t:id = 1" --where "w.*:id = 2"
bad_plan "expected DB.TABLE:EXPR" "no table part" --where "id = 1"

# A chunk line whose "where" does not fit the table: cdc-snapshot refuses it (exit 65).
"$plan_tool" "${connection[@]}" --tables w.t --chunk-size 100000 --where "w.t:id = 1" >"$work/plan" || exit 1
jq -c '.where = "nope = 1"' "$work/plan" >"$work/plan.bad"
"$snapshot_tool" "${connection[@]}" "$work/plan.bad" >"$work/out" 2>"$work/err"
status=$?
assert "a chunk line whose where names no column: cdc-snapshot exit 65 ($status)" test "$status" == 65
assert "... naming the chunk and the column" grep -q 'w.t chunk 0/1: "where": at character 1: no column `nope`' "$work/err"

# Filtered chunks merged: 15 chunks read one at a time while updates move rows into and out of
# the filter (and inserts and deletes come), the load stopped before the last two, so that the
# highest high H* sees the table as it stays; the merged snapshot at H* must then be exactly the
# server's SELECT ... WHERE, value for value.
root -e "CREATE TABLE w.m (id INT PRIMARY KEY, status VARCHAR(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci,
                           amount DECIMAL(8,2));
         INSERT INTO w.m SELECT seq, ELT(1 + seq % 3, 'open', 'OPEN', 'closed'), seq % 1000 FROM w.seq_1_to_3000;" || exit 1
merge_where="(status = 'open' AND amount < 500) OR amount IS NULL"
"$plan_tool" "${connection[@]}" --tables w.m --chunk-size 200 --where "w.m:$merge_where" >"$work/m.plan" || exit 1
(
  RANDOM=7
  while [[ ! -e $work/m.stop ]]; do
    id=$((RANDOM % 3200 + 1))
    case $((RANDOM % 5)) in
      0 | 1) sql="UPDATE w.m SET status = ELT(1 + FLOOR(RAND() * 3), 'open', 'Open', 'closed') WHERE id = $id" ;;
      2) sql="UPDATE w.m SET amount = IF(RAND() < 0.1, NULL, FLOOR(RAND() * 1000)) WHERE id = $id" ;;
      3) sql="INSERT IGNORE INTO w.m VALUES ($id, 'open', $((RANDOM % 1000)))" ;;
      4) sql="DELETE FROM w.m WHERE id = $id" ;;
    esac
    root -e "$sql" 2>/dev/null
  done
) &
load=$!
bg_pids+=("$load")
mkdir -p "$work/m.chunks"
n=0
while IFS= read -r line; do
  n=$((n + 1))
  ((n == 14)) && { : >"$work/m.stop"; wait "$load"; }
  printf '%s\n' "$line" >"$work/m.chunk"
  "$snapshot_tool" "${connection[@]}" --output-dir "$work/m.chunks" "$work/m.chunk" 2>>"$work/m.err" || fail "cdc-snapshot: $(tail -2 "$work/m.err")"
  sleep 0.2
done <"$work/m.plan"
read -r span_from span_until < <("$tools_dir/cdc-merge" --span "$work"/m.chunks/*.ndjson)
"$stream" "${connection[@]}" --from "$span_from" --until "$span_until" --tables w.m >"$work/m.deltas" 2>>"$work/m.err" ||
  fail "the deltas: $(tail -2 "$work/m.err")"
"$tools_dir/cdc-merge" "$work"/m.chunks/*.ndjson --deltas "$work/m.deltas" >"$work/m.merged" 2>"$work/m.merge.err"
status=$?
assert "cdc-merge of filtered chunks with their deltas: exit 0 ($status)" test "$status" == 0 || cat "$work/m.merge.err"
changes=$(grep -c '"op":"[cud]"' "$work/m.deltas")
lows=$(jq -r 'select(.op == "low") | .position' "$work"/m.chunks/*.ndjson | sort -u | wc -l)
jq -r 'select(.op == "r") | [.after.id, .after.status, (.after.amount // "NULL")] | @tsv' "$work/m.merged" | sort -n >"$work/m.got"
root -N -e "SELECT id, status, IFNULL(amount, 'NULL') FROM w.m WHERE $merge_where ORDER BY id" >"$work/m.want"
if cmp -s "$work/m.got" "$work/m.want"; then
  passes=$((passes + 1))
  echo "ok   the merged snapshot of 15 filtered chunks ($lows lows, $changes changes merged) is the server's SELECT ... WHERE $merge_where: $(wc -l <"$work/m.want") rows, value for value"
else
  fail "the merged filtered snapshot differs from the server's SELECT ($(wc -l <"$work/m.got") rows, want $(wc -l <"$work/m.want")): $(diff "$work/m.want" "$work/m.got" | head -4 | tr '\n' ' ')"
fi
# Chunks of one table read with different filters do not merge (exit 65).
jq -c 'if .op == "low" then .where = "id > 0" else . end' "$work/m.chunks/w.m.0.ndjson" >"$work/m.other.ndjson"
"$tools_dir/cdc-merge" "$work/m.other.ndjson" "$work"/m.chunks/w.m.{1,2,3,4,5,6,7,8,9,10,11,12,13,14}.ndjson \
  --deltas "$work/m.deltas" >/dev/null 2>"$work/m.mixed.err"
status=$?
assert "chunks read with different --where: cdc-merge exit 65 ($status)" test "$status" == 65
assert "... saying so" grep -q "w.m chunk 0/15 at .* with --where 'id > 0': the chunks come from different plans" "$work/m.mixed.err"
finish
