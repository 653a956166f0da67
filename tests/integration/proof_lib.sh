# Shared by the proof-under-load tests: tables of three key shapes filled and changed by
# cdc-test-load, change files replayed into copies by cdc-test-replay, and copies compared with
# their sources. Not a test itself (its name keeps it out of the stream_*.sh / sync_*.sh globs).
# Usage in a test, after lib.sh and live_lib.sh (and throwaway_start):
#   source "$(dirname "$0")/lib.sh" "$@"
#   source "$(dirname "$0")/live_lib.sh"
#   source "$(dirname "$0")/proof_lib.sh"
# It sets:
#   proof_load_tool, proof_replay_tool   the test tools, built into <build>/tests/tools/
#   load_pid    the last background load (proof_load_bg); load_pids: all not yet waited for,
#               load_errs: their stderr files
# Helpers (each documented below): proof_require_tools; proof_binlog_now; proof_create,
# proof_load_bg, proof_wait_load; proof_replay; proof_tables_in; proof_diff, proof_compare;
# proof_check_history.
#
# Table kinds (the schemas are in tests/tools/cdc_load.cpp):
#   int        id INT primary key, k INT, c VARCHAR(40), amount DECIMAL(10,2), at DATETIME(3),
#              blob_col VARBINARY(32), ts TIMESTAMP(6); keys spread over 0..K-1 (K = 4 * rows,
#              at least 1000, unless --key-space)
#   composite  PRIMARY KEY(region INT 0..3, code VARBINARY(8) of 1-8 random bytes, seq BIGINT
#              UNSIGNED random), note VARCHAR(40) utf8mb4 (é, 日本, emoji), v DOUBLE
#   varbinary  id VARBINARY(16) of 16 random bytes, payload VARCHAR(60), n BIGINT
#   keyless    no index at all: grp INT NOT NULL (about one row per value),
#              note VARCHAR(40) utf8mb4, n BIGINT, at DATETIME(3); every tenth row of the fill
#              repeats the one before, and the load copies rows whole, so identical rows abound
#   uca        name VARCHAR(16) utf8mb4_uca1400_ai_ci primary key of 1-6 letters each spelled
#              in one of four ways the collation finds equal ('a' 'A' 'á' 'Á', ß and ss), note
#              VARCHAR(40) utf8mb4, n BIGINT; the load also spells existing keys anew
# A load transaction has 1-5 statements among insert, update of non-key columns, delete,
# primary-key move anywhere in the key space, and a multi-row update of up to 21 adjacent keys;
# about 5% end with ROLLBACK. Everything follows from the seed.

proof_load_tool="$tools_dir/../tests/tools/cdc-test-load"
proof_replay_tool="$tools_dir/../tests/tools/cdc-test-replay"
proof_check_chunks_tool="$source_dir/tests/tools/check_chunks.py"
load_pid=
load_pids=()
load_errs=()
proof_archive_source= # an archive (cdc-stream --archive) for proof_check_history, when the server purged

# proof_require_tools: fails the test (exit 1) when the test tools are not built.
proof_require_tools() {
  local tool
  for tool in "$proof_load_tool" "$proof_replay_tool"; do
    if [[ ! -x $tool ]]; then
      echo "FAIL the test tool $tool is not built (target $(basename "$tool"))"
      exit 1
    fi
  done
}

# proof_create KIND DB.T ROWS SEED: CREATE DATABASE IF NOT EXISTS, DROP and CREATE TABLE DB.T
# with KIND's schema, then ROWS rows (multi-row INSERTs of 1000). Fails on any SQL error.
proof_create() {
  "$proof_load_tool" --socket "$THROWAWAY_SOCKET" --kind "$1" --table "$2" --rows "$3" --seed "$4" --create
}

# proof_load_bg KIND DB.T SEED SECONDS [EXTRA...]: starts the load on DB.T in the background
# for SECONDS seconds (or, written tx:N, for N transactions); EXTRA goes to cdc-test-load (e.g.
# --key-space K). Its stderr (the summary line, or the error) goes to $work/load.DB.T.err. Sets
# load_pid and adds it to load_pids and bg_pids.
proof_load_bg() {
  local kind=$1 table=$2 seed=$3 length=$4
  shift 4
  local stop=(--seconds "$length")
  [[ $length == tx:* ]] && stop=(--transactions "${length#tx:}")
  "$proof_load_tool" --socket "$THROWAWAY_SOCKET" --kind "$kind" --table "$table" --seed "$seed" "${stop[@]}" "$@" \
    2>"$work/load.$table.err" &
  load_pid=$!
  load_pids+=("$load_pid")
  load_errs+=("$work/load.$table.err")
  bg_pids+=("$load_pid")
}

# proof_wait_load: waits for every load proof_load_bg started (and removes them from bg_pids);
# prints each one's summary line. Returns 1 when any load failed, after printing its error.
proof_wait_load() {
  local i pid status result=0 p kept
  for i in "${!load_pids[@]}"; do
    pid=${load_pids[i]}
    status=0
    wait "$pid" || status=$?
    kept=()
    for p in "${bg_pids[@]}"; do [[ $p == "$pid" ]] || kept+=("$p"); done
    bg_pids=("${kept[@]}")
    ((status == 0)) || echo "  load $pid failed (exit $status):"
    sed 's/^/  /' "${load_errs[i]}"
    ((status == 0)) || result=1
  done
  load_pids=()
  load_errs=()
  return $result
}

# proof_tables_in FILES...: the distinct db.table of the data lines in FILES, one a line.
proof_tables_in() {
  grep -h -o '"op":"[rcud]","v":1,"db":"[^"]*","table":"[^"]*"' "$@" |
    sed 's/.*"db":"\([^"]*\)","table":"\([^"]*\)"/\1.\2/' | sort -u
}

# proof_replay INTO_DB FILES...: creates INTO_DB and, for each source table named by a data line
# of FILES, INTO_DB.table LIKE it when missing (a copy made here starts empty); then applies the
# files in order with cdc-test-replay (strict: a duplicate insert, or an update or delete that
# matches no row, fails naming the line). Returns cdc-test-replay's exit status; its messages go
# to stderr. A table copied earlier is used as it is: pass a fresh INTO_DB to start from empty.
proof_replay() {
  local into=$1
  shift
  local sql="CREATE DATABASE IF NOT EXISTS \`$into\`;" source
  while IFS= read -r source; do
    [[ -n $source ]] || continue
    sql+="CREATE TABLE IF NOT EXISTS \`$into\`.\`${source#*.}\` LIKE \`${source%%.*}\`.\`${source#*.}\`;"
  done < <(proof_tables_in "$@")
  root -e "$sql" || return 1
  "$proof_replay_tool" --socket "$THROWAWAY_SOCKET" --into "$into" "$@"
}

# _proof_projection DB TABLE: the column list compare selects: every column, text columns as
# binary (so that 'e' and 'é' differ whatever the collation).
_proof_projection() {
  root -N -e "SET SESSION group_concat_max_len = 1000000;
    SELECT GROUP_CONCAT(IF(DATA_TYPE IN ('char','varchar','tinytext','text','mediumtext','longtext','enum','set','json'),
                           CONCAT('CAST(\`', COLUMN_NAME, '\` AS BINARY)'), CONCAT('\`', COLUMN_NAME, '\`'))
                        ORDER BY ORDINAL_POSITION SEPARATOR ', ')
    FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '$1' AND TABLE_NAME = '$2'"
}

# proof_diff DB.T INTO_DB: status 0 when INTO_DB.T holds exactly the rows of DB.T (same count,
# and each side EXCEPT ALL the other is empty: a multiset, so that a table without a key holds its
# duplicate rows as often; text compared as bytes); else prints the counts and up
# to 5 rows missing from each side and returns 1. Records nothing: see proof_compare.
proof_diff() {
  local db=${1%%.*} table=${1#*.} into=$2
  local cols a b
  cols=$(_proof_projection "$db" "$table") || return 1
  if [[ -z $cols || $cols == NULL ]]; then
    echo "  no table $db.$table"
    return 1
  fi
  a="\`$db\`.\`$table\`"
  b="\`$into\`.\`$table\`"
  local counts only_a only_b
  counts=$(root -N -e "SELECT (SELECT COUNT(*) FROM $a), (SELECT COUNT(*) FROM $b)") || return 1
  only_a=$(root -N -e "SELECT COUNT(*) FROM (SELECT $cols FROM $a EXCEPT ALL SELECT $cols FROM $b) AS d") || return 1
  only_b=$(root -N -e "SELECT COUNT(*) FROM (SELECT $cols FROM $b EXCEPT ALL SELECT $cols FROM $a) AS d") || return 1
  read -r count_a count_b <<<"$counts"
  if [[ $count_a == "$count_b" && $only_a == 0 && $only_b == 0 ]]; then
    proof_rows=$count_a
    return 0
  fi
  echo "  $db.$table: $count_a rows, $into.$table: $count_b rows; $only_a rows only in the source, $only_b only in the copy"
  if [[ $only_a != 0 ]]; then
    echo "  first rows only in $db.$table:"
    root --batch -e "SELECT * FROM (SELECT $cols FROM $a EXCEPT ALL SELECT $cols FROM $b) AS d LIMIT 5" | sed 's/^/    /'
  fi
  if [[ $only_b != 0 ]]; then
    echo "  first rows only in $into.$table:"
    root --batch -e "SELECT * FROM (SELECT $cols FROM $b EXCEPT ALL SELECT $cols FROM $a) AS d LIMIT 5" | sed 's/^/    /'
  fi
  return 1
}

# proof_compare DB.T INTO_DB: proof_diff, recorded as one assertion ("ok" or "FAIL" with the
# differing rows). Returns proof_diff's status.
proof_compare() {
  local status=0
  proof_diff "$1" "$2" >"$work/proof_diff.out" || status=$?
  if ((status == 0)); then
    passes=$((passes + 1))
    echo "ok   $2.${1#*.} equals $1 ($proof_rows rows)"
  else
    fail "$2.${1#*.} differs from $1"
    cat "$work/proof_diff.out"
  fi
  return $status
}

# proof_binlog_now: the server's binlog end as FILE:OFFSET (the FROM of proof_check_history,
# taken before the tables are created).
proof_binlog_now() {
  root -N -e 'SHOW MASTER STATUS' | awk '{print $1 ":" $2}'
}

# proof_check_history NAME FROM TABLES MERGED CHUNK_FILE...: each chunk's rows are the table's
# rows at the chunk's low watermark, and the merged snapshot is the table at its high
# watermark, both checked against the tables' own history (cdc-stream --tables TABLES from
# FROM, taken before the tables were created; no faults): when a replay differs from the
# source, this tells a chunk's fault from the merge's. Recorded as one assertion. With
# proof_archive_source set, the history reads what the server purged from that archive.
proof_check_history() {
  local name=$1 from=$2 tables=$3 merged=$4
  shift 4
  local high history="$work/history.$RANDOM.ndjson"
  high=$(jq -r 'select(.op=="high").position' "$merged")
  if ! MYSQL_PWD=$THROWAWAY_CDC_PASSWORD timeout -k 5 120 "$stream" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc \
      --from "$from" --until "$high" --tables "$tables" ${proof_archive_source:+--archive-source "$proof_archive_source"} \
      >"$history" 2>"$work/history.err"; then
    fail "$name: the table's history (cdc-stream from $from) failed: $(head -c 400 "$work/history.err")"
    return 1
  fi
  if python3 "$proof_check_chunks_tool" --history "$history" --merged "$merged" "$@" >"$work/history.check" 2>&1; then
    passes=$((passes + 1))
    echo "ok   $name: each of the $# chunks holds the table's rows at its low watermark, and the merged snapshot the table at $high"
    rm -f "$history"
    return 0
  fi
  fail "$name, against the table's history from $from:"
  sed 's/^/  /' "$work/history.check" | head -22
  return 1
}
