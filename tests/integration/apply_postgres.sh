#!/usr/bin/env bash
# cdc-apply into PostgreSQL, exactly once (issue 32): the load and cdc-sync of apply_mariadb.sh
# (apply_lib.sh: most column types, a composite key, a keyless table with duplicates; no zero
# dates, which PostgreSQL cannot hold), applied with --postgres --create-tables into a
# throwaway PostgreSQL (scripts/lib/throwaway_postgres.sh) as a user that owns one database and
# nothing else; cdc-apply killed with kill -9 at random points, PostgreSQL restarted (pg_ctl
# stop -m immediate: a crash) and the backend terminated (pg_terminate_backend) mid-run, each
# followed by a rerun, until a run ends; then
#   the target equals the source row for row: each side renders every value to one canonical
#   text (hex of the bytes, the microseconds of a TIME, a FLOAT as the double it is, ...),
#   through the mapping of cdc-apply(1), POSTGRESQL; the keyless table as a multiset;
#   the position table holds the stream's last commit position, and a rerun applies nothing;
#   a zero date and text with NUL are exit 65, naming the position, table, key and column, with
#   nothing of their target transaction applied; an update of a missing row is exit 65; a DDL
#   stops it (exit 3) or is ignored, as --on-ddl says.
# CDC_APPLY_SEED replays a run. Skipped (77) where PostgreSQL is not installed.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$source_dir/scripts/lib/throwaway_postgres.sh"
pg_throwaway_bin >/dev/null || { echo "skipped: PostgreSQL is not installed (Debian's postgresql)" && exit 77; }
command -v python3 >/dev/null || { echo "skipped: python3 (the load) is not installed" && exit 77; }
source "$(dirname "$0")/live_lib.sh"
pg="$work/pg"
trap 'exit_status=$?; live_cleanup; pg_throwaway_stop "$pg"; remove_work' EXIT
require_live_mode
throwaway_start "$srv" || exit 1
pg_throwaway_start "$pg" || exit 1
seed=${CDC_APPLY_SEED:-$RANDOM}
echo "     seed $seed (CDC_APPLY_SEED=$seed replays it)"
source "$(dirname "$0")/apply_lib.sh"
apply_make_source "$seed" 0

psql_copy() { pg_throwaway_psql "$pg" -A -t -F $'\t' -P null=NULL "$@"; }
applied() {
  local count
  count=$(psql_copy -c "SELECT transactions + snapshot_rows FROM b.cdc_apply_position" 2>/dev/null)
  echo "${count:-0}"
}
apply_cmd=("$apply_bin" --postgres "$PG_THROWAWAY_CONNINFO" --database b --create-tables)
# Round 2: PostgreSQL crashes and comes back (stop -m immediate, start); round 3: the backend
# is terminated. Each: exit 69, and the next run goes on. Early rounds: the later ones may find
# nothing left to apply.
apply_fault() {
  case $1 in
    2)
      pg_throwaway_restart "$pg" immediate || fail "PostgreSQL restarts"
      fault_name="PostgreSQL stopped with -m immediate mid-run" ;;
    3)
      psql_copy -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'cdc-apply'" \
        >/dev/null
      fault_name="the backend terminated (pg_terminate_backend)" ;;
    *) return 1 ;;
  esac
}
apply_interrupted_runs "$seed"
expect "after $kills runs killed with kill -9 ($midway after they had committed some), a run to the end: exit 0" 0 \
  "${apply_cmd[@]}" "${inputs[@]}"
echo "     $(tail -1 "$work/err")"
assert "at least two runs were killed after they had applied some" test "$midway" -ge 2
assert "the restart and the terminated backend both came mid-run" test "$faults" == 2

pg_check_target "after the kills"
assert "the source tables are not empty" test "$(root -N -e 'SELECT COUNT(*) FROM a.t')" -gt 100
assert "the position table holds the last commit's position ($last)" \
  test "$(psql_copy -c "SELECT position FROM b.cdc_apply_position")" == "$last"
assert "the tables have the mapped types" test "$(psql_copy -c "SELECT string_agg(attname || ' ' ||
  format_type(atttypid, atttypmod), ', ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'b.t'::regclass
  AND attname IN ('su','bu','bi','tm','ts','ch','i6')")" == \
  "su integer, bu numeric(20,0), bi bit varying(10), tm interval(3), ts timestamp(3) with time zone, ch character varying(5), i6 inet"

expect "a rerun applies nothing (exit 0)" 0 "${apply_cmd[@]}" "${inputs[@]}"
assert "  it says so" grep -q "applied 0 transactions (0 rows)" "$work/err"
pg_check_target "after the rerun"

# What PostgreSQL cannot hold: exit 65, naming where, and nothing of the target transaction.
table_line='{"op":"table","v":1,"db":"a","table":"z","columns":[{"name":"id","type":"int(11)","nullable":false},{"name":"d","type":"date","nullable":true},{"name":"s","type":"varchar(10)","nullable":true}],"key":["id"],"pos":null,"ts_ms":0}'
change() { # change ID DATE TEXT GTID_SEQ INDEX
  printf '{"op":"c","v":1,"db":"a","table":"z","key":{"id":%s},"before":null,"after":{"id":%s,"d":%s,"s":%s},"pos":{"file":"binlog.000009","offset":%s,"index":%s,"gtid":"0-1-%s"},"server_id":1,"thread":null,"ts_ms":0}\n' \
    "$1" "$1" "$2" "$3" "$((100 * $4))" "$5" "$4"
}
commit() { printf '{"op":"commit","v":1,"gtid":"0-1-%s","pos":{"file":"binlog.000009","offset":%s},"position":"0-1-%s","rows":1,"xid":1,"ts_ms":0}\n' "$1" "$((100 * $1 + 50))" "$1"; }
{ echo "$table_line"; change 1 '"2024-01-01"' '"ok"' 1 0; commit 1; change 2 '"2024-01-02"' '"ok"' 2 0
  change 3 '"0000-00-00"' '"ok"' 2 1; commit 2; } >"$work/zero.ndjson"
expect "a zero date is exit 65" 65 "$apply_bin" --postgres "$PG_THROWAWAY_CONNINFO" --database z --create-tables \
  "$work/zero.ndjson"
assert "  it names the position, table, key, column and why" grep -qF \
  'a.z at binlog.000009:200#1 (gtid 0-1-2) key {"id":3}: column "d" (date): "0000-00-00" has a zero year, month or day' \
  "$work/err"
assert "  nothing of its target transaction is applied" test "$(psql_copy -c "SELECT count(*) FROM z.z")" == 0
{ echo "$table_line"; change 1 '"2024-01-01"' '"a\u0000b"' 1 0; commit 1; } >"$work/nul.ndjson"
expect "text with NUL is exit 65" 65 "$apply_bin" --postgres "$PG_THROWAWAY_CONNINFO" --database z "$work/nul.ndjson"
assert "  it names the column and why" grep -qF \
  'a.z at binlog.000009:100#0 (gtid 0-1-1) key {"id":1}: column "s" (varchar(10)): the text holds the NUL character' \
  "$work/err"
{ echo "$table_line"; change 1 '"2024-01-01"' '"ok"' 1 0; commit 1
  printf '%s\n' '{"op":"u","v":1,"db":"a","table":"z","key":{"id":9},"before":{"id":9,"d":null,"s":"x"},"after":{"id":9,"d":null,"s":"y"},"pos":{"file":"binlog.000009","offset":200,"index":0,"gtid":"0-1-2"},"server_id":1,"thread":null,"ts_ms":0}'
  commit 2; } >"$work/missing.ndjson"
expect "an update of a row the target lacks is exit 65" 65 "$apply_bin" --postgres "$PG_THROWAWAY_CONNINFO" \
  --database z --batch-rows 100 "$work/missing.ndjson"
assert "  it names the update, the position and the key" grep -qF \
  'no row for the update of a.z at binlog.000009:200#0 (gtid 0-1-2) key {"id":9}' "$work/err"
assert "  nothing of its target transaction is applied" test "$(psql_copy -c "SELECT count(*) FROM z.z")" == 0
# Deletes of a one-column key are one DELETE ... IN: run again a row at a time to name the one.
erase() { # erase ID GTID_SEQ INDEX
  printf '{"op":"d","v":1,"db":"a","table":"z","key":{"id":%s},"before":{"id":%s,"d":null,"s":"ok"},"after":null,"pos":{"file":"binlog.000009","offset":%s,"index":%s,"gtid":"0-1-%s"},"server_id":1,"thread":null,"ts_ms":0}\n' \
    "$1" "$1" "$((100 * $2))" "$3" "$2"
}
{ echo "$table_line"; change 1 null '"ok"' 1 0; change 2 null '"ok"' 1 1; commit 1
  erase 1 3 0; erase 7 3 1; erase 2 3 2; commit 3; } >"$work/missing_delete.ndjson"
expect "a delete of a row the target lacks, among others, is exit 65" 65 "$apply_bin" \
  --postgres "$PG_THROWAWAY_CONNINFO" --database z --batch-rows 100 "$work/missing_delete.ndjson"
assert "  it names that delete's position and key" grep -qF \
  'no row for the delete of a.z at binlog.000009:300#1 (gtid 0-1-3) key {"id":7} (counted 0, 1 expected; one of the 3 rows of a statement that counted 2, 3 expected)' \
  "$work/err" || cat "$work/err"
assert "  nothing of its target transaction is applied" test "$(psql_copy -c "SELECT count(*) FROM z.z")" == 0
expect "a value the target refuses (a string too long for varchar(10)) is exit 65" 65 \
  "$apply_bin" --postgres "$PG_THROWAWAY_CONNINFO" --database z \
  <(echo "$table_line"; change 1 '"2024-01-01"' '"longer than ten"' 1 0; commit 1)
assert "  it names the insert and the server's reason" grep -qF \
  'the target refused the insert of a.z at binlog.000009:100#0 (gtid 0-1-1) key {"id":1}: value too long' "$work/err"
# A DDL: --on-ddl stop (exit 3, naming it) and ignore (its position written) work as on MariaDB.
{ printf '%s\n' '{"op":"ddl","v":1,"db":"a","sql":"ALTER TABLE z ADD COLUMN q INT","pos":{"file":"binlog.000009","offset":300,"index":0,"gtid":"0-1-3"},"ts_ms":0}'
  commit 3; } >"$work/ddl.ndjson"
expect "a DDL under --on-ddl stop is exit 3" 3 "$apply_bin" --postgres "$PG_THROWAWAY_CONNINFO" --database z \
  "$work/ddl.ndjson"
assert "  it names the statement and where it is" grep -qF "binlog.000009:300" "$work/err"
expect "--on-ddl ignore goes past it (exit 0)" 0 "$apply_bin" --postgres "$PG_THROWAWAY_CONNINFO" --database z \
  --on-ddl ignore "$work/ddl.ndjson"
assert "  and writes its position" test "$(psql_copy -c "SELECT position FROM z.cdc_apply_position")" == 0-1-3
expect "an unreachable PostgreSQL is exit 69" 69 "$apply_bin" --postgres "host=$pg port=1 dbname=copy user=cdc" \
  --database z "$work/nul.ndjson"
finish
