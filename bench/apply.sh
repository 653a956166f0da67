#!/usr/bin/env bash
# bench/apply.sh — cdc-apply's rate into MariaDB and into PostgreSQL (issue 32; the goal is
# 50,000 row changes/s).
#
# What it measures: the wall time of applying a stream of sysbench-style row changes (table
# sbtest1: id, k, c CHAR(120), pad CHAR(60)) to a copy of the table in another database of the
# same throwaway server, from cdc-stream --file's output on disk: ROWS changes, 60% INSERTs,
# 25% UPDATEs (k = k + 1 and a new c), 15% DELETEs, in source transactions of TXN rows. Then
# the copy must equal the source (CHECKSUM TABLE), or the run fails. Then the same stream into
# a throwaway PostgreSQL (scripts/lib/throwaway_postgres.sh; skipped when PostgreSQL is not
# installed), into a table of the same shape (schema d; c and pad varchar, the type
# --create-tables gives a CHAR; an index on k), compared with the source row for row.
# It is a benchmark, not a test: there is no speed threshold.
#
# Usage: bench/apply.sh [--rows N] [--txn N] [--batch-rows N]
#   --rows N        row changes (default 200000)
#   --txn N         rows per source transaction (default 10)
#   --batch-rows N  cdc-apply --batch-rows (default its own, 5000)
# Environment: CDC_TOOLS_DIR (default build/tools of this clone), TMPDIR.
set -euo pipefail
export LC_ALL=C
root_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tools=${CDC_TOOLS_DIR:-$root_dir/build/tools}
rows=200000 txn=10 batch=()
while (($#)); do
  case $1 in
    --rows) rows=$2 && shift 2 ;;
    --txn) txn=$2 && shift 2 ;;
    --batch-rows) batch=(--batch-rows "$2") && shift 2 ;;
    *) echo "usage: $0 [--rows N] [--txn N] [--batch-rows N]" >&2 && exit 2 ;;
  esac
done
source "$root_dir/scripts/lib/throwaway_mariadb.sh"
source "$root_dir/scripts/lib/throwaway_postgres.sh"
work=$(mktemp -d)
trap 'throwaway_stop "$work/srv"; pg_throwaway_stop "$work/pg"; rm -rf "$work"' EXIT
# The test server's 64 MiB buffer pool and 16 MiB redo log would time InnoDB's checkpoints: sized
# as the other benchmarks' (bench/lib.sh) and as a production server is for its data.
throwaway_start "$work/srv" --innodb-buffer-pool-size=1G --innodb-log-file-size=1G >/dev/null
sql() { mariadb --no-defaults -S "$THROWAWAY_SOCKET" -uroot "$@"; }
sql -e "CREATE DATABASE s; CREATE DATABASE d;
  CREATE TABLE s.sbtest1 (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, c CHAR(120) NOT NULL, pad CHAR(60) NOT NULL,
                          KEY (k)) ENGINE=InnoDB;
  CREATE TABLE d.sbtest1 LIKE s.sbtest1; FLUSH BINARY LOGS;"
start_file=$(sql -N -e "SHOW MASTER STATUS" | cut -f1)
python3 - "$rows" "$txn" <<'PY' | sql
import random, sys
rows, txn = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(1)
live, next_id, out, n = [], 1, [], 0
word = lambda k: "".join(rng.choice("0123456789-") for _ in range(k))
while n < rows:
    out.append("BEGIN;")
    for _ in range(txn):
        kind = rng.random()
        if kind < 0.6 or len(live) < 100:
            out.append("INSERT INTO s.sbtest1 VALUES (%d,%d,'%s','%s');" % (next_id, rng.randint(1, 10**6), word(119), word(59)))
            live.append(next_id)
            next_id += 1
        elif kind < 0.85:
            out.append("UPDATE s.sbtest1 SET k = k + 1, c = '%s' WHERE id = %d;" % (word(119), rng.choice(live)))
        else:
            i = rng.randrange(len(live))
            live[i], live[-1] = live[-1], live[i]
            out.append("DELETE FROM s.sbtest1 WHERE id = %d;" % live.pop())
        n += 1
    out.append("COMMIT;")
print("\n".join(out))
PY
files=()
for f in $(sql -N -e "SHOW BINARY LOGS" | cut -f1); do
  [[ $f < $start_file ]] || files+=("$work/srv/data/$f")
done
"$tools/cdc-stream" --file "${files[@]}" >"$work/stream.ndjson"
changes=$(grep -c '"op":"[cud]"' "$work/stream.ndjson")
begin=$(date +%s.%N)
"$tools/cdc-apply" -S "$THROWAWAY_SOCKET" -u root --database d "${batch[@]}" "$work/stream.ndjson" 2>"$work/apply.err"
end=$(date +%s.%N)
tail -1 "$work/apply.err"
a=$(sql -N -e "CHECKSUM TABLE s.sbtest1" | cut -f2)
b=$(sql -N -e "CHECKSUM TABLE d.sbtest1" | cut -f2)
[[ $a == "$b" ]] || { echo "FAIL: the copy differs from the source (CHECKSUM $a, $b)" && exit 1; }
rate() { python3 -c "s = $3 - $2; print('$1: %d row changes (%d per source transaction) in %.2f s: %.0f changes/s; copy == source' % ($changes, $txn, s, $changes / s))"; }
rate MariaDB "$begin" "$end"

pg_throwaway_bin >/dev/null || { echo "PostgreSQL: skipped (not installed)" && exit 0; }
pg_throwaway_start "$work/pg" >/dev/null
pg_throwaway_psql "$work/pg" -U cdc -c "CREATE SCHEMA d; CREATE TABLE d.sbtest1 (id integer NOT NULL PRIMARY KEY,
  k integer NOT NULL, c varchar(120) NOT NULL, pad varchar(60) NOT NULL); CREATE INDEX ON d.sbtest1 (k)"
begin=$(date +%s.%N)
"$tools/cdc-apply" --postgres "$PG_THROWAWAY_CONNINFO" --database d "${batch[@]}" "$work/stream.ndjson" \
  2>"$work/apply_pg.err" || { cat "$work/apply_pg.err" && exit 1; }
end=$(date +%s.%N)
tail -1 "$work/apply_pg.err"
a=$(sql -N --raw -e "SELECT id, k, c, pad FROM s.sbtest1 ORDER BY id" | md5sum)
b=$(pg_throwaway_psql "$work/pg" -A -t -F $'\t' -c "SELECT id, k, c, pad FROM d.sbtest1 ORDER BY id" | md5sum)
[[ $a == "$b" ]] || { echo "FAIL: the PostgreSQL copy differs from the source" && exit 1; }
rate PostgreSQL "$begin" "$end"
