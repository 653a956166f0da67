# Shared by the cdc-apply tests (apply_mariadb.sh, apply_postgres.sh, apply_verify.sh,
# apply_verify_postgres.sh): the source tables, a random load over most column types (a keyed
# table a.t, a composite key a.c, a keyless table a.k with duplicates), and cdc-sync --output
# reading them under that load.
# Not a test itself.
# Usage, after lib.sh and live_lib.sh, with the throwaway MariaDB started:
#   source "$(dirname "$0")/apply_lib.sh"
#   apply_make_source SEED ZERO_DATES    ZERO_DATES 1: the load writes MariaDB's zero dates too
# It sets apply_bin, sync_bin, inputs (the snapshot, then the stream file), changes (the
# stream's row changes) and last (the stream's last commit position).
#   apply_interrupted_runs SEED          the runs interrupted at random points (below)

apply_bin="$tools_dir/cdc-apply"
sync_bin="$tools_dir/cdc-sync"
sync() {
  MYSQL_PWD=$THROWAWAY_CDC_PASSWORD CDC_TOOLS_DIR=$tools_dir timeout -k 5 180 \
    "$sync_bin" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc "$@"
}

apply_source_schema() {
  root <<'SQL' >/dev/null || exit 1
CREATE DATABASE a;
CREATE TABLE a.t (
  id INT NOT NULL PRIMARY KEY,
  ti TINYINT, su SMALLINT UNSIGNED, mi MEDIUMINT, bu BIGINT UNSIGNED, bs BIGINT,
  de DECIMAL(20,6), fl FLOAT, do DOUBLE, bi BIT(10), ye YEAR,
  da DATE, tm TIME(3), dt DATETIME(6), ts TIMESTAMP(3) NULL,
  ch CHAR(5), vc VARCHAR(40), tx TEXT, en ENUM('s','m','l'), st SET('a','b','c'),
  bn BINARY(4), vb VARBINARY(16), bl BLOB, js JSON, i6 INET6, uu UUID, gm POINT NULL
) CHARACTER SET utf8mb4 ENGINE=InnoDB;
CREATE TABLE a.c (k1 VARCHAR(10) NOT NULL, k2 INT NOT NULL, v VARCHAR(20), PRIMARY KEY (k1, k2)) ENGINE=InnoDB;
CREATE TABLE a.k (v INT, w VARCHAR(10), f FLOAT) ENGINE=InnoDB;
SQL
}

# apply_write_load: $work/load.py SEED PART COUNT ZERO_DATES prints the load's SQL: part 0 the
# initial rows, part N COUNT transactions of 1 to 5 statements over every type's edge values.
apply_write_load() {
  cat >"$work/load.py" <<'PY'
import random, sys
seed, part, count, zero = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
rng = random.Random(seed * 10 + part)
def q(s): return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"
def pick(*values): return rng.choice(values)
def zero_date(value, other): return value if zero else other
def row(i):
    return "(%d,%s)" % (i, ",".join([
        pick("NULL", "-128", "127", "0", str(rng.randint(-128, 127))),
        pick("NULL", "0", "65535", str(rng.randint(0, 65535))),
        pick("NULL", "-8388608", "8388607", str(rng.randint(-9999, 9999))),
        pick("NULL", "0", "18446744073709551615", str(rng.randint(0, 2**64 - 1))),
        pick("NULL", "-9223372036854775808", "9223372036854775807", str(rng.randint(-2**63, 2**63 - 1))),
        pick("NULL", "'-99999999999999.999999'", "'0.000001'", "'%d.%06d'" % (rng.randint(-10**9, 10**9), rng.randint(0, 999999))),
        pick("NULL", "1.1", "-3.4e38", "1e-38", str(rng.uniform(-1e6, 1e6))),
        pick("NULL", "0.1", "1.7976931348623157e308", "-5e-324", repr(rng.uniform(-1e300, 1e300))),
        pick("NULL", "b'1111111111'", "0", str(rng.randint(0, 1023))),
        pick("NULL", "0", "1901", "2155", str(rng.randint(1901, 2155))),
        pick("NULL", zero_date("'0000-00-00'", "'0001-01-01'"), "'1000-01-01'", "'9999-12-31'", "'2024-02-29'"),
        pick("NULL", "'-838:59:59.000'", "'838:59:59.999'", "'00:00:00'", "'%02d:%02d:%02d.%03d'" % (rng.randint(0, 99), rng.randint(0, 59), rng.randint(0, 59), rng.randint(0, 999))),
        pick("NULL", zero_date("'0000-00-00 00:00:00'", "'0001-01-01 00:00:00'"), "'1000-01-01 00:00:00.000001'", "'9999-12-31 23:59:59.999999'", "NOW(6)"),
        pick("NULL", "'1970-01-01 03:00:01.000'", "'2038-01-19 03:14:07.999'", "CURRENT_TIMESTAMP(3)", zero_date("'0000-00-00 00:00:00'", "'1970-01-02 00:00:00.001'")),
        pick("NULL", "''", "'a'", "'abcde'", "'é☃'"),
        pick("NULL", "''", q("it's a \\ back\\slash"), q("tab\tnew\nline"), q("😀 emoji %d" % rng.randint(0, 99))),
        pick("NULL", q("x" * rng.randint(0, 300)), q("quote ' and \" and ` and ;")),
        pick("NULL", "'s'", "'m'", "'l'"),
        pick("NULL", "''", "'a'", "'a,c'", "'a,b,c'"),
        pick("NULL", "X'00000000'", "X'FFFFFFFF'", "X'0001'", "X'%08x'" % rng.randint(0, 2**32 - 1)),
        pick("NULL", "X''", "X'00'", "X'%s'" % "".join("%02x" % rng.randint(0, 255) for _ in range(rng.randint(1, 16)))),
        pick("NULL", "X''", "X'%s'" % "".join("%02x" % rng.randint(0, 255) for _ in range(rng.randint(1, 200)))),
        pick("NULL", "'{}'", "'[1,2.5,\"x\"]'", "'{\"a\": {\"b\": null}, \"q\": \"it''s\"}'"),
        pick("NULL", "'::'", "'::1'", "'2001:db8::1'", "'::ffff:10.0.0.1'"),
        pick("NULL", "'123e4567-e89b-12d3-a456-426614174000'", "UUID()"),
        pick("NULL", "ST_GeomFromText('POINT(1 2)')", "ST_GeomFromText('POINT(-0.5 1e10)')"),
    ]))
out = ["SET time_zone = '+02:00';"]
if part == 0:
    for i in range(1, 301, 20):
        out.append("INSERT INTO a.t VALUES " + ",".join(row(j) for j in range(i, i + 20)) + ";")
    out.append("INSERT INTO a.c VALUES " + ",".join("('%s',%d,'v%d')" % (pick("x", "y", "z"), j, j) for j in range(100)) + ";")
    out.append("INSERT INTO a.k VALUES " + ",".join("(%s,%s,%s)" % (pick("NULL", "1", "2"), pick("NULL", "'a'"), pick("NULL", "1.1", "2.5")) for _ in range(100)) + ";")
    print("\n".join(out)); sys.exit()
next_id = 1000 * part
for _ in range(count):
    out.append("BEGIN;")
    for _ in range(rng.randint(1, 5)):
        kind = rng.random()
        i = rng.randint(1, 320)
        if kind < 0.25:
            next_id += 1
            out.append("INSERT INTO a.t VALUES %s;" % row(next_id))
        elif kind < 0.45:
            out.append("REPLACE INTO a.t VALUES %s;" % row(i))
        elif kind < 0.55:
            out.append("UPDATE IGNORE a.t SET vc = %s, de = de + 1, id = id + 100000 WHERE id = %d;" % (q("moved %d" % i), i))
        elif kind < 0.65:
            out.append("DELETE FROM a.t WHERE id = %d;" % i)
        elif kind < 0.8:
            out.append("UPDATE IGNORE a.c SET v = '%s', k2 = k2 + %d WHERE k2 = %d;" % (pick("p", "q", "r"), rng.choice([0, 1000]), rng.randint(0, 120)))
        elif kind < 0.9:
            out.append("INSERT INTO a.k VALUES (%s,%s,%s);" % (pick("NULL", "1", "2"), pick("NULL", "'a'", "'b'"), pick("NULL", "1.1", "2.5")))
        else:
            out.append("UPDATE a.k SET w = %s WHERE v <=> %s LIMIT 1;" % (pick("NULL", "'c'"), pick("NULL", "1", "2")))
    out.append("COMMIT;")
print("\n".join(out))
PY
}

apply_make_source() {
  local seed=$1 zero_dates=$2 loader syncer until
  apply_source_schema
  apply_write_load
  python3 "$work/load.py" "$seed" 0 0 "$zero_dates" >"$work/initial.sql" && root <"$work/initial.sql" >/dev/null ||
    fail "the initial load"
  python3 "$work/load.py" "$seed" 1 1500 "$zero_dates" >"$work/load.sql"

  # The load runs while cdc-sync reads the snapshot and streams on; then a bounded rerun reaches
  # the end of the load.
  root <"$work/load.sql" >/dev/null 2>"$work/load.err" &
  loader=$!
  MYSQL_PWD=$THROWAWAY_CDC_PASSWORD CDC_TOOLS_DIR=$tools_dir "$sync_bin" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc \
    --tables 'a.*' --dir "$work/dir" --chunk-size 50 --output "$work/stream.ndjson" >/dev/null 2>"$work/sync1.err" &
  syncer=$!
  bg_pids+=("$syncer")
  wait "$loader" || fail "the load: $(head -c 300 "$work/load.err")"
  until=$(gtid_pos)
  kill -TERM "$syncer" 2>/dev/null
  wait "$syncer"
  bg_pids=()
  sync --tables 'a.*' --dir "$work/dir" --chunk-size 50 --output "$work/stream.ndjson" --until "$until" \
    >/dev/null 2>"$work/sync2.err"
  assert "cdc-sync reaches the end of the load (exit 0)" test "$?" == 0 || cat "$work/sync2.err"
  inputs=("$work/dir/snapshot.ndjson" "$work/stream.ndjson")
  changes=$(grep -c '"op":"[cud]"' "$work/stream.ndjson")
  echo "     $(grep -c '"op":"r"' "$work/dir/snapshot.ndjson") snapshot rows, $changes changes in $(grep -c '"op":"commit"' "$work/stream.ndjson") transactions"
  last=$(grep '"op":"commit"' "$work/stream.ndjson" | tail -1 | jq -r .position)
}

# apply_interrupted_runs SEED: six runs of `"${apply_cmd[@]}" --batch-rows 1 "${inputs[@]}"` (each
# target transaction small, so that an interruption finds one in flight), each interrupted once
# `applied` (what the position table says: transactions + snapshot rows) has grown by a random
# amount, the first right at its start. The test defines apply_cmd (cdc-apply and its target
# options: an array, so that the background job is cdc-apply itself, which kill -9 reaches),
# applied and apply_fault ROUND: a fault of its own for that round (the connection or the
# server), made while the run is frozen (SIGSTOP, then SIGCONT), which sets fault_name and
# returns 0, the run then expected to end with exit 69; every other round is kill -9. Sets kills, midway (kills after some was
# committed) and faults (the rounds apply_fault interrupted: those whose run had not ended).
apply_interrupted_runs() {
  local seed=$1 round applier before goal status
  kills=0 midway=0 faults=0
  for round in 1 2 3 4 5 6; do
    "${apply_cmd[@]}" --batch-rows 1 "${inputs[@]}" >/dev/null 2>"$work/apply.err" &
    applier=$!
    bg_pids+=("$applier")
    before=$(applied)
    goal=$((before + (round == 1 ? 0 : (seed * round) % 60 + 1)))
    while kill -0 "$applier" 2>/dev/null && (($(applied) < goal)); do sleep 0.005; done
    # Frozen where it is (SIGSTOP), unless it has ended: the fault or the kill finds it there.
    if kill -STOP "$applier" 2>/dev/null && apply_fault "$round" "$applier"; then
      faults=$((faults + 1))
      kill -CONT "$applier"
      status=0
      wait "$applier" 2>/dev/null || status=$?
      bg_pids=()
      assert "$fault_name: exit 69 (or the run had ended: 0), got $status" test "$status" == 69 -o "$status" == 0
      continue
    fi
    if kill -9 "$applier" 2>/dev/null; then
      kills=$((kills + 1))
      wait "$applier" 2>/dev/null
      [[ $(applied) != "$before" ]] && midway=$((midway + 1))
    else
      wait "$applier" 2>/dev/null
    fi
    bg_pids=()
  done
}

# The PostgreSQL target's check (after pg_throwaway_start, with psql_copy defined): pg_check_target
# WHEN asserts that the schema b holds a.t, a.c and a.k row for row.
# Each value as one canonical text on both sides; the documented mapping decides which pairs
# of expressions render the same value the same way.
t_maria=(id ti su mi bu bs de "CAST(fl AS DOUBLE)" '`do`' "LPAD(BIN(bi),10,'0')" "ye+0" da
  "ROUND(TIME_TO_SEC(tm)*1000000)" dt ts "LOWER(HEX(ch))" "LOWER(HEX(vc))" "LOWER(HEX(tx))" en st
  "LOWER(HEX(bn))" "LOWER(HEX(vb))" "LOWER(HEX(bl))" "LOWER(HEX(js))" i6 uu "LOWER(HEX(gm))")
t_pg=(id ti su mi bu bs de "fl::float8" '"do"' "bi::text" ye da
  "round(extract(epoch from tm)*1000000)" "to_char(dt,'YYYY-MM-DD HH24:MI:SS.US')"
  "to_char(ts AT TIME ZONE 'UTC','YYYY-MM-DD HH24:MI:SS.MS')" "encode(convert_to(ch,'UTF8'),'hex')"
  "encode(convert_to(vc,'UTF8'),'hex')" "encode(convert_to(tx,'UTF8'),'hex')" en st "encode(bn,'hex')"
  "encode(vb,'hex')" "encode(bl,'hex')" "encode(convert_to(js,'UTF8'),'hex')" "host(i6)" uu "encode(gm,'hex')")
joined() { local IFS=,; echo "$*"; }
# Floating-point columns (by position, from 1) as Python's repr of the double: MariaDB writes
# 1e308, PostgreSQL 1e+308.
pg_canonical() {
  python3 -c '
import sys
floats = {int(i) for i in sys.argv[1].split(",") if i}
for line in sys.stdin:
    cells = line.rstrip("\n").split("\t")
    print("\t".join(repr(float(c)) if i + 1 in floats and c != "NULL" else c for i, c in enumerate(cells)))
' "$1" | LC_ALL=C sort
}
pg_source_rows() { root -N --raw -e "SET time_zone='+00:00'; SELECT $2 FROM a.$1" | pg_canonical "$3"; }
pg_target_rows() { psql_copy -c "SELECT $2 FROM b.$1" | pg_canonical "$3"; }
pg_same_rows() {
  pg_source_rows "$@" >"$work/source.$1"
  pg_target_rows "$1" "$4" "$3" >"$work/target.$1"
  cmp -s "$work/source.$1" "$work/target.$1" ||
    { diff "$work/source.$1" "$work/target.$1" | head -6 >&2; return 1; }
}
pg_check_target() {
  local when=$1
  assert "$when: a.t == b.t, row for row, every column" pg_same_rows t "$(joined "${t_maria[@]}")" 8,9 "$(joined "${t_pg[@]}")"
  assert "$when: a.c == b.c (composite key)" pg_same_rows c "k1,k2,v" "" "k1,k2,v"
  assert "$when: a.k == b.k as a multiset (no key)" pg_same_rows k "v,w,CAST(f AS DOUBLE)" 3 "v,w,f::float8"
}
