# Shared by the live-stream tests (stream_*.sh): a throwaway MariaDB to stream from, cdc-stream
# run against it, and the waits and comparisons those tests share. Not a test itself (the name
# keeps it out of the stream_*.sh glob that registers the tests).
# Usage in a test, after lib.sh:
#   source "$(dirname "$0")/lib.sh" "$@"
#   source "$(dirname "$0")/live_lib.sh"
# It sources scripts/lib/throwaway_mariadb.sh and sets:
#   stream    the cdc-stream binary under test
#   srv       the throwaway server's directory, $work/srv (a test with two servers puts them
#             below it: throwaway_stop on the parent stops both)
#   bg_pids   background processes the test started; add each, empty it once they are reaped
# and an EXIT trap: live_cleanup (SIGCONT then SIGKILL to bg_pids, stop the server(s)), then
# remove $work. A test with more to undo sets its own trap around live_cleanup.
# Helpers (each documented below): require_live_mode; root, mariadb_root; live, live_bg,
# live_at, live_bg_at; gtid_pos, binlog_files, dump_threads; wait_until, wait_dump_threads,
# wait_for_text, wait_exit; same_file, line_of, after_line, commit_gtids; writer_table_sql, writer_sql.
source "$source_dir/scripts/lib/throwaway_mariadb.sh"
stream="$tools_dir/cdc-stream"
srv="$work/srv"
bg_pids=()

live_cleanup() {
  local p
  for p in "${bg_pids[@]}"; do
    kill -CONT "$p" 2>/dev/null
    kill -9 "$p" 2>/dev/null
  done
  throwaway_stop "$srv"
}
trap 'exit_status=$?; live_cleanup; remove_work' EXIT

# require_live_mode: fails the test (exit 1) when cdc-stream has no live mode.
require_live_mode() {
  # grep reads all of the help: with -q it may stop early and, under pipefail, fail the check by
  # the tool's SIGPIPE.
  if ! "$stream" --help 2>/dev/null | grep -- '--from' >/dev/null; then
    echo "FAIL cdc-stream has no live mode: its --help does not list --from"
    exit 1
  fi
}

# mariadb_root SOCKET ARGS...: the mariadb client as root on the server at SOCKET.
mariadb_root() {
  local socket=$1
  shift
  mariadb --no-defaults --default-character-set=utf8mb4 -S "$socket" -uroot "$@"
}
# root ARGS...: the mariadb client as root on the throwaway server.
root() { mariadb_root "$THROWAWAY_SOCKET" "$@"; }

# live_at PORT ARGS...: a bounded live run as the cdc user against 127.0.0.1:PORT (a hang
# fails as exit 124).
live_at() {
  local port=$1
  shift
  MYSQL_PWD=$THROWAWAY_CDC_PASSWORD timeout -k 5 60 "$stream" -h 127.0.0.1 -P "$port" -u cdc "$@"
}
# live_bg_at PORT ARGS...: the same, unbounded, exec'd: run it with & and $! is cdc-stream.
live_bg_at() {
  local port=$1
  shift
  MYSQL_PWD=$THROWAWAY_CDC_PASSWORD exec "$stream" -h 127.0.0.1 -P "$port" -u cdc "$@"
}
# live ARGS..., live_bg ARGS...: live_at and live_bg_at against the throwaway server.
live() { live_at "$THROWAWAY_PORT" "$@"; }
live_bg() { live_bg_at "$THROWAWAY_PORT" "$@"; }

# gtid_pos [ROOT_FN]: the server's @@gtid_binlog_pos (ROOT_FN defaults to root).
gtid_pos() { "${1:-root}" -N -e 'SELECT @@gtid_binlog_pos'; }
# binlog_files: the paths of the server's binlog files, oldest first.
binlog_files() { root -N -e 'SHOW BINARY LOGS' | awk -v d="$srv/data" '{print d "/" $1}'; }
# dump_threads: how many binlog dump threads (connected streams) the server has.
dump_threads() { root -N -e "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'"; }

# wait_until SECONDS COMMAND...: runs COMMAND every 0.1 s until it succeeds; fails after SECONDS.
wait_until() {
  local i tenths=$(($1 * 10))
  shift
  for ((i = 0; i < tenths; i++)); do
    "$@" && return 0
    sleep 0.1
  done
  return 1
}
# dump_threads_are N: the server has N dump threads.
dump_threads_are() { [[ $(dump_threads) == "$1" ]]; }
# wait_dump_threads N: until the server has N dump threads (10 s at most).
wait_dump_threads() { wait_until 10 dump_threads_are "$1"; }
# wait_for_text FILE TEXT SECONDS: until FILE holds TEXT.
wait_for_text() { wait_until "$3" grep -q -F -- "$2" "$1" 2>/dev/null; }
# wait_exit PID SECONDS: waits for PID to end; sets $status to its exit status, or
# "still-running" (then kills it). Bash's job report ("Killed") stays off stderr: tests kill
# tools on purpose.
wait_exit() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$1" 2>/dev/null; then
    status=still-running
    kill -9 "$1"
    wait "$1" 2>/dev/null
  else
    status=0
    wait "$1" 2>/dev/null || status=$?
  fi
}

# same_file NAME EXPECTED GOT: byte-for-byte equality, else the first differing line of each.
same_file() {
  local name=$1 want=$2 got=$3
  if cmp -s "$want" "$got"; then
    passes=$((passes + 1))
    echo "ok   $name"
    return
  fi
  fail "$name: got $(wc -l <"$got") lines ($(wc -c <"$got") bytes), expected $(wc -l <"$want") ($(wc -c <"$want") bytes)"
  local how line
  how=$(cmp "$want" "$got" 2>&1 | head -1)
  line=$(sed -n 's/.*line \([0-9]*\).*/\1/p' <<<"$how")
  [[ $how == *EOF* ]] && line=$((${line:-0} + 1))
  echo "  first difference at line ${line:-?} ($how)"
  if [[ -n $line ]]; then
    echo "  expected: $(sed -n "${line}p" "$want" | cut -c1-600)"
    echo "  got:      $(sed -n "${line}p" "$got" | cut -c1-600)"
  fi
}
# same_changes NAME EXPECTED GOT: same_file without the table lines. A live run's table lines
# carry information_schema's COLUMN_TYPE ("int(11)") where --file rebuilds it from the binlog
# ("int"), and a run that starts or resumes mid-way describes each table again before its first
# change: comparisons of runs leave them out, and table_lines_checked checks them.
same_changes() {
  local name=$1 want=$2 got=$3
  grep -v '^{"op":"table",' "$want" >"$want.changes"
  grep -v '^{"op":"table",' "$got" >"$got.changes"
  same_file "$name" "$want.changes" "$got.changes"
}
# table_lines_checked NAME FILE: every change line of FILE comes after a table line of its table
# whose columns are those of its row image (unless partial), and a table line is followed by a
# change of its table at the same pos (without index); a discard line voids the descriptions.
table_lines_checked() {
  assert "$1: each table described before its changes, with their columns" jq -e -s '
    reduce .[] as $l ({ok: true, described: {}, previous: null};
      if $l.op == "table" then
        .described[$l.db + "." + $l.table] = [$l.columns[].name]
      elif $l.op == "discard" then
        .described = {}
      elif ($l.op == "c" or $l.op == "u" or $l.op == "d") then
        .described[$l.db + "." + $l.table] as $columns
        | .ok = (.ok and $columns != null
                 and ($l.partial == true or (($l.after // $l.before) | keys_unsorted) == $columns)
                 and (.previous.op != "table"
                      or (.previous.table == $l.table and .previous.db == $l.db
                          and .previous.pos == ($l.pos | del(.index)) and .previous.ts_ms == $l.ts_ms)))
      else . end
      | .previous = $l)
    | .ok and .previous.op != "table"' "$2"
}
# line_of FILE FIXED-STRING: number of the first line holding it (empty when none).
line_of() { grep -n -F -m1 -- "$2" "$1" | cut -d: -f1; }
# after_line FILE N: the lines after line N.
after_line() { tail -n +"$(($2 + 1))" "$1"; }
# commit_gtids FILE: the gtid of every commit line, in order (torn last lines are fine).
commit_gtids() { grep '"op":"commit"' "$1" | sed -n 's/^{"op":"commit","v":1,"gtid":"\([^"]*\)".*/\1/p'; }

# writer_table_sql: SQL that creates database t and the table writer_sql writes, t.r.
writer_table_sql() {
  echo "CREATE DATABASE t;
CREATE TABLE t.r (id INT AUTO_INCREMENT PRIMARY KEY, batch INT NOT NULL, n BIGINT, pad VARCHAR(200),
  KEY (batch)) ENGINE=InnoDB;"
}
# writer_sql FIRST LAST PAUSE: SQL for transactions FIRST..LAST on t.r (id AUTO_INCREMENT, batch,
# n, pad), mostly of 1 to 20 rows, every 50th of 2,000 to 5,000 rows, with multi-row updates and
# deletes between, and DO SLEEP(PAUSE) after each. Draws on $RANDOM: seed it to reproduce.
writer_sql() {
  local k rows pause=$3
  echo "USE t;"
  for ((k = $1; k <= $2; k++)); do
    if ((k % 50 == 25)); then
      rows=$((2000 + RANDOM % 3001))
      echo "INSERT INTO t.r (batch, n, pad) SELECT $k, seq, REPEAT(CHAR(65 + seq % 26), 150) FROM seq_1_to_$rows;"
    elif ((k % 7 == 3)); then
      echo "BEGIN; UPDATE t.r SET n = n + 1, pad = CONCAT('u$k-', LEFT(pad, 40)) WHERE batch = $((k - 1)); INSERT INTO t.r (batch, n, pad) VALUES ($k, $k, 'after update'); COMMIT;"
    elif ((k % 11 == 5)); then
      echo "DELETE FROM t.r WHERE batch = $((k - 2));"
    else
      rows=$((1 + RANDOM % 20))
      echo "INSERT INTO t.r (batch, n, pad) SELECT $k, seq, REPEAT('x', seq) FROM seq_1_to_$rows;"
    fi
    echo "DO SLEEP($pause);"
  done
}

# span_checked FILE: a bounded run's output (--until) begins with a span_start line and ends
# with a span_end line (one assertion); the span lines are then removed from FILE, which is
# left with what --file decoding of the same range writes.
span_checked() {
  local file=$1
  if [[ $(head -n 1 "$file") == '{"op":"span_start",'* && $(tail -n 1 "$file") == '{"op":"span_end",'* ]]; then
    passes=$((passes + 1))
    echo "ok   the bounded run's output begins with span_start and ends with span_end"
  else
    fail "the bounded run's output begins with span_start and ends with span_end: $(head -c 200 "$file")"
  fi
  grep -v '^{"op":"span_' "$file" >"$file.spanless"
  mv "$file.spanless" "$file"
}
# drop_spans FILE: the span lines out of FILE (a bounded run stopped before --until has a
# span_start and no span_end).
drop_spans() {
  grep -v '^{"op":"span_' "$1" >"$1.spanless"
  mv "$1.spanless" "$1"
}

# metric_value FILE NAME [LABEL=VALUE,...]: a --metrics file's sample as an integer, from a
# parse of the whole file by Prometheus' own Python parser (Debian's python3-prometheus-client,
# for Debian's interpreter, not a pyenv shim), which fails on a malformed file; "absent" when
# the file has no such sample.
metric_value() {
  /usr/bin/python3 - "$@" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
path, name = sys.argv[1], sys.argv[2]
labels = sys.argv[3] if len(sys.argv) > 3 else ""
want = dict(pair.split("=", 1) for pair in labels.split(",") if pair)
with open(path) as f:
    families = list(text_string_to_metric_families(f.read()))
for family in families:
    for sample in family.samples:
        if sample.name == name and sample.labels == want:
            print(int(sample.value))
            sys.exit(0)
print("absent")
PY
}
