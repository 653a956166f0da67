#!/usr/bin/env bash
# cdc-plan --where and cdc-snapshot (issue 31), against a throwaway MariaDB of its own: the
# filter goes into every chunk line of its table, and the chunks read together hold exactly the
# rows the server's own SELECT ... WHERE EXPR returns (the server is the oracle), for filters of
# each kind (text under a case- and accent-insensitive collation, non-ASCII literals, NULLs,
# DECIMAL, DATETIME, IN, BETWEEN, NOT, OR); other tables' chunk lines have none. Bad input: an
# expression outside the subset, an unknown column, a literal that does not fit, a --where that
# selects no planned table, two for one table (exit 2, naming the character or the table); a
# chunk line whose "where" does not bind (cdc-snapshot exit 65); filtered chunks given to
# cdc-merge (exit 1, not in this version).
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

# Filtered chunks are not merged in this version: cdc-merge says so (exit 1).
mkdir -p "$work/chunks"
"$snapshot_tool" "${connection[@]}" --output-dir "$work/chunks" "$work/plan" 2>"$work/err" || fail "cdc-snapshot: $(cat "$work/err")"
: >"$work/deltas"
"$tools_dir/cdc-merge" "$work"/chunks/*.ndjson --deltas "$work/deltas" >"$work/merged" 2>"$work/merge.err"
status=$?
assert "cdc-merge of filtered chunks: exit 1 ($status)" test "$status" == 1
assert "... saying why" grep -q "was read with --where 'id = 1': cdc-merge does not merge filtered chunks" "$work/merge.err"
finish
