#!/usr/bin/env bash
# cdc-sync --where and --columns, the server as the oracle (issue 31): a random load moves rows
# of w.t into and out of an expression over case- and accent-insensitive text, NULLs, a DECIMAL
# and a DATETIME while cdc-sync reads the snapshot in small chunks (so that cdc-merge places
# the deltas of every range through the filter) and streams on. A keyless table k, filtered
# too, changes under the same load. Stopped, and run again to a position past the load:
#   the merged snapshot replayed, then the stream, equals the server's
#   SELECT <the chosen columns> FROM w.t WHERE EXPR, row for row, and for k the multiset of its
#   rows the expression is true on;
#   every line of w.t (table lines, r, c, u, d) carries only the chosen columns and the key;
#   a rerun with another --where or --columns is refused with exit 2, saying why and how to
#   read the tables with others; a --columns that leaves out a column --where reads is exit 2,
#   before a chunk is read.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
command -v python3 >/dev/null || { echo "skipped: python3 (the load and the replay) is not installed" && exit 77; }
require_live_mode
throwaway_start "$srv" || exit 1
source "$(dirname "$0")/where_lib.sh"
sync_bin="$tools_dir/cdc-sync"
sync() {
  MYSQL_PWD=$THROWAWAY_CDC_PASSWORD CDC_TOOLS_DIR=$tools_dir timeout -k 5 180 \
    "$sync_bin" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc "$@"
}

expr="(name = 'cafe' AND NOT (n > 7)) OR (amount BETWEEN 20.25 AND 60.75 AND at >= '2026-03-01 12:00:00') OR name IN ('Über', 'zoe ')"
keyless_expr="v BETWEEN 10 AND 30 OR w IS NULL"
root <<'SQL' >/dev/null || exit 1
CREATE DATABASE w;
CREATE DATABASE r;
CREATE TABLE w.t (id INT PRIMARY KEY, name VARCHAR(20) COLLATE utf8mb4_general_ci, amount DECIMAL(8,2),
                  at DATETIME(3), n INT) CHARACTER SET utf8mb4 ENGINE=InnoDB;
CREATE TABLE w.k (v INT, w VARCHAR(10)) ENGINE=InnoDB;
SQL
load 1 400 >"$work/initial.sql"
root <"$work/initial.sql" >/dev/null || fail "the initial load"
# The keyless table: duplicates on purpose; its load moves values across the expression.
python3 - >"$work/keyless.sql" <<'PY'
import random
rng = random.Random(7)
value = lambda: "(%s, %s)" % (rng.choice(["NULL", str(rng.randint(0, 40))]), rng.choice(["NULL", "'a'", "'b'"]))
print("INSERT INTO w.k VALUES " + ", ".join(value() for _ in range(300)) + ";")
for _ in range(300):
    kind = rng.random()
    v = rng.randint(0, 40)
    if kind < 0.4:
        print("INSERT INTO w.k VALUES %s;" % value())
    elif kind < 0.8:
        print("UPDATE w.k SET v = %d WHERE v = %d LIMIT 2;" % (rng.randint(0, 40), v))
    else:
        print("DELETE FROM w.k WHERE v = %d LIMIT 1;" % v)
PY
root <"$work/keyless.sql" >/dev/null || fail "the keyless load"

filters=(--where "w.t:$expr" --columns "w.t:name,amount,at,n" --where "w.k:$keyless_expr")
# A column the expression reads left out: refused when cdc-sync plans, before a chunk is read.
expect "--columns without a column --where reads is exit 2" 2 \
  sync --tables 'w.*' --dir "$work/bad" --where "w.t:$expr" --columns "w.t:name"
assert "  it names the column and says to add it" grep -q "leaves out w.t.n, which the --where .* add it to --columns" "$work/err"

# The load runs while cdc-sync reads the snapshot in chunks of 25 rows and streams on.
load 2 1500 >"$work/load.sql"
( root <"$work/load.sql" >/dev/null 2>"$work/load.err"; root <"$work/keyless.sql" >/dev/null 2>>"$work/load.err" ) &
loader=$!
MYSQL_PWD=$THROWAWAY_CDC_PASSWORD CDC_TOOLS_DIR=$tools_dir "$sync_bin" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc \
  --tables 'w.*' --dir "$work/dir" --chunk-size 25 -j 2 --output "$work/out.ndjson" "${filters[@]}" \
  >"$work/sync1.out" 2>"$work/sync1.err" &
syncer=$!
bg_pids+=("$syncer")
wait "$loader" || fail "the load during the sync: $(head -c 300 "$work/load.err")"
until=$(gtid_pos)
kill -TERM "$syncer" 2>/dev/null
wait "$syncer"
bg_pids=()
sync --tables 'w.*' --dir "$work/dir" --chunk-size 25 -j 2 --output "$work/out.ndjson" "${filters[@]}" \
  --until "$until" >"$work/sync2.out" 2>"$work/sync2.err"
assert "the rerun to the position past the load ends with exit 0" test "$?" == 0 || cat "$work/sync2.err"

snapshot="$work/dir/snapshot.ndjson"
assert "the snapshot has rows of w.t" grep -q '"table":"t"' "$snapshot"
assert "the stream has changes of w.t" grep -q '"op":"[cud]","v":1,"db":"w","table":"t"' "$work/out.ndjson"
# Only the chosen columns and the key, in every line of w.t.
extra=$(cat "$snapshot" "$work/out.ndjson" | jq -c 'select(.table == "t") |
  if .op == "table" then [.columns[].name] else ((.before // {}) + (.after // {}) | keys_unsorted) end' |
  sort -u | grep -v '^\["id","name","amount","at","n"\]$' | grep -v '^\[\]$')
assert "every line of w.t carries id, name, amount, at, n and nothing else (${extra:-none other})" test -z "$extra"
# Replayed onto empty copies: the server's SELECT ... WHERE, row for row (w.t) and as a
# multiset (w.k, whose rows only their whole values tell apart).
root -e "CREATE TABLE r.t LIKE w.t; CREATE TABLE r.k LIKE w.k" >/dev/null || exit 1
jq -c 'select(.table == "t")' "$snapshot" "$work/out.ndjson" >"$work/t.ndjson"
replay "$work/t.ndjson" r.t >"$work/replay_t.sql"
if root <"$work/replay_t.sql" >/dev/null 2>"$work/replay_t.err"; then
  want=$(root -N -e "SELECT * FROM w.t WHERE $expr ORDER BY id")
  assert "the filtered set is not empty" test -n "$want"
  assert "w.t: snapshot + stream replayed is the server's SELECT WHERE, row for row" \
    test "$(root -N -e "SELECT * FROM r.t ORDER BY id")" == "$want"
else
  fail "w.t: the replay failed (a c of a row already there, or a d of none): $(head -c 300 "$work/replay_t.err")"
fi
jq -c 'select(.table == "k") | select(.op == "r" or .op == "c" or .op == "u" or .op == "d")' \
  "$snapshot" "$work/out.ndjson" | python3 -c '
import json, sys
lit = lambda v: "NULL" if v is None else (str(v) if isinstance(v, int) else "'"'"'" + v + "'"'"'")
match = lambda image: " AND ".join("v <=> %s" % lit(image["v"]) if c == "v" else "w <=> %s" % lit(image["w"]) for c in ("v", "w"))
for line in sys.stdin:
    m = json.loads(line)
    if m["op"] in ("u", "d"):
        print("DELETE FROM r.k WHERE %s LIMIT 1; DO IF(ROW_COUNT() = 1, 0, (SELECT 1 UNION SELECT 2));" % match(m["before"]))
    if m["op"] in ("r", "c", "u"):
        print("INSERT INTO r.k VALUES (%s, %s);" % (lit(m["after"]["v"]), lit(m["after"]["w"])))
' >"$work/replay_k.sql"
if root <"$work/replay_k.sql" >/dev/null 2>"$work/replay_k.err"; then
  assert "w.k (no key): snapshot + stream replayed is the server's SELECT WHERE, as a multiset" \
    test "$(root -N -e "SELECT v, w FROM r.k ORDER BY v, w")" == \
    "$(root -N -e "SELECT v, w FROM w.k WHERE $keyless_expr ORDER BY v, w")"
else
  fail "w.k: the replay failed (a row deleted that was not there): $(head -c 300 "$work/replay_k.err")"
fi
ops=$(jq -r 'select(.table == "t" and (.op == "c" or .op == "u" or .op == "d")) | .op' "$work/out.ndjson" |
  sort | uniq -c | tr -s ' \n' ' ')
echo "     w.t stream lines by op: $ops"

# The settings recorded: another --where or --columns is refused, saying what to do.
expect "a rerun with another --where is exit 2" 2 \
  sync --tables 'w.*' --dir "$work/dir" --chunk-size 25 -j 2 --output "$work/out.ndjson" \
  --where "w.t:n > 1" --columns "w.t:name,amount,at,n" --where "w.k:$keyless_expr" --until "$until"
assert "  it shows the difference" grep -q "was: where=w.t:" "$work/err"
assert "  and how to read the tables with others" grep -q "sync them into another --dir" "$work/err"
expect "a rerun with another --columns is exit 2" 2 \
  sync --tables 'w.*' --dir "$work/dir" --chunk-size 25 -j 2 --output "$work/out.ndjson" \
  --where "w.t:$expr" --columns "w.t:name,amount,at,n,id" --where "w.k:$keyless_expr" --until "$until"
expect "a rerun with the same ones resumes (exit 0)" 0 \
  sync --tables 'w.*' --dir "$work/dir" --chunk-size 25 -j 2 --output "$work/out.ndjson" "${filters[@]}" \
  --until "$until"
finish
