#!/usr/bin/env bash
# --include-query against a throwaway MariaDB, the server as the oracle: each row line's
# "query" is the statement the test ran (exactly), for a single-row and a multi-row INSERT
# (whose rows span several rows events), an UPDATE and a DELETE of many rows, a transaction of
# statements on two tables, a statement with quotes, a backslash, a newline, a tab, UTF-8 and a
# comment, the rows a trigger writes (the statement that fired it), a stored procedure (each
# body statement as MariaDB logs it, variables as NAME_CONST), and null for the rows of a
# session that turned binlog_annotate_row_events off, alone and in the middle of a transaction.
#   cdc-stream live (tailing, and --until now) and --file on the server's binlog give the same
#   lines; without the option the lines are those of before (no "query"), live and --file;
#   --format debezium (source.query), maxwell (query after table) and canal (sql) carry the
#   same statements, and Flink's decoders (tests/tools/flink_decode.py, --flink) replay the
#   three tables into the source's rows;
#   cdc-plan --check says when the server does not log statements (a note, a warning with
#   --include-query, never a failure), and cdc-stream --include-query warns at start;
#   cdc-sync --include-query: the stream's lines carry their statements, the snapshot's "r"
#   lines and the deltas (which cdc-merge reads) none.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
command -v python3 >/dev/null || { echo "skipped: python3 (Flink's decoders) is not installed" && exit 77; }
require_live_mode
throwaway_start "$srv" || exit 1
decoder=(python3 "$source_dir/tests/tools/flink_decode.py")

root <<'SQL' >/dev/null || exit 1
CREATE DATABASE t;
CREATE TABLE t.a (id INT PRIMARY KEY, v VARCHAR(300)) CHARACTER SET utf8mb4 ENGINE=InnoDB;
CREATE TABLE t.b (id INT PRIMARY KEY, n INT NOT NULL) ENGINE=InnoDB;
CREATE TABLE t.audit (id INT AUTO_INCREMENT PRIMARY KEY, b_id INT NOT NULL, what VARCHAR(20) NOT NULL) ENGINE=InnoDB;
CREATE TRIGGER t.b_inserted AFTER INSERT ON t.b FOR EACH ROW INSERT INTO t.audit (b_id, what) VALUES (NEW.id, 'inserted');
DELIMITER //
CREATE PROCEDURE t.p(IN k INT) BEGIN INSERT INTO t.a VALUES (k, 'from p'); UPDATE t.b SET n = n + k WHERE id < 100; END//
DELIMITER ;
SQL
from=$(gtid_pos)

live_bg --from "$from" --include-query >"$work/tail_query.ndjson" 2>"$work/tail_query.err" &
bg_pids+=($!)
tail_query=$!
live_bg --from "$from" >"$work/tail_plain.ndjson" 2>"$work/tail_plain.err" &
bg_pids+=($!)
tail_plain=$!
wait_dump_threads 2

# run SQL: the statements as one client call; --comments keeps the comments, which the client
# strips by default, so that the server gets the text exactly.
run() { root --comments -e "$1" >/dev/null || fail "the server refused: ${1:0:200}"; }
# rows QUERY TABLE OP COUNT: the next COUNT change lines are of TABLE and OP, with QUERY
# ("<null>": none logged) as their statement.
rows() {
  jq -n -c --arg q "$1" --arg t "$2" --arg o "$3" --argjson n "$4" \
    '{query: (if $q == "<null>" then null else $q end), table: $t, op: $o, rows: $n}' >>"$work/want"
}
: >"$work/want"

single="INSERT INTO t.a VALUES (1, 'one')"
run "$single"
rows "$single" a c 1
# 300 rows of 150 characters: about 45 KiB of rows, several rows events of one statement.
multi="INSERT INTO t.a VALUES $(seq -s, 2 301 | sed "s/\([0-9]*\)/(\1, REPEAT('x', 150))/g")"
run "$multi"
rows "$multi" a c 300
update="UPDATE t.a SET v = CONCAT('u-', v) WHERE id BETWEEN 2 AND 301"
run "$update"
rows "$update" a u 300
delete="DELETE FROM t.a WHERE id > 250"
run "$delete"
rows "$delete" a d 51
# The trigger's rows go into the same statement, table by table as the rows come.
trigger="INSERT INTO t.b VALUES (1, 10), (2, 20)"
run "$trigger"
for _ in 1 2; do
  rows "$trigger" b c 1
  rows "$trigger" audit c 1
done
x1="INSERT INTO t.a VALUES (1000, 'in a transaction')"
x2="UPDATE t.b SET n = n + 1"
x3="DELETE FROM t.a WHERE id = 1"
run "BEGIN; $x1; $x2; $x3; COMMIT"
rows "$x1" a c 1
rows "$x2" b u 2
rows "$x3" a d 1
odd=$'INSERT INTO t.a VALUES (2000, \'it\'\'s "quoted" \\\\ back\nslash\ttab ünï 😀\') /* ü comment */'
run "$odd"
rows "$odd" a c 1
# A stored procedure's rows: each body statement as MariaDB logs it, the parameter as NAME_CONST.
run "CALL t.p(5000)"
rows "INSERT INTO t.a VALUES ( NAME_CONST('k',5000), 'from p')" a c 1
rows "UPDATE t.b SET n = n +  NAME_CONST('k',5000) WHERE id < 100" b u 2
run "SET SESSION binlog_annotate_row_events = OFF; INSERT INTO t.a VALUES (3000, 'not annotated')"
rows "<null>" a c 1
logged="INSERT INTO t.a VALUES (3001, 'annotated')"
run "BEGIN; $logged; SET SESSION binlog_annotate_row_events = OFF; INSERT INTO t.a VALUES (3002, 'not annotated'); COMMIT"
rows "$logged" a c 1
rows "<null>" a c 1
until=$(gtid_pos)

# groups FILE: the change lines of FILE as runs of one statement, table and op, in order.
groups() {
  jq -c -s '[.[] | select(.op == "c" or .op == "u" or .op == "d") | {query, table, op}]
            | reduce .[] as $r ([]; if length > 0 and (.[-1] | del(.rows)) == $r then .[-1].rows += 1
                                    else . + [$r + {rows: 1}] end) | .[]' "$1"
}
# without_query FILE: FILE's lines with the "query" member cut out (it comes just before "pos").
without_query() { sed -E 's/,"query":("([^"\\]|\\.)*"|null),"pos":/,"pos":/' "$1"; }

for name in tail_query tail_plain; do
  assert "$name: reached the last transaction ($until)" wait_for_text "$work/$name.ndjson" "\"position\":\"$until\"" 20
done
kill -TERM "$tail_query" "$tail_plain"
wait "$tail_query" "$tail_plain"
bg_pids=()

mapfile -t files < <(binlog_files)
"$stream" --file "${files[@]}" --include-query >"$work/file_all.ndjson" 2>"$work/file.err" ||
  fail "--file --include-query: $(head -c 300 "$work/file.err")"
n=$(line_of "$work/file_all.ndjson" "\"position\":\"$from\"")
after_line "$work/file_all.ndjson" "$n" >"$work/file_query.ndjson"
"$stream" --file "${files[@]}" >"$work/file_all_plain.ndjson" 2>>"$work/file.err" || fail "--file without --include-query"
after_line "$work/file_all_plain.ndjson" "$n" >"$work/file_plain.ndjson"

groups "$work/file_query.ndjson" >"$work/got"
same_file "--file: each row's query is the statement that made it" "$work/want" "$work/got"
groups "$work/tail_query.ndjson" >"$work/got_live"
same_file "live: each row's query is the statement that made it" "$work/want" "$work/got_live"
same_changes "live --include-query writes what --file --include-query decodes" "$work/file_query.ndjson" \
  "$work/tail_query.ndjson"
expect "--from --until now --include-query: exit 0" 0 live --from "$from" --until now --include-query
span_checked "$work/out"
same_changes "a bounded live run writes the same" "$work/file_query.ndjson" "$work/out"
assert "without --include-query no line has a query" \
  jq -e -s 'all(.[]; has("query") | not)' "$work/tail_plain.ndjson" "$work/file_plain.ndjson"
same_changes "without --include-query, live writes what --file decodes" "$work/file_plain.ndjson" \
  "$work/tail_plain.ndjson"
without_query "$work/file_query.ndjson" >"$work/stripped.ndjson"
same_file "--include-query adds the query member and changes nothing else" "$work/file_plain.ndjson" \
  "$work/stripped.ndjson"
assert "the multi-row INSERT's rows came in several rows events" \
  test "$(jq -r 'select(.op == "c" and .key.id >= 2 and .key.id <= 301) | .pos.offset' "$work/file_query.ndjson" |
    sort -u | wc -l)" -ge 3

# ---- the formats ------------------------------------------------------------------------------
# per_row FORMAT FILE: the statement of each row a format's messages carry, "<null>" for none.
per_row() {
  case $1 in
    ndjson) jq -r 'select(.op == "c" or .op == "u" or .op == "d") | .query // "<null>" | @json' "$2" ;;
    debezium) jq -r 'select(has("op")) | .source.query // "<null>" | @json' "$2" ;;
    maxwell) jq -r 'if has("query") then .query else "<null>" end | @json' "$2" ;;
    canal) jq -r 'select(.isDdl == false) | (if .sql == "" then "<null>" else .sql end) as $q | .data[] | $q | @json' \
      "$2" ;;
  esac
}
per_row ndjson "$work/file_query.ndjson" >"$work/rows.want"
# The formats read the changes from the first transaction after the setup on (without the
# setup's DDL, which Flink's canal-json would refuse): where its commit line says it ends.
start_file=$(jq -r -s --arg p "$from" '[.[] | select(.op == "commit" and .position == $p)][0].pos.file' \
  "$work/file_all.ndjson")
start_offset=$(jq -r -s --arg p "$from" '[.[] | select(.op == "commit" and .position == $p)][0].pos.offset' \
  "$work/file_all.ndjson")
assert "the changes are in the last binlog file ($start_file)" test "$start_file" == "$(basename "${files[-1]}")"
changes_file=${files[-1]}
for format in debezium maxwell canal; do
  for include in with without; do
    flags=(--format "$format")
    [[ $include == with ]] && flags+=(--include-query)
    "$stream" --file "$changes_file" --start-position "$start_offset" --tables 't.*' "${flags[@]}" \
      >"$work/$format.$include" 2>"$work/$format.err" || fail "--file ${flags[*]}: $(head -c 300 "$work/$format.err")"
    per_row "$format" "$work/$format.$include" >"$work/rows.$format.$include"
  done
  same_file "--format $format --include-query: each row's statement, as the NDJSON lines'" \
    "$work/rows.want" "$work/rows.$format.with"
  assert "--format $format without --include-query: no statement" \
    test "$(sort -u "$work/rows.$format.without")" == '"<null>"'
done
assert "maxwell: the statement right after table" \
  grep -qF '{"database":"t","table":"b","query":"INSERT INTO t.b VALUES (1, 10), (2, 20)","type":"insert",' \
  "$work/maxwell.with"

# Flink's decoders read the messages with the statements, and replay the three tables.
for format in debezium canal maxwell; do
  flags=(--format "$format" --flink --include-query)
  [[ $format == debezium ]] && flags+=(--topic)
  "$stream" --file "$changes_file" --start-position "$start_offset" --tables 't.*' "${flags[@]}" \
    >"$work/flink.$format" 2>"$work/flink.err" || fail "--file ${flags[*]}"
  for table in t.a t.b t.audit; do
    columns=$("${decoder[@]}" declare --format "$format" --socket "$THROWAWAY_SOCKET" --table "$table") || {
      fail "flink_decode declare $table"
      continue
    }
    key=id
    select=(--table "$table" --prefix-fields 0)
    [[ $format == debezium ]] && select=(--topic "cdc.$table" --prefix-fields 1)
    if "${decoder[@]}" replay --format "$format" --columns "$columns" --key "$key" "${select[@]}" \
      "$work/flink.$format" >"$work/replayed" 2>"$work/replay.err"; then
      "${decoder[@]}" source --socket "$THROWAWAY_SOCKET" --table "$table" --columns "$columns" >"$work/source"
      same_file "$format-json reads the messages with statements and replays $table as the source" \
        "$work/source" "$work/replayed"
    else
      fail "$format-json cannot read $table's messages: $(head -c 400 "$work/replay.err")"
    fi
  done
done

# ---- the server does not log statements -------------------------------------------------------
plan=("$tools_dir/cdc-plan" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc)
check_line() { jq -c 'select(.name == "binlog_annotate_row_events") | {status, value}' "$work/out"; }
export MYSQL_PWD=$THROWAWAY_CDC_PASSWORD
expect "cdc-plan --check --include-query, statements logged: exit 0" 0 "${plan[@]}" --check --include-query
assert "... the binlog_annotate_row_events line is ok" test "$(check_line)" == '{"status":"ok","value":"ON"}'
root -e "SET GLOBAL binlog_annotate_row_events = OFF" || fail "SET GLOBAL binlog_annotate_row_events = OFF"
expect "cdc-plan --check, statements not logged: exit 0" 0 "${plan[@]}" --check
assert "... ok, with a note" test "$(check_line)" == '{"status":"ok","value":"OFF"}'
expect "cdc-plan --check --include-query, statements not logged: exit 0" 0 "${plan[@]}" --check --include-query
assert "... a warning" test "$(check_line)" == '{"status":"warn","value":"OFF"}'
assert "... on stderr with its fix" grep -qF \
  "warn: binlog_annotate_row_events is 'OFF', want ON, for --include-query" "$work/err"
assert "... and in the summary's warnings" \
  jq -e 'select(.op == "check_summary") | .usable and (.warnings | index("binlog_annotate_row_events"))' "$work/out"
unset MYSQL_PWD
run "INSERT INTO t.a VALUES (4000, 'while off')"
expect "cdc-stream --include-query against it: exit 0" 0 live --from "$until" --until now --include-query
assert "... warns at start" grep -qF "binlog_annotate_row_events is OFF: the server does not log the statements" \
  "$work/err"
assert "... and the row's query is null" jq -e -s '[.[] | select(.op == "c")] | length == 1 and .[0].query == null' \
  "$work/out"
root -e "SET GLOBAL binlog_annotate_row_events = ON" || fail "SET GLOBAL binlog_annotate_row_events = ON"

# ---- cdc-sync --include-query -----------------------------------------------------------------
# A writer overlaps the chunk reads (so that deltas are read and merged); the snapshot_end hook
# makes one change more, which only the stream carries.
echo "INSERT INTO t.a VALUES (6000, 'writer started');" >"$work/writer.sql"
for k in $(seq 1 80); do
  echo "UPDATE t.a SET v = CONCAT(v, '.') WHERE id % 40 = $((k % 40));"
  echo "DO SLEEP(0.02);"
done >>"$work/writer.sql"
after_snapshot="UPDATE t.a SET v = 'after the snapshot' WHERE id = 2000"
cat >"$work/hook.sh" <<EOF
#!/usr/bin/env bash
case \$1 in
  snapshot_start)
    mariadb --no-defaults -S "$THROWAWAY_SOCKET" -uroot <"$work/writer.sql" >/dev/null 2>&1 &
    echo \$! >"$work/writer.pid"
    for i in \$(seq 100); do
      [[ \$(mariadb --no-defaults -S "$THROWAWAY_SOCKET" -uroot -N -e "SELECT COUNT(*) FROM t.a WHERE id = 6000") == 1 ]] && break
      sleep 0.05
    done ;;
  snapshot_end)
    while kill -0 "\$(cat "$work/writer.pid")" 2>/dev/null; do sleep 0.05; done
    mariadb --no-defaults -S "$THROWAWAY_SOCKET" -uroot -e "$after_snapshot" ;;
esac
EOF
chmod +x "$work/hook.sh"
expect "cdc-sync --include-query --until now: exit 0" 0 env MYSQL_PWD="$THROWAWAY_CDC_PASSWORD" \
  CDC_TOOLS_DIR="$tools_dir" timeout -k 5 120 "$tools_dir/cdc-sync" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc \
  --tables 't.a' --dir "$work/sync" --chunk-size 10 -j 2 --no-progress --on-phase "$work/hook.sh" \
  --until now --include-query
cp "$work/out" "$work/sync.ndjson"
assert "cdc-sync: the snapshot's r lines have no query" \
  jq -e -s '[.[] | select(.op == "r")] | length > 100 and all(.[]; has("query") | not)' "$work/sync.ndjson"
assert "cdc-sync: the stream's changes carry their statements" \
  jq -e -s --arg q "$after_snapshot" '[.[] | select(.op == "c" or .op == "u")] as $changes
    | ($changes | length > 0) and ($changes | all(.[]; .query | type == "string"))
    and ($changes[-1] | .key.id == 2000 and .query == $q)' "$work/sync.ndjson"
assert "cdc-sync: deltas were read, without statements (cdc-merge reads them)" \
  jq -e -s '[.[] | select(.op == "u")] | length > 0 and all(.[]; has("query") | not)' "$work/sync/deltas.ndjson"
finish
