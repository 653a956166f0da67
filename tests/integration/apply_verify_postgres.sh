#!/usr/bin/env bash
# cdc-apply --verify against a PostgreSQL target (issue 32): the copy that cdc-apply --postgres
# keeps compared with its MariaDB source while changes flow. cdc-sync --output streams a.*
# (apply_lib.sh's tables and load: most column types, a composite key with a text column, a
# keyless table with duplicates; plus a.s, keyed by a case-insensitive text, with BIT(64),
# TIME(6), DATETIME, YEAR, BIGINT UNSIGNED, FLOAT, DOUBLE, SET and latin1 text; and a.d, keyed
# by an integer, a DATETIME(3) and bytes, whose order PostgreSQL shares) and cdc-apply
# --postgres --follow applies it into schema b of a throwaway PostgreSQL, while a throttled
# random load runs; then
#   --verify, run several times during the load, finds every chunk equal: the digest of each
#   type's text is the same on both servers (no false differs), whether PostgreSQL computes the
#   chunk's digest (integer keys) or the rows are put into chunks by the source's collation
#   (text keys);
#   rows changed, deleted and inserted behind cdc-apply's back, in the target and in the source
#   with sql_log_bin=0, are reported, every one and nothing else, each with its side, exit 1
#   (and --verify-max-keys caps the keys listed);
#   a key changed only in case in the target is one key under the source's collation, whose
#   row differs;
#   cdc-apply stopped, the differing chunks are unsettled (exit 75); a target database not in
#   UTF8 is refused (exit 78).
# CDC_VERIFY_SEED replays a run. Skipped (77) where PostgreSQL is not installed.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$source_dir/scripts/lib/throwaway_postgres.sh"
pg_throwaway_bin >/dev/null || { echo "skipped: PostgreSQL is not installed (Debian's postgresql)" && exit 77; }
command -v python3 >/dev/null || { echo "skipped: python3 (the load) is not installed" && exit 77; }
command -v jq >/dev/null || { echo "skipped: jq is not installed" && exit 77; }
source "$(dirname "$0")/live_lib.sh"
source "$(dirname "$0")/apply_lib.sh"
pg="$work/pg"
trap 'exit_status=$?; live_cleanup; pg_throwaway_stop "$pg"; remove_work' EXIT
require_live_mode
throwaway_start "$srv" || exit 1
pg_throwaway_start "$pg" || exit 1
seed=${CDC_VERIFY_SEED:-$RANDOM}
echo "     seed $seed (CDC_VERIFY_SEED=$seed replays it)"
psql_copy() { pg_throwaway_psql "$pg" -A -t -F $'\t' -P null=NULL "$@"; }

apply_source_schema
root <<'SQL' || exit 1
CREATE TABLE a.hb (id INT PRIMARY KEY, n BIGINT NOT NULL);
CREATE TABLE a.d (g INT NOT NULL, at DATETIME(3) NOT NULL, bk VARBINARY(4) NOT NULL, v VARCHAR(10),
  PRIMARY KEY (g, at, bk)) ENGINE=InnoDB;
CREATE TABLE a.s (
  k VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL PRIMARY KEY,
  lt VARCHAR(30) CHARACTER SET latin1, b64 BIT(64), t6 TIME(6), dt0 DATETIME, y YEAR, ub BIGINT UNSIGNED,
  fl FLOAT, db DOUBLE, st SET('x','y'), v INT
) ENGINE=InnoDB;
SQL
apply_write_load
# a.s: keys unique under the collation (distinct words, each in a random case), every type's
# edge values; then inserts, updates and deletes of it.
cat >"$work/load_s.py" <<'PY'
import random, sys
seed, part, count = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed * 10 + part + 5)
def word(i):
    w = "%s%03d" % (rng.choice(["apfel", "Birne", "cassis", "Dattel", "eßig", "feige", "über", "zed", "ÆØ"]), i)
    return "".join(c.upper() if rng.random() < 0.4 else c for c in w)
def pick(*values): return rng.choice(values)
def row(k):
    return "('%s',%s)" % (k, ",".join([
        pick("NULL", "'café'", "'Ärger ß'", "''", "'x y'"),
        pick("NULL", "0", "b'1111111111111111111111111111111111111111111111111111111111111111'", str(rng.randint(0, 2**64 - 1))),
        pick("NULL", "'-838:59:59.999999'", "'00:00:00.000001'", "'%02d:%02d:%02d.%06d'" % (rng.randint(0, 838), rng.randint(0, 59), rng.randint(0, 59), rng.randint(0, 999999))),
        pick("NULL", "'1000-01-01 00:00:00'", "'9999-12-31 23:59:59'", "NOW()"),
        pick("NULL", "0", "1901", "2155"),
        pick("NULL", "0", "18446744073709551615", str(rng.randint(0, 2**64 - 1))),
        pick("NULL", "0", "-0.0", "1.1", "3.4e38", "-1.17549435e-38", "1e-45", str(rng.uniform(-1e7, 1e7)), "123456.7"),
        pick("NULL", "0", "0.1", "1e20", "-1e-5", "100", "1.7976931348623157e308", "5e-324", "123456789012345680000", repr(rng.uniform(-1e300, 1e300)), repr(rng.random())),
        pick("NULL", "''", "'x'", "'x,y'"),
        str(rng.randint(0, 1000)),
    ]))
out = []
if part == 0:
    out.append("INSERT INTO a.s VALUES " + ",".join(row(word(i)) for i in range(200)) + ";")
    print("\n".join(out)); sys.exit()
for n in range(count):
    i = rng.randint(0, 260)
    kind = rng.random()
    if kind < 0.4:
        out.append("REPLACE INTO a.s VALUES %s;" % row(word(i)))
    elif kind < 0.8:
        out.append("UPDATE a.s SET v = v + 1, fl = %s WHERE k LIKE '%%%03d';" % (pick("NULL", "2.5", "-7e-9"), i))
    else:
        out.append("DELETE FROM a.s WHERE k LIKE '%%%03d';" % i)
print("\n".join(out))
PY
# a.d: a composite key whose order is PostgreSQL's too (an integer, a DATETIME, bytes): its
# ranges go into PostgreSQL's WHERE.
python3 -c '
print("INSERT INTO a.d VALUES " + ",".join("(%d,\x27202%d-0%d-01 0%d:00:00.%03d\x27,X\x27%02x%02x\x27,\x27v%d\x27)"
      % (i % 3, i % 5, i % 9 + 1, i % 7, i, i % 256, 255 - i % 256, i) for i in range(150)) + ";")' >"$work/initial_d.sql"
python3 "$work/load.py" "$seed" 0 0 0 >"$work/initial.sql" && python3 "$work/load_s.py" "$seed" 0 0 >>"$work/initial.sql" &&
  cat "$work/initial_d.sql" >>"$work/initial.sql" && root <"$work/initial.sql" >/dev/null || fail "the initial load"
python3 "$work/load.py" "$seed" 1 600 0 >"$work/load.sql"
python3 "$work/load_s.py" "$seed" 1 300 >"$work/load_s.sql"

MYSQL_PWD=$THROWAWAY_CDC_PASSWORD CDC_TOOLS_DIR=$tools_dir "$sync_bin" -h 127.0.0.1 \
  -P "$THROWAWAY_PORT" -u cdc --tables 'a.*' --dir "$work/dir" --chunk-size 50 --output "$work/stream.ndjson" \
  >/dev/null 2>"$work/sync.err" &
bg_pids+=($!)
streaming() {
  [[ -f $work/stream.ndjson ]] && tail -n 1 "$work/dir/snapshot.ndjson" 2>/dev/null | grep -q '"op":"high"'
}
wait_until 60 streaming || { fail "cdc-sync did not start streaming: $(tail -3 "$work/sync.err")" && finish; }
"$apply_bin" --postgres "$PG_THROWAWAY_CONNINFO" --database b --create-tables --follow "$work/dir/snapshot.ndjson" \
  "$work/stream.ndjson" >/dev/null 2>"$work/apply.err" &
follower=$!
bg_pids+=("$follower")
(for ((n = 1; ; n++)); do root -e "REPLACE INTO a.hb VALUES (1, $n)" 2>/dev/null; sleep 0.1; done) &
bg_pids+=($!)
applied_hb() { [[ $(psql_copy -c "SELECT count(*) FROM b.hb" 2>/dev/null) == 1 ]]; }
wait_until 60 applied_hb || { fail "cdc-apply did not apply the stream: $(tail -3 "$work/apply.err")" && finish; }

cat >"$work/source.cnf" <<CNF
[client]
host=127.0.0.1
port=$THROWAWAY_PORT
user=cdc
password=$THROWAWAY_CDC_PASSWORD
CNF
verify() {
  "$apply_bin" --postgres "$PG_THROWAWAY_CONNINFO" --database b --verify --source-defaults-file "$work/source.cnf" \
    --tables 'a.*' --exclude a.hb --chunk-size 50 --verify-wait 20 "$@"
}

throttled() {
  python3 -c '
import sys, time
for line in open(sys.argv[1]):
    sys.stdout.write(line)
    if line.startswith("COMMIT") or line.startswith(sys.argv[2]):
        sys.stdout.flush()
        time.sleep(0.025)
' "$1" "$2" | root >/dev/null 2>>"$work/load.err"
}
throttled "$work/load.sql" COMMIT &
loader=$!
bg_pids+=("$loader")
throttled "$work/load_s.sql" "REPLACE" &
loader_s=$!
bg_pids+=("$loader_s")
runs=0 chunks=0 not_equal=0
while kill -0 "$loader" 2>/dev/null && ((runs < 4)); do
  status=0
  verify >"$work/verify.$runs.ndjson" 2>"$work/verify.$runs.err" || status=$?
  assert "--verify during the load (run $((runs + 1))): exit 0, got $status" test "$status" == 0 ||
    { jq -c 'select(.status != "equal")' "$work/verify.$runs.ndjson" | head -5; tail -2 "$work/verify.$runs.err"; }
  chunks=$((chunks + $(jq -s '[.[] | select(.op == "verify")] | length' "$work/verify.$runs.ndjson")))
  not_equal=$((not_equal + $(jq -s '[.[] | select(.op == "verify" and .status != "equal")] | length' \
    "$work/verify.$runs.ndjson")))
  runs=$((runs + 1))
done
echo "     $runs runs during the load, $chunks chunks compared, $not_equal not equal;" \
  "rounds of rows: $(cat "$work"/verify.*.ndjson | jq -s '[.[] | select(.op == "verify") | .rounds] | add')"
assert "--verify ran at least twice during the load" test "$runs" -ge 2
assert "every chunk compared during the load was equal" test "$not_equal" == 0
wait "$loader" || fail "the load: $(head -c 300 "$work/load.err")"
wait "$loader_s" || fail "the load of a.s: $(head -c 300 "$work/load.err")"

expect "--verify after the load: exit 0" 0 verify
assert "  a verify line per chunk, all equal, then the summary" \
  test "$(jq -r 'select(.op == "verify_summary") | "\(.chunks == .equal) \(.differs) \(.unsettled)"' "$work/out")" \
  == "true 0 0"
assert "  every table compared, a.s in several chunks" \
  test "$(jq -r 'select(.op == "verify_summary") | .tables' "$work/out") $(jq -s '[.[] | select(.op == "verify" and (.table == "s" or .table == "d"))] | length > 4' "$work/out")" == "5 true"
echo "     $(tail -1 "$work/err")"

# Behind cdc-apply's back: in the target (b, PostgreSQL), and in the source (a) without the binlog.
pick() { root -N -e "SELECT id FROM a.t ORDER BY RAND($seed) LIMIT $1, $2" | paste -sd,; }
target_updated=$(pick 0 3) target_deleted=$(pick 3 2) source_updated=$(pick 5 2) source_deleted=$(pick 7 1)
s_keys=$(root -N -e "SELECT k FROM a.s ORDER BY RAND($seed) LIMIT 3")
s_cased=$(sed -n 1p <<<"$s_keys") s_updated=$(sed -n 2p <<<"$s_keys") s_source=$(sed -n 3p <<<"$s_keys")
psql_copy >/dev/null <<SQL || fail "the changes behind its back, in the target"
UPDATE b.t SET vc = 'changed behind its back' WHERE id IN ($target_updated);
DELETE FROM b.t WHERE id IN ($target_deleted);
INSERT INTO b.t (id, vc) VALUES (900001, 'only in the target'), (900002, NULL);
UPDATE b.c SET v = COALESCE(v, '') || '!' WHERE (k1, k2) = (SELECT k1, k2 FROM b.c ORDER BY k1 COLLATE "C", k2 LIMIT 1);
INSERT INTO b.k VALUES (NULL, 'zz', NULL);
UPDATE b.s SET k = CASE WHEN k = upper(k) THEN lower(k) ELSE upper(k) END WHERE k = '$s_cased';
UPDATE b.s SET fl = 0.5, db = 1e-300 WHERE k = '$s_updated';
INSERT INTO b.s (k, v) VALUES ('only-in-target', 1);
UPDATE b.d SET v = 'changed' WHERE v = 'v10';
SQL
root <<SQL || fail "the changes behind its back, in the source"
SET SESSION sql_log_bin = 0;
UPDATE a.t SET de = IFNULL(de, 0) + 1 WHERE id IN ($source_updated);
DELETE FROM a.t WHERE id IN ($source_deleted);
INSERT INTO a.t (id, vc) VALUES (800001, 'only in the source');
UPDATE a.s SET b64 = b'101' WHERE k = '$s_source';
DELETE FROM a.d WHERE v = 'v100';
SQL
c_key=$(psql_copy -c "SELECT json_build_object('k1', k1, 'k2', k2) FROM b.c WHERE v LIKE '%!'")
s_json() { jq -cn --arg k "$1" '{k: $k}'; }
{
  for id in ${target_updated//,/ } ${source_updated//,/ }; do echo "t {\"id\":$id} true true"; done
  for id in ${target_deleted//,/ }; do echo "t {\"id\":$id} true false"; done
  for id in ${source_deleted//,/ }; do echo "t {\"id\":$id} false true"; done
  echo 't {"id":900001} false true'
  echo 't {"id":900002} false true'
  echo 't {"id":800001} true false'
  echo "c $(jq -c . <<<"$c_key") true true"
  echo 'k {"v":null,"w":"zz","f":null} false true'
  for k in "$s_cased" "$s_updated" "$s_source"; do echo "s $(s_json "$k") true true"; done
  echo 's {"k":"only-in-target"} false true'
  # a.d's rows 10 and 100 (initial_d.sql), their bytes in base64
  echo 'd {"g":1,"at":"2020-02-01 03:00:00.010","bk":"CvU="} true true'
  echo 'd {"g":1,"at":"2020-02-01 02:00:00.100","bk":"ZJs="} false true'
} | sort >"$work/expected_keys"

expect "--verify after the changes behind its back: exit 1 (differs)" 1 verify --verify-max-keys 1000
jq -r 'select(.op == "verify" and .status == "differs") | .table as $t | .keys[] |
  "\($t) \(.key | tojson) \(.source) \(.target)"' "$work/out" | sort >"$work/found_keys"
assert "  it reports exactly the rows changed behind its back ($(wc -l <"$work/expected_keys")), each with its side" \
  diff "$work/expected_keys" "$work/found_keys"
cmp -s "$work/expected_keys" "$work/found_keys" || diff "$work/expected_keys" "$work/found_keys" | head -20
assert "  no chunk unsettled, and the summary counts the keys" \
  test "$(jq -r 'select(.op == "verify_summary") | "\(.unsettled) \(.keys_total)"' "$work/out")" \
  == "0 $(wc -l <"$work/expected_keys")"
assert "  the other chunks are equal" \
  test "$(jq -s '[.[] | select(.op == "verify" and .status == "equal")] | length' "$work/out")" -gt 0
echo "     $(tail -1 "$work/err")"

differing=$(jq 'select(.op == "verify_summary") | .differs' "$work/out")

expect "--verify-max-keys 1: exit 1" 1 verify --verify-max-keys 1
assert "  at most one key listed per chunk, all counted" \
  test "$(jq -s '[.[] | select(.op == "verify" and .status == "differs") | (.keys | length) <= 1] | all' \
    "$work/out") $(jq 'select(.op == "verify_summary") | .keys_total' "$work/out")" \
  == "true $(wc -l <"$work/expected_keys")"

# cdc-apply stopped while the source goes on (the heartbeat): the chunks that differ cannot be
# told from ones the target is behind on: unsettled (exit 75), the others equal. (As many as
# before only when cdc-plan splits the tables as it did then: the rows deleted and inserted
# move its boundaries.)
kill -TERM "$follower" && wait "$follower"
expect "cdc-apply stopped: exit 75 (unsettled)" 75 verify --verify-wait 3
assert "  no chunk differs; those not equal ($differing before) are unsettled" \
  test "$(jq -r 'select(.op == "verify_summary") | "\(.differs) \(.unsettled > 0) \(.chunks - .equal - .unsettled)"' \
    "$work/out")" == "0 true 0"

# A target database not in UTF8 is refused (exit 78): its text would not hash as UTF-8 does.
psql_copy -d postgres -c "CREATE DATABASE latin OWNER cdc ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0" \
  >/dev/null || fail "a LATIN1 database"
expect "a target database in LATIN1: exit 78" 78 "$apply_bin" --postgres "${PG_THROWAWAY_CONNINFO/dbname=copy/dbname=latin}" \
  --database b --verify --source-defaults-file "$work/source.cnf" --tables 'a.*'
assert "  it says why" grep -q "encoding is LATIN1, not UTF8" "$work/err"

for pid in "${bg_pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
for pid in "${bg_pids[@]}"; do wait "$pid" 2>/dev/null; done
bg_pids=()
finish
